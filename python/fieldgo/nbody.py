"""Direct-summation N-body gravity (G = 1) on all CPU cores, in Go.

    import fieldgo as fg
    pos, vel, m = fg.nbody.plummer(1024, seed=1)          # Hénon units: G = M = 1, E = -1/4
    acc = fg.nbody.accelerations(pos, m, softening=0.01)  # (N, 3)
    traj = fg.nbody.integrate(pos, vel, m, dt=1/128, steps=512, every=16, softening=0.01)
    # traj: a pyarrow Table with columns particle, t, x, y, z, vx, vy, vz

Accelerations are ``a_i = sum_{j != i} m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^{3/2}``
(eps the Plummer softening), potentials phi_i = -sum_{j != i} m_j / (r_ij^2 + eps^2)^{1/2}.
``precision="float32"`` computes the pairwise sums in float32: each component then
satisfies ``|a_i - a_i_exact| <= k u sum_j |a_ij|`` with u = 2^-24 and
k = ``error_bound_k(N)`` (= N + 19, a worst case; the measured error is ``~20 u sum_j |a_ij|``).

``integrate`` runs the kick-drift-kick leapfrog in Go. Every ``every`` steps (and at the
start and the end) it emits a record batch of all bodies; batches go to Python (a Table,
or one by one with ``stream=True``) and/or to an Arrow IPC file (``out=``), written by
a separate Go goroutine so the integration does not wait for the disk. Energies,
momentum and angular momentum per snapshot come as a separate table
(``return_energies=True``, ``energies_out=``) and, when streaming, in each batch's schema
metadata (step, time, kinetic, potential, energy).
"""

from __future__ import annotations

import numbers
import os

import numpy as np
import pyarrow as pa

from ._go import go, import_batch, import_table
from .errors import BackendError, LayoutError, ParameterError, ShapeError

__all__ = ["accelerations", "integrate", "plummer", "error_bound_k", "unit_roundoff"]

_PRECISIONS = ("float64", "float32")
_BACKENDS = ("auto", "cpu", "cuda", "gpu")
_WAIT_MS = 20  # Go returns to Python at least this often, so Ctrl-C lands within 100 ms


def unit_roundoff(precision: str = "float64") -> float:
    """u of a precision: 2^-53 (float64) or 2^-24 (float32)."""
    return 2.0**-24 if _precision(precision) == "float32" else 2.0**-53


def error_bound_k(n: int) -> float:
    """k in ``|a_i - a_i_exact| <= k u sum_j |a_ij|`` for n bodies (per component)."""
    return go.NBodyErrorBoundK(int(n))


def _precision(p) -> str:
    p = np.dtype(p).name if isinstance(p, (type, np.dtype)) else p
    if p not in _PRECISIONS:
        raise ParameterError(f"precision {p!r}: use 'float64' or 'float32'")
    return p


def _backend(b: str) -> str:
    """'auto' runs on a usable NVIDIA GPU and otherwise on the CPU; 'cuda' insists
    (BackendError, with the reason, when there is none)."""
    if b not in _BACKENDS:
        raise BackendError(f"unknown backend {b!r}: use one of {_BACKENDS}")
    return "cuda" if b == "gpu" else b


def _vectors(a, name: str, n: int | None = None) -> np.ndarray:
    """(N, 3) float64 from numpy, Arrow (Table/RecordBatch with x, y, z or vx, vy, vz
    columns, or a fixed-size-list<3> array) or anything array-like of floats."""
    if isinstance(a, (pa.Table, pa.RecordBatch)):
        names = a.schema.names
        for cols in (("x", "y", "z"), ("vx", "vy", "vz")):
            if all(c in names for c in cols):
                a = np.column_stack([_column(a.column(c), f"{name}.{c}") for c in cols])
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
        a = _column(a.flatten(), name).reshape(-1, 3)
    elif not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if a.dtype not in (np.float64, np.float32):
        raise LayoutError(f"{name} has dtype {a.dtype}: use float64 or float32")
    if a.ndim != 2 or a.shape[1] != 3:
        raise ShapeError(f"{name} has shape {a.shape}, want (N, 3)")
    if n is not None and a.shape[0] != n:
        raise ShapeError(f"{name} has {a.shape[0]} rows for {n} bodies")
    return np.asarray(a, dtype=np.float64)


