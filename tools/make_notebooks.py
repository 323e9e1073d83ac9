"""Write the example notebooks from the cell sources below (kept as code so that
diffs stay readable, and so that notebooks/ holds no outputs).

Run: .venv/bin/python tools/make_notebooks.py [--check]

``--check`` writes nothing and fails if a notebook on disk differs from what this
file generates (the test suite runs it). Every notebook ends with cells that assert
what it shows; tests/python/test_notebooks.py executes them all.
"""

import pathlib
import sys

import nbformat
from nbformat.v4 import new_notebook

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from notebook_cells import code, md  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "notebooks"


# --- 01 quickstart ------------------------------------------------------------------------

QUICKSTART = [
    md("""
# fieldgo quickstart: a Baby Skyrme skyrmion

Write the theory, put it on a lattice, relax it, look at it, save it. `%load_ext fieldgo`
makes theories, simulations, fields and histories display themselves.
"""),
    code("""
%load_ext fieldgo
import fieldgo as fg
"""),
    md("""
A theory is its energy density. The built-in Baby Skyrme model has the standard potential
$m^2 (1 - n_3)$; its gradient is derived symbolically, and its charge density is declared.
"""),
    code("""
theory = fg.theories.baby_skyrme(potential="standard", kappa=1.0, mass=1.0)
theory
"""),
    md("A simulation is the theory on a lattice with a backend (the best one available)."),
    code("""
sim = fg.Simulation(theory, grid=(96, 96), spacing=0.2, boundary="fixed")
sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
sim
"""),
    md("""
Relax with arrested Newton flow. In a notebook `minimize` shows a progress bar
(step, energy, max |grad|, rate); `live=50` redraws the field in place every 50 steps.
Interrupting the kernel (■) stops it within a chunk and keeps the last completed step.
"""),
    code("""
hist = sim.minimize(tol=1e-6, max_steps=20_000, check_every=10, live=50)
hist
"""),
    md("The history is an Arrow table; it displays as energy and max |grad| against step."),
    code("""
fg.plot(sim, density="charge")
"""),
    code("""
fg.plot(sim)   # the energy density
"""),
    code("""
sim.field      # every component, on lattice coordinates
"""),
    md("Save everything (field, velocity, history, theory source, lattice) and read it back."),
    code("""
sim.save("skyrmion.arrow")
back = fg.load("skyrmion.arrow")
back
"""),
    code("""
%fieldgo devices
"""),
    md("## Checks"),
    code("""
import math

status = sim.last_status
assert status["converged"] and status["max_grad"] < 1e-6, status
charge = sim.integral("charge")
assert abs(charge - 1) < 5e-3, charge                       # one skyrmion, charge +1
assert back.energy() == sim.energy()                         # the file holds the same bits
assert hist.num_rows >= 2 and hist.column("energy")[-1].as_py() < hist.column("energy")[0].as_py()
print(f"E = {sim.energy():.8f} (E/4pi = {sim.energy() / (4 * math.pi):.6f}), Q = {charge:.6f}, "
      f"{status['step']} steps")
"""),
]


# --- 02 your own theory ------------------------------------------------------------------

