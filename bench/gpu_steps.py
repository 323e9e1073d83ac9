"""ms per arrested-Newton step through the Python API, per backend and lattice size.

    python bench/gpu_steps.py [--backend cuda] [--sizes 256 512 1024 2048] [--steps 300]

Times Simulation.minimize with a tolerance no run reaches, so every step is taken, and
reports ms/step and site-updates/s. (bench/gpu holds the Go-level benchmark and the
side-by-side run against soliton_solver; this checks what a Python user gets.)
"""

import argparse
import time

import fieldgo as fg


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--theory", default="baby_skyrme")
    args = ap.parse_args()
    theory = fg.theories.ALL[args.theory]()
    init = fg.initial.skyrmion() if args.theory == "baby_skyrme" else fg.initial.vortex()
    print(f"{'theory':>14} {'backend':>8} {'n':>6} {'ms/step':>9} {'Msite-updates/s':>16}")
    for n in args.sizes:
        sim = fg.Simulation(theory, grid=(n, n), spacing=20 / (n - 1), backend=args.backend)
        sim.set_field(init)
        sim.minimize(tol=1e-300, max_steps=20, check_every=1000)  # warm: compile, autotune
        sim.set_field(init)
        t0 = time.perf_counter()
        sim.minimize(tol=1e-300, max_steps=args.steps, check_every=1000, dt=0.3 * 20 / (n - 1))
        dt = (time.perf_counter() - t0) / args.steps
        print(f"{args.theory:>14} {sim.backend:>8} {n:>6} {dt * 1e3:9.4f} {n * n / dt / 1e6:16.1f}")


if __name__ == "__main__":
    main()
