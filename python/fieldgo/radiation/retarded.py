"""The retarded-time solve: every observer's samples walked in order, the light-cone
condition solved by Newton or RK4 on the splined worldlines, on the CPU or a GPU."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from ..errors import BackendError, ParameterError, ShapeError
from ..runtime import interruptible as _interruptible
from ..runtime.bridge import go, import_batch
from ..runtime.options import RadiationOptions
from .cube import Cube, DeviceCube
from .trajectories import count, export, numbers_of, per_particle, record_batch, scalar


def _observers(observers) -> pa.RecordBatch:
    if isinstance(observers, (pa.Table, pa.RecordBatch)) or hasattr(observers, "__arrow_c_stream__"):
        b = record_batch(observers)
        missing = [n for n in ("x", "y", "z") if n not in b.schema.names]
        if missing:
            raise ShapeError(
                f"an observer table needs columns x, y, z; it lacks {', '.join(missing)} "
                f"(it has {', '.join(b.schema.names) or 'none'})"
            )
        return pa.record_batch([b.column(n).cast(pa.float64()) for n in ("x", "y", "z")], names=["x", "y", "z"])
    a = numbers_of(observers, "observers")
    if a.ndim == 1 and a.size == 3:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 3:
        raise ShapeError(f"observers must be (n, 3) positions, got shape {a.shape}")
    cols = np.ascontiguousarray(a.T)  # one copy; its rows are the columns, each contiguous
    return pa.record_batch([pa.array(cols[k]) for k in range(3)], names=["x", "y", "z"])


def _checked_options_json(
    method, n_iters, n_substeps, search, coef_reuse, precision, retarded, threads, segment, tolerance, backend
) -> str:
    if not isinstance(search, str):  # Go reads the value itself (case-insensitive)
        raise ParameterError(f"search={search!r}: use 'warm' or 'cold'")
    return RadiationOptions(
        method=method,
        n_iters=count(n_iters, "n_iters", 0),
        n_substeps=count(n_substeps, "n_substeps", 1),
        search=search,
        coef_reuse=bool(coef_reuse),
        precision=precision,
        retarded=bool(retarded),
        threads=count(threads, "threads", 0),
        segment=count(segment, "segment", 0),
        tolerance=float(tolerance),
        backend=backend,
    ).json()


# _options_json's memory: the JSON of the last distinct sets of arguments (at most 64).
_OPTIONS_JSON: dict = {}


def _options_json(*args) -> str:
    """The options' JSON for fields' arguments, checked and built once per distinct set
    of them: a loop of calls with the same settings would otherwise pay ~10 µs of checks
    and encoding each time. Arguments are told apart by type as well as value (``2``,
    ``2.0`` and ``True`` hash alike but are checked apart); unhashable ones are checked
    every call."""
    try:
        key = tuple((type(a), a) for a in args)
        hit = _OPTIONS_JSON.get(key)
    except TypeError:
        return _checked_options_json(*args)
    if hit is None:
        hit = _checked_options_json(*args)
        if len(_OPTIONS_JSON) >= 64:
            _OPTIONS_JSON.clear()
        _OPTIONS_JSON[key] = hit
    return hit


def fields(
    trajectories,
    observers,
    times,
    method: str = "newton",
    n_iters: int = 2,
    n_substeps: int = 4,
    precision: str = "float64",
    coef_reuse: bool = True,
    backend: str = "auto",
    *,
    search: str = "warm",
    retarded: bool = False,
    threads: int = 0,
    tolerance: float = 1e-6,
    segment: int = 0,
    charge=None,
    c=None,
    on_device: bool = False,
) -> Cube | DeviceCube:
    """Liénard–Wiechert fields and potentials at every observer and time.

    ``observers``: (n, 3) positions (or a table with x, y, z); ``times``: (S,) times
    shared by all observers or (n, S), one row per observer. ``method`` "newton"
    (``n_iters`` corrections per sample from the previous sample's root; with 2 or
    more, every sample's retarded time is within 2^-16 of the local knot interval
    of the root: a sample whose last correction is over 2^-20 of a knot interval
    is kept only if the error that correction leaves, bounded from its size and
    the light cone's local curvature, is below that, and is solved from scratch
    otherwise, as when the samples miss a Doppler-compressed pulse. The bound
    assumes the curvature changes by less than 2x within the last correction,
    which splines that resolve the worldline meet by far; measured at beta = 0.99
    with 4096 knots and 2048 samples per period the worst sample is at 1/8 of it.
    Where the samples resolve the signal two corrections leave far less, ~1e-17 of
    a knot interval for the median sample of a synchrotron orbit; give
    ``segment=1`` to solve every sample from scratch, for roots exact to
    rounding) or "rk4" (``n_substeps`` RK4 steps of dtau/dt_obs per sample
    interval, no error control: on a circular orbit with 4096 knots and 2048
    samples per period and the default 4 substeps, the worst retarded time is off
    by 1e-7 of a knot interval at beta = 0.9 (fields 5e-10 of the peak) but by
    0.04 of one at beta = 0.99 (6e-4 of the peak) where the pulse is sharp; raise
    ``n_substeps`` or use Newton there). ``precision``
    "float64" or "float32" (shifted time, in power-of-two units of its own, so any
    units work; error 1e-5 to 5e-4 of the peak at gamma = 5). The splines are
    natural (zero second derivative at a trajectory's ends): within a few knots of
    its ends their error falls as h^2, not h^4, so let trajectories run a few knots
    past the retarded times of interest.
    ``coef_reuse`` keeps the current interval's coefficients while tau stays inside;
    ``search="cold"`` is the naive kernel (binary search every evaluation). Results
    are bit-identical whatever the search or reuse. ``segment``: samples per walk;
    each walk solves its first sample from scratch (bracketing and Newton to
    convergence) and the rest by ``method`` from the previous sample, and walks run
    in parallel. 0 (default): one walk per observer with 65536 observers or more,
    else segments of at least 32 samples, enough walks to fill a GPU; ``segment``
    >= the number of samples: one walk. A segment's first sample is the converged
    root where one long walk has ``method``'s error, so the cube depends on
    ``segment`` (and, by default, on how many observers share the call) at that
    level; for a given ``segment`` it is the same on the CPU and the GPU.
    ``backend``: "auto" (a usable NVIDIA GPU, else the CPU), "cpu" or "cuda".
    ``charge`` (one or one per particle) and ``c`` override the table's metadata
    (polars drops schema metadata; without any, charge and c are 1).
    ``on_device=True`` (a GPU only) leaves the cube in GPU memory and returns a
    :class:`DeviceCube` (``__cuda_array_interface__``) instead of copying it to
    the host: the call then costs about the kernel alone.
    The table of the last successful call stays prepared (its splines and
    knots, C memory that :func:`fieldgo.allocated_bytes` counts, until a call
    brings another table), as do, on a GPU, the last observers' arrays: a call
    that repeats them, changing only the times or options, skips that work.
    Tables and observers are compared by their bytes.
    Ctrl-C cancels the computation."""
    if backend not in ("auto", "cpu", "cuda"):
        raise BackendError(f"unknown backend {backend!r}: use 'auto', 'cpu' or 'cuda'")
    if method not in ("newton", "rk4"):
        raise ParameterError(f"method={method!r}: use 'newton' or 'rk4'")
    if precision not in ("float64", "float32"):
        raise ParameterError(f"precision={precision!r}: use 'float64' or 'float32'")
    if not np.isfinite(tolerance):  # JSON carries no NaN or inf; the range is core/trajectory's check
        raise ParameterError(f"tolerance={tolerance!r}: want a finite number >= 0 (0: the default 1e-6)")
    obs = _observers(observers)
    o = obs.num_rows
    ts = numbers_of(times, "times")
    if ts.ndim == 1:
        s = ts.size
    elif ts.ndim == 2 and ts.shape[0] == o:
        s = ts.shape[1]
    else:
        raise ShapeError(f"times must be (samples,) or (observers={o}, samples), got shape {ts.shape}")
    tbatch = pa.record_batch([pa.array(ts.ravel())], names=["t"])
    opts = _options_json(
        method, n_iters, n_substeps, search, coef_reuse, precision, retarded, threads, segment, tolerance, backend
    )
    traj = record_batch(trajectories)
    if charge is not None or c is not None:
        md = dict(traj.schema.metadata or {})
        if charge is not None:
            md[b"charge"] = per_particle(charge, "charges").encode()
        if c is not None:
            md[b"c"] = repr(scalar(c, "c")).encode()
        traj = traj.replace_schema_metadata(md)
    if on_device and backend == "cpu":
        raise BackendError("on_device=True leaves the cube in GPU memory: use backend='cuda' (or 'auto' with a GPU)")
    pairs = [export(traj), export(obs), export(tbatch)]
    try:
        # The pairs are freed only after the call has returned, Ctrl-C or not.
        call = go.RadiationFieldsStart(pairs[0], pairs[1], pairs[2], s, opts, bool(on_device))
        _interruptible.wait(call)
        out = go.CallResult(call) if on_device else go.CallResultPointer(call)
    finally:
        for p in pairs:
            go.FreeArrowPair(p)
    if on_device:
        return DeviceCube(json.loads(out), ts)
    return Cube(import_batch(out), o, s, ts)


# --- spectra and harmonic maps (numpy FFT) ---
