"""``fg.sweep``: many independent simulations on Dask, results as one Arrow table.

    table = fg.sweep(fg.theories.baby_skyrme(), params={"kappa": [0.5, 1, 2]},
                     grid=(96, 96), spacing=0.2, initial=fg.initial.skyrmion(),
                     minimize={"tol": 1e-6}, out="kappa-scan")

Each point is one Dask task that builds its :class:`~fieldgo.Simulation` on a
worker, relaxes it, writes the final state with ``Simulation.save`` to
``out/points/<id>.arrow`` and its result row to ``out/points/<id>.json``. The
returned table (also ``out/results.parquet``) has one row per point.

What travels to a worker is small and plain: the theory's traced C source, its
spec and the values of its dynamic parameters (never a pickled closure), the
lattice and flow settings, and the initial configuration (an ``fg.initial``
object, or an array). Points of one theory that differ only in dynamic
parameters share one source, so a worker compiles it once (the kernel cache is
keyed by source).

A point that fails (a diverging flow, a bad parameter value, a lost worker) is a
row with ``error`` and ``error_type``; the sweep itself does not fail. Points whose
row and field file are already in ``out`` are not run again (``resume=True``).

docs/sweeps.md has the guide: remote clusters, one worker per GPU, resuming.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import numbers
import os
import socket
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from . import initial as _initial
from .cache import write_atomic
from .errors import ParameterError, ShapeError, SpecError
from .fieldvalues import ConstraintWarning, constraint_of, field_values
from .lattice import Lattice
from .theory import Static

__all__ = ["sweep", "local_cluster", "point_id", "RESERVED"]

# Point keys that set the run instead of the theory (per-point overrides of the
# sweep's arguments); every other key is a theory (or factory) parameter.
RESERVED = ("grid", "spacing", "boundary", "origin", "initial", "minimize")
_MINIMIZE_KEYS = ("tol", "max_steps", "method", "arrest", "dt", "check_every")
_ID_LENGTH = 16  # hex digits of sha256: 64 bits, no collision in any sweep a person runs


# --- what a task carries ----------------------------------------------------------------


@dataclass
class _Point:
    """One point, as shipped to a worker: plain data only."""

    point_id: str
    labels: dict  # the point's parameters as given (JSON-able), for the row
    theory_name: str
    spec: dict
    source: str
    dynamic: dict  # dynamic parameter values (floats)
    grid: tuple
    spacing: object
    boundary: str
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


def point_id(description: dict) -> str:
    """A stable id for a point: sha256 of its canonical JSON (theory source, spec,
    parameter values, lattice, flow settings and initial configuration)."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()[:_ID_LENGTH]


def _json_default(v):
    if isinstance(v, Static):
        return v.value
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return repr(v)


def _label(v):
    """A parameter value as it appears in the results table."""
    if isinstance(v, Static):
        v = v.value
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (tuple, list)) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return list(v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, default=_json_default)
    return repr(v)


# --- running one point (on a worker) -------------------------------------------------------


def _run_point(point: _Point, initial=None) -> dict:
    """Build, relax and save one point; always returns its row (errors included)."""
    from .simulation import Simulation, _SourceTheory

    done = _finished_row(point)
    if done is not None:
        # Dask runs a task again when the worker holding its result is lost before
        # the client fetched it; the point is finished, so its stored row is the result.
        return done
    t0 = time.perf_counter()
    row = _empty_row(point)
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
        _save_field(sim, point)
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
    _write_row(row, point)
    return row


def _finished_row(point: _Point):
    """The stored row of a finished point (row and field file present), if it may be
    reused: by a resumed sweep, or by a retry within the same sweep call."""
    if not _exists(point.out, point.files["json"]):
        return None
    row = _read_row(point.out, point.files["json"])
    if not row or row.get("error") or not row.get("file") or not _exists(point.out, row["file"]):
        return None
    if not point.resume and row.get("run") != point.run:
        return None
    return row


def _empty_row(point: _Point) -> dict:
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


def _fs(out: str):
    """(filesystem, root path) for a local directory or an fsspec URL."""
    if "://" not in out:
        return None, out
    import fsspec

    fs, root = fsspec.core.url_to_fs(out)
    return fs, root


