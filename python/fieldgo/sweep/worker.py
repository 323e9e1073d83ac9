"""Running one point, on a worker: what a task carries (plain data only), and the task
itself, which builds, relaxes and saves the point's simulation and always returns its row."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field

from .storage import exists, read_row, save_field, write_row


@dataclass
class Point:
    """One point, as shipped to a worker: plain data only."""

    point_id: str
    labels: dict  # the point's parameters as given (JSON-able), for the row
    theory_name: str
    spec: dict
    source: str
    dynamic: dict  # dynamic parameter values (floats)
    grid: tuple
    spacing: object
    boundary: str | tuple  # one name, or one per axis
    origin: object
    backend: str
    precision: str
    gradient: str
    threads: int | None
    minimize: dict
    initial_label: str | None
    out: str  # the output root as the workers see it (path or URL)
    run: str = ""  # this sweep call: a retried task finds its own earlier result
    resume: bool = True
    files: dict = field(default_factory=dict)  # arrow / json paths under out


def run_point(point: Point, initial=None) -> dict:
    """Build, relax and save one point; always returns its row (errors included)."""
    from ..runtime.simulation import Simulation, _SourceTheory

    done = finished_row(point)
    if done is not None:
        # Dask runs a task again when the worker holding its result is lost before
        # the client fetched it; the point is finished, so its stored row is the result.
        return done
    t0 = time.perf_counter()
    row = empty_row(point)
    row["host"] = socket.gethostname()
    row["worker"] = _worker_name()
    sim = None
    try:
        theory = _SourceTheory(point.spec, point.source, point.dynamic)
        sim = Simulation(
            theory,
            grid=point.grid,
            spacing=point.spacing,
            boundary=point.boundary,
            backend=point.backend,
            precision=point.precision,
            origin=point.origin,
            gradient=point.gradient,
            threads=point.threads,
        )
        d = sim.describe()
        row["backend"], row["device"] = d["backend"], d.get("device") or d["backend"]
        if initial is not None:
            sim.set_field(initial)
        try:
            sim.minimize(**point.minimize, progress=False)
        finally:
            status = getattr(sim, "last_status", None) or {}
            row["steps"] = status.get("step")
            row["max_grad"] = status.get("max_grad")
        row["converged"] = bool(status.get("converged", False))
        row["energy"] = sim.energy()
        row["integrals"] = {name: sim.integral(name) for name in point.spec.get("densities", [])}
        save_field(sim, point)
        row["file"] = point.files["arrow"]
    except Exception as exc:  # noqa: BLE001  (a point's failure is its row, not the sweep's)
        row["error"] = str(exc) or type(exc).__name__
        row["error_type"] = type(exc).__name__
        row["energy"] = None
        row["converged"] = False
    finally:
        if sim is not None:
            sim.close()
    row["wall_s"] = time.perf_counter() - t0
    write_row(row, point)
    return row


def finished_row(point: Point):
    """The stored row of a finished point (row and field file present), if it may be
    reused: by a resumed sweep, or by a retry within the same sweep call."""
    if not exists(point.out, point.files["json"]):
        return None
    row = read_row(point.out, point.files["json"])
    if not row or row.get("error") or not row.get("file") or not exists(point.out, row["file"]):
        return None
    if not point.resume and row.get("run") != point.run:
        return None
    return row


def empty_row(point: Point) -> dict:
    return dict(
        point_id=point.point_id,
        run=point.run,
        params=dict(point.labels),
        theory=point.theory_name,
        energy=None,
        integrals={},
        steps=None,
        converged=None,
        max_grad=None,
        backend=None,
        device=None,
        wall_s=None,
        file=None,
        error=None,
        error_type=None,
        host=None,
        worker=None,
        initial=point.initial_label,
    )


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"
