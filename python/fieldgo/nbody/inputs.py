"""What the N-body functions accept: bodies as numpy or Arrow, masses, precisions and
backends, checked here and handed to Go as one Arrow record batch."""

from __future__ import annotations

import numbers

import numpy as np
import pyarrow as pa

from ..errors import BackendError, LayoutError, ParameterError, ShapeError
from ..runtime.bridge import go

PRECISIONS = ("float64", "float32")
BACKENDS = ("auto", "cpu", "cuda", "gpu")


def precision_name(p) -> str:
    p = np.dtype(p).name if isinstance(p, (type, np.dtype)) else p
    if p not in PRECISIONS:
        raise ParameterError(f"precision {p!r}: use 'float64' or 'float32'")
    return p


def backend_name(b: str) -> str:
    """'auto' runs on a usable NVIDIA GPU and otherwise on the CPU; 'cuda' insists
    (BackendError, with the reason, when there is none)."""
    if b not in BACKENDS:
        raise BackendError(f"unknown backend {b!r}: use one of {BACKENDS}")
    return "cuda" if b == "gpu" else b


def vectors(a, name: str, n: int | None = None) -> np.ndarray:
    """(N, 3) float64 from numpy, Arrow (Table/RecordBatch with x, y, z or vx, vy, vz
    columns, or a fixed-size-list<3> array) or anything array-like of floats."""
    if isinstance(a, (pa.Table, pa.RecordBatch)):
        names = a.schema.names
        for cols in (("x", "y", "z"), ("vx", "vy", "vz")):
            if all(c in names for c in cols):
                a = np.column_stack([column(a.column(c), f"{name}.{c}") for c in cols])
                break
        else:
            raise ShapeError(f"{name}: an Arrow table needs columns x, y, z (or vx, vy, vz); it has {names}")
    elif isinstance(a, (pa.Array, pa.ChunkedArray)):
        if isinstance(a, pa.ChunkedArray):
            a = a.combine_chunks()
        if not (pa.types.is_fixed_size_list(a.type) and a.type.list_size == 3):
            raise ShapeError(f"{name}: an Arrow array must be fixed_size_list<3>, got {a.type}")
        if a.null_count:
            raise LayoutError(f"{name}: {a.null_count} null vectors")
        a = column(a.flatten(), name).reshape(-1, 3)
    elif not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if a.dtype not in (np.float64, np.float32):
        raise LayoutError(f"{name} has dtype {a.dtype}: use float64 or float32")
    if a.ndim != 2 or a.shape[1] != 3:
        raise ShapeError(f"{name} has shape {a.shape}, want (N, 3)")
    if n is not None and a.shape[0] != n:
        raise ShapeError(f"{name} has {a.shape[0]} rows for {n} bodies")
    return np.asarray(a, dtype=np.float64)


def column(c, name) -> np.ndarray:
    if isinstance(c, pa.ChunkedArray):
        c = c.combine_chunks()
    if c.null_count:
        raise LayoutError(f"{name}: {c.null_count} nulls")
    if not (pa.types.is_float64(c.type) or pa.types.is_float32(c.type)):
        raise LayoutError(f"{name} has type {c.type}: use float64 or float32")
    return c.to_numpy(zero_copy_only=False)


def masses_of(m, n: int) -> np.ndarray:
    if isinstance(m, (pa.Array, pa.ChunkedArray)):
        m = column(m, "masses")
    if isinstance(m, numbers.Real) and not isinstance(m, bool):
        return np.full(n, float(m))
    m = np.asarray(m)
    if m.dtype not in (np.float64, np.float32):
        raise LayoutError(f"masses have dtype {m.dtype}: use float64 or float32")
    if m.shape != (n,):
        raise ShapeError(f"masses have shape {m.shape}, want ({n},)")
    return np.asarray(m, dtype=np.float64)


def record_batch(cols: dict) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(np.ascontiguousarray(v)) for v in cols.values()], names=list(cols))


def to_go(batch: pa.RecordBatch, fn, *args):
    pair = go.NewArrowPair()
    try:
        batch._export_to_c(go.ArrowPairArray(pair), pair)
        return fn(pair, *args)
    finally:
        go.FreeArrowPair(pair)


def finite_number(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ParameterError(f"{name} must be a number, got {v!r}")
    return float(v)