def _save_field(sim, point: _Point):
    fs, _ = _fs(point.out)
    target = point.files["arrow"]
    if fs is None:
        _replace_atomically(target, sim.save)
        return
    with tempfile.TemporaryDirectory(prefix="fieldgo-sweep-") as d:
        local = os.path.join(d, "point.arrow")
        sim.save(local)
        fs.put(local, _strip(fs, target))


def _replace_atomically(target: str, write):
    """write(path) to a temporary file beside target, then rename it over target
    (cache.write_atomic): a killed worker never leaves a half file under the point's
    name."""
    write_atomic(target, write)


def _write_row(row: dict, point: _Point):
    data = json.dumps(row, sort_keys=True, default=_json_default).encode()
    _write_bytes(point.out, point.files["json"], data)


def _write_bytes(out: str, target: str, data: bytes):
    fs, _ = _fs(out)
    if fs is None:

        def write(path):
            with open(path, "wb") as f:
                f.write(data)

        _replace_atomically(target, write)
        return
    with fs.open(_strip(fs, target), "wb") as f:
        f.write(data)


def _strip(fs, path):
    return fs._strip_protocol(path)


def _exists(out: str, path: str) -> bool:
    fs, _ = _fs(out)
    return os.path.exists(path) if fs is None else fs.exists(_strip(fs, path))


def _read_row(out: str, path: str):
    fs, _ = _fs(out)
    try:
        if fs is None:
            with open(path, "rb") as f:
                return json.loads(f.read())
        with fs.open(_strip(fs, path), "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


# --- describing the points (on the client) -------------------------------------------------


def _points(params) -> list:
    """A list of dicts, or a dict of lists (their Cartesian product, in key order)."""
    if params is None:
        return [{}]
    if isinstance(params, dict):
        names = list(params)
        values = []
        for name in names:
            v = params[name]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise ParameterError(f"params[{name!r}] must be a list of values, got {v!r}")
            values.append(list(v))
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]
    try:
        points = [dict(p) for p in params]
    except (TypeError, ValueError):
        raise ParameterError(
            f"params must be a list of dicts or a dict of lists, got {type(params).__name__}"
        ) from None
    if not points:
        raise ParameterError("params is empty: a sweep needs at least one point")
    return points


def _is_theory(obj) -> bool:
    return hasattr(obj, "spec") and hasattr(obj, "source") and hasattr(obj, "params")


class _Theories:
    """Turns a point's parameters into (name, spec, source, dynamic values).

    A theory object is traced once per set of static values; a factory is called
    per point and its result traced once per distinct structure (the pickled point
    functions and static values), so a factory swept over dynamic parameters costs
    one trace, not one per point.
    """

    def __init__(self, theory_or_factory):
        self.obj = theory_or_factory
        self.factory = not _is_theory(theory_or_factory)
        if self.factory and not callable(theory_or_factory):
            raise SpecError(
                f"sweep needs an fg.Theory or a function returning one, got {type(theory_or_factory).__name__}"
            )
        self._traced: dict = {}

    def __call__(self, values: dict):
        if self.factory:
            try:
                theory = self.obj(**values)
            except TypeError as exc:
                raise ParameterError(f"the theory factory does not take {sorted(values)}: {exc}") from None
            if not _is_theory(theory):
                raise SpecError(f"the theory factory returned {type(theory).__name__}, not an fg.Theory")
            dynamic = {k: v for k, v in theory.params.items() if k in theory.spec["params"]}
            static = {k: v for k, v in theory.params.items() if k not in theory.spec["params"]}
        else:
            theory = self.obj
            names = list(theory.spec["params"])
            unknown = [k for k in values if k not in theory.params]
            if unknown:
                raise ParameterError(
                    f"unknown parameter(s) {unknown} for theory {theory.name!r} "
                    f"(parameters: {', '.join(theory.params) or 'none'})"
                )
            dynamic = {k: values.get(k, theory.params[k]) for k in names}
            static = {k: values.get(k, v) for k, v in theory.params.items() if k not in names}
        for k, v in dynamic.items():
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ParameterError(f"dynamic parameter {k!r} must be a number, got {v!r}")
        dynamic = {k: float(v) for k, v in dynamic.items()}
        source = self._source(theory, static)
        return theory.name, dict(theory.spec), source, dynamic

    def _source(self, theory, static):
        key = self._key(theory, static)
        if key is not None and key in self._traced:
            return self._traced[key]
        if hasattr(theory, "_build"):
            static = {k: (v.value if isinstance(v, Static) else v) for k, v in static.items()}
            source = theory._build({**theory.static_params, **static})[1]
        else:  # a theory read back by fg.load: its source is fixed
            source = theory.source
        if key is not None:
            self._traced[key] = source
        return source

    def _key(self, theory, static):
        if not self.factory:
            return ("static",) + tuple(sorted((k, repr(v)) for k, v in static.items()))
        try:
            import cloudpickle

            fns = (
                getattr(theory, "_energy_fn", None),
                getattr(theory, "_gradient_fn", None),
                getattr(theory, "_density_fns", None),
            )
            blob = cloudpickle.dumps(fns)
        except Exception:  # noqa: BLE001  (no fingerprint: trace this one)
            return None
        return (
            theory.name,
            tuple(theory.fields),
            json.dumps(theory.spec, sort_keys=True),
            tuple(sorted((k, repr(v)) for k, v in static.items())),
            hashlib.sha256(blob).hexdigest(),
        )


