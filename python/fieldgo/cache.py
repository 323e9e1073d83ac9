"""fieldgo's disk caches: one root, one folder per kind, one key scheme, one writer.

The root is ``$FIELDGO_CACHE``, else the platform's cache folder + ``fieldgo``
(``$XDG_CACHE_HOME/fieldgo``, default ``~/.cache/fieldgo``, on Linux; the folder Go's
``os.UserCacheDir`` names elsewhere). Under it:

==========  ==========================================  ======================================
kind        holds                                       written by
==========  ==========================================  ======================================
source      ``<key>.c``: traced point sources           python/fieldgo/frontend/sourcecache.py
point       ``<key>.so`` + ``.c``: ``Theory.at`` code    python/fieldgo/frontend/native.py
cpu         ``<key>.so`` + ``.so.sha256``: CPU kernels  kernels/cpu (Go)
cuda        ``<key>.cubin`` + ``.log``, tune files      kernels/cuda (Go)
==========  ==========================================  ======================================

Keys are :func:`key` here and ``diskcache.Key`` in Go (internal/diskcache): the same
SHA-256 of the scheme, the kind and the inputs, so an entry of an older layout is simply
not found and is compiled again. Every file goes in through :func:`write_atomic`
(``diskcache.WriteAtomic`` in Go): a temporary file beside it, synced, then renamed.

The Go runtime reads ``$FIELDGO_CACHE`` when the process starts; set it before
``import fieldgo`` for the cpu and cuda kinds to follow.

Public as ``fg.cache``: :func:`info` and :func:`clear`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile

__all__ = ["KINDS", "CacheInfo", "root", "directory", "key", "write_atomic", "info", "clear"]

SCHEME = "fieldgo-cache/2"

# kind -> (what an entry is, the suffix of an entry's main file; other files are sidecars)
KINDS = {
    "source": ("traced point source (C)", ".c"),
    "point": ("point code (theory.at)", ".so"),
    "cpu": ("CPU kernel (C template + point source)", ".so"),
    "cuda": ("CUDA module (CUBIN)", ".cubin"),
}


def root() -> str:
    """The cache root: $FIELDGO_CACHE, else the platform's cache folder + "fieldgo"."""
    d = os.environ.get("FIELDGO_CACHE")
    if d:
        return d
    if sys.platform == "win32":
        base = os.environ.get("LocalAppData") or os.path.expanduser("~")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fieldgo")


def _check(kind: str) -> str:
    if kind not in KINDS:
        from .errors import ParameterError

        raise ParameterError(f"unknown cache kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return kind


def directory(kind: str) -> str:
    """The folder of one kind under the root."""
    return os.path.join(root(), _check(kind))


def key(kind: str, *parts: str) -> str:
    """64 hex digits: SHA-256 of the scheme, the kind and parts, each NUL-terminated
    (Go's diskcache.Key gives the same digits for the same arguments)."""
    h = hashlib.sha256()
    for s in (SCHEME, kind, *parts):
        h.update(s.encode() + b"\0")
    return h.hexdigest()


def write_atomic(path, data) -> None:
    """Put data at path so that no reader ever sees part of it: a temporary file in
    path's folder (which must exist), written, synced, then renamed over path; on an
    error nothing is left behind. data is bytes, str (UTF-8), or a function that writes
    the file whose name it is given (a compiler's ``-o``, ``sim.save``)."""
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-", suffix=os.path.basename(path))
    try:
        if callable(data):
            os.close(fd)
            fd = -1
            data(tmp)
            fd = os.open(tmp, os.O_RDONLY)
        else:
            view = data.encode() if isinstance(data, str) else memoryview(data)
            while len(view):
                view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _files(d: str):
    """(path, bytes) of every file under d; nothing when d does not exist."""
    for top, _, names in os.walk(d):
        for n in names:
            p = os.path.join(top, n)
            try:
                yield p, os.path.getsize(p)
            except OSError:
                pass


def _entries(kind: str):
    """(path, mtime) of the entries of one kind: its main files, not sidecars or
    temporaries."""
    d = directory(kind)
    suffix = KINDS[kind][1]
    try:
        names = os.listdir(d)
    except OSError:
        return []
    out = []
    for n in names:
        if n.endswith(suffix) and not n.startswith("."):
            p = os.path.join(d, n)
            try:
                out.append((p, os.path.getmtime(p)))
            except OSError:
                pass
    return out


class CacheInfo(dict):
    """What :func:`info` returns: a dict ``{"root", "kinds": {kind: {"entries",
    "bytes", "directory", "holds"}}, "entries", "bytes"}`` that prints as a table."""

    def __repr__(self):
        lines = [f"fieldgo cache at {self['root']}"]
        for kind, k in self["kinds"].items():
            lines.append(f"  {kind:<7} {k['holds']:<40} {k['entries']:>6} entries {_size(k['bytes']):>10}")
        lines.append(f"  {'total':<48} {self['entries']:>6} entries {_size(self['bytes']):>10}")
        return "\n".join(lines)

    __str__ = __repr__


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def info() -> CacheInfo:
    """The cache root, and per kind the number of entries and the bytes on disk
    (sidecars such as checksums, ptxas logs and tuned shapes included)."""
    kinds = {}
    for kind, (holds, _) in KINDS.items():
        d = directory(kind)
        kinds[kind] = {
            "entries": len(_entries(kind)),
            "bytes": sum(size for _, size in _files(d)),
            "directory": d,
            "holds": holds,
        }
    return CacheInfo(
        root=root(),
        kinds=kinds,
        entries=sum(k["entries"] for k in kinds.values()),
        bytes=sum(k["bytes"] for k in kinds.values()),
    )


def clear(kind: str | None = None) -> dict:
    """Delete the entries of one kind, or of every kind (the folders stay). They are
    compiled again when next needed; what a running process already loaded stays valid.
    Returns ``{"files": removed, "bytes": freed}``. An unknown kind is a ParameterError."""
    kinds = list(KINDS) if kind is None else [_check(kind)]
    files = freed = 0
    for k in kinds:
        d = directory(k)
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    inside = list(_files(p))
                    shutil.rmtree(p)
                    files += len(inside)
                    freed += sum(s for _, s in inside)
                else:
                    size = os.path.getsize(p)
                    os.remove(p)
                    files += 1
                    freed += size
            except OSError:
                continue
    return {"files": files, "bytes": freed}
