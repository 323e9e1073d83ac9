"""Markdown tables from the JSON lines of bench/api/run.py.

    python bench/api/table.py results.jsonl

Prints the tables docs/performance/api.md and the README quote: ms per step of 1000-step
minimize() calls with soliton_solver's beside them, what a call costs beyond its steps,
start-up, N-body and radiation.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    recs = [json.loads(line) for line in open(path) if line.strip()]
    if not recs:
        return
    meta = recs[0]
    print(
        f"Measured {meta['date']} on {meta['device']} ({meta['backend']}, {meta['host_cpus']} host cores, "
        f"Python {meta['python']}).\n"
    )
    steps = [r for r in recs if r["bench"] == "minimize"]
    if steps:
        long = max(r["steps"] for r in steps)
        rows = defaultdict(dict)
        for r in steps:
            if r["steps"] == long:
                rows[(r["theory"], r["grid"])][r["precision"]] = r
        print(f"`minimize(max_steps={long})` from Python, start included (ms per step):\n")
        print("| theory | grid | float64 | float32 | soliton_solver | float64 vs soliton_solver |")
        print("|---|---|---|---|---|---|")
        for (th, n), by in sorted(rows.items()):
            f64, f32 = by.get("float64"), by.get("float32")
            peer = (f64 or f32 or {}).get("soliton_solver_ms_per_step")
            ratio = f64.get("speedup_vs_soliton_solver") if f64 else None
            print(
                f"| {th} | {n}² | {_f(f64, 'ms_per_step')} | {_f(f32, 'ms_per_step')} | "
                f"{'' if peer is None else f'{peer:.3f}'} | {'' if ratio is None else f'{ratio:.1f}x'} |"
            )
        print()
    starts = [r for r in recs if r["bench"] == "minimize_start"]
    if starts:
        print(
            "What a `minimize(max_steps=1)` call costs beyond its one step (ms; start, check step, end): "
            "the first call after `set_field` (it estimates the stiffness) and a later call:\n"
        )
        print("| theory | grid | precision | step | first call | later calls |")
        print("|---|---|---|---|---|---|")
        for r in starts:
            first = r.get("first_start_ms")
            later = r["one_step_call_ms"] - r["step_ms"]
            print(
                f"| {r['theory']} | {r['grid']}² | {r['precision']} | {r['step_ms']:.3f} | "
                f"{'' if first is None else f'{first:.2f}'} | {later:.2f} |"
            )
        print()
    calls = [r for r in recs if r["bench"] == "call"]
    if calls:
        print("Every call on a Baby Skyrme simulation, timed once after a warm-up of the same call:\n")
        print("| call | grid | ms | moves |")
        print("|---|---|---|---|")
        for r in calls:
            print(f"| `{r['call']}` | {r['grid']}² | {r['ms']:.2f} | {r['moves']} |")
        print()
    for r in recs:
        if r["bench"] == "startup":
            print(
                f"- process start to a converged skyrmion (256², tol {r['tol']:g}), {r['cache']} cache: "
                f"{r['seconds']:.2f} s ({r['steps']} steps)"
            )
        elif r["bench"] == "nbody_accelerations":
            print(
                f"- `fg.nbody.accelerations`, N = {r['n']}, {r['precision']}: {r['seconds']:.3f} s, "
                f"{r['interactions_per_s']:.3g} interactions/s"
            )
        elif r["bench"] == "radiation_fields":
            where = " (cube left on the device)" if r.get("on_device") else ""
            print(
                f"- `fg.radiation.fields`{where}, {r['observers']} observers x {r['times']} times x "
                f"{r['particles']} particles, {r['precision']}: {r['seconds'] * 1e3:.1f} ms, "
                f"{r['samples_per_s']:.3g} samples/s"
            )


def _f(r, key):
    return "" if r is None else f"{r[key]:.4f}"


if __name__ == "__main__":
    main(sys.argv[1])
