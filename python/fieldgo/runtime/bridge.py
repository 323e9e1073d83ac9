"""The one door to the Go runtime: gopy's module, with errors made typed.

Go reports errors as ``"fieldgo[Kind]: message"`` strings (errs/errs.go); gopy
raises them as RuntimeError. ``go.Name(...)`` calls pybind's ``Name`` and raises
the matching :class:`fieldgo.Error` subclass instead.
"""

from __future__ import annotations

import functools
import os
import warnings

from ..errors import BackendError, from_bridge

try:
    from .._bridge import pybind as _pybind
except ImportError as exc:  # pragma: no cover - only on a broken install
    _pybind = None
    _IMPORT_ERROR = exc


class _Go:
    def __getattr__(self, name: str):
        if _pybind is None:
            raise BackendError(
                f"the fieldgo Go runtime is not built ({_IMPORT_ERROR}); run `make setup` or `pip install -e .`"
            )
        fn = getattr(_pybind, name)

        @functools.wraps(fn)
        def call(*args):
            try:
                return fn(*args)
            except RuntimeError as exc:
                raise from_bridge(str(exc)) from None

        setattr(self, name, call)
        return call


go = _Go()


def import_batch(pair: int):
    """The record batch in a Go pair block (ArrowPairArray + its schema), freeing
    the block; pyarrow owns the data from here (its release callback)."""
    import pyarrow as pa

    try:
        return pa.RecordBatch._import_from_c(go.ArrowPairArray(pair), pair)
    finally:
        go.FreeArrowPair(pair)


def import_table(pair: int):
    """import_batch as a one-batch Table (Table.from_batches: pa.table would import
    pandas, 0.2-0.3 s the first time)."""
    import pyarrow as pa

    return pa.Table.from_batches([import_batch(pair)])


def _warn_fork():
    warnings.warn(
        "fork() after fieldgo loaded the Go runtime: the child can hang if it uses fieldgo "
        "(Go's threads are not copied). Use multiprocessing's 'spawn' or 'forkserver' start method.",
        RuntimeWarning,
        stacklevel=3,
    )


if _pybind is not None and hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_warn_fork)


# NVRTC as pip installs it (`fieldgo[cuda]`: nvidia-cuda-nvrtc-cu12; the test extra's
# nvidia-cuda-nvrtc 13), relative to an ``nvidia`` folder of site-packages.
_NVRTC_WHEEL_LIBS = ("cu13/lib/libnvrtc.so.13", "cuda_nvrtc/lib/libnvrtc.so.13", "cuda_nvrtc/lib/libnvrtc.so.12")


def wheel_nvrtc() -> list[str]:
    """The NVRTC libraries that pip installed into this Python's environment."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    found = []
    for root in (spec.submodule_search_locations or []) if spec else []:
        for rel in _NVRTC_WHEEL_LIBS:
            lib = os.path.join(root, rel)
            if os.path.isfile(lib):
                found.append(lib)
    return found


# Tell the CUDA backend where pip put NVRTC before anything loads it: the Go side
# cannot know which environment this interpreter runs in (a venv's python need not
# be activated) and reads the environment of the process's start only.
if _pybind is not None and hasattr(_pybind, "AddNVRTCPaths"):
    _libs = wheel_nvrtc()
    if _libs:
        _pybind.AddNVRTCPaths("\n".join(_libs))
