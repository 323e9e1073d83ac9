"""The ``%fieldgo`` line magic: what this machine offers and what fieldgo compiled.

    %fieldgo devices        backends: the CPU (cores, C compiler) and CUDA (driver, GPUs)
    %fieldgo kernels        compiled kernels in the cache (CPU objects, point code, CUBINs)
    %fieldgo cache          the compile cache: where it is, entries and sizes
    %fieldgo cache clear    delete the cache's entries (compiled again when next needed)

Each command returns a :class:`Report`, a table that shows as HTML in Jupyter and as
text elsewhere; the same functions are callable without IPython
(``fieldgo.jupyter.magics.devices()``).
"""

from __future__ import annotations

import ctypes
import datetime
import html
import os

__all__ = ["Report", "devices", "kernels", "cache", "cache_clear", "cache_root", "fieldgo_magic"]

from .. import cache as _cache
from ..cache import _size

# Kinds of cache entries: (directory under the cache root, what it holds, suffixes that
# are the compiled objects; other files are their sidecars and count toward the size).
_KINDS = tuple((kind, holds, (suffix,)) for kind, (holds, suffix) in _cache.KINDS.items())


class Report:
    """A titled table (columns, rows) with HTML and text forms, plus notes."""

    def __init__(self, title, columns, rows, notes=()):
        self.title, self.columns, self.rows, self.notes = title, list(columns), [list(r) for r in rows], list(notes)

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in self.rows)
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.notes)
        return (
            f"<div class='fieldgo-report'><b>{html.escape(self.title)}</b>"
            f"<table><tr>{head}</tr>{body}</table>{notes}</div>"
        )

    def __str__(self):
        cells = [self.columns] + [[str(v) for v in r] for r in self.rows]
        widths = [max(len(str(row[k])) for row in cells) for k in range(len(self.columns))]
        lines = [self.title]
        for n, row in enumerate(cells):
            lines.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines + self.notes)

    __repr__ = __str__


# --- devices --------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def _compiler() -> str:
    from ..frontend import native

    try:
        cc = native._compiler()
        version = native._compiler_version(tuple(cc)).strip().splitlines()
        return f"{' '.join(cc)}: {version[0] if version else '?'}"
    except Exception as exc:  # noqa: BLE001  (reported, not raised)
        return f"none ({exc})"


def cuda_probe() -> dict:
    """Whether the CUDA driver loads and which GPUs it sees (ctypes, no fieldgo build
    needed). Keys: available (bool), detail (str), gpus (list of dicts)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return dict(available=False, detail=f"no CUDA driver (libcuda.so.1: {exc})", gpus=[])
    rc = lib.cuInit(0)
    if rc != 0:
        return dict(available=False, detail=f"CUDA driver present but cuInit failed (CUresult {rc})", gpus=[])
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return dict(available=False, detail="CUDA driver present, no GPU visible", gpus=[])
    version = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(version))
    gpus = []
    for i in range(count.value):
        dev = ctypes.c_int(0)
        lib.cuDeviceGet(ctypes.byref(dev), i)
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, dev)
        mem = ctypes.c_size_t(0)
        lib.cuDeviceTotalMem_v2(ctypes.byref(mem), dev)
        major, minor, sms = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
        lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
        lib.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev)  # MULTIPROCESSOR_COUNT
        gpus.append(
            dict(
                index=i,
                name=name.value.decode(errors="replace"),
                memory_gib=mem.value / 2**30,
                compute=f"{major.value}.{minor.value}",
                sms=sms.value,
            )
        )
    v = version.value
    return dict(available=True, detail=f"CUDA driver {v // 1000}.{v % 1000 // 10}, {len(gpus)} GPU(s)", gpus=gpus)


def _bridge_backends():
    """The Go runtime's own probe (fg.devices()): what simulations will run on."""
    from ..runtime.devices import devices as runtime_devices

    try:
        return runtime_devices()
    except Exception:  # noqa: BLE001  (a broken bridge must not break the magic)
        return None