def _initial_payload(initial, lattice: Lattice, spec: dict):
    """(object to ship, label, id key) for an initial configuration.

    Arrays, fields and functions are turned into values here by the function
    ``Simulation.set_field`` uses (fieldvalues.field_values), so they are accepted
    and refused exactly as set_field would; an ``fg.initial`` object travels as
    itself and is checked by :func:`_check_initial`."""
    if initial is None:
        return None, None, None
    if isinstance(initial, str):
        fn = getattr(_initial, initial, None)
        if fn is None or initial.startswith("_") or not callable(fn) or isinstance(fn, type):
            raise ParameterError(
                f"unknown initial configuration {initial!r}: use a function of "
                "fg.initial (e.g. 'skyrmion'), an fg.initial object or an array"
            )
        initial = fn()
    if isinstance(initial, _initial._Configuration):
        return initial, repr(initial), repr(initial)
    is_array = not callable(initial) and not (hasattr(initial, "numpy") and callable(initial.numpy))
    if is_array and not np.issubdtype(np.asarray(initial).dtype, np.number):
        raise ShapeError(
            f"initial must be an fg.initial configuration, a function f(x, y) or an array, got {type(initial).__name__}"
        )
    # Any function is evaluated here and travels as its values: nothing of the
    # user's closure is pickled. The values travel as given and the worker's
    # set_field projects them, as a set_field here would (projecting twice moves
    # the last bits); the check with the constraint refuses a zero vector here.
    arr = field_values(initial, lattice, spec["fields"])
    field_values(arr, lattice, spec["fields"], **constraint_of(spec), stacklevel=4)
    if callable(initial) and not hasattr(initial, "numpy"):
        name = getattr(initial, "__qualname__", type(initial).__name__)
        return _array_payload(arr, f"{name}(x, y)")
    return _array_payload(arr, "array")


def _check_initial(payload, lattice: Lattice, spec: dict, checked: set, key):
    """Evaluate an fg.initial configuration on the client for a point's lattice and
    theory, as set_field will on the worker: a mismatch (a skyrmion for a
    four-component vortex theory) is one error here, not an error row per point
    after the cluster starts. Each (configuration, lattice, theory) once."""
    if not isinstance(payload, _initial._Configuration):
        return
    mark = (key, lattice._json(), tuple(spec["fields"]))
    if mark in checked:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstraintWarning)  # the worker normalises it the same way
        field_values(payload, lattice, spec["fields"], **constraint_of(spec))
    checked.add(mark)


def _array_payload(arr, name):
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    digest = hashlib.sha256(arr.tobytes() + repr(arr.shape).encode()).hexdigest()[:_ID_LENGTH]
    return arr, f"{name} {arr.shape} sha256:{digest}", f"array:{digest}"