def _column(c, name) -> np.ndarray:
    if isinstance(c, pa.ChunkedArray):
        c = c.combine_chunks()
    if c.null_count:
        raise LayoutError(f"{name}: {c.null_count} nulls")
    if not (pa.types.is_float64(c.type) or pa.types.is_float32(c.type)):
        raise LayoutError(f"{name} has type {c.type}: use float64 or float32")
    return c.to_numpy(zero_copy_only=False)


def _masses(m, n: int) -> np.ndarray:
    if isinstance(m, (pa.Array, pa.ChunkedArray)):
        m = _column(m, "masses")
    if isinstance(m, numbers.Real) and not isinstance(m, bool):
        return np.full(n, float(m))
    m = np.asarray(m)
    if m.dtype not in (np.float64, np.float32):
        raise LayoutError(f"masses have dtype {m.dtype}: use float64 or float32")
    if m.shape != (n,):
        raise ShapeError(f"masses have shape {m.shape}, want ({n},)")
    return np.asarray(m, dtype=np.float64)


def _batch(cols: dict) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(np.ascontiguousarray(v)) for v in cols.values()], names=list(cols))


def _to_go(batch: pa.RecordBatch, fn, *args):
    pair = go.NewArrowPair()
    try:
        batch._export_to_c(go.ArrowPairArray(pair), pair)
        return fn(pair, *args)
    finally:
        go.FreeArrowPair(pair)


