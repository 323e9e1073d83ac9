"""Compile a point source with the system C compiler and call it through ctypes.

Used by ``Theory.at`` to evaluate the generated C on one site. Shared objects are
the ``point`` kind of the one disk cache (python/fieldgo/cache.py:
``$FIELDGO_CACHE/point/<key>.so``, default ``~/.cache/fieldgo/point/``), keyed like the
CPU backend's kernels by the source, the compiler command, the flags and the compiler's
version, and written atomically (``cache.write_atomic``) so concurrent processes never
load half a file.
``compile_count`` counts actual compiler runs in this process; tests use it to check
that changing a dynamic parameter never recompiles.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shlex
import shutil
import subprocess
import threading

import numpy as np

from .. import cache
from ..errors import BackendError, CompileError

__all__ = ["compile_count", "cache_dir", "PointLibrary", "load"]

# -O2 without fast-math; no FMA contraction so the C rounds like Python's arithmetic.
CFLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math")

compile_count = 0
_loaded: dict = {}
_lock = threading.Lock()

_HARNESS = r"""
/* ---- fieldgo point harness: one site in, every point function out ---- */
#include <string.h>
typedef char fg_site_is_packed_[(sizeof(fg_site) == (6 * FG_NCOMP + 2) * sizeof(double)) ? 1 : -1];

int fg_harness_ncomp(void) { return FG_NCOMP; }
int fg_harness_nparams(void) { return FG_NPARAMS; }
int fg_harness_ndens(void) { return FG_NDENS; }

void fg_harness_eval(const double* site, const double* params, double* out) {
    fg_site s;
    fg_params p;
    memcpy(&s, site, sizeof s);
    memcpy(&p, params, sizeof p);
    out[0] = fg_energy(&s, &p);
    fg_partials(&s, &p, out + 1, out + 1 + FG_NCOMP, out + 1 + 2 * FG_NCOMP);
    fg_gradient(&s, &p, out + 1 + 3 * FG_NCOMP);
    for (int k = 0; k < FG_NDENS; ++k)
        out[1 + 4 * FG_NCOMP + k] = fg_density(k, &s, &p);
}
"""


# A three-dimensional point source (FG_DIM 3) has the z members in its site and a
# fourth partial, de/d(dz); its harness takes the site in struct order (phi, dx, dy,
# dz, dxx, dyy, dzz, dxy, dxz, dyz, x, y, z) and appends de/d(dz) after the densities.
# A planar source keeps the harness above, byte for byte (and so its cache entries).
_HARNESS_3D = r"""
/* ---- fieldgo point harness: one site in, every point function out ---- */
#include <string.h>
typedef char fg_site_is_packed_[(sizeof(fg_site) == (10 * FG_NCOMP + 3) * sizeof(double)) ? 1 : -1];

int fg_harness_ncomp(void) { return FG_NCOMP; }
int fg_harness_nparams(void) { return FG_NPARAMS; }
int fg_harness_ndens(void) { return FG_NDENS; }

void fg_harness_eval(const double* site, const double* params, double* out) {
    fg_site s;
    fg_params p;
    memcpy(&s, site, sizeof s);
    memcpy(&p, params, sizeof p);
    out[0] = fg_energy(&s, &p);
    fg_partials(&s, &p, out + 1, out + 1 + FG_NCOMP, out + 1 + 2 * FG_NCOMP, out + 1 + 4 * FG_NCOMP + FG_NDENS);
    fg_gradient(&s, &p, out + 1 + 3 * FG_NCOMP);
    for (int k = 0; k < FG_NDENS; ++k)
        out[1 + 4 * FG_NCOMP + k] = fg_density(k, &s, &p);
}
"""


def three_dimensional(point_source: str) -> bool:
    """Whether a point source has the z members (FG_DIM 3, docs/abi.md)."""
    return "\n#define FG_DIM     3" in point_source


def cache_dir() -> str:
    """The point kind's folder of the cache root."""
    return cache.directory("point")


def _compiler() -> list:
    cc = shlex.split(os.environ.get("CC", "cc") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise BackendError(f"no C compiler: {cc[0] if cc else 'cc'!r} not found (install one or set $CC)")
    return cc


@functools.lru_cache(maxsize=8)
def _compiler_version(cc: tuple) -> str:
    try:
        r = subprocess.run(list(cc) + ["--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise BackendError(f"cannot run the C compiler {cc[0]!r}: {e}") from None
    return r.stdout + r.stderr


class PointLibrary:
    """A compiled point source plus harness, callable on one site."""

    def __init__(self, path: str, three_d: bool = False):
        self.path = path
        self.three_d = three_d
        lib = ctypes.CDLL(path)
        self.ncomp = lib.fg_harness_ncomp()
        self.nparams = lib.fg_harness_nparams()
        self.ndens = lib.fg_harness_ndens()
        f = lib.fg_harness_eval
        dp = ctypes.POINTER(ctypes.c_double)
        f.argtypes = [dp, dp, dp]
        f.restype = None
        self._eval = f
        self._lib = lib

    def evaluate(self, site: np.ndarray, params: np.ndarray) -> np.ndarray:
        """site: 6*ncomp+2 doubles (phi, dx, dy, dxx, dyy, dxy, x, y), or for a 3D source
        10*ncomp+3 (phi, dx, dy, dz, dxx, dyy, dzz, dxy, dxz, dyz, x, y, z); params: >= 1
        double. Returns energy, de/dphi, de/ddx, de/ddy, gradient, densities and, for a
        3D source, de/ddz."""
        site = np.ascontiguousarray(site, dtype=np.float64)
        params = np.ascontiguousarray(params, dtype=np.float64)
        width = 10 * self.ncomp + 3 if self.three_d else 6 * self.ncomp + 2
        if site.size != width or params.size < max(1, self.nparams):
            raise ValueError("site or params of the wrong size for this point library")
        out = np.empty(1 + (5 if self.three_d else 4) * self.ncomp + self.ndens)
        dp = ctypes.POINTER(ctypes.c_double)
        self._eval(site.ctypes.data_as(dp), params.ctypes.data_as(dp), out.ctypes.data_as(dp))
        return out


def load(point_source: str) -> PointLibrary:
    """Compile (or find in the cache) the point source with the harness and load it."""
    cc = _compiler()
    three_d = three_dimensional(point_source)
    source = point_source + (_HARNESS_3D if three_d else _HARNESS)
    version = _compiler_version(tuple(cc))
    key = cache.key("point", source, " ".join(cc), " ".join(CFLAGS), version)
    with _lock:
        lib = _loaded.get(key)
        if lib is not None:
            return lib
        d = cache_dir()
        os.makedirs(d, exist_ok=True)
        so_path = os.path.join(d, f"{key}.so")
        if not os.path.exists(so_path):
            c_path = os.path.join(d, f"{key}.c")
            cache.write_atomic(c_path, source)
            cache.write_atomic(so_path, lambda tmp_so: _compile(cc, c_path, tmp_so))
        lib = PointLibrary(so_path, three_d)
        _loaded[key] = lib
        return lib


def _compile(cc: list, c_path: str, so_path: str) -> None:
    global compile_count
    cmd = cc + list(CFLAGS) + ["-o", so_path, c_path, "-lm"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except OSError as e:
        raise BackendError(f"cannot run the C compiler {cc[0]!r}: {e}") from None
    compile_count += 1
    if r.returncode != 0:
        err = CompileError(f"the C compiler failed on the generated point source ({c_path}):\n{r.stderr}{r.stdout}")
        err.log = r.stderr + r.stdout
        err.command = cmd
        raise err