OWN_THEORY = [
    md("""
# Your own theory: a chiral magnet

A thin film of a B20 chiral magnet without demagnetisation: exchange, Bloch-type
Dzyaloshinskii–Moriya interaction, uniaxial anisotropy and a Zeeman field along $z$, for a
unit magnetisation $\\mathbf m(x, y)$:

$$ e = \\tfrac{J}{2}\\,|\\nabla \\mathbf m|^2 + D\\, \\mathbf m\\cdot(\\nabla\\times\\mathbf m)
      + K\\,(1 - m_3^2) + B\\,(1 - m_3). $$

It is a few lines of Python: fieldgo traces it, derives the gradient and compiles it.
"""),
    code("""
%load_ext fieldgo
import numpy as np
import fieldgo as fg

magnet = fg.Theory("chiral_magnet", fields=["m1", "m2", "m3"],
                   params={"J": 1.0, "D": 1.0, "K": 0.3, "B": 0.8},
                   constraint=fg.UnitVector())

@magnet.energy_density
def energy(s, p):
    m, dx, dy = s.phi, s.dx, s.dy
    exchange = 0.5 * p.J * (fg.norm2(dx) + fg.norm2(dy))
    curl_m = fg.Vector([dy.m3, -dx.m3, dx.m2 - dy.m1])      # curl of m(x, y)
    dmi = p.D * fg.dot(m, curl_m)
    anisotropy = p.K * (1 - m.m3 ** 2)
    zeeman = p.B * (1 - m.m3)
    return exchange + dmi + anisotropy + zeeman

@magnet.density("charge")
def charge(s, p):
    return fg.dot(s.phi, fg.cross(s.dx, s.dy)) / (4 * fg.pi)

magnet
"""),
    md("The derived Euler–Lagrange gradient, on request:"),
    code("""
magnet.display(gradient=True)
"""),
    md("""
Start from a hedgehog with the wrong helicity guessed or not: the flow finds the Bloch
skyrmion the DMI selects. In a film magnetised along $+z$ its in-plane magnetisation winds
once counter-clockwise, so its charge $\\frac{1}{4\\pi}\\int \\mathbf m\\cdot(\\partial_x\\mathbf m
\\times\\partial_y\\mathbf m)$ is $-1$: `charge=-1`. Parameters are dynamic: changing $B$ or
$K$ never recompiles.
"""),
    code("""
sim = fg.Simulation(magnet, grid=(96, 96), spacing=0.15, boundary="fixed")
sim.set_field(fg.initial.skyrmion(charge=-1, size=1.0, ansatz="bloch"))
hist = sim.minimize(tol=1e-6, max_steps=20_000, check_every=20)
sim
"""),
    code("""
fg.plot(sim.field)
"""),
    code("""
fg.plot(sim, density="charge")
"""),
    md("The in-plane magnetisation circulates around the core: a Bloch skyrmion."),
    code("""
m = sim.field.numpy()
X, Y = sim.lattice.meshgrid()
r = np.hypot(X, Y)
ring = (r > 0.5) & (r < 1.5)
# tangential component of the in-plane magnetisation (Bloch) vs radial (Neel)
tangential = np.mean((-Y * m[0] + X * m[1])[ring] / r[ring])
radial = np.mean((X * m[0] + Y * m[1])[ring] / r[ring])
tangential, radial
"""),
    md("## Checks"),
    code("""
status = sim.last_status
assert status["converged"], status
Q = sim.integral("charge")
assert abs(Q + 1) < 1e-3, Q                                # one magnetic skyrmion, charge -1
assert m[2][r < 0.3].min() < -0.9                          # reversed core
assert abs(tangential) > 5 * abs(radial)                   # Bloch, not Neel
assert sim.energy() > 0                                    # above the saturated state (E = 0)
assert np.allclose(np.sum(m ** 2, axis=0), 1.0, atol=1e-12)  # |m| = 1 everywhere
print(f"E = {sim.energy():.6f}, Q = {Q:.6f}, {status['step']} steps")
"""),
]


# --- 03 Arrow exchange ----------------------------------------------------------------------

