"""Starting fields of the Skyrme model: ``sim.set_field`` from fg.initial configurations.

    python bench/api/skyrme3d_startup.py [--n 96] [--box 12] [--repeat 3] [--backend cpu]

Prints one JSON line per configuration: the first call in the process (``first_ms``) and
the best of ``--repeat`` further calls (``best_ms``; ``best_cpu_ms`` the process's CPU
time, which a busy machine disturbs less) of ``sim.set_field(config)`` on n^3 sites of
spacing box / (n - 1), building the configuration included. The configurations:
the hedgehog (``hedgehog(mass=1)``), the rational maps of degree 2 (z^2) and 4 (the cubic
map), and the product ansatz of two hedgehogs 4 apart, the second isorotated by pi.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import fieldgo as fg

S3 = math.sqrt(3.0)
CONFIGS = {
    "hedgehog": lambda: fg.initial.hedgehog(mass=1.0),
    "rational_map_2": lambda: fg.initial.rational_map([1, 0, 0]),
    "rational_map_4": lambda: fg.initial.rational_map([1, 0, 2 * S3 * 1j, 0, 1], [1, 0, -2 * S3 * 1j, 0, 1]),
    "product_ansatz": lambda: fg.initial.product_ansatz(
        fg.initial.hedgehog(centre=(-2.0, 0.0, 0.0)),
        fg.initial.hedgehog(centre=(2.0, 0.0, 0.0), isorotation=(0.0, 0.0, 0.0, 1.0)),
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=96)
    ap.add_argument("--box", type=float, default=12.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backend", default="cpu", choices=["auto", "cpu", "cuda"])
    args = ap.parse_args()
    n = args.n
    sim = fg.Simulation(fg.theories.skyrme(mass=1.0), grid=(n, n, n), spacing=args.box / (n - 1), backend=args.backend)
    for name, make in CONFIGS.items():
        times, cpu = [], []
        for _ in range(1 + args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            sim.set_field(make())
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        line = dict(
            config=name,
            n=n,
            first_ms=round(1e3 * times[0], 1),
            best_ms=round(1e3 * min(times[1:]), 1),
            best_cpu_ms=round(1e3 * min(cpu[1:]), 1),
        )
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
