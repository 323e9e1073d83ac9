"""The results table: one row per point, a column per parameter and per declared
density, then the run's outcome."""

from __future__ import annotations

import json

import pyarrow as pa

_TAIL = [
    ("steps", pa.int64()),
    ("converged", pa.bool_()),
    ("max_grad", pa.float64()),
    ("backend", pa.string()),
    ("device", pa.string()),
    ("wall_s", pa.float64()),
    ("file", pa.string()),
    ("error", pa.string()),
    ("error_type", pa.string()),
    ("host", pa.string()),
    ("worker", pa.string()),
    ("initial", pa.string()),
    ("resumed", pa.bool_()),
]


def results_table(rows: list, points: list) -> pa.Table:
    names, integrals = [], []
    for p in points:
        for k in p.labels:
            if k not in names:
                names.append(k)
        for d in p.spec.get("densities", []):
            if d not in integrals:
                integrals.append(d)
    columns = {"point_id": pa.array([r["point_id"] for r in rows], pa.string())}
    for k in names:
        columns[k] = _column([r["params"].get(k) for r in rows])
    columns["theory"] = pa.array([r.get("theory") for r in rows], pa.string())
    columns["energy"] = pa.array([r.get("energy") for r in rows], pa.float64())
    for d in integrals:
        col = d if d not in columns else f"integral_{d}"
        columns[col] = pa.array([(r.get("integrals") or {}).get(d) for r in rows], pa.float64())
    for k, typ in _TAIL:
        columns[k] = pa.array([r.get(k) for r in rows], typ)
    return pa.table(columns)


def _column(values):
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(
            [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values], pa.string()
        )