ARROW = [
    md("""
# Arrow exchange: fields and histories in pyarrow, polars and duckdb

A fieldgo field lives in C memory owned by the Go runtime. numpy, pyarrow, polars and
duckdb all see the same bytes: nothing is copied. Histories are Arrow tables too.
"""),
    code("""
%load_ext fieldgo
import numpy as np
import pyarrow as pa
import polars as pl
import duckdb
import fieldgo as fg

lat = fg.Lattice((128, 96), spacing=0.1, boundary="periodic")
f = fg.Field(lat, ["n1", "n2", "n3"])
f
"""),
    md("`numpy()` is a writable `(ncomp, ny, nx)` view; a write there is seen by Go."),
    code("""
X, Y = lat.meshgrid()
r = np.hypot(X, Y)
v = f.numpy()
v[2] = np.cos(np.pi * np.exp(-r))
assert abs(f.sum("n3") - v[2].sum()) < 1e-9
f.sum("n3"), v[2].sum()
"""),
    md("The Arrow view is a RecordBatch over the same buffer, with the lattice in its metadata."),
    code("""
batch = f.to_arrow()
assert batch.column(0).buffers()[1].address == v.ctypes.data
batch.schema
"""),
    code("""
df = pl.DataFrame(f)
print(df.select(pl.col("n3").min().alias("min"), pl.col("n3").max().alias("max")))
duckdb.sql("select count(*) as sites, avg(n3) as mean_n3 from batch").fetchall()
"""),
    md("Going the other way, a numpy array becomes a field without a copy."),
    code("""
a = np.zeros((2, lat.ny, lat.nx))
g = fg.Field.from_numpy(a, lat, names=["re", "im"])
g.set("im", 3, 4, 1.0)
assert a[1, 4, 3] == 1.0
g
"""),
    md("""
## A simulation's history and densities

Relax an Abelian Higgs vortex and read its history (one row per check: step, energy,
max |grad|, the integral of each declared density, arrests) with polars and SQL.
"""),
    code("""
higgs = fg.theories.abelian_higgs()
sim = fg.Simulation(higgs, grid=(64, 64), spacing=0.25, boundary="fixed")
sim.set_field(fg.initial.vortex(winding=1))
hist = sim.minimize(tol=1e-6, max_steps=20_000, check_every=25)
hist
"""),
    code("""
h = pl.from_arrow(hist)
h.with_columns((pl.col("energy") - pl.col("energy").min()).alias("excess")).tail(5)
"""),
    code("""
first_good = duckdb.sql(
    "select min(step) as step from hist where max_grad < 1e-3").fetchall()[0][0]
first_good
"""),
    md("A density is a one-component field: SQL sums it where the flux is."),
    code("""
flux = sim.density("flux").to_arrow()
hx, hy = sim.lattice.spacing
total_flux = duckdb.sql("select sum(flux) from flux").fetchall()[0][0] * hx * hy
total_flux, sim.integral("flux")
"""),
    md("## Checks"),
    code("""
assert sim.last_status["converged"]
assert h.height == hist.num_rows and h["step"].to_list() == hist.column("step").to_pylist()
assert first_good is not None and first_good <= sim.last_status["step"]
assert abs(total_flux - sim.integral("flux")) < 1e-9 * max(1, abs(total_flux))
assert abs(sim.integral("vortex_number") - 1) < 1e-2           # one flux quantum
print(f"E = {sim.energy():.6f}, flux = {total_flux:.6f} (2 pi = {2 * np.pi:.6f})")
"""),
]


# --- 04 from soliton_solver's Numba kernels to fieldgo ------------------------------------------

NUMBA_STYLE = """
# soliton_solver style: a per-site gradient for the Baby Skyrme model, written for Numba
# CUDA (one thread per site). Derivatives arrive precomputed; parameters live in
# numbered slots of p_f. Without numba this cell defines the same function as plain
# Python, so the two sides can be compared below.
import math
try:
    from numba import cuda
    device_function = cuda.jit(device=True)
except ImportError:  # no numba (or no GPU) here: run it as Python
    def device_function(f):
        return f

@device_function
def do_gradient_step_point(gradient, x, y, d1fd1x, d2fd1x, p_f):
    kappa2 = p_f[0] * p_f[0]     # p_f[0]: kappa
    mpi2 = p_f[1] * p_f[1]       # p_f[1]: mass
    F0 = d1fd1x[x, y, :, 0]      # d n / dx
    F1 = d1fd1x[x, y, :, 1]      # d n / dy
    sum_F0_sq = F0[0] * F0[0] + F0[1] * F0[1] + F0[2] * F0[2]
    sum_F1_sq = F1[0] * F1[0] + F1[1] * F1[1] + F1[2] * F1[2]
    sum_all_sq = sum_F0_sq + sum_F1_sq
    dot01 = F0[0] * F1[0] + F0[1] * F1[1] + F0[2] * F1[2]
    sumA = 0.0
    sumB = 0.0
    for a in range(3):
        S00, S11, S01 = d2fd1x[x, y, a, 0, 0], d2fd1x[x, y, a, 1, 1], d2fd1x[x, y, a, 0, 1]
        sumA += S01 * F1[a] - S11 * F0[a]
        sumB += S01 * F0[a] - S00 * F1[a]
    for a in range(3):
        S00, S11, S01 = d2fd1x[x, y, a, 0, 0], d2fd1x[x, y, a, 1, 1], d2fd1x[x, y, a, 0, 1]
        g = -(S00 + S11)
        g -= kappa2 * S00 * sum_all_sq
        g += kappa2 * S00 * sum_F0_sq
        g -= kappa2 * (F0[a] * sumA - S01 * dot01)
        g -= kappa2 * S11 * sum_all_sq
        g += kappa2 * S11 * sum_F1_sq
        g -= kappa2 * (F1[a] * sumB - S01 * dot01)
        gradient[x, y, a] = g
    gradient[x, y, 2] -= mpi2    # standard potential m^2 (1 - n3)
"""

