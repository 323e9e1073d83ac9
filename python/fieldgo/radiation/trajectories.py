"""Trajectory tables: the Arrow layout the field computation reads, built from numpy
(proper-time samples, or lab-time samples with 3-velocities) and validated in Go."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from ..errors import LayoutError, ParameterError, ShapeError
from ..runtime.bridge import go, import_table

STATE = ("t", "x", "y", "z", "ut", "ux", "uy", "uz")


def record_batch(data) -> pa.RecordBatch:
    """One RecordBatch over the data, without a copy when it is one chunk."""
    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table):
        tab = data
    elif hasattr(data, "to_arrow") and not hasattr(data, "__arrow_c_stream__"):
        tab = data.to_arrow()
    elif hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        tab = pa.table(data)
    elif isinstance(data, dict):
        tab = pa.table(data)
    else:
        raise ShapeError(f"expected an Arrow table or record batch, got {type(data).__name__}")
    if isinstance(tab, pa.RecordBatch):
        return tab
    batches = tab.combine_chunks().to_batches()
    if not batches:
        return pa.RecordBatch.from_pylist([], schema=tab.schema)
    return batches[0]


def export(batch: pa.RecordBatch) -> int:
    pair = go.NewArrowPair()
    try:
        batch._export_to_c(go.ArrowPairArray(pair), pair)
    except BaseException:
        go.FreeArrowPair(pair)
        raise
    return pair


def numbers_of(v, name: str) -> np.ndarray:
    """v as a contiguous float64 array; strings, booleans, complex numbers and
    objects that are not numbers are a LayoutError naming it."""
    a = np.asarray(v)
    if a.dtype.kind == "O":  # e.g. a pandas column of a nullable dtype
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    if a.dtype.kind not in "fiu":
        raise LayoutError(f"{name} have dtype {a.dtype}: use real numbers (float64, float32 or integers)")
    return np.ascontiguousarray(a, dtype=np.float64)


def scalar(v, name: str) -> float:
    a = numbers_of(v, name)
    if a.size != 1:
        raise ShapeError(f"{name} must be one number, got shape {a.shape}")
    return float(a.ravel()[0])


def count(v, name: str, lo: int) -> int:
    """An integer option (a Python or numpy integer, or a float with an integral
    value) of at least lo."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}={v!r}: want an integer >= {lo}")
    if not np.isfinite(v) or v != int(v) or int(v) < lo:
        raise ParameterError(f"{name}={v!r}: want an integer >= {lo}")
    return int(v)


def particle_ids(particle, n: int) -> np.ndarray:
    """Particle ids: integers, or floats with integral values; None: all 0."""
    if particle is None:
        return np.zeros(n, dtype=np.int64)
    a = np.asarray(particle).ravel()
    if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu":
        what = " with non-integral or non-finite values" if a.dtype.kind == "f" else ""
        raise LayoutError(f"particle ids have dtype {a.dtype}{what}: use integers")
    if a.size != n:
        raise ShapeError(f"particle has {a.size} rows, the other columns {n}")
    return np.ascontiguousarray(a, dtype=np.int64)


def finite(v, name: str) -> np.ndarray:
    """numbers_of(v), refusing NaN and infinities by name (JSON cannot carry them)."""
    a = numbers_of(v, name)
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite, got {v!r}")
    return a


def per_particle(v, name: str) -> str:
    """A metadata value that is one number or one per particle, as Go reads it."""
    a = np.atleast_1d(finite(v, name))
    return repr(float(a[0])) if a.size == 1 else json.dumps(a.tolist())


def metadata(units, c, charge, mass) -> dict:
    return {
        "units": str(units),
        "c": repr(scalar(c, "c")),
        "charge": per_particle(charge, "charges"),
        "mass": per_particle(mass, "masses"),
    }


def trajectory_table(
    tau,
    t,
    x,
    y,
    z,
    ut,
    ux,
    uy,
    uz,
    *,
    particle=None,
    charge=1.0,
    mass=1.0,
    c=1.0,
    units="gaussian",
    validate_: bool = True,
    tolerance: float = 1e-6,
) -> pa.Table:
    """A trajectory table from arrays of equal length (one row per sample, rows of a
    particle contiguous and in increasing tau). ``particle`` defaults to 0 for every
    row; ``charge`` and ``mass`` are one number or one per particle. Validated in Go
    (sorted, finite, >= 4 samples per particle, u.u = c^2 within ``tolerance``):
    problems raise :class:`fieldgo.TrajectoryError`."""
    cols = [numbers_of(a, name).ravel() for a, name in zip((tau, t, x, y, z, ut, ux, uy, uz), ("tau", *STATE))]
    n = cols[0].size
    if any(a.size != n for a in cols):
        raise ShapeError(f"trajectory columns have different lengths: {[a.size for a in cols]}")
    pid = particle_ids(particle, n)
    names = ["particle", "tau", *STATE]
    tab = pa.table(
        [pa.array(pid)] + [pa.array(a) for a in cols], names=names, metadata=metadata(units, c, charge, mass)
    )
    if validate_:
        validate(tab, tolerance=tolerance)
    return tab


def from_lab_time(t, x, y, z, vx, vy, vz, *, particle=None, charge=1.0, mass=1.0, c=1.0, units="gaussian") -> pa.Table:
    """Convert samples in lab time with 3-velocities into a trajectory table:
    u = gamma (1, v) and tau = integral of dt/gamma from each particle's first sample,
    integrated in Go to fourth order in the sample spacing. Speeds must stay below c."""
    names = ("t", "x", "y", "z", "vx", "vy", "vz")
    cols = [numbers_of(a, name).ravel() for a, name in zip((t, x, y, z, vx, vy, vz), names)]
    n = cols[0].size
    if any(a.size != n for a in cols):
        raise ShapeError(f"lab-time columns have different lengths: {[a.size for a in cols]}")
    pid = particle_ids(particle, n)
    batch = pa.record_batch([pa.array(pid)] + [pa.array(a) for a in cols], names=["particle", *names])
    enc = lambda v, name: json.dumps(finite(v, name).tolist())  # noqa: E731
    c = scalar(c, "c")
    pair = export(batch)
    try:
        out = go.TrajectoryFromLabTime(pair, str(units), c, enc(charge, "charges"), enc(mass, "masses"))
    finally:
        go.FreeArrowPair(pair)
    return import_table(out)


def validate(trajectories, tolerance: float = 1e-6) -> dict:
    """Validate a trajectory table in Go; returns its description (particles, ids,
    rows, charge, mass, c, units, tau range per particle)."""
    pair = export(record_batch(trajectories))
    try:
        return json.loads(go.TrajectoryInfo(pair, float(tolerance)))
    finally:
        go.FreeArrowPair(pair)
