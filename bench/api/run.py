"""fieldgo's speed as a user gets it: the public Python API, start-up and copies included.

    python bench/api/run.py [all|minimize|evolve|calls|startup|nbody|radiation] [--backend auto] [--quick]
                            [--sizes 256 1024 2048 4096] [--peer-src DIR] [--out FILE]

Prints one JSON object per line (and appends them to --out). Every figure the README
quotes comes from here. What each part times:

minimize   ``Simulation.minimize(tol=1e-300, max_steps=K)`` calls (every step taken) of
           K = 1, 100 and 1000 steps from Python, after a warm-up call (compile, tune);
           Baby Skyrme and Abelian Higgs, float64 and float32. ``start_ms`` is what a call
           costs beyond its steps: T(100) - 100 * step, with step = (T(1000) - T(100)) / 900.
           ``first_start_ms`` is the same for the first call after ``set_field``, which
           estimates the stiffness (later calls keep the estimate): T(1) - step.
           Where soliton_solver is importable (``pip install soliton-solver`` or
           ``--peer-src``) and a GPU is there, it runs the same grids in the same process
           (bench/api/peer.py) and each line carries the ratio.
startup    A fresh interpreter from ``python -c`` to a converged skyrmion (256^2, 1e-6):
           first with an empty kernel cache, then with the cache warm.
nbody      ``fg.nbody.accelerations`` of N bodies, best of two after a warm-up:
           interactions/s = N^2 / t.
calls      Every call a user makes on a Baby Skyrme simulation at --call-sizes (default
           2048 4096 on a GPU, 512 on the CPU), each timed once after a warm-up of the same
           call, with the bytes of one field it must move at least: Simulation(...),
           set_field (a function and an array), minimize (first and later calls, one step),
           sim.field, energy(), integral(), density(), history, save, fg.load, resume,
           device_field().
evolve     ``Simulation.evolve`` of K = 100 and 1000 steps at a fixed dt from Python (one
           record at the end), after a warm-up call, beside a 1000-step ``minimize`` on
           the same simulation: ms per step of rk4, leapfrog and (Baby Skyrme) LLG and
           rk4 with the model's relativistic kinetic density (``relativistic=True``:
           the acceleration solved per site), and cells x field evaluations per second
           (LLG through RK4: four a step), the figure mumax3 quotes (1.98e9 on an H100
           at 2048^2).
radiation  ``fg.radiation.fields`` on the benchmark scene (16 circular orbits at
           beta 0.5..0.8, 16 knots per period, observers on a sphere of radius 50,
           256 times): samples/s = observers x times x particles / t, float64 and float32,
           the cube returned to host memory and, on a GPU, left on the device.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

import fieldgo as fg

HERE = os.path.dirname(os.path.abspath(__file__))


class Report:
    def __init__(self, out: str | None, backend: str):
        self.out = out
        self.meta = {
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "backend": backend,
            "device": _device(backend),
            "host_cpus": os.cpu_count(),
            "python": platform.python_version(),
        }

    def __call__(self, **rec):
        line = json.dumps({**rec, **self.meta})
        print(line, flush=True)
        if self.out:
            with open(self.out, "a") as f:
                f.write(line + "\n")


def _device(backend: str) -> str:
    if backend == "cuda":
        cuda = fg.devices()["cuda"]
        return " ".join(str(cuda.get(k, "")) for k in ("device", "arch")).strip() or "cuda"
    return f"cpu ({os.cpu_count()} cores)"


def _resolve_backend(b: str) -> str:
    if b == "auto":
        return "cuda" if fg.devices()["cuda"].get("available") else "cpu"
    return b


def _theory(name: str):
    return fg.theories.ALL[name]()


def _initial(name: str):
    return fg.initial.skyrmion() if name == "baby_skyrme" else fg.initial.vortex()


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def bench_evolve(report, backend, sizes, theories, steps):
    k1, k2 = min(steps), max(steps)
    for name in theories:
        for n in sizes:
            sim = fg.Simulation(_theory(name), grid=(n, n), spacing=20 / (n - 1), backend=backend)
            sim.set_field(_initial(name))
            sim.minimize(tol=1e-300, max_steps=20, progress=False)  # compile, tune, graphs
            t = {k: _timed(lambda k=k: sim.minimize(tol=1e-300, max_steps=k, progress=False)) for k in (k1, k2)}
            minimize_ms = (t[k2] - t[k1]) / (k2 - k1) * 1e3
            # omega, the stiffest mode, from the flow's dt (omega dt = 2.5): omega dt = 1 for
            # the second-order schemes, lambda dt = omega^2 dt = 1 for LLG (within every limit)
            omega = 2.5 / sim.describe()["flow"]["dt"]
            methods = ["rk4", "leapfrog"] + (["llg", "rk4 relativistic"] if name == "baby_skyrme" else [])
            for label in methods:
                method = label.split()[0]
                target = sim
                if label.endswith("relativistic"):
                    target = fg.Simulation(
                        fg.theories.baby_skyrme(relativistic=True), grid=(n, n), spacing=20 / (n - 1), backend=backend
                    )
                target.set_field(_initial(name))
                dt = 1.0 / omega if method != "llg" else 1.0 / omega**2

                def run(k, method=method, dt=dt, target=target):
                    target.evolve(k * dt, dt=dt, method=method, record_every=k, snapshots=False, progress=False)

                run(5)  # the method's first call: kernels, buffers
                te = {k: _timed(lambda k=k: run(k)) for k in (k1, k2)}
                step_ms = (te[k2] - te[k1]) / (k2 - k1) * 1e3
                evals = 1 if method == "leapfrog" else 4
                report(
                    bench="evolve",
                    theory=name,
                    grid=n,
                    method=label,
                    dt=dt,
                    steps=k2,
                    seconds=te[k2],
                    ms_per_step=step_ms,
                    minimize_ms_per_step=minimize_ms,
                    vs_minimize_step=step_ms / minimize_ms,
                    cell_evaluations_per_s=n * n * evals / (step_ms * 1e-3),
                )


def bench_minimize(report, backend, sizes, theories, precisions, steps, peer_src):
    from peer import Peer, load  # bench/api/peer.py

    peer = backend == "cuda" and load(peer_src)
    for name in theories:
        for n in sizes:
            peer_ms = {}
            if peer:
                p = Peer(name, n)
                p.steps(3)  # its JIT
                for k in steps:
                    peer_ms[k] = p.steps(k) / k * 1e3
                p.close()
            for prec in precisions:
                sim = fg.Simulation(_theory(name), grid=(n, n), spacing=20 / (n - 1), backend=backend, precision=prec)
                sim.set_field(_initial(name))
                sim.minimize(tol=1e-300, max_steps=20, progress=False)  # compile, tune, graphs
                sim.set_field(_initial(name))  # a new field: the next call estimates the stiffness
                first = _timed(lambda: sim.minimize(tol=1e-300, max_steps=1, progress=False))
                one = _timed(lambda: sim.minimize(tol=1e-300, max_steps=1, progress=False))
                t = {k: _timed(lambda k=k: sim.minimize(tol=1e-300, max_steps=k, progress=False)) for k in steps}
                step = (t[max(steps)] - t[min(steps)]) / (max(steps) - min(steps))
                start = t[min(steps)] - min(steps) * step
                for k in steps:
                    rec = dict(
                        bench="minimize",
                        theory=name,
                        grid=n,
                        precision=prec,
                        steps=k,
                        seconds=t[k],
                        ms_per_step=t[k] / k * 1e3,
                        msite_updates_per_s=n * n * k / t[k] / 1e6,
                    )
                    if k in peer_ms:
                        rec.update(
                            soliton_solver_ms_per_step=peer_ms[k],
                            speedup_vs_soliton_solver=peer_ms[k] / (t[k] / k * 1e3),
                        )
                    report(**rec)
                report(
                    bench="minimize_start",
                    theory=name,
                    grid=n,
                    precision=prec,
                    first_call_ms=first * 1e3,
                    one_step_call_ms=one * 1e3,
                    step_ms=step * 1e3,
                    start_ms=start * 1e3,
                    first_start_ms=(first - step) * 1e3,
                    dt=sim.describe().get("flow", {}).get("dt"),
                )
                sim.close()


CHILD = r"""
import json, sys, time
import fieldgo as fg
backend = sys.argv[1]
sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(256, 256), spacing=20 / 255, backend=backend)
sim.set_field(fg.initial.skyrmion())
h = sim.minimize(tol=1e-6, progress=False)
print(json.dumps({"converged": bool(sim.last_status["converged"]), "steps": int(h["step"][-1].as_py()),
                  "energy": sim.energy(), "done": time.time(), "compile_cached": sim.describe()["compile_cached"]}))