FIELDGO_STYLE = """
import numpy as np
import fieldgo as fg

hand = fg.Theory("baby_skyrme_hand", fields=["n1", "n2", "n3"],
                 params={"kappa": 1.0, "mass": 1.0}, constraint=fg.UnitVector())

@hand.energy_density
def energy(s, p):
    return (0.5 * (fg.norm2(s.dx) + fg.norm2(s.dy))
            + 0.5 * p.kappa ** 2 * fg.norm2(fg.cross(s.dx, s.dy)) + p.mass ** 2 * (1 - s.phi.n3))

@hand.gradient
def gradient(s, p, out):
    kappa2 = p.kappa * p.kappa
    mpi2 = p.mass * p.mass
    F0, F1 = s.dx, s.dy                       # named, no slots: s.dx.n1 works too
    S00, S11, S01 = s.dxx, s.dyy, s.dxy
    sum_F0_sq = fg.norm2(F0)
    sum_F1_sq = fg.norm2(F1)
    sum_all_sq = sum_F0_sq + sum_F1_sq
    dot01 = fg.dot(F0, F1)
    sumA = fg.dot(S01, F1) - fg.dot(S11, F0)
    sumB = fg.dot(S01, F0) - fg.dot(S00, F1)
    for a in range(3):                        # Python loops unroll at trace time
        g = -(S00[a] + S11[a])
        g -= kappa2 * S00[a] * sum_all_sq
        g += kappa2 * S00[a] * sum_F0_sq
        g -= kappa2 * (F0[a] * sumA - S01[a] * dot01)
        g -= kappa2 * S11[a] * sum_all_sq
        g += kappa2 * S11[a] * sum_F1_sq
        g -= kappa2 * (F1[a] * sumB - S01[a] * dot01)
        out[a] = g
    out["n3"] -= mpi2

@hand.density("charge")
def charge(s, p):
    return fg.dot(s.phi, fg.cross(s.dx, s.dy)) / (4 * fg.pi)

hand.spec["gradient"]
"""

