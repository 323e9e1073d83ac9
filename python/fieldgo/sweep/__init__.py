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

import json
import os

import pyarrow as pa

from ..errors import ParameterError, SpecError
from ..runtime.lattice import Lattice
from .cluster import client_for, local_cluster, submit_all
from .ids import json_default, label, nonce, point_id
from .points import RESERVED, Theories, check_initial, expand_params, initial_payload, minimize_settings
from .storage import filesystem, join, makedirs, write_parquet
from .tables import results_table
from .worker import Point, finished_row

__all__ = ["sweep", "local_cluster", "point_id", "RESERVED"]


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
    the name of one (``"skyrmion"``), an array (ncomp, ny, nx) (``(ncomp, nz, ny, nx)``
    on a 3D grid), or a function f(x, y) (f(x, y, z) in 3D, f(x) on a line),
    evaluated here and sent as its values. ``grid`` may have one, two or three axes
    and ``boundary`` be one name per axis, as for ``fg.Simulation``. ``minimize``: keyword arguments
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
    fs, _ = filesystem(out)
    if fs is None:
        out = os.path.abspath(out)
    settings = dict(grid=grid, spacing=spacing, boundary=boundary, origin=origin)
    base_minimize = minimize_settings(minimize)
    if threads is None and client is None and gpus is None:
        threads = max(1, (os.cpu_count() or 1) // (n_workers or 2))

    theories = Theories(theory)
    points, payloads = [], []
    checked: set = set()
    for values in expand_params(params):
        run = dict(settings)
        run_minimize = dict(base_minimize)
        run_initial = initial
        theory_values = {}
        for k, v in values.items():
            if k == "minimize":
                run_minimize.update(minimize_settings(v))
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
        payload, initial_label, initial_key = initial_payload(run_initial, lat, spec)
        check_initial(payload, lat, spec, checked, initial_key)
        labels = {k: label(v) for k, v in values.items()}
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
            Point(
                point_id=pid,
                labels=labels,
                theory_name=name,
                spec=spec,
                source=source,
                dynamic=dynamic,
                grid=lat.grid,
                spacing=lat.spacing,
                boundary=lat.boundary,
                origin=lat.origin,
                backend=backend,
                precision=precision,
                gradient=gradient,
                threads=threads,
                minimize=run_minimize,
                initial_label=initial_label,
                out=out,
                files={"arrow": join(out, "points", pid + ".arrow"), "json": join(out, "points", pid + ".json")},
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

    makedirs(out, join(out, "points"))
    run = nonce()
    rows: dict = {}
    for p in points:
        p.run, p.resume = run, bool(resume)
        row = finished_row(p) if resume else None
        if row is not None:
            row["resumed"] = True
            rows[p.point_id] = row
    todo = [(p, payloads[k]) for k, p in enumerate(points) if p.point_id not in rows]

    if todo:
        with client_for(client, n_workers, gpus) as c:
            rows.update(submit_all(c, todo, resources, retries, progress))

    table = results_table([rows[p.point_id] for p in points], points)
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
                default=json_default,
            )
        }
    )
    write_parquet(out, table)
    return table


# fg.sweep.local_cluster(...) reads naturally even though fg.sweep is the function.
# (Attributes of a function: mypy does not model them.)
sweep.local_cluster = local_cluster  # type: ignore[attr-defined]
sweep.point_id = point_id  # type: ignore[attr-defined]
