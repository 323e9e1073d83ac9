"""Export-and-view cost of a field, small against large.

    .venv/bin/python bench/bridge_bench.py

Times ``Field.to_arrow()`` + ``Field.numpy()`` on a fresh field (so the export is
really made each time) for 256 x 256 x 3 and 2048 x 2048 x 3 and reports the ratio
large/small: zero copy means the ratio stays near 1 however large the field.
Allocation is outside the timed region.
"""

import statistics
import time

import numpy as np

import fieldgo as fg


def time_export(n: int, repeats: int = 200) -> list[float]:
    lat = fg.Lattice((n, n), 0.1)
    out = []
    for _ in range(repeats):
        f = fg.Field(lat, ["n1", "n2", "n3"])
        t0 = time.perf_counter()
        batch = f.to_arrow()
        view = f.numpy()
        t1 = time.perf_counter()
        assert view.shape == (3, n, n) and batch.num_rows == n * n
        out.append(t1 - t0)
        f.release()
        del batch, view
    return out


def main():
    time_export(64, 20)  # warm up imports and the bridge
    small = time_export(256)
    large = time_export(2048, 50)
    ms, ml = statistics.median(small), statistics.median(large)
    print(f"{'field':>16} {'median us':>10} {'p90 us':>8}")
    for name, xs in (("256x256x3", small), ("2048x2048x3", large)):
        print(f"{name:>16} {statistics.median(xs) * 1e6:10.1f} {np.percentile(xs, 90) * 1e6:8.1f}")
    print(f"ratio 2048^2 / 256^2 (64x the bytes): {ml / ms:.2f}")


if __name__ == "__main__":
    main()
