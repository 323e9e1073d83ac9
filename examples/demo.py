"""make demo: a field made in Go, seen by numpy, Arrow and a file without copies.

(The Baby Skyrme relaxation replaces this once the engine lands.)
"""

import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

import fieldgo as fg

out = pathlib.Path("out")
out.mkdir(exist_ok=True)
lat = fg.Lattice((256, 256), spacing=20 / 255)
f = fg.Field(lat, ["n1", "n2", "n3"])
X, Y = lat.meshgrid()
r, th = np.hypot(X, Y), np.arctan2(Y, X)
prof = np.pi * np.exp(-r)
v = f.numpy()
v[0], v[1], v[2] = np.sin(prof) * np.cos(th), np.sin(prof) * np.sin(th), np.cos(prof)
batch = f.to_arrow()
assert batch.column(2).buffers()[1].address == v[2].ctypes.data
with ipc.new_file(out / "field.arrow", batch.schema) as w:
    w.write_batch(batch)
back = fg.Field.from_arrow(ipc.open_file(out / "field.arrow").read_all())
print(f"wrote {out / 'field.arrow'}: {back}, sum n3 = {back.sum('n3'):.6f} (Go) vs {v[2].sum():.6f} (numpy)")