def _minimize_settings(minimize) -> dict:
    settings = dict(minimize or {})
    bad = [k for k in settings if k not in _MINIMIZE_KEYS]
    if bad:
        raise ParameterError(f"minimize settings {bad} are not supported in a sweep (use {', '.join(_MINIMIZE_KEYS)})")
    return settings


# --- clusters ---------------------------------------------------------------------------------


def local_cluster(n_workers: int | None = None, *, gpus=None, threads_per_worker: int = 1, **kwargs):
    """A Dask cluster on this machine for sweeps: worker processes started with spawn
    (the Go runtime is loaded, so fork is unsafe), one thread each.

    ``gpus``: a list of device ordinals (or a count): one worker per GPU, each with
    ``CUDA_VISIBLE_DEVICES`` set to its device and the resource ``{"GPU": 1}``.
    Otherwise ``n_workers`` CPU workers (default 2). Extra keyword arguments go to
    ``distributed.LocalCluster`` (or ``SpecCluster`` with ``gpus``). The scheduler's
    HTTP server (the dashboard, if bokeh is installed) takes a free port:
    ``client.dashboard_link`` says which.
    """
    import dask
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster

    dask.config.set({"distributed.worker.multiprocessing-method": "spawn"})
    dashboard_address = kwargs.pop("dashboard_address", ":0")
    if gpus is not None:
        ordinals = list(range(gpus)) if isinstance(gpus, int) else [int(g) for g in gpus]
        if not ordinals:
            raise ParameterError("gpus is empty")
        env = dict(kwargs.pop("env", {}) or {})
        workers = {
            f"gpu-{g}": {
                "cls": Nanny,
                "options": {
                    "nthreads": threads_per_worker,
                    "resources": {"GPU": 1},
                    "env": {**env, "CUDA_VISIBLE_DEVICES": str(g)},
                    **kwargs,
                },
            }
            for g in ordinals
        }
        scheduler = {"cls": Scheduler, "options": {"dashboard_address": dashboard_address}}
        return SpecCluster(workers=workers, scheduler=scheduler, name="fieldgo-gpus")
    if n_workers is None:
        n_workers = 2
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ParameterError(f"n_workers must be a positive integer, got {n_workers!r}")
    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        dashboard_address=dashboard_address,
        **kwargs,
    )


