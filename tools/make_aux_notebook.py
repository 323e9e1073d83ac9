"""Write notebooks/06_demagnetisation.ipynb (a chiral-magnet antiskyrmion relaxed with
and without demagnetisation: the auxiliary magnetostatic potential, docs/auxiliary.md) from the
cell sources below, in the format of tools/make_notebooks.py: no outputs, stable ids.

Run: .venv/bin/python tools/make_aux_notebook.py [--check]

``NOTEBOOKS`` maps the file name to its cells; tools/make_notebooks.py takes it in.
"""

import sys

from notebook_cells import code, md

DEMAG = [
    md("""
# Demagnetisation: an auxiliary field fixed by a Poisson equation

`fg.theories.chiral_magnet` is soliton_solver's chiral magnet: a unit magnetisation
$m$ and the magnetostatic potential $\\psi$,

$$e = \\tfrac12|\\nabla m|^2 + \\sum_{ij} D_{ij}(m\\times\\partial_i m)_j + k(1-m_3^2)
      - \\psi\\,\\nabla\\cdot m - \\frac{1}{2\\mu}|\\nabla\\psi|^2 .$$

$\\psi$ is not minimised: it is an **auxiliary** field (`auxiliary=["psi"]`), fixed by its
own equation $\\Delta\\psi = \\mu\\,\\nabla\\cdot m$, where the energy is a *maximum* in
$\\psi$ and its $\\psi$ terms equal the demagnetisation energy $|\\nabla\\psi|^2/2\\mu$.
The flow moves $m$ down the energy and $\\psi$ up it, to the saddle (docs/auxiliary.md).
"""),
    code("""
%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import fieldgo as fg

theory = fg.theories.chiral_magnet(dmi="heusler", demag=True)
print(theory.spec)
"""),
    md("""
soliton_solver's example uses the Heusler DMI, whose solitons are antiskyrmions. A
Bloch skyrmion has $\\nabla\\cdot m = 0$ and no demagnetising field; an antiskyrmion
carries magnetic charge of both signs, so demagnetisation acts on it. The start is
soliton_solver's "anti" ansatz.
"""),
    code("""
def antiskyrmion(X, Y, R=1.0):
    r, th = np.hypot(X, Y), np.arctan2(Y, X)
    f = np.pi * np.exp(-(r / R) ** 2)
    return -np.sin(f) * np.sin(th), -np.sin(f) * np.cos(th), np.cos(f), 0 * X

def relax(demag, M=580e3):
    th = fg.theories.chiral_magnet(dmi="heusler", demag=demag, M=M)
    sim = fg.Simulation(th, grid=(128, 128), spacing=12 / 127, boundary="fixed", backend="cpu")
    sim.set_field(antiskyrmion)
    hist = sim.minimize(tol=1e-6, max_steps=20000)
    return sim, hist

def radius(sim):
    # radius of the disc where m3 < 0 (the reversed core)
    hx, hy = sim.lattice.spacing
    return float(np.sqrt((sim.field.numpy()[2] < 0).sum() * hx * hy / np.pi))

without, h0 = relax(demag=False)
with_demag, h1 = relax(demag=True)
for label, sim, h in (("without demag", without, h0), ("with demag", with_demag, h1)):
    print(f"{label:14s} steps {h['step'][-1].as_py():5d}  E = {sim.energy():.6f}  "
          f"Q = {sim.integral('skyrmion_number'):.5f}  R = {radius(sim):.4f}  "
          f"E_demag = {sim.integral('demag_energy'):.5f}")
"""),
    md("""
The demagnetising field penalises the antiskyrmion's magnetic charge: it shrinks and its
energy rises by more than the demagnetisation energy it keeps. Left: $m_3$ along the
$x$ axis; right: the potential $\\psi$ and the charge $-\\nabla\\cdot m$ it answers.
"""),
    code("""
x = with_demag.lattice.x
j = with_demag.lattice.ny // 2
f0, f1 = without.field.numpy(), with_demag.field.numpy()
fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
ax[0].plot(x, f0[2, j], label="without demag")
ax[0].plot(x, f1[2, j], label="with demag")
ax[0].set_xlabel("x"); ax[0].set_ylabel("$m_3(x, 0)$"); ax[0].legend()
im = ax[1].imshow(f1[3], origin="lower", cmap="RdBu_r"); ax[1].set_title("$\\\\psi$"); fig.colorbar(im, ax=ax[1])
im = ax[2].imshow(with_demag.density("magnetic_charge").numpy()[0], origin="lower", cmap="RdBu_r")
ax[2].set_title("$-\\\\nabla\\\\cdot m$"); fig.colorbar(im, ax=ax[2])
plt.tight_layout()
"""),
    md("""
The demagnetising coupling is $\\mu = \\mu_0 M^2 J / D^2$: a scan of the saturation
magnetisation $M$ shows the antiskyrmion shrink and its energy grow with it.
"""),
    code("""
Ms = [200e3, 400e3, 580e3, 700e3]
scan = []
for M in Ms:
    sim, h = relax(demag=True, M=M)
    scan.append((M, sim.energy(), radius(sim), sim.integral("skyrmion_number")))
    sim.close()
scan = np.array(scan)
fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
ax[0].plot(scan[:, 0] / 1e3, scan[:, 1], "o-"); ax[0].axhline(without.energy(), ls=":", label="no demag")
ax[0].set_xlabel("M (kA/m)"); ax[0].set_ylabel("E (J)"); ax[0].legend()
ax[1].plot(scan[:, 0] / 1e3, scan[:, 2], "o-"); ax[1].axhline(radius(without), ls=":")
ax[1].set_xlabel("M (kA/m)"); ax[1].set_ylabel("core radius (J/D)")
plt.tight_layout()
print(np.round(scan, 5))
"""),
    md("""
Checks: both relax to a charge-1 antiskyrmion; demagnetisation raises the energy and
shrinks the core, monotonically in $M$; $\\psi$ satisfies its equation to the flow's
tolerance (the flow's max |gradient| includes $\\psi$'s residual).
"""),
    code("""
assert h0["max_grad"][-1].as_py() < 1e-6 and h1["max_grad"][-1].as_py() < 1e-6
for sim in (without, with_demag):
    assert abs(sim.integral("skyrmion_number") - 1) < 2e-3
assert with_demag.energy() > without.energy() + with_demag.integral("demag_energy") / 2
assert radius(with_demag) < 0.9 * radius(without)
assert np.all(np.diff(scan[:, 1]) > 0) and np.all(np.diff(scan[:, 2]) < 0)
assert without.integral("demag_energy") == 0.0 and np.all(f0[3] == 0.0)
"""),
]

NOTEBOOKS = {"06_demagnetisation.ipynb": DEMAG}


if __name__ == "__main__":
    # One writer for every notebook: tools/make_notebooks.py takes NOTEBOOKS in.
    from make_notebooks import main

    sys.exit(main(sys.argv[1:]))