def devices() -> Report:
    """The backends fieldgo can use here."""
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    rows = [["cpu", "yes", f"{_cpu_model()}; {usable} usable of {cores} cores", _compiler()]]
    notes = []
    probe = cuda_probe()
    if probe["gpus"]:
        for g in probe["gpus"]:
            rows.append(
                [
                    f"cuda:{g['index']}",
                    "driver yes",
                    f"{g['name']}, {g['memory_gib']:.1f} GiB, sm_{g['compute'].replace('.', '')}, {g['sms']} SMs",
                    probe["detail"],
                ]
            )
    else:
        rows.append(["cuda", "no", probe["detail"], ""])
    bridge = _bridge_backends()
    if bridge is not None:
        cuda = bridge.get("cuda", {})
        if cuda.get("available"):
            notes.append(f"fieldgo runtime: backend='auto' runs on CUDA ({cuda.get('device')}, {cuda.get('arch')})")
        else:
            notes.append(f"fieldgo runtime: backend='auto' runs on the CPU; CUDA: {cuda.get('reason', 'unavailable')}")
    else:
        notes.append(
            "Whether this build's Go runtime uses CUDA is decided per simulation: "
            "sim.describe()['backend'] and ['backend_note'] say which backend ran and why."
        )
    return Report("fieldgo devices", ["backend", "available", "device", "toolchain"], rows, notes)


# --- cache and kernels ------------------------------------------------------------------


def cache_root() -> str:
    """$FIELDGO_CACHE, else ~/.cache/fieldgo (fieldgo.cache.root())."""
    return _cache.root()


def _dirs(sub):
    """(directory, name filter) pairs where entries of one kind live: every cache is
    a folder of the one root (fieldgo.cache)."""
    return [(_cache.directory(sub), None)]


def _listing(sub):
    for d, keep in _dirs(sub):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        names = [n for n in names if keep is None or keep(n)]
        yield d, names


def _entries():
    """(kind, description, path, bytes incl. sidecars, mtime) for each compiled object."""
    out = []
    for sub, what, suffixes in _KINDS:
        for d, names in _listing(sub):
            for name in names:
                if not name.endswith(suffixes):
                    continue
                path = os.path.join(d, name)
                stem = os.path.splitext(path)[0]
                size = 0
                for other in names:
                    p = os.path.join(d, other)
                    if p == path or p.startswith(path + ".") or os.path.splitext(p)[0] == stem:
                        try:
                            size += os.path.getsize(p)
                        except OSError:
                            pass
                try:
                    mtime = os.path.getmtime(path)
                except OSError:
                    continue
                out.append((sub, what, path, size, mtime))
    return out


def _date(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def kernels() -> Report:
    """Every compiled kernel in the cache, newest first. Registers and occupancy are
    reported for CUDA modules when the runtime records them; CPU objects have none."""
    rows = []
    for sub, what, path, size, mtime in sorted(_entries(), key=lambda e: -e[4]):
        if sub == "source":
            continue  # traced C, not a compiled kernel (listed by %fieldgo cache)
        name = os.path.basename(path)
        short = name if len(name) <= 28 else name[:24] + "…" + os.path.splitext(name)[1]
        rows.append([sub, what, short, _size(size), _date(mtime), "—", "—"])
    notes = [f"cache: {cache_root()}"]
    if not rows:
        notes.append("no compiled kernels yet (a Simulation or theory.at compiles on first use)")
    return Report(
        "fieldgo kernels", ["backend", "kind", "entry", "size", "compiled", "registers", "occupancy"], rows, notes
    )


def cache() -> Report:
    """The compile cache: one row per kind with its entries and total size
    (fieldgo.cache.info())."""
    info = _cache.info()
    entries = _entries()
    rows = []
    for kind, k in info["kinds"].items():
        mine = [e for e in entries if e[0] == kind]
        newest = _date(max(e[4] for e in mine)) if mine else "—"
        rows.append([kind, k["holds"], k["entries"], _size(k["bytes"]), newest, k["directory"]])
    return Report(
        "fieldgo cache",
        ["kind", "holds", "entries", "size", "newest", "directory"],
        rows,
        [f"clear it with %fieldgo cache clear (root: {info['root']})"],
    )


def cache_clear() -> Report:
    """Delete every entry of the compile cache (the directories stay; fieldgo.cache.clear()).
    Objects already loaded by a running process stay valid; new compiles refill the cache."""
    done = _cache.clear()
    return Report(
        "fieldgo cache cleared",
        ["files removed", "freed", "root"],
        [[done["files"], _size(done["bytes"]), cache_root()]],
    )


_USAGE = "usage: %fieldgo devices | kernels | cache [clear]"


def fieldgo_magic(line: str):
    """%fieldgo devices | kernels | cache | cache clear"""
    words = line.split()
    if words == ["devices"]:
        return devices()
    if words == ["kernels"]:
        return kernels()
    if words == ["cache"]:
        return cache()
    if words == ["cache", "clear"]:
        return cache_clear()
    from ..errors import ParameterError

    raise ParameterError(f"unknown %fieldgo command {line.strip()!r}; {_USAGE}")
