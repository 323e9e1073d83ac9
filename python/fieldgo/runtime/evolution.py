"""Time evolution: what ``Simulation.evolve`` returns and ``fg.read_evolution`` reads.

An evolution is a history (one row per record: ``step``, ``t``, ``kinetic``,
``potential``, ``energy``, ``momentum_x`` (``_y``, ``_z`` as the lattice has axes) or,
for the first-order methods, ``norm`` (GPE) or ``m_x``, ``m_y``, ``m_z`` (LLG); for
adaptive steps ``dt`` and ``rejected``; each declared density's integral and, for a
theory with a Gauss law, ``gauss_max`` and ``gauss_l2``) and the snapshots of the field
taken at the same records, each with its time. ``out=path`` writes them to an Arrow
IPC stream as the run goes: one RecordBatch per snapshot (one float64 column per
component, the lattice in the schema metadata as ``fg.Field.from_arrow`` reads it), the
record's values in the batch's custom metadata as exact decimal strings, and the run's
settings in the schema metadata (``fieldgo.evolution``, JSON). docs/dynamics.md and
docs/dynamics_first_order.md describe the equations and the schemes.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa

from ..errors import FormatError, ParameterError
from .lattice import Lattice

__all__ = ["Evolution", "read_evolution"]

_META = b"fieldgo.evolution"
_FORMAT = "fieldgo-evolution/1"
_INT_COLUMNS = frozenset(("step", "rejected"))  # the history's int64 columns; the rest are float64


def _lattice_info(lat: Lattice) -> dict:
    return dict(grid=list(lat.grid), spacing=list(lat.spacing), origin=list(lat.origin), boundary=lat.boundary)


def _lattice_from(info: dict) -> Lattice:
    b = info["boundary"]
    return Lattice(
        tuple(info["grid"]),
        tuple(info["spacing"]),
        origin=tuple(info["origin"]),
        boundary=b if isinstance(b, str) else tuple(b),
    )


def _snapshot_array(batch: pa.RecordBatch, shape: tuple) -> np.ndarray:
    """The batch's columns as one new array (ncomp, *shape) (a copy: the batch's
    memory may be Go's)."""
    cols = [batch.column(c).to_numpy(zero_copy_only=False) for c in range(batch.num_columns)]
    return np.stack(cols).reshape((len(cols), *shape))


class Evolution:
    """The result of :meth:`fieldgo.Simulation.evolve` (and of :func:`read_evolution`).

    - ``history``: a pyarrow Table, one row per record (``step``, ``t``, ``kinetic``,
      ``potential``, ``energy``, ``momentum_x`` .. (first-order methods: ``norm`` or
      ``m_x``, ``m_y``, ``m_z``), for adaptive steps ``dt`` (the controller's step) and
      ``rejected`` (rejected steps so far), integrals, ``gauss_max`` and ``gauss_l2``
      for a theory with a Gauss law);
    - ``times``: the snapshot times (numpy, exactly the history's ``t`` when every
      record took a snapshot);
    - ``snapshots``: the fields at those times, numpy arrays shaped like
      ``sim.field.numpy()`` ((ncomp, nx) on a line, (ncomp, ny, nx), (ncomp, nz, ny, nx));
      ``evolution[k]`` is the k-th, ``len(evolution)`` their number; ``field(k)`` the
      k-th as an ``fg.Field``;
    - ``path``: the Arrow IPC stream written with ``out=``, or None.
    - ``lattice``, ``fields``, ``method``, ``dt``, ``adaptive``: the run's settings (``dt``
      the step; for adaptive steps the controller's step at the end);
    - ``theory``, ``params``: the theory and the parameter values the run had (what
      ``fg.animate`` and ``fg.track`` compute the snapshots' densities with; a file
      keeps the theory's spec and point source, so ``read_evolution`` gives them back).
    """

    def __init__(
        self,
        lattice,
        fields,
        method,
        dt,
        history,
        times,
        snapshots,
        path=None,
        *,
        theory=None,
        params=None,
        adaptive=False,
    ):
        self.lattice = lattice
        self.theory = theory
        self.params = dict(params) if params is not None else None
        self.fields = tuple(fields)
        self.method = method
        self.adaptive = bool(adaptive)
        self.dt = dt
        self.history = history
        self.times = np.asarray(times, dtype=np.float64)
        self.snapshots = snapshots
        self.path = path

    def __len__(self):
        return len(self.snapshots)

    def __getitem__(self, k):
        return self.snapshots[k]

    def __iter__(self):
        return iter(zip(self.times, self.snapshots))

    def field(self, k):
        """Snapshot k as an ``fg.Field`` (a copy)."""
        from .field import Field

        return Field.from_numpy(self.snapshots[k], self.lattice, names=self.fields, copy=True)

    def __repr__(self):
        t = f"t = {self.times[0]:g} .. {self.times[-1]:g}" if len(self.times) else "no snapshots"
        where = f", written to {os.fspath(self.path)!r}" if self.path is not None else ""
        how = f"{self.method}, adaptive" if self.adaptive and self.method != "rk45" else self.method
        return (
            f"<Evolution ({how}, dt={self.dt:g}) on {self.lattice!r}: {self.history.num_rows} records, "
            f"{len(self.snapshots)} snapshots, {t}{where}>"
        )