NUMBA = [
    md("""
# From a soliton_solver Numba kernel to fieldgo

soliton_solver writes each theory as Numba CUDA device functions: a per-site gradient
reading precomputed derivative arrays, parameters in numbered slots, the launch and the
grid loops around it. In fieldgo the same per-site update is a `@theory.gradient` on one
site's named values; the runtime owns the loops, stencils, boundaries and launches, on the
GPU or the CPU. Or write only the energy and let fieldgo derive the gradient.

Left: the Numba-style kernel (compiled by Numba CUDA when there is one, plain Python
otherwise). Right, below: the fieldgo version.
"""),
    code(NUMBA_STYLE),
    md("""
The fieldgo version: the same arithmetic on named vectors, no slots, no indices into
global arrays. `fg.dot`/`fg.norm2` replace the hand-written sums.
"""),
    code(FIELDGO_STYLE),
    md("""
## Side by side at random sites

`theory.at` runs the generated C at one site. The hand gradient, the Numba-style function
and the gradient fieldgo derives from the energy alone agree to rounding.
"""),
    code("""
derived = fg.theories.baby_skyrme(potential="standard", kappa=0.8, mass=1.2)
rng = np.random.default_rng(1)
count = 200
n = rng.normal(size=(count, 3)); n /= np.linalg.norm(n, axis=1, keepdims=True)
dx, dy, dxx, dyy, dxy = (rng.normal(size=(count, 3)) for _ in range(5))

# the Numba-style function on a 1 x count "grid" of sites
d1 = np.stack([dx, dy], axis=-1)[None]                  # [x, y, a, i]
d2 = np.zeros((1, count, 3, 2, 2))
d2[0, :, :, 0, 0], d2[0, :, :, 1, 1] = dxx, dyy
d2[0, :, :, 0, 1] = d2[0, :, :, 1, 0] = dxy
numba_style = np.zeros((1, count, 3))
for y in range(count):
    do_gradient_step_point(numba_style, 0, y, d1, d2, np.array([0.8, 1.2]))

site = lambda i: dict(phi=n[i], dx=dx[i], dy=dy[i], dxx=dxx[i], dyy=dyy[i], dxy=dxy[i])
fieldgo_hand = np.array([hand.at(**site(i), kappa=0.8, mass=1.2).gradient for i in range(count)])
fieldgo_derived = np.array([derived.at(**site(i)).gradient for i in range(count)])

scale = np.maximum(1, np.abs(fieldgo_derived).max(axis=1, keepdims=True))
worst = {
    "hand vs numba-style": float((abs(fieldgo_hand - numba_style[0]) / scale).max()),
    "hand vs derived": float((abs(fieldgo_hand - fieldgo_derived) / scale).max()),
}
worst
"""),
    md("""
## Both relax to the same skyrmion

The hand gradient is the continuum (Euler–Lagrange) form, so compare it with the derived
theory run on the same form.
"""),
    code("""
def relax(theory, **opts):
    sim = fg.Simulation(theory, grid=(96, 96), spacing=0.2, boundary="fixed", **opts)
    sim.set_params(kappa=1.0, mass=1.0)
    sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    sim.minimize(tol=1e-6, max_steps=20_000)
    return sim

with_hand = relax(hand)
with_derived = relax(fg.theories.baby_skyrme(), gradient="continuum")
with_hand
"""),
    code("""
fg.plot(with_hand, density="charge")
"""),
    md("## Checks"),
    code("""
assert worst["hand vs numba-style"] < 1e-12, worst
assert worst["hand vs derived"] < 1e-12, worst
assert with_hand.describe()["gradient"] == "continuum"
assert with_hand.last_status["converged"] and with_derived.last_status["converged"]
e_hand, e_derived = with_hand.energy(), with_derived.energy()
assert abs(e_hand - e_derived) < 1e-8 * abs(e_derived), (e_hand, e_derived)
assert abs(with_hand.integral("charge") - with_derived.integral("charge")) < 1e-8
print(f"E hand = {e_hand:.10f}, E derived = {e_derived:.10f}")
"""),
]


NOTEBOOKS = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_your_own_theory.ipynb": OWN_THEORY,
    "03_arrow_exchange.ipynb": ARROW,
    "04_numba_to_fieldgo.ipynb": NUMBA,
}

# Further notebooks live in generators of their own,
# tools/make_<topic>_notebook.py, each with a NOTEBOOKS dict like the one above.
for _gen in sorted(pathlib.Path(__file__).parent.glob("make_*_notebook.py")):
    NOTEBOOKS.update(__import__(_gen.stem).NOTEBOOKS)


def build(cells):
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    # Stable cell ids, so regenerating gives the same file.
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{k:02d}"
    return nb


def main(argv):
    check = "--check" in argv
    stale = []
    OUT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        text = nbformat.writes(build(cells)) + "\n"
        path = OUT / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
            continue
        path.write_text(text)
        print("wrote", path)
    if check:
        extra = sorted(p.name for p in OUT.glob("*.ipynb") if p.name not in NOTEBOOKS)
        if stale or extra:
            print("out of date:", ", ".join(stale + [f"{e} (not generated)" for e in extra]))
            return 1
        print("notebooks up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
