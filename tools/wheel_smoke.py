"""A small skyrmion relaxation through an installed fieldgo (`make wheel-test`).

Run by a venv's python with no Go on PATH: it checks that fieldgo comes from that
venv's site-packages (not a source tree), relaxes a charge-1 Baby Skyrme skyrmion on a
64 x 64 lattice on the CPU (the kernels compiled by the system C compiler), checks
its charge and energy, and prints fg.show_versions().
"""

import math
import shutil
import sys
import time

import fieldgo as fg

if not fg.__file__.startswith(sys.prefix):
    sys.exit(f"wheel smoke: fieldgo imported from {fg.__file__}, not from this venv ({sys.prefix})")
if shutil.which("go") is not None:
    sys.exit(f"wheel smoke: go is on PATH ({shutil.which('go')}): this test is for machines without Go")

t0 = time.perf_counter()
sim = fg.Simulation(
    fg.theories.baby_skyrme(potential="standard", kappa=1.0, mass=1.0),
    grid=(64, 64),
    spacing=12 / 63,
    boundary="fixed",
    backend="cpu",
)
sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
hist = sim.minimize(tol=1e-6, max_steps=5000)
last = hist.slice(hist.num_rows - 1).to_pylist()[0]
energy, charge = sim.energy(), sim.integral("charge")
print(
    f"wheel smoke: fieldgo {fg.__version__} from {fg.__file__}: Baby Skyrme 64x64 on {sim.backend},"
    f" {last['step']} steps to max|grad| {last['max_grad']:.1e} in {time.perf_counter() - t0:.1f} s:"
    f" E = {energy:.6f} (E/4pi = {energy / (4 * math.pi):.5f}), Q = {charge:.5f}"
)
if not (last["max_grad"] < 1e-6 and abs(charge - 1) < 0.02 and 1.0 < energy / (4 * math.pi) < 3.0):
    sys.exit("wheel smoke: the skyrmion did not relax to a charge-1 state")
fg.show_versions()
