"""Where a sweep's files go: a local directory or an fsspec URL. Every file is written
whole or not at all (a temporary file renamed over the target, cache.write_atomic).
Layout: ``points/<id>.arrow`` (the final state), ``points/<id>.json`` (the row) and
``results.parquet``."""

from __future__ import annotations

import json
import os
import tempfile
from typing import TYPE_CHECKING

from ..cache import write_atomic
from .ids import json_default

if TYPE_CHECKING:
    from .worker import Point


def filesystem(out: str):
    """(filesystem, root path) for a local directory or an fsspec URL."""
    if "://" not in out:
        return None, out
    import fsspec

    fs, root = fsspec.core.url_to_fs(out)
    return fs, root


def save_field(sim, point: Point):
    fs, _ = filesystem(point.out)
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


def write_row(row: dict, point: Point):
    data = json.dumps(row, sort_keys=True, default=json_default).encode()
    _write_bytes(point.out, point.files["json"], data)


def _write_bytes(out: str, target: str, data: bytes):
    fs, _ = filesystem(out)
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


def exists(out: str, path: str) -> bool:
    fs, _ = filesystem(out)
    return os.path.exists(path) if fs is None else fs.exists(_strip(fs, path))


def read_row(out: str, path: str):
    fs, _ = filesystem(out)
    try:
        if fs is None:
            with open(path, "rb") as f:
                return json.loads(f.read())
        with fs.open(_strip(fs, path), "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def join(root, *parts):
    if "://" in root:
        return "/".join([root.rstrip("/")] + list(parts))
    return os.path.join(root, *parts)


def makedirs(out, path):
    fs, _ = filesystem(out)
    if fs is None:
        os.makedirs(path, exist_ok=True)
    else:
        fs.makedirs(_strip(fs, path), exist_ok=True)


def write_parquet(out, table):
    import pyarrow.parquet as pq

    fs, _ = filesystem(out)
    target = join(out, "results.parquet")
    if fs is None:
        write_atomic(target, lambda tmp: pq.write_table(table, tmp))
        return
    with fs.open(_strip(fs, target), "wb") as f:
        pq.write_table(table, f)