@contextlib.contextmanager
def _client_for(client, n_workers, gpus):
    """(client, owned): a Client for what the user gave; ours are closed after."""
    from distributed import Client

    if isinstance(client, Client):
        yield client
        return
    cluster = None
    if client is None:
        cluster = local_cluster(n_workers, gpus=gpus)
        client = Client(cluster, set_as_default=False)
    else:  # a scheduler address or a cluster object
        client = Client(client, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# --- the sweep --------------------------------------------------------------------------------


def sweep(
    theory,
    params=None,
    *,
    grid=(128, 128),
    spacing=0.1,
    boundary="fixed",
    origin=None,
    initial=None,
    minimize=None,
    out,
    backend="auto",
    precision="float64",
    gradient="auto",
    threads=None,
    client=None,
    n_workers=None,
    gpus=None,
    resources=None,
    resume=True,
    retries=1,
    progress=None,
) -> pa.Table:
    """Relax one simulation per point on Dask workers; one result row per point.

    ``theory``: an ``fg.Theory`` (points set its parameters, dynamic or static) or a
    function returning one, called here with each point's parameters as keywords
    (``lambda kappa: fg.theories.baby_skyrme(kappa=kappa)``).

    ``params``: a list of dicts (one per point) or a dict of lists (their Cartesian
    product). A point may also override ``grid``, ``spacing``, ``boundary``,
    ``origin``, ``initial`` and ``minimize`` (a dict merged over the sweep's).

    ``initial``: an ``fg.initial`` configuration (``fg.initial.skyrmion(charge=2)``),
    the name of one (``"skyrmion"``), an array (ncomp, ny, nx), or a function
    f(x, y), evaluated here and sent as its values. ``minimize``: keyword arguments
    of ``Simulation.minimize`` (tol, max_steps, method, arrest, dt, check_every).

    ``out``: a directory (or an fsspec URL, e.g. ``s3://bucket/scan``) every worker
    can reach: ``points/<id>.arrow`` (``fg.load`` reads it), ``points/<id>.json`` (the
    row) and ``results.parquet``. With ``resume=True`` points already there are not
    run again (their rows come back with ``resumed=True``).

    ``client``: a ``distributed.Client``, a scheduler address or a cluster; by
    default a local cluster of ``n_workers`` processes (2), or with ``gpus`` one
    worker per GPU, closed when the sweep ends. ``resources`` (e.g. ``{"GPU": 1}``)
    is asked of the scheduler for every task. ``threads``: CPU threads per
    simulation (default: the cores of a default local cluster shared among its
    workers, else the backend's choice). ``progress``: a Dask progress bar in
    Jupyter, a text bar in scripts (default on; ``False`` for none).

    Returns a pyarrow Table, one row per point in the order given: ``point_id``,
    the parameters, ``theory``, ``energy``, one column per declared density (its
    integral), ``steps``, ``converged``, ``max_grad``, ``backend``, ``device``,
    ``wall_s``, ``file``, ``error``, ``error_type``, ``host``, ``worker``,
    ``initial``, ``resumed``. A failed point has ``error`` set and the sweep goes on.
    """
    if out is None:
        raise ParameterError("sweep needs out=: a directory the workers can write to")
    out = os.fspath(out)
    fs, _ = _fs(out)
    if fs is None:
        out = os.path.abspath(out)
    settings = dict(grid=grid, spacing=spacing, boundary=boundary, origin=origin)
    base_minimize = _minimize_settings(minimize)
    if threads is None and client is None and gpus is None:
        threads = max(1, (os.cpu_count() or 1) // (n_workers or 2))

    theories = _Theories(theory)
    points, payloads = [], []
    checked: set = set()
    for values in _points(params):
        run = dict(settings)
        run_minimize = dict(base_minimize)
        run_initial = initial
        theory_values = {}
        for k, v in values.items():
            if k == "minimize":
                run_minimize.update(_minimize_settings(v))
            elif k == "initial":
                run_initial = v
            elif k in RESERVED:
                run[k] = v
            else:
                theory_values[k] = v
        name, spec, source, dynamic = theories(theory_values)
        clash = [k for k in spec["params"] if k in RESERVED]
        if clash:
            raise SpecError(f"parameter names {clash} clash with sweep settings")
        lat = Lattice(run["grid"], run["spacing"], origin=run["origin"], boundary=run["boundary"])
        payload, initial_label, initial_key = _initial_payload(run_initial, lat, spec)
        _check_initial(payload, lat, spec, checked, initial_key)
        labels = {k: _label(v) for k, v in values.items()}
        description = dict(
            source=source,
            spec=spec,
            dynamic=dynamic,
            labels=labels,
            lattice=json.loads(lat._json()),
            backend=backend,
            precision=precision,
            gradient=gradient,
            minimize=run_minimize,
            initial=initial_key,
        )
        pid = point_id(description)
        points.append(
            _Point(
                point_id=pid,
                labels=labels,
                theory_name=name,
                spec=spec,
                source=source,
                dynamic=dynamic,
                grid=(lat.nx, lat.ny),
                spacing=(lat.hx, lat.hy),
                boundary=lat.boundary,
                origin=lat.origin,
                backend=backend,
                precision=precision,
                gradient=gradient,
                threads=threads,
                minimize=run_minimize,
                initial_label=initial_label,
                out=out,
                files={"arrow": _join(out, "points", pid + ".arrow"), "json": _join(out, "points", pid + ".json")},
            )
        )
        payloads.append((payload, initial_key))

    seen: dict[str, int] = {}
    for k, p in enumerate(points):
        if p.point_id in seen:
            raise ParameterError(
                f"points {seen[p.point_id]} and {k} are the same point ({p.labels}): every point must differ"
            )
        seen[p.point_id] = k

    _makedirs(out, _join(out, "points"))
    run = _nonce()
    rows: dict = {}
    for p in points:
        p.run, p.resume = run, bool(resume)
        row = _finished_row(p) if resume else None
        if row is not None:
            row["resumed"] = True
            rows[p.point_id] = row
    todo = [(p, payloads[k]) for k, p in enumerate(points) if p.point_id not in rows]

    if todo:
        with _client_for(client, n_workers, gpus) as c:
            rows.update(_submit_all(c, todo, resources, retries, progress))

    table = _table([rows[p.point_id] for p in points], points)
    table = table.replace_schema_metadata(
        {
            "fieldgo.sweep": json.dumps(
                dict(
                    settings=settings,
                    minimize=base_minimize,
                    backend=backend,
                    precision=precision,
                    gradient=gradient,
                    initial=repr(initial) if initial is not None else None,
                ),
                default=_json_default,
            )
        }
    )
    _write_parquet(out, table)
    return table


def _join(root, *parts):
    if "://" in root:
        return "/".join([root.rstrip("/")] + list(parts))
    return os.path.join(root, *parts)


def _makedirs(out, path):
    fs, _ = _fs(out)
    if fs is None:
        os.makedirs(path, exist_ok=True)
    else:
        fs.makedirs(_strip(fs, path), exist_ok=True)


def _submit_all(client, todo, resources, retries, progress) -> dict:
    from distributed import as_completed

    shipped = {}  # arrays go to the cluster once, whatever the number of points
    futures = {}
    for point, (payload, key) in todo:
        arg = payload
        if isinstance(payload, np.ndarray):
            if key not in shipped:
                # on every worker: losing one worker must not lose the initial field
                shipped[key] = client.scatter(payload, hash=False, broadcast=True)
            arg = shipped[key]
        fut = client.submit(
            _run_point,
            point,
            arg,
            key=f"fieldgo-point-{point.point_id}-{_nonce()}",
            pure=False,
            retries=retries,
            resources=resources,
        )
        futures[fut] = point
    rows = {}
    bar = _progress(client, list(futures), progress)
    try:
        for fut in as_completed(list(futures), loop=client.loop):
            point = futures[fut]
            try:
                row = fut.result()
            except Exception as exc:  # noqa: BLE001  (a lost worker, a task that kept failing)
                row = _empty_row(point)
                row["error"] = str(exc) or type(exc).__name__
                row["error_type"] = type(exc).__name__
                row["converged"] = False
            row["resumed"] = False
            rows[point.point_id] = row
            if bar is not None:
                bar.update(1)
                if row.get("error"):
                    bar.set_postfix_str(f"last error: {row['error_type']}", refresh=False)
    except BaseException:
        client.cancel(list(futures))
        raise
    finally:
        if bar is not None:
            bar.close()
    return rows


_counter = itertools.count()


def _nonce():
    return f"{os.getpid()}-{time.time_ns()}-{next(_counter)}"


def _progress(client, futures, progress):
    """A Dask progress widget in Jupyter (nothing to close), else a tqdm bar."""
    from .jupyter.progress import in_notebook

    if progress is False:
        return None
    if in_notebook():
        from distributed import progress as dask_progress
        from IPython.display import display

        # Dask's widget shows itself only as a cell's last value; the sweep shows it
        # now, and it keeps updating from the client's thread while the cell waits.
        display(dask_progress(futures, notebook=True, multi=False, scheduler=client.scheduler.address))
        return None
    from tqdm.std import tqdm

    return tqdm(total=len(futures), desc="sweep", unit="point", file=sys.stderr, dynamic_ncols=True)


_FIXED = [("energy", pa.float64())]
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


def _table(rows: list, points: list) -> pa.Table:
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


def _write_parquet(out, table):
    import pyarrow.parquet as pq

    fs, _ = _fs(out)
    target = _join(out, "results.parquet")
    if fs is None:
        write_atomic(target, lambda tmp: pq.write_table(table, tmp))
        return
    with fs.open(_strip(fs, target), "wb") as f:
        pq.write_table(table, f)


# fg.sweep.local_cluster(...) reads naturally even though fg.sweep is the function.
# (Attributes of a function: mypy does not model them.)
sweep.local_cluster = local_cluster  # type: ignore[attr-defined]
sweep.point_id = point_id  # type: ignore[attr-defined]
