"""soliton_solver (Numba CUDA) to a converged Baby Skyrme skyrmion: the
baseline harness's baby_skyrme_example set-up (256^2, box 20, dt 0.006, Neel
ansatz, charge 1), ANF steps as its viewer drives them, until |err| < tol
(err: soliton_solver's max of the EnergyGradient buffer), with a wall cap."""

import os
import sys
import time

t_import = time.perf_counter()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soliton_solver_baseline as B  # noqa: E402  (found through the sys.path entry above)

tol = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-6
cap = float(sys.argv[2]) if len(sys.argv) > 2 else 120.0
B.numpy_compat_shims()
B.setup_paths(os.path.dirname(os.path.abspath(__file__)))
from numba import cuda  # noqa: E402  (after the baseline's numpy shims)

t0 = time.perf_counter()
sim = B.build("baby_skyrme_example", 256)
E = float(sim.observables()["energy"])
steps, err = 0, float("inf")
first = None
while time.perf_counter() - t0 < cap:
    E, err = sim.step(E)
    steps += 1
    if first is None:
        cuda.synchronize()
        first = time.perf_counter() - t0
    if abs(err) < tol:
        break
cuda.synchronize()
obs = {k: float(v) for k, v in sim.observables().items()}
print(
    f"SSCONVERGE steps={steps} err={err!r} converged={abs(err) < tol} energy={obs['energy']!r} "
    f"charge={obs.get('skyrmion_number')!r} build+first_step={first:.2f}s flow={time.perf_counter() - t0:.2f}s",
    flush=True,
)
