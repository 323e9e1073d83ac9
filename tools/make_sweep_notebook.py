"""Write notebooks/05_sweep.ipynb (a kappa scan of the Baby Skyrme skyrmion with
fg.sweep on Dask) from the cell sources below, in the format of
tools/make_notebooks.py: no outputs, stable cell ids.

Run: .venv/bin/python tools/make_sweep_notebook.py [--check]

``--check`` writes nothing and fails if the notebook on disk differs. ``NOTEBOOKS``
maps the file name to its cells, so tools/make_notebooks.py can take it in.
"""

import sys

from notebook_cells import code, md

SWEEP = [
    md("""
# Parameter sweeps on Dask: the Baby Skyrme skyrmion against $\\kappa$

`fg.sweep` runs one simulation per point of a parameter scan as a Dask task: on a local
cluster of worker processes (the default), on a multi-GPU machine (one worker per GPU) or on
a remote cluster (a scheduler address). It hands back one Arrow table, one row per point,
and every final field as a file `fg.load` reads. docs/sweeps.md has the details.
"""),
    code("""
%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import fieldgo as fg
"""),
    md("""
The theory is traced once, here. Its workers receive the C source, the spec and each
point's parameter values: $\\kappa$ and the mass are dynamic parameters, so every point runs
the same compiled kernel.
"""),
    code("""
theory = fg.theories.baby_skyrme(kappa=1.0, mass=1.0)
kappas = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
"""),
    md("""
Six points on a 64 x 64 lattice, relaxed by arrested Newton flow to max |grad| < 1e-5, on two
worker processes. A progress bar shows the points as they finish. Each point's field goes to
`kappa-scan/points/<id>.arrow`, its row to `<id>.json`, and the table to
`kappa-scan/results.parquet`.
"""),
    code("""
table = fg.sweep(theory, {"kappa": kappas}, grid=(64, 64), spacing=0.2, boundary="fixed",
                 initial=fg.initial.skyrmion(charge=1, size=1.0), minimize={"tol": 1e-5},
                 out="kappa-scan", n_workers=2)
df = pl.from_arrow(table)
df.select("kappa", "energy", "charge", "steps", "converged", "max_grad", "backend", "wall_s", "error")
"""),
    md("""
The radius comes from the saved fields: the square root of the second moment of the
topological charge density $q(x, y)$ about the centre of charge,
$R^2 = \\int |x - \\bar x|^2 q \\,/ \\int q$.
"""),
    code("""
def charge_radius(path):
    sim = fg.load(path)
    try:
        q = sim.density("charge").numpy()[0]
        X, Y = sim.lattice.meshgrid()
    finally:
        sim.close()
    w = q / q.sum()
    cx, cy = (w * X).sum(), (w * Y).sum()
    return float(np.sqrt((w * ((X - cx) ** 2 + (Y - cy) ** 2)).sum()))


df = df.with_columns(pl.col("file").map_elements(charge_radius, return_dtype=pl.Float64).alias("radius"))
df.select("kappa", "energy", "radius")
"""),
    code("""
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(df["kappa"], df["energy"], "o-")
left.axhline(4 * np.pi, ls="--", c="grey", label="$4\\\\pi$ (Bogomolny bound, $|Q| = 1$)")
left.set(xlabel="$\\\\kappa$", ylabel="energy $E$")
left.legend()
right.plot(df["kappa"], df["radius"], "o-", c="C1")
right.set(xlabel="$\\\\kappa$", ylabel="charge radius $R$")
fig.tight_layout()
plt.show()
"""),
    md("""
A sweep resumes: points whose row and field are already in `out` are not run again (no
cluster is even started when nothing is left to do). Add points to the scan and only the
new ones run.
"""),
    code("""
again = fg.sweep(theory, {"kappa": kappas}, grid=(64, 64), spacing=0.2, boundary="fixed",
                 initial=fg.initial.skyrmion(charge=1, size=1.0), minimize={"tol": 1e-5},
                 out="kappa-scan", progress=False)
pl.from_arrow(again).select("kappa", "energy", "resumed")
"""),
    md("Checks: what the table and the plots show."),
    code("""
assert df["error"].null_count() == len(kappas) and df["converged"].all()
assert (df["max_grad"] < 1e-5).all()
assert ((df["charge"] - 1).abs() < 0.02).all(), df["charge"]
assert (df["energy"] > 4 * np.pi).all()
assert (df["energy"].diff().drop_nulls() > 0).all(), "E grows with kappa"
assert (df["radius"].diff().drop_nulls() > 0).all(), "the skyrmion grows with kappa"
assert again["resumed"].to_pylist() == [True] * len(kappas)
assert again["energy"].to_pylist() == table["energy"].to_pylist()
print("E:", np.round(df["energy"].to_numpy(), 4), " R:", np.round(df["radius"].to_numpy(), 4))
"""),
]

NOTEBOOKS = {"05_sweep.ipynb": SWEEP}


if __name__ == "__main__":
    # One writer for every notebook: tools/make_notebooks.py takes NOTEBOOKS in.
    from make_notebooks import main

    sys.exit(main(sys.argv[1:]))
