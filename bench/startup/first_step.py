"""Time to the first ANF step: fresh processes with an empty and a warm
cache, and a second simulation in the same process (a notebook cell run again).

    python bench/startup/first_step.py [--backend cuda] [--grid 256] [--repeats 3]

Prints one line per measurement, phases in seconds from process start.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import fieldgo as fg
t1 = time.perf_counter()
def first_step(backend, n):
    # As a user writes it: the Simulation traces the theory (SymPy, unless the
    # source cache has it) while Go probes the GPU, then compiles.
    a = time.perf_counter()
    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(n, n), spacing=20 / (n - 1), backend=backend)
    c = time.perf_counter()
    sim.set_field(fg.initial.skyrmion())
    sim.minimize(tol=1e-300, max_steps=1, progress=False)
    d = time.perf_counter()
    info = sim.describe()
    sim.close()
    return {"setup": c - a, "compile": info["compile_seconds"], "cached": info["compile_cached"],
            "first step": d - c, "total": d - a}
backend, n = sys.argv[1], int(sys.argv[2])
first = first_step(backend, n)
again = first_step(backend, n)
print(json.dumps({"import": t1 - t0, "first": first, "from start": t1 - t0 + first["total"], "again": again}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--grid", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FIELDGO_CACHE=cache)
        for i in range(a.repeats):
            kind = "cold (empty cache)" if i == 0 else "cached"
            t = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", CHILD, a.backend, str(a.grid)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            wall = time.perf_counter() - t
            r = json.loads(out.stdout.strip().splitlines()[-1])
            f, g = r["first"], r["again"]
            # compile: the backend's Compile (NVRTC or the C compiler, or the
            # cache, and the load); the rest of the Simulation is the trace and
            # the GPU probe it overlaps.
            print(
                f"{kind:20s} process wall {wall:.3f} s | import {r['import']:.3f} "
                f"Simulation (trace, GPU probe, compile) {f['setup']:.3f} [compile {f['compile']:.3f}, "
                f"cached {f['cached']}] first step {f['first step']:.3f} "
                f"-> from start {r['from start']:.3f} s | same process again: Simulation {g['setup']:.4f} "
                f"first step {g['first step']:.4f} total {g['total']:.4f} s"
            )


if __name__ == "__main__":
    main()