"""


def bench_startup(report, backend):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FIELDGO_CACHE=cache)
        for kind in ("cold", "cached"):
            t0 = time.time()
            out = subprocess.run(
                [sys.executable, "-c", CHILD, backend], env=env, capture_output=True, text=True, check=True
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            report(
                bench="startup",
                cache=kind,
                grid=256,
                tol=1e-6,
                seconds=r["done"] - t0,
                converged=r["converged"],
                steps=r["steps"],
                energy=r["energy"],
                compile_cached=r["compile_cached"],
            )


def bench_calls(report, backend, sizes, tmpdir):
    theory = fg.theories.baby_skyrme()
    init = fg.initial.skyrmion()
    for n in sizes:
        field_bytes = 3 * n * n * 8

        def rec(call, seconds, moves=""):
            report(
                bench="call",
                call=call,
                grid=n,
                seconds=seconds,
                ms=seconds * 1e3,
                moves=moves,
                field_mb=field_bytes / 1e6,
            )

        make = lambda: fg.Simulation(theory, grid=(n, n), spacing=20 / (n - 1), backend=backend)  # noqa: E731
        make().close()
        t0 = time.perf_counter()
        sim = make()
        rec("Simulation(...)", time.perf_counter() - t0, "allocates the field, velocity and work buffers")
        sim.set_field(init)
        rec("set_field(f(x, y))", _timed(lambda: sim.set_field(init)), "evaluates f on the host, one upload")
        arr = np.array(sim.field.numpy())
        rec("set_field(array)", _timed(lambda: sim.set_field(arr)), "one upload")
        rec(
            "minimize(max_steps=1), first after set_field",
            _timed(lambda: sim.minimize(tol=1e-300, max_steps=1, progress=False)),
            "stiffness estimate, one step",
        )
        rec(
            "minimize(max_steps=1), later",
            _timed(lambda: sim.minimize(tol=1e-300, max_steps=1, progress=False)),
            "one step",
        )
        rec("sim.field (after a flow)", _timed(lambda: sim.field), "one download of field and velocity")
        rec("sim.field (again)", _timed(lambda: sim.field), "nothing")
        rec("sim.field.numpy()", _timed(lambda: sim.field.numpy()), "nothing (a view)")
        rec("energy()", _timed(sim.energy), "a reduction")
        rec("integral('charge')", _timed(lambda: sim.integral("charge")), "a reduction")
        sim.density("charge")
        rec("density('charge')", _timed(lambda: sim.density("charge")), "one download of one component")
        rec("history", _timed(lambda: sim.history), "the history rows")
        path = os.path.join(tmpdir, f"calls_{n}.arrow")
        sim.save(path)
        rec("save(path)", _timed(lambda: sim.save(path)), "field and velocity to disk")
        sim.close()
        t0 = time.perf_counter()
        sim = fg.load(path, backend=backend)
        rec("fg.load(path)", time.perf_counter() - t0, "field and velocity from disk, one upload")
        sim.minimize(tol=1e-300, max_steps=2, progress=False)
        rec("resume()", _timed(lambda: sim.resume(progress=False)), "a finished flow: nothing")
        rec("device_field()", _timed(sim.device_field), "nothing (the device buffer)")
        sim.close()


def bench_nbody(report, backend, n):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, 3))
    m = np.full(n, 1.0 / n)
    for prec in ("float32", "float64"):
        fg.nbody.accelerations(x[:1024], m[:1024], softening=0.01, precision=prec, backend=backend)
        best = min(
            _timed(lambda: fg.nbody.accelerations(x, m, softening=0.01, precision=prec, backend=backend))
            for _ in range(2)
        )
        report(bench="nbody_accelerations", n=n, precision=prec, seconds=best, interactions_per_s=float(n) * n / best)


def radiation_scene(observers: int, samples: int = 256, particles: int = 16, knots_per_period: int = 16):
    """The Go benchmark's scene (bench/radiation) through the public constructors."""
    periods = 8
    cols = {k: [] for k in ("tau", "t", "x", "y", "z", "ut", "ux", "uy", "uz", "particle")}
    for p in range(particles):
        beta = 0.5 + 0.3 * p / max(particles - 1, 1)
        w, g = beta, 1 / math.sqrt(1 - beta * beta)
        T = 2 * math.pi / w
        k = np.arange(periods * knots_per_period + 1)
        tau = (-periods / 2 * T + periods * T * k / (k.size - 1)) / g
        t = g * tau
        s, c = np.sin(w * t + p), np.cos(w * t + p)
        for key, v in (
            ("tau", tau),
            ("t", t),
            ("x", c),
            ("y", s),
            ("z", 0 * t),
            ("ut", g + 0 * t),
            ("ux", -g * beta * s),
            ("uy", g * beta * c),
            ("uz", 0 * t),
            ("particle", p + 0 * k),
        ):
            cols[key].append(v)
    c = {k: np.concatenate(v) for k, v in cols.items()}
    traj = fg.radiation.trajectory_table(
        c["tau"],
        c["t"],
        c["x"],
        c["y"],
        c["z"],
        c["ut"],
        c["ux"],
        c["uy"],
        c["uz"],
        particle=c["particle"].astype(np.int64),
    )
    o = np.arange(observers)
    z = 1 - 2 * (o + 0.5) / observers
    r = np.sqrt(1 - z * z)
    ph = o * math.pi * (3 - math.sqrt(5))
    obs = np.column_stack([50 * r * np.cos(ph), 50 * r * np.sin(ph), 50 * z])
    times = 50 + 2 * (2 * math.pi / 0.5) * np.arange(samples) / samples
    return traj, obs, times


