"""GPU benchmark and checks of the direct-summation N-body kernels (kernels/src/nbody.cu).

    python3 bench/nbody_gpu.py [--json OUT.json] [--md OUT.md] [--quick]

Runs on the GPU machine with cupy (no Go, no fieldgo bridge needed): cupy's NVRTC
compiles kernels/src/nbody.cu as it stands in the checkout, with no fast-math option.

1. Checks, each failing the run (exit status 1):
   - accuracy of every kernel (tiled with P = 1, 2, 4, 8 threads per target, untiled,
     with and without potentials) in float32 and float64 against a float64 numpy
     reference: |a_i - a_ref| <= k u sum_j |a_ij| per component, k = (N - 1) + 20
     (core/nbody.ErrorBoundK: N - 1 for the sum, 20 ulps for one term's roundings,
     rsqrt's 2 ulp included), for N = 1000 (partial tiles) and 4096, eps = 0.01 and 0;
   - the unsoftened run is finite (self term masked by mass 0, r^2 = 1);
   - zero-mass bodies feel forces but exert none (bit for bit);
   - the same bits on a second launch (determinism, P > 1 included);
   - device leapfrog (kick_drift + tiled + kick): a Plummer sphere's energy error over
     one crossing time is small and falls as dt^2.
2. Benchmark: interactions/s and % of peak (20 flops/interaction float32, 30 float64;
   peaks 67 and 33.5 TFLOP/s, the H200 datasheet) for N = 2^14 .. 2^20, the tiled
   kernel at its best P against the untiled kernel in the same process, and the
   float32/float64 ratio with the precision it recommends.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "kernels" / "src" / "nbody.cu"
BLOCK = 256
PEAK = {"f32": 67e12, "f64": 33.5e12}  # FLOP/s, H200 datasheet (docs: /work/shared/GPU.md)
FLOPS = {"f32": 20, "f64": 30}
DTYPE = {"f32": np.float32, "f64": np.float64}
U = {"f32": 2.0**-24, "f64": 2.0**-53}
GOALS = {"f32": 2.4e12, "f64": 0.8e12}  # interactions/s for N >= 1.3e5 (issue 8)


def plummer(n: int, seed: int):
    """Aarseth-Henon-Wielen Plummer sphere in Henon units (as core/nbody.Plummer,
    without the exact rescaling): returns (pos (n,3), vel (n,3), m (n,))."""
    rng = np.random.default_rng(seed)
    xm = rng.uniform(0, 0.999, n)
    xm[xm == 0] = 0.5
    r = 1 / np.sqrt(xm ** (-2 / 3) - 1)
    q = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        x4, x5 = rng.random(todo.size), rng.random(todo.size)
        ok = 0.1 * x5 < x4**2 * (1 - x4**2) ** 3.5
        q[todo[ok]] = x4[ok]
        todo = todo[~ok]
    v = q * math.sqrt(2) * (1 + r**2) ** -0.25

    def iso(s):
        z = (1 - 2 * rng.random(n)) * s
        rho = np.sqrt(np.maximum(s**2 - z**2, 0))
        phi = 2 * math.pi * rng.random(n)
        return np.column_stack([rho * np.cos(phi), rho * np.sin(phi), z])

    pos = iso(r) * (3 * math.pi / 16)
    vel = iso(v) * math.sqrt(16 / (3 * math.pi))
    m = np.full(n, 1.0 / n)
    pos -= m @ pos
    vel -= m @ vel
    return pos, vel, m


def reference(pos, m, eps):
    """float64 sums in numpy (self excluded): a, sum_j |a_ij|, phi; blocked over i."""
    n = len(m)
    a, s, phi = np.empty((n, 3)), np.empty((n, 3)), np.empty(n)
    for i0 in range(0, n, 256):
        i1 = min(n, i0 + 256)
        d = pos[None, :, :] - pos[i0:i1, None, :]
        r2 = (d**2).sum(-1) + eps * eps
        idx = np.arange(i0, i1)
        r2[idx - i0, idx] = 1.0
        inv = 1 / np.sqrt(r2)
        w = m[None, :] * inv**3
        w[idx - i0, idx] = 0.0
        t = w[:, :, None] * d
        a[i0:i1], s[i0:i1] = t.sum(1), np.abs(t).sum(1)
        pm = m[None, :] * inv
        pm[idx - i0, idx] = 0.0
        phi[i0:i1] = -pm.sum(1)
    return a, s, phi


class Kernels:
    def __init__(self, cp):
        self.cp = cp
        src = SOURCE.read_text()
        # cupy compiles with NVRTC for the current device; no fast-math options.
        self.mod = cp.RawModule(code=src, options=("--std=c++17",))
        self._f = {}

    def fn(self, name):
        if name not in self._f:
            self._f[name] = self.mod.get_function(name)
        return self._f[name]

    def body(self, pos, m, prec):
        b = np.empty((len(m), 4), dtype=DTYPE[prec])
        b[:, :3], b[:, 3] = pos, m
        return self.cp.asarray(b)

    def launch(self, variant, prec, body, acc, eps, pot=False):
        """variant: ("tiled", P) or ("untiled", None)."""
        n = body.shape[0]
        suf = prec + ("_pot" if pot else "")
        eps2 = DTYPE[prec](eps) * DTYPE[prec](eps)
        if variant[0] == "tiled":
            p = variant[1]
            t = BLOCK // p
            self.fn(f"fg_nbody_tiled{p}_{suf}")(((n + t - 1) // t,), (t, p), (body, acc, np.int32(n), eps2))
        else:
            self.fn(f"fg_nbody_untiled_{suf}")(((n + 127) // 128,), (128,), (body, acc, np.int32(n), eps2))


VARIANTS = [("tiled", 1), ("tiled", 2), ("tiled", 4), ("tiled", 8), ("untiled", None)]


def vname(v):
    return f"tiled P={v[1]}" if v[0] == "tiled" else "untiled"


def checks(k: Kernels, log):
    cp = k.cp
    failures = []
    results = []
    for n in (1000, 4096):
        pos, _, m = plummer(n, seed=n)
        for prec in ("f32", "f64"):
            p_in, m_in = pos, m
            if prec == "f32":  # measure the arithmetic, not the input rounding
                p_in, m_in = pos.astype(np.float32).astype(np.float64), m.astype(np.float32).astype(np.float64)
            for eps in (0.01, 0.0):
                ref, scale, phi_ref = reference(p_in, m_in, eps)
                body = k.body(p_in, m_in, prec)
                kk = (n - 1) + 20
                u = U[prec] + 2.0**-53
                for v in VARIANTS:
                    for pot in (False, True):
                        acc = cp.zeros((n, 4), dtype=DTYPE[prec])
                        k.launch(v, prec, body, acc, eps, pot)
                        got = cp.asnumpy(acc).astype(np.float64)
                        again = cp.zeros_like(acc)
                        k.launch(v, prec, body, again, eps, pot)
                        same = bool(cp.all(again == acc))
                        err = np.abs(got[:, :3] - ref)
                        ok = bool(np.all(np.isfinite(got)) and np.all(err <= kk * u * scale))
                        keff = float(np.max(err / (u * scale)))
                        if pot:
                            perr = np.abs(got[:, 3] - phi_ref)
                            ok = ok and bool(np.all(perr <= kk * u * np.abs(phi_ref)))
                        row = dict(check="accuracy", n=n, precision=prec, eps=eps, kernel=vname(v), potentials=pot,
                                   k_bound=kk, k_measured=keff, deterministic=same, ok=ok and same)
                        results.append(row)
                        if not row["ok"]:
                            failures.append(row)
        # zero-mass bodies: exert nothing (bit for bit), feel something
        for prec in ("f32", "f64"):
            mz = m.copy()
            mz[::7] = 0
            keep = mz > 0
            for v in VARIANTS:
                a_all = cp.zeros((n, 4), dtype=DTYPE[prec])
                k.launch(v, prec, k.body(pos, mz, prec), a_all, 0.01)
                nk = int(keep.sum())
                a_keep = cp.zeros((nk, 4), dtype=DTYPE[prec])
                k.launch(v, prec, k.body(pos[keep], mz[keep], prec), a_keep, 0.01)
                A, B = cp.asnumpy(a_all), cp.asnumpy(a_keep)
                # Bit for bit only when the partition of sources into thread slices is the
                # same; with P > 1 removing bodies moves sources between slices, so there
                # the check is the float bound instead.
                if v == ("tiled", 1) or v[0] == "untiled":
                    exert = bool(np.array_equal(A[keep, :3], B[:, :3]))
                else:
                    sc = reference(pos[keep], mz[keep], 0.01)[1]
                    exert = bool(np.all(np.abs(A[keep, :3] - B[:, :3]) <= 2 * ((nk - 1) + 20) * U[prec] * sc))
                feel = bool(np.all(np.linalg.norm(A[~keep, :3], axis=1) > 0))
                row = dict(check="zero-mass", n=n, precision=prec, kernel=vname(v), ok=exert and feel)
                results.append(row)
                if not row["ok"]:
                    failures.append(row)
    for r in results:
        if r["check"] == "accuracy" and r["n"] == 4096 and r["eps"] == 0.01 and not r["potentials"]:
            log(f"  accuracy {r['precision']} {r['kernel']:12s} N={r['n']}: k measured {r['k_measured']:.1f} "
                f"(bound {r['k_bound']}), deterministic={r['deterministic']}, ok={r['ok']}")
    log(f"  {len(results)} checks, {len(failures)} failed")
    return results, failures


def leapfrog(k: Kernels, log):
    """Device KDK on a softened Plummer sphere (N = 1024, eps = 0.05) for one crossing
    time 2 sqrt 2; energy error measured on the host at the end of each run."""
    cp = k.cp
    n, eps = 1024, 0.05
    pos, vel, m = plummer(n, seed=5)
    out = []

    def energy(body_h, vel_h, prec):
        _, _, phi = reference(body_h[:, :3].astype(np.float64), body_h[:, 3].astype(np.float64), eps)
        mm = body_h[:, 3].astype(np.float64)
        return 0.5 * np.sum(mm * np.sum(vel_h[:, :3].astype(np.float64) ** 2, 1)) + 0.5 * np.sum(mm * phi)

    for prec in ("f64", "f32"):
        errs = []
        for spu in (64, 128):
            dt = 1.0 / spu
            steps = int(math.ceil(2 * math.sqrt(2) / dt))
            body = k.body(pos, m, prec)
            v4 = np.zeros((n, 4), dtype=DTYPE[prec])
            v4[:, :3] = vel
            velo = cp.asarray(v4)
            acc = cp.zeros((n, 4), dtype=DTYPE[prec])
            e0 = energy(cp.asnumpy(body), cp.asnumpy(velo), prec)
            h, d = DTYPE[prec](dt / 2), DTYPE[prec](dt)
            grid = ((n + 127) // 128,)
            k.launch(("tiled", 4), prec, body, acc, eps)
            for _ in range(steps):
                k.fn(f"fg_nbody_kick_drift_{prec}")(grid, (128,), (body, velo, acc, np.int32(n), h, d))
                k.launch(("tiled", 4), prec, body, acc, eps)
                k.fn(f"fg_nbody_kick_{prec}")(grid, (128,), (velo, acc, np.int32(n), h))
            e1 = energy(cp.asnumpy(body), cp.asnumpy(velo), prec)
            errs.append(abs(e1 - e0) / abs(e0))
        order = math.log2(errs[0] / errs[1]) if errs[1] > 0 else float("nan")
        ok = errs[0] < 1e-3 and (prec == "f32" or 1.5 < order < 2.5)
        out.append(dict(check="leapfrog", precision=prec, rel_energy_error=errs, order=order, ok=ok))
        log(f"  leapfrog {prec}: |dE/E| at t_cr = {errs[0]:.2e} (dt=1/64), {errs[1]:.2e} (dt=1/128), order {order:.2f}, ok={ok}")
    return out, [r for r in out if not r["ok"]]


def timeit(k: Kernels, v, prec, body, acc, eps, min_seconds):
    cp = k.cp
    k.launch(v, prec, body, acc, eps)  # warm-up (and module load)
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    reps, elapsed = 1, 0.0
    while True:
        start.record()
        for _ in range(reps):
            k.launch(v, prec, body, acc, eps)
        stop.record()
        stop.synchronize()
        elapsed = cp.cuda.get_elapsed_time(start, stop) / 1e3
        if elapsed >= min_seconds or reps >= 1000:
            return elapsed / reps
        reps = max(reps * 2, int(reps * min_seconds / max(elapsed, 1e-6)) + 1)


def bench(k: Kernels, log, quick):
    cp = k.cp
    rows = []
    sizes = [2**e for e in range(14, 21)] if not quick else [2**14, 2**17]
    for prec in ("f32", "f64"):
        for n in sizes:
            pos, _, m = plummer(n, seed=1)
            body = k.body(pos, m, prec)
            acc = cp.zeros((n, 4), dtype=DTYPE[prec])
            # The untiled kernel at the largest sizes costs seconds a launch: time it once.
            min_s = 0.2
            res = {}
            for v in VARIANTS:
                if v[0] == "tiled" and n >= 2**19 and v[1] > 2:
                    continue  # enough targets to fill the GPU: P > 2 only adds combine work
                t = timeit(k, v, prec, body, acc, 0.01, min_s)
                res[vname(v)] = t
            best = min((t, name) for name, t in res.items() if name != "untiled")
            inter = n * n / best[0]
            row = dict(precision=prec, n=n, best_kernel=best[1], seconds=best[0], interactions_per_s=inter,
                       tflops=inter * FLOPS[prec] / 1e12, percent_of_peak=100 * inter * FLOPS[prec] / PEAK[prec],
                       untiled_interactions_per_s=n * n / res["untiled"],
                       tiled_over_untiled=res["untiled"] / best[0],
                       all_seconds=res)
            rows.append(row)
            log(f"  {prec} N=2^{int(math.log2(n))}: {best[1]:11s} {inter:.3e} int/s, {row['tflops']:.1f} TFLOP/s "
                f"({row['percent_of_peak']:.0f}% of peak); untiled {row['untiled_interactions_per_s']:.3e} "
                f"(tiled x{row['tiled_over_untiled']:.2f})")
    return rows


def summary(rows):
    big = [r for r in rows if r["n"] >= 131072]
    out = {}
    for prec in ("f32", "f64"):
        rs = [r["interactions_per_s"] for r in big if r["precision"] == prec]
        out[prec] = dict(min_rate_n_ge_2_17=min(rs) if rs else None,
                         goal=GOALS[prec], meets_goal=bool(rs) and min(rs) >= GOALS[prec])
    ratios = {}
    for r32 in rows:
        if r32["precision"] != "f32":
            continue
        r64 = next((r for r in rows if r["precision"] == "f64" and r["n"] == r32["n"]), None)
        if r64:
            ratios[r32["n"]] = r32["interactions_per_s"] / r64["interactions_per_s"]
    out["f32_over_f64"] = ratios
    big_ratios = [v for n, v in ratios.items() if n >= 131072]
    ratio = min(big_ratios) if big_ratios else None
    out["recommendation"] = (
        f"float32 is {ratio:.1f}x faster for N >= 2^17; its force error is bounded by (N+19) u32 sum_j |a_ij| "
        f"(measured ~20 u32 sum_j |a_ij|, about 1e-6 relative): float32 for forces when a 1e-6 relative force "
        f"error is below the integration error (dt^2 leapfrog), float64 when trajectories must be reproducible "
        f"beyond that or for long-term conservation tests" if ratio else "no ratio measured")
    return out


def markdown(meta, checks_rows, lf_rows, rows, summ):
    lines = [f"Measured {meta['date']} on {meta['device']} (cupy {meta['cupy']}, CUDA runtime {meta['cuda']}).", ""]
    lines += ["| precision | N | best kernel | interactions/s | TFLOP/s | % of peak | untiled interactions/s | tiled/untiled |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['precision']} | 2^{int(math.log2(r['n']))} | {r['best_kernel']} | {r['interactions_per_s']:.3e} | "
                     f"{r['tflops']:.1f} | {r['percent_of_peak']:.0f}% | {r['untiled_interactions_per_s']:.3e} | "
                     f"{r['tiled_over_untiled']:.2f} |")
    lines += ["", "float32/float64 ratio: " + ", ".join(f"2^{int(math.log2(n))}: {v:.2f}" for n, v in summ["f32_over_f64"].items()),
              "", f"Goal (N >= 1.3e5): float32 {summ['f32']['min_rate_n_ge_2_17']:.3e} (goal 2.4e12, met: {summ['f32']['meets_goal']}), "
              f"float64 {summ['f64']['min_rate_n_ge_2_17']:.3e} (goal 0.8e12, met: {summ['f64']['meets_goal']})",
              "", "Recommendation: " + summ["recommendation"], "",
              f"Checks: {sum(r['ok'] for r in checks_rows)}/{len(checks_rows)} accuracy/zero-mass checks passed; "
              + "; ".join(f"leapfrog {r['precision']} |dE/E| {r['rel_energy_error'][0]:.1e} -> {r['rel_energy_error'][1]:.1e} "
                          f"(order {r['order']:.2f})" for r in lf_rows)]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write all results here")
    ap.add_argument("--md", help="write a markdown summary here")
    ap.add_argument("--quick", action="store_true", help="two sizes only")
    args = ap.parse_args()
    log = lambda s: print(s, flush=True)  # noqa: E731
    try:
        import cupy as cp
    except ImportError as exc:
        sys.exit(f"cupy is needed on the GPU machine: {exc}")
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    meta = dict(date=time.strftime("%Y-%m-%d"), device=props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
                sms=props["multiProcessorCount"], cupy=cp.__version__, cuda=cp.cuda.runtime.runtimeGetVersion(),
                source=str(SOURCE.relative_to(ROOT)))
    log(f"device: {meta['device']} ({meta['sms']} SMs), cupy {meta['cupy']}")
    t0 = time.time()
    k = Kernels(cp)
    log("checks:")
    crow, cfail = checks(k, log)
    lrow, lfail = leapfrog(k, log)
    log("benchmark:")
    rows = bench(k, log, args.quick)
    summ = summary(rows)
    log(json.dumps({kk: v for kk, v in summ.items() if kk != "f32_over_f64"}, indent=1))
    md = markdown(meta, crow, lrow, rows, summ)
    print(md)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(dict(meta=meta, checks=crow, leapfrog=lrow, bench=rows,
                                                           summary=summ), indent=1, default=str))
    if args.md:
        pathlib.Path(args.md).write_text(md)
    log(f"total {time.time() - t0:.0f} s")
    failures = cfail + lfail
    if failures:
        log(f"FAILED checks: {json.dumps(failures, default=str)[:4000]}")
        sys.exit(1)


if __name__ == "__main__":
    main()
