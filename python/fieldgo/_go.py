"""The one door to the Go runtime: gopy's module, with errors made typed.

Go reports errors as ``"fieldgo[Kind]: message"`` strings (errs/errs.go); gopy
raises them as RuntimeError. ``go.Name(...)`` calls pybind's ``Name`` and raises
the matching :class:`fieldgo.Error` subclass instead.
"""

from __future__ import annotations

import functools
import os
import warnings

from .errors import BackendError, from_bridge

try:
    from ._bridge import pybind as _pybind
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