def bench_radiation(report, backend, observers):
    traj, obs, times = radiation_scene(observers)
    samples = observers * times.size * 16
    for prec in ("float64", "float32"):
        for on_device in (False, True) if backend == "cuda" else (False,):

            def call():
                cube = fg.radiation.fields(traj, obs, times, precision=prec, backend=backend, on_device=on_device)
                if on_device:
                    cube.release()

            call()
            best = min(_timed(call) for _ in range(3))
            report(
                bench="radiation_fields",
                observers=observers,
                times=int(times.size),
                particles=16,
                knots_per_period=16,
                precision=prec,
                on_device=on_device,
                seconds=best,
                samples_per_s=samples / best,
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "what",
        nargs="?",
        default="all",
        choices=["all", "minimize", "evolve", "calls", "startup", "nbody", "radiation"],
    )
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--sizes", type=int, nargs="+", help="grids (default: 256..4096 on a GPU, 256 512 on the CPU)")
    ap.add_argument("--call-sizes", type=int, nargs="+", help="grids of the calls part")
    ap.add_argument("--theories", nargs="+", default=["baby_skyrme", "abelian_higgs"])
    ap.add_argument("--precisions", nargs="+", default=["float64", "float32"])
    ap.add_argument("--steps", type=int, nargs=2, default=[100, 1000], metavar=("SHORT", "LONG"))
    ap.add_argument("--nbody", type=int, help="bodies (default 2^20 on a GPU, 2^14 on the CPU)")
    ap.add_argument("--observers", type=int, help="radiation observers (default 32768 on a GPU, 1024 on the CPU)")
    ap.add_argument("--quick", action="store_true", help="small sizes: checks that every part runs")
    ap.add_argument("--peer-src", help="folder holding the soliton_solver package (else: installed, if it is)")
    ap.add_argument("--out", help="also append the JSON lines to this file")
    a = ap.parse_args()
    backend = _resolve_backend(a.backend)
    gpu = backend == "cuda"
    sizes = a.sizes or ([256, 1024, 2048, 4096] if gpu else [256, 512])
    steps = a.steps
    nb, no = a.nbody or (1 << 20 if gpu else 1 << 14), a.observers or (32768 if gpu else 1024)
    call_sizes = a.call_sizes or ([2048, 4096] if gpu else [512])
    if a.quick:
        sizes, call_sizes, steps, nb, no = [64], [64], [10, 30], 2048, 64
    sys.path.insert(0, HERE)
    report = Report(a.out, backend)
    if a.what in ("all", "minimize"):
        bench_minimize(report, backend, sizes, a.theories, a.precisions, steps, a.peer_src)
    if a.what in ("all", "evolve"):
        bench_evolve(report, backend, sizes, a.theories, steps)
    if a.what in ("all", "calls"):
        with tempfile.TemporaryDirectory() as tmp:
            bench_calls(report, backend, call_sizes, tmp)
    if a.what in ("all", "startup"):
        bench_startup(report, backend)
    if a.what in ("all", "nbody"):
        bench_nbody(report, backend, nb)
    if a.what in ("all", "radiation"):
        bench_radiation(report, backend, no)


if __name__ == "__main__":
    main()
