"""The Skyrme model in 3D through the public API, the way bench/api/run.py times 2D.

    python bench/api/skyrme3d.py [--backend auto] [--sizes 64 128 256] [--box 12] [--mass 1]
                                 [--converge 96] [--tol 1e-6] [--cap 120] [--out FILE]

Prints JSON lines (and appends them to --out):

step      ms per arrested-Newton step of ``minimize(tol=1e-300, max_steps=K)`` calls at
          n^3 sites, box ``--box`` (spacing box / (n - 1)), pion mass ``--mass``, float64,
          from a hedgehog: T(K2) - T(K1) over K2 - K1 steps, after a warm-up call
          (compile, tune); the peer's figure (../shared/bench/skyrmion_solver_baseline.py)
          is its arrested-Newton step on the same lattice.
relax     the B = 1 hedgehog relaxed at ``--converge``^3 to max|dE/dphi| < ``--tol``, timed
          from the interpreter's start (imports, trace, compile included): steps, wall
          seconds, E / (12 pi^2) and the baryon number.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402

import fieldgo as fg  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 128, 256])
    ap.add_argument("--box", type=float, default=12.0)
    ap.add_argument("--mass", type=float, default=1.0)
    ap.add_argument("--converge", type=int, default=96, help="lattice of the relaxation (0: none)")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--cap", type=int, default=200_000, help="steps at most in the relaxation")
    ap.add_argument("--out")
    a = ap.parse_args()
    th = fg.theories.skyrme(mass=a.mass)
    init = fg.initial.hedgehog(mass=a.mass)

    def report(row):
        line = json.dumps({**row, "backend": a.backend, "date": time.strftime("%Y-%m-%d", time.gmtime())})
        print(line, flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(line + "\n")

    def make(n):
        sim = fg.Simulation(th, grid=(n, n, n), spacing=a.box / (n - 1), backend=a.backend)
        sim.set_field(init)
        return sim

    if a.converge:
        sim = make(a.converge)
        t = time.perf_counter()
        sim.minimize(tol=a.tol, max_steps=a.cap)
        wall = time.perf_counter() - T0
        h = sim.history
        steps = int(h["step"][-1].as_py()) if hasattr(h, "column") else None
        report(
            {
                "bench": "relax",
                "n": a.converge,
                "box": a.box,
                "mass": a.mass,
                "tol": a.tol,
                "steps": steps,
                "flow_s": round(time.perf_counter() - t, 3),
                "from_process_start_s": round(wall, 3),
                "energy_over_12pi2": sim.energy() / (12 * math.pi**2),
                "baryon": fg.observables.baryon_number(sim),
                "backend_used": sim.describe().get("backend"),
            }
        )
        del sim
    for n in a.sizes:
        sim = make(n)
        sim.minimize(tol=1e-300, max_steps=2)  # compile, tune, stiffness estimate
        k1, k2 = (5, 25) if n >= 256 else (10, 110)
        t = time.perf_counter()
        sim.minimize(tol=1e-300, max_steps=k1)
        t1 = time.perf_counter()
        sim.minimize(tol=1e-300, max_steps=k2)
        t2 = time.perf_counter()
        step = ((t2 - t1) - (t1 - t)) / (k2 - k1)
        report(
            {
                "bench": "step",
                "n": n,
                "box": a.box,
                "mass": a.mass,
                "ms_per_step": round(step * 1e3, 4),
                "site_updates_per_s": n**3 / step,
                "backend_used": sim.describe().get("backend"),
            }
        )
        del sim


if __name__ == "__main__":
    main()
