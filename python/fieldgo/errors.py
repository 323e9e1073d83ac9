"""The exception hierarchy of fieldgo.

Every error fieldgo raises is a :class:`fieldgo.Error`. Each subclass also derives
from the built-in exception it resembles (ValueError for bad input, RuntimeError for
failures while running), so ``except ValueError`` keeps working in user code.

Errors that come from the Go runtime arrive as strings ``"fieldgo[Kind]: message"``
(see errs/errs.go); :func:`from_bridge` maps Kind onto the classes below.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "LatticeError",
    "ShapeError",
    "LayoutError",
    "ParameterError",
    "SpecError",
    "TraceError",
    "FormatError",
    "ReleasedError",
    "HandleError",
    "CompileError",
    "BackendError",
    "DivergenceError",
    "StepSizeError",
    "CancelledError",
    "InternalError",
    "TrajectoryError",
    "from_bridge",
]

import re


class Error(Exception):
    """Base class of every fieldgo error."""


class LatticeError(Error, ValueError):
    """A lattice is malformed: sizes, spacing, origin or boundary."""


class ShapeError(Error, ValueError):
    """An array's shape or length does not fit the lattice or the theory."""


class LayoutError(Error, ValueError):
    """Memory cannot be shared as asked: wrong dtype, not contiguous, nulls, ..."""


class ParameterError(Error, ValueError):
    """A parameter is unknown, missing or not a finite number."""


class SpecError(Error, ValueError):
    """A theory specification is malformed."""


class TraceError(Error, TypeError):
    """A traced Python function uses something that cannot be turned into C.

    The message names the construct and the user's file and line.
    """

    # Set where the error is made (diagnostics.make_error).
    filename: str | None
    lineno: int | None
    construct: str


class FormatError(Error, ValueError):
    """A file or Arrow stream is not what fieldgo expects."""


class ReleasedError(Error, RuntimeError):
    """An object was used after it was released."""


class HandleError(Error, RuntimeError):
    """The Go side does not know a handle (a bug, or use after release)."""


class CompileError(Error, RuntimeError):
    """Generated code failed to compile; the message carries the compiler log."""

    # Set where the compiler ran (native.py): its output and its command line.
    log: str
    command: list[str]


class BackendError(Error, RuntimeError):
    """A backend is unavailable: no C compiler, no GPU, no driver, ..."""


class DivergenceError(Error, FloatingPointError):
    """A flow produced NaN or Inf; the last good state is kept."""


class StepSizeError(DivergenceError):
    """An adaptive evolution's step fell below its floor (``dt_min``): the solution
    blows up there, or the tolerances cannot be met. The field and velocity are the
    last accepted step's; the message names the time and the step."""


class CancelledError(Error, RuntimeError):
    """A long call was cancelled."""


class InternalError(Error, RuntimeError):
    """A bug inside fieldgo (for instance a recovered Go panic)."""


class TrajectoryError(Error, ValueError):
    """A trajectory table is malformed: unsorted or non-finite times, fewer than 4
    knots per particle, a 4-velocity off the mass shell, or a spline on other knots."""


_BY_KIND = {
    cls.__name__: cls
    for cls in (
        LatticeError,
        ShapeError,
        LayoutError,
        ParameterError,
        SpecError,
        TraceError,
        FormatError,
        ReleasedError,
        HandleError,
        CompileError,
        BackendError,
        DivergenceError,
        StepSizeError,
        CancelledError,
        InternalError,
        TrajectoryError,
    )
}

_BRIDGE_RE = re.compile(r"fieldgo\[(\w+)\]: (.*)", re.S)


def from_bridge(message: str) -> Error:
    """Turn a Go error string into the matching typed exception."""
    m = _BRIDGE_RE.search(message)
    if not m:
        return InternalError(message)
    cls = _BY_KIND.get(m.group(1), InternalError)
    return cls(m.group(2))
