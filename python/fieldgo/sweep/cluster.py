"""Dask: a local cluster for sweeps (spawned workers, one per GPU if asked), the client
a sweep uses, and the submission of the points with their progress."""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from ..errors import ParameterError
from .ids import nonce
from .worker import empty_row, run_point


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
def client_for(client, n_workers, gpus):
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


def submit_all(client, todo, resources, retries, progress) -> dict:
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
            run_point,
            point,
            arg,
            key=f"fieldgo-point-{point.point_id}-{nonce()}",
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
                row = empty_row(point)
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


def _progress(client, futures, progress):
    """A Dask progress widget in Jupyter (nothing to close), else a tqdm bar."""
    from ..jupyter.progress import in_notebook

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
