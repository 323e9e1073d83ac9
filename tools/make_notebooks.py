"""Write the example notebooks from the cell sources below (kept as code so that
diffs stay readable). Run: .venv/bin/python tools/make_notebooks.py"""

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parent.parent

FIELDS = [
    new_markdown_cell("# Fields are shared memory\n\nA fieldgo field lives in C memory owned by the Go "
                      "runtime. numpy, pyarrow, polars and duckdb all see the same bytes: nothing is copied."),
    new_code_cell("import numpy as np\nimport pyarrow as pa\nimport fieldgo as fg\n\n"
                  "lat = fg.Lattice((128, 96), spacing=0.1, boundary=\"periodic\")\n"
                  "f = fg.Field(lat, [\"n1\", \"n2\", \"n3\"])\nf"),
    new_markdown_cell("`numpy()` is a writable `(ncomp, ny, nx)` view; a write there is seen by Go."),
    new_code_cell("X, Y = lat.meshgrid()\nr = np.hypot(X, Y)\nv = f.numpy()\n"
                  "v[2] = np.cos(np.pi * np.exp(-r))\n"
                  "assert abs(f.sum(\"n3\") - v[2].sum()) < 1e-9\n"
                  "f.sum(\"n3\"), v[2].sum()"),
    new_markdown_cell("The Arrow view is a RecordBatch over the same buffer, with the lattice in its metadata."),
    new_code_cell("batch = f.to_arrow()\nassert batch.column(0).buffers()[1].address == v.ctypes.data\n"
                  "batch.schema"),
    new_code_cell("import polars as pl\nimport duckdb\n\ndf = pl.DataFrame(f)\n"
                  "print(df.select(pl.col(\"n3\").min().alias(\"min\"), pl.col(\"n3\").max().alias(\"max\")))\n"
                  "duckdb.sql(\"select count(*) as sites, avg(n3) as mean_n3 from batch\").fetchall()"),
    new_markdown_cell("Going the other way, a numpy array becomes a field without a copy."),
    new_code_cell("a = np.zeros((2, lat.ny, lat.nx))\ng = fg.Field.from_numpy(a, lat, names=[\"re\", \"im\"])\n"
                  "g.set(\"im\", 3, 4, 1.0)\nassert a[1, 4, 3] == 1.0\ng"),
]


def main():
    out = ROOT / "notebooks"
    out.mkdir(exist_ok=True)
    for name, cells in {"01_fields_and_arrow.ipynb": FIELDS}.items():
        nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                 "language": "python"}})
        nbformat.write(nb, out / name)
        print("wrote", out / name)


if __name__ == "__main__":
    main()
