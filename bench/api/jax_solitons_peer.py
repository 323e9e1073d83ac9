"""Headless timing of jax-solitons' Skyrme relaxation (pure-Python JAX; PyPI `jax-solitons` 0.1.0).

The peer of bench/api/skyrme3d.py. Get the package with `pip download --no-deps jax-solitons`,
unpack the wheel (it is a zip) into e.g. .gpu/jaxsol and run, on the GPU machine (JAX is there):

    python bench/api/jax_solitons_peer.py --src .gpu/jaxsol [--sizes 64 128 256] [--box 12]
        [--mass 1] [--converge 96] [--tol 1e-6] [--check-every 500] [--cap 200000] [--time-cap 400]
        [--out FILE]

`jax_solitons/__init__.py` imports `run_farm` (its campaign layer) through `jax_solitons.runs`;
the Skyrme path uses none of it, so a minimal stand-in module is installed when `run_farm`
is not importable (or put run-farm's unpacked wheel on the path too).

What runs: `jax_solitons.models.skyrme.skyrme_model(c2=1, c4=1, m_pi=mass, c0=2)`, whose energy
Σ|d_iφ|² + Σ_{i<j}(M_ii M_jj - M_ij²) + 2m²(1 - φ0) (forward differences, periodic box) is
fieldgo's E = ∫ -½Tr(L_iL_i) - 1/16 Tr([L_i,L_j]²) + m² Tr(1 - U) term by term, so E/(12π²) is
compared directly. Lattice: n³ sites of spacing box/(n - 1) as fieldgo's (the periodic
BoxGrid gets L = n·h), float64, the hedgehog f = 4 arctan(exp(-r)) placed on fieldgo's site
positions (`--seed own`: its compact `seeds.skyrmion_hedgehog`).

Stepper: `jax_solitons.steppers.flow.arrested_flow`, its monotone backtracking descent (a
trial step is accepted only if E does not rise, else dt halves; dt grows 5 % per accepted
step). It is a first-order projected gradient flow, not fieldgo's second-order arrested
Newton flow. Its Fourier filter 1/(1 + dt(α k² + β k⁴)) is applied to the stepped field
itself, so its fixed point is not a critical point of E; with the defaults (α = 2, β = 1,
dt_max = 5e-3) the gradient hardly moves (at 48³ of box 12 the flow stops within 10 steps;
the `defaults` row reports 50 steps). The timed flow uses α = β = 0 (the filter is then 1;
its two FFTs still run) and dt_max = --dt-max (default 0.005 / h: with a larger one the
energy test accepts steps past linear stability at the core, which unwinds the Skyrmion).
It has no gradient stopping test: the relaxation calls it in chunks of --check-every steps,
passing dt on, and stops when max|P dE/dφ| / h³ (the tangent-projected gradient per unit
volume, fieldgo's max|dE/dphi|) < --tol. Each call re-traces its jitted closures; a
persistent compilation cache (a fresh directory per process) turns the recompiles after
the first into cache loads.

Prints JSON lines (and appends them to --out):

defaults  arrested_flow with its own defaults for 50 steps at --converge: steps taken, E.
step      ms per arrested_flow step (T(K2) - T(K1) over K2 - K1 steps, after a warm-up call;
          block_until_ready on the result), grad evaluations per step, the first call's
          time (trace and XLA compile), the per-call overhead, one jitted gradient's time,
          and ms per projected-Adam step (`adam_flow`, lr 1e-3) the same way.
relax     the B = 1 relaxation at --converge³ (stopped at --cap steps or --time-cap seconds:
          a first-order flow at dt ~ h² moves slowly; at 64³ of box 8 on a CPU max|dE/dphi|
          fell from 8 to 1.4 in 1,500 steps): steps, gradient evaluations, flow seconds,
          seconds from process start, E/(12π²), the baryon number (its exact degree).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import types  # noqa: E402


def _stub_run_farm() -> None:
    try:
        import run_farm.config  # noqa: F401
    except ImportError:

        def _absent(*args, **kwargs):
            raise NotImplementedError("run_farm is stubbed in this benchmark")

        rf, cfg = types.ModuleType("run_farm"), types.ModuleType("run_farm.config")
        cfg.run_dir = cfg.save_checkpoint = cfg.load_checkpoint = _absent
        rf.config = cfg
        sys.modules["run_farm"], sys.modules["run_farm.config"] = rf, cfg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="folder holding the unpacked jax_solitons package")
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 128, 256])
    ap.add_argument("--box", type=float, default=12.0)
    ap.add_argument("--mass", type=float, default=1.0)
    ap.add_argument("--converge", type=int, default=96, help="lattice of the relaxation (0: none)")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--check-every", type=int, default=500)
    ap.add_argument("--cap", type=int, default=200_000, help="steps at most in the relaxation")
    ap.add_argument("--time-cap", type=float, default=400.0, help="seconds of flow at most in the relaxation")
    ap.add_argument("--dt-max", type=float, default=0.0, help="arrested_flow's dt_max (its default 5e-3); 0: 0.005 / h")
    ap.add_argument("--seed", default="fieldgo", choices=["fieldgo", "own"])
    ap.add_argument("--no-adam", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()

    sys.path.insert(0, os.path.abspath(a.src))
    _stub_run_farm()
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp(prefix="jaxsol_cc_"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    import jax.numpy as jnp
    import numpy as np
    from jax_solitons.grid import BoxGrid
    from jax_solitons.models.skyrme import baryon_charge, skyrme_model
    from jax_solitons.seeds import skyrmion_hedgehog
    from jax_solitons.steppers.adam import adam_flow
    from jax_solitons.steppers.flow import arrested_flow

    model = skyrme_model(c2=1.0, c4=1.0, m_pi=a.mass, c0=2.0)
    e12 = 12 * math.pi**2
    device = str(jax.devices()[0])

    def report(row):
        line = json.dumps({**row, "device": device, "date": time.strftime("%Y-%m-%d", time.gmtime())})
        print(line, flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(line + "\n")

    def flow_kw(h):
        return dict(alpha=0.0, beta=0.0, dt_max=a.dt_max or 0.005 / h)

    def make(n):
        h = a.box / (n - 1)
        grid = BoxGrid(N=n, L=n * h, dtype=jnp.float64)
        if a.seed == "own":
            return grid, h, skyrmion_hedgehog(grid, center=(-h / 2,) * 3)
        x, y, z = (np.asarray(c) + h / 2 for c in grid.coords())  # fieldgo's sites: -box/2 + i h
        r = np.sqrt(x * x + y * y + z * z)
        f = 4 * np.arctan(np.exp(-r))
        s = np.sin(f) / np.where(r > 0, r, 1.0)
        return grid, h, jnp.asarray(np.stack([np.cos(f), s * x, s * y, s * z]))

    def max_grad(grid, h):
        g = jax.grad(lambda p: model.energy(p, grid))
        return jax.jit(lambda p: jnp.max(jnp.abs(model.constraint.project_tangent(p, g(p)))) / h**3)

    def trials(hist, dt0, h):
        """Gradient evaluations: 1 + the rejections (dt halved) of each accepted step."""
        total, prev = 0, dt0
        for _, _, dt in hist[:-1]:
            k = 0 if dt >= flow_kw(h)["dt_max"] else max(0, round(math.log2(prev * 1.05 / dt)))
            total, prev = total + 1 + k, dt
        return total

    if a.converge:
        grid, h, phi = make(a.converge)
        out, hist = arrested_flow(model, phi, grid, steps=50, log_every=1)
        mg = max_grad(grid, h)
        report(
            {
                "bench": "defaults",
                "n": a.converge,
                "params": "arrested_flow defaults (alpha=2, beta=1, dt=2e-4, dt_max=5e-3)",
                "steps_accepted": len(hist) - 1 if len(hist) == 51 else len(hist) - 2,
                "stopped_early": len(hist) < 51,
                "energy_over_12pi2": hist[-1][1] / e12,
                "max_grad": float(mg(out)),
            }
        )
        t = time.perf_counter()
        E0 = float(model.energy(phi, grid)) / e12
        dt, steps, evals, calls, g, stalled = 2e-4, 0, 0, 0, float(mg(phi)), False
        while g >= a.tol and steps < a.cap and not stalled and time.perf_counter() - t < a.time_cap:
            k = min(a.check_every, a.cap - steps)
            phi, hist = arrested_flow(model, phi, grid, dt=dt, steps=k, log_every=1, **flow_kw(h))
            evals += trials(hist, dt, h)
            stalled = len(hist) < k + 1
            steps += len(hist) - (2 if stalled else 1)
            dt, calls = hist[-1][2], calls + 1
            g = float(mg(phi))
        jax.block_until_ready(phi)
        flow = time.perf_counter() - t
        report(
            {
                "bench": "relax",
                "n": a.converge,
                "box": a.box,
                "mass": a.mass,
                "seed": a.seed,
                "tol": a.tol,
                "converged": g < a.tol,
                "stalled": stalled,
                "steps": steps,
                "grad_evals": evals,
                "calls": calls,
                "max_grad": g,
                "final_dt": dt,
                "flow_s": round(flow, 3),
                "from_process_start_s": round(time.perf_counter() - T0, 3),
                "start_energy_over_12pi2": E0,
                "energy_over_12pi2": float(model.energy(phi, grid)) / e12,
                "baryon": baryon_charge(phi, grid),
            }
        )
        del phi
    for n in a.sizes:
        grid, h, phi = make(n)
        k1, k2 = (5, 25) if n >= 256 else (10, 60)

        def timed(fn, k):
            t = time.perf_counter()
            out = fn(k)
            jax.block_until_ready(out[0])
            return time.perf_counter() - t, out

        run = lambda k, phi=phi, grid=grid, h=h: arrested_flow(model, phi, grid, steps=k, log_every=1, **flow_kw(h))  # noqa: E731
        first, _ = timed(run, 1)
        t1, (_, h1) = timed(run, k1)
        t2, (_, h2) = timed(run, k2)
        step = (t2 - t1) / (k2 - k1)
        g = jax.jit(jax.grad(lambda p, grid=grid: model.energy(p, grid)))
        jax.block_until_ready(g(phi))
        t = time.perf_counter()
        for _ in range(10):
            r = g(phi)
        jax.block_until_ready(r)
        row = {
            "bench": "step",
            "n": n,
            "box": a.box,
            "mass": a.mass,
            "stepper": "arrested_flow(alpha=0, beta=0)",
            "ms_per_step": round(step * 1e3, 4),
            "grad_evals_per_step": (trials(h2, 2e-4, h) - trials(h1, 2e-4, h)) / (k2 - k1),
            "site_updates_per_s": n**3 / step,
            "first_call_s": round(first, 3),
            "call_overhead_s": round(t1 - k1 * step, 4),
            "grad_ms": round((time.perf_counter() - t) / 10 * 1e3, 4),
        }
        if not a.no_adam:
            adam = lambda k, phi=phi, grid=grid: adam_flow(model, phi, grid, lr=1e-3, steps=k)  # noqa: E731
            timed(adam, 1)
            ta1, _ = timed(adam, k1)
            ta2, _ = timed(adam, k2)
            row["adam_ms_per_step"] = round((ta2 - ta1) / (k2 - k1) * 1e3, 4)
        report(row)
        del phi


if __name__ == "__main__":
    main()
