"""Kick-drift-kick leapfrog in Go, its snapshots streamed to Python or to an Arrow IPC
file while it runs, cancellable with Ctrl-C."""

from __future__ import annotations

import numbers
import os

import pyarrow as pa

from ..errors import ParameterError
from ..runtime.bridge import go, import_batch, import_table
from .inputs import backend_name, finite_number, masses_of, precision_name, record_batch, to_go, vectors

_WAIT_MS = 20  # Go returns to Python at least this often, so Ctrl-C lands within 100 ms


class _Run:
    """One Go integrator handle; closing it stops the run and frees its memory."""

    def __init__(self, positions, velocities, masses, dt, softening, precision, threads, backend):
        x = vectors(positions, "positions")
        n = x.shape[0]
        v = vectors(velocities, "velocities", n)
        m = masses_of(masses, n)
        batch = record_batch(
            {"x": x[:, 0], "y": x[:, 1], "z": x[:, 2], "vx": v[:, 0], "vy": v[:, 1], "vz": v[:, 2], "m": m}
        )
        self.h = to_go(
            batch,
            go.NewNBody,
            finite_number(dt, "dt"),
            finite_number(softening, "softening"),
            precision_name(precision),
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
    backend = backend_name(backend)
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