def _finite_number(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ParameterError(f"{name} must be a number, got {v!r}")
    return float(v)


def accelerations(
    positions,
    masses,
    softening: float = 0.0,
    precision: str = "float64",
    backend: str = "auto",
    *,
    potentials: bool = False,
    threads: int = 0,
):
    """Gravitational accelerations (G = 1) of N bodies by direct summation.

    positions: (N, 3) float64/float32 numpy array, or Arrow (a table with x, y, z columns,
    or a fixed_size_list<3> array); masses: (N,) (or one number for all), finite and
    >= 0 (zero-mass bodies feel the others and pull on none). Returns an (N, 3) float64
    array, and the potentials (N,) too when ``potentials=True``. A body does not act on
    itself, so ``softening=0`` is fine unless two distinct bodies coincide.
    """
    prec = _precision(precision)
    backend = _backend(backend)
    x = _vectors(positions, "positions")
    n = x.shape[0]
    m = _masses(masses, n)
    eps = _finite_number(softening, "softening")
    batch = _batch({"x": x[:, 0], "y": x[:, 1], "z": x[:, 2], "m": m})
    out = import_batch(_to_go(batch, go.NBodyAccelerations, eps, prec, int(threads), bool(potentials), backend))
    acc = np.column_stack([out.column(c).to_numpy() for c in ("ax", "ay", "az")]) if n else np.zeros((0, 3))
    if potentials:
        return acc, out.column("phi").to_numpy()
    return acc


def plummer(n: int, seed: int = 0, *, exact: bool = True):
    """A Plummer sphere of n equal-mass bodies in Hénon units (G = M = 1, E = -1/4),
    sampled as Aarseth, Hénon & Wielen (1974), centre of mass at rest at the origin.
    With ``exact`` it is rescaled so that this sample has K = 1/4 and (unsoftened)
    W = -1/2 exactly; this costs one O(n^2) potential evaluation. Returns
    ``(positions (n, 3), velocities (n, 3), masses (n,))``; the same seed gives the
    same bodies."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ParameterError(f"n must be an integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    b = import_batch(go.NBodyPlummer(int(n), int(seed) & 0x7FFFFFFFFFFFFFFF, bool(exact)))
    col = {c: b.column(c).to_numpy() for c in b.schema.names}
    pos = np.column_stack([col["x"], col["y"], col["z"]])
    vel = np.column_stack([col["vx"], col["vy"], col["vz"]])
    return pos, vel, col["m"].copy()


class _Run:
    """One Go integrator handle; closing it stops the run and frees its memory."""

    def __init__(self, positions, velocities, masses, dt, softening, precision, threads, backend):
        x = _vectors(positions, "positions")
        n = x.shape[0]
        v = _vectors(velocities, "velocities", n)
        m = _masses(masses, n)
        batch = _batch({"x": x[:, 0], "y": x[:, 1], "z": x[:, 2], "vx": v[:, 0], "vy": v[:, 1], "vz": v[:, 2], "m": m})
        self.h = _to_go(
            batch,
            go.NewNBody,
            _finite_number(dt, "dt"),
            _finite_number(softening, "softening"),
            _precision(precision),
            int(threads),
            backend,
        )

    def start(self, steps, every, stream, out, energies_out, queue):
        go.NBodyStart(
            self.h,
            steps,
            every,
            stream,
            os.fspath(out) if out is not None else "",
            os.fspath(energies_out) if energies_out is not None else "",
            int(queue),
        )

    def batches(self):
        """Yield the streamed batches until the run ends; Ctrl-C cancels it."""
        try:
            while True:
                p = go.NBodyNext(self.h, _WAIT_MS)
                if p:
                    yield import_batch(p)
                elif go.NBodyFinished(self.h):
                    return
        except KeyboardInterrupt:
            go.NBodyCancel(self.h)
            raise

    def wait(self):
        try:
            while not go.NBodyWait(self.h, _WAIT_MS):
                pass
        except KeyboardInterrupt:
            go.NBodyCancel(self.h)
            raise

    def energies(self) -> pa.Table:
        return import_table(go.NBodyDiagnostics(self.h))

    def close(self):
        if self.h is not None:
            h, self.h = self.h, None
            go.ReleaseNBody(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


_PER_BATCH_KEYS = (b"step", b"time", b"kinetic", b"potential", b"energy")


def integrate(
    positions,
    velocities,
    masses,
    dt: float,
    steps: int,
    every: int = 1,
    softening: float = 0.0,
    precision: str = "float64",
    out=None,
    *,
    energies_out=None,
    stream: bool = False,
    return_energies: bool = False,
    queue: int = 8,
    threads: int = 0,
    backend: str = "auto",
):
    """Leapfrog (kick-drift-kick) integration of N bodies for ``steps`` steps of ``dt``.

    A snapshot of every body is taken at the start, every ``every`` steps and at the end.

    - default: returns a pyarrow Table (columns particle, t, x, y, z, vx, vy, vz; the
      run's n, dt, softening, precision and G in the schema metadata), plus the
      energies table when ``return_energies=True``;
    - ``out=path``: streams the snapshots to an Arrow IPC file as the run goes (a Go
      goroutine writes it behind a queue of ``queue`` batches) and returns the energies
      table (also written to ``energies_out`` when given);
    - ``stream=True``: returns an iterator of RecordBatches as they are produced; each
      batch's schema metadata also holds its step, time, kinetic, potential and energy.

    The energies table has one row per snapshot: step, t, kinetic, potential (the
    softened potential energy the forces derive from), energy, px, py, pz, lx, ly, lz.
    """
    backend = _backend(backend)
    for name, v in (("steps", steps), ("every", every), ("queue", queue)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ParameterError(f"{name} must be an integer, got {v!r}")
    if steps < 0 or every < 1:
        raise ParameterError(f"steps must be >= 0 and every >= 1, got steps={steps}, every={every}")
    if stream and out is not None:
        raise ParameterError("stream=True and out= are exclusive: stream the batches, or write them to a file")
    run = _Run(positions, velocities, masses, dt, softening, precision, threads, backend)
    try:
        if stream:
            run.start(int(steps), int(every), True, None, energies_out, queue)
            return _streamed(run)
        if out is not None:
            run.start(int(steps), int(every), False, out, energies_out, queue)
            run.wait()
            return run.energies()
        run.start(int(steps), int(every), True, None, energies_out, queue)
        batches = []
        for b in run.batches():
            md = {k: v for k, v in (b.schema.metadata or {}).items() if k not in _PER_BATCH_KEYS}
            batches.append(b.replace_schema_metadata(md))
        table = pa.Table.from_batches(batches)
        if return_energies:
            return table, run.energies()
        return table
    finally:
        if not stream:
            run.close()


def _streamed(run: _Run):
    try:
        yield from run.batches()
    finally:
        run.close()