class _Writer:
    """The Arrow IPC stream of ``out=``, written batch by batch."""

    def __init__(self, path, settings: dict):
        self.path = path
        self.settings = settings
        self.sink: pa.NativeFile | None = None
        self.writer: pa.ipc.RecordBatchStreamWriter | None = None

    def write(self, batch: pa.RecordBatch, row: dict):
        if self.writer is None:
            md = dict(batch.schema.metadata or {})
            md.pop(b"t", None)
            md.pop(b"step", None)
            md[_META] = json.dumps(self.settings).encode()
            self.schema = pa.schema(batch.schema, metadata=md)
            self.sink = pa.OSFile(os.fspath(self.path), "wb")
            self.writer = pa.ipc.new_stream(self.sink, self.schema)
        custom = {k: str(int(v)) if k in _INT_COLUMNS else repr(float(v)) for k, v in row.items()}
        assert self.writer is not None
        self.writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=self.schema), custom_metadata=custom)

    def close(self):
        if self.writer is not None:
            self.writer.close()
            if self.sink is not None:
                self.sink.close()
            self.writer = None


class _FileSnapshots:
    """The snapshots of an evolution file, read on access (memory-mapped, one copied
    out per access)."""

    def __init__(self, path, shape, n):
        self.path, self.shape, self.n = path, shape, n

    def __len__(self):
        return self.n

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(f"snapshot {k} out of range ({self.n} snapshots)")
        with pa.memory_map(os.fspath(self.path), "r") as src:
            reader = pa.ipc.open_stream(src)
            for _ in range(k):
                reader.read_next_batch()
            return _snapshot_array(reader.read_next_batch(), self.shape)

    def __iter__(self):
        with pa.memory_map(os.fspath(self.path), "r") as src:
            for batch in pa.ipc.open_stream(src):
                yield _snapshot_array(batch, self.shape)


def read_evolution(path) -> Evolution:
    """An evolution written by ``Simulation.evolve(..., out=path)``: the same history,
    times (bit for bit) and snapshots (read from the file when accessed)."""
    try:
        src = pa.memory_map(os.fspath(path), "r")
        reader = pa.ipc.open_stream(src)
    except (OSError, pa.ArrowInvalid) as exc:
        raise FormatError(f"cannot read an evolution from {os.fspath(path)!r}: {exc}") from None
    with src:
        md = reader.schema.metadata or {}
        if _META not in md:
            raise FormatError(f"{os.fspath(path)!r} is an Arrow stream but not an evolution written by evolve(out=...)")
        settings = json.loads(md[_META])
        if settings.get("format") != _FORMAT:
            raise FormatError(f"{os.fspath(path)!r}: unknown evolution format {settings.get('format')!r}")
        lat = _lattice_from(settings["lattice"])
        rows = []
        while True:
            try:
                item = reader.read_next_batch_with_custom_metadata()
            except StopIteration:
                break
            rows.append({k.decode(): v.decode() for k, v in (item.custom_metadata or {}).items()})
    columns = settings["columns"]
    # The schema evolve's history has (Go's: no nulls), so the two compare equal.
    types = {c: pa.int64() if c in _INT_COLUMNS else pa.float64() for c in columns}
    schema = pa.schema([pa.field(c, types[c], nullable=False) for c in columns])
    table = pa.table(
        {c: pa.array([int(r[c]) if c in _INT_COLUMNS else float(r[c]) for r in rows], type=types[c]) for c in columns},
        schema=schema,
    )
    snaps = _FileSnapshots(path, lat.shape, len(rows))
    theory = None
    if "spec" in settings and "source" in settings:
        from .simulation import _SourceTheory

        theory = _SourceTheory(settings["spec"], settings["source"], settings.get("params", {}))
    return Evolution(
        lat,
        settings["fields"],
        settings["method"],
        settings["dt"],
        table,
        table.column("t").to_numpy(),
        snaps,
        path,
        theory=theory,
        params=settings.get("params"),
        adaptive=bool(settings.get("adaptive")),
    )


def _check_time(name, v, *, positive=False, allow_none=False):
    import math
    import numbers

    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ParameterError(f"{name} must be a finite number, got {v!r}")
    if positive and not v > 0:
        raise ParameterError(f"{name} must be positive, got {v!r}")
    if not positive and v < 0:
        raise ParameterError(f"{name} must be >= 0, got {v!r}")
    return float(v)
