"""The options that cross the bridge, as typed structures.

Each class mirrors one Go struct of pybind (``GO_STRUCT``) field for field: the same
JSON names, in the same order, with the Go types' Python counterparts (``string``:
str, ``int``: int, ``float64``: float, ``bool``: bool, a pointer: the type or None,
which Go reads as "not given"). An instance crosses as that struct's JSON
(:meth:`BridgeOptions.json`). tests/python/test_bridge_options.py reads the Go
structs and holds every class here to its struct, so a field added, renamed or
retyped on one side alone fails a test instead of being dropped silently by Go's
JSON decoder.

The user's values are checked where the user passes them (``Simulation``,
``minimize``, ``radiation.fields``), with typed fieldgo errors; the check here is
the structure's own: a value of the wrong type is a bug in fieldgo, a TypeError.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import numbers
import types
import typing
from typing import ClassVar

__all__ = [
    "BridgeOptions",
    "BackendOptions",
    "SimulationOptions",
    "MinimizeOptions",
    "EvolveOptions",
    "RadiationOptions",
]


@functools.cache
def _hints(cls: type) -> dict:
    """cls's resolved field types: typing.get_type_hints compiles every annotation
    string, about 0.75 ms per call, which every radiation.fields and minimize call
    would pay."""
    return typing.get_type_hints(cls)


@dataclasses.dataclass(frozen=True)
class BridgeOptions:
    """A Go options struct's JSON, typed. Subclasses name their struct."""

    GO_STRUCT: ClassVar[str] = ""

    def __post_init__(self):
        hints = _hints(type(self))
        for f in dataclasses.fields(self):
            value = _typed(type(self).__name__, f.name, hints[f.name], getattr(self, f.name))
            object.__setattr__(self, f.name, value)  # frozen: the checked value replaces the given one

    def json(self) -> str:
        """The JSON object pybind decodes into ``GO_STRUCT`` (every value is a plain
        number, string, bool or None, so a shallow dict: ``dataclasses.asdict`` deep
        copies, a tenth of a millisecond per call)."""
        return json.dumps({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def json_of(cls, **values) -> str:
        """``cls(**values).json()``, built once per distinct set of values: a loop of
        calls with the same settings (a sweep, a minimize of a few steps at a time)
        would otherwise pay the dataclass's checks and the encoding, ~20 µs, every
        call. Values are told apart by type as well as value (``1``, ``1.0`` and
        ``True`` are equal in Python and hash alike, but are different JSON);
        unhashable values are encoded every time."""
        try:
            key = (cls, *((k, type(v), v) for k, v in values.items()))
            hit = _JSON_OF.get(key)
        except TypeError:
            return cls(**values).json()
        if hit is None:
            hit = cls(**values).json()
            if len(_JSON_OF) >= _JSON_OF_MAX:
                _JSON_OF.clear()
            _JSON_OF[key] = hit
        return hit


# json_of's memory: the JSON of the last distinct option sets (at most _JSON_OF_MAX;
# a sweep over a float option would otherwise grow it without end).
_JSON_OF: dict = {}
_JSON_OF_MAX = 256


@dataclasses.dataclass(frozen=True)
class BackendOptions(BridgeOptions):
    """Where a workload runs (pybind ``backendOptions``)."""

    GO_STRUCT: ClassVar[str] = "backendOptions"

    backend: str = "auto"  # "auto", "cpu" or "cuda"
    threads: int = 0  # CPU goroutines; 0: all cores


@dataclasses.dataclass(frozen=True)
class SimulationOptions(BackendOptions):
    """A simulation's backend, storage precision and gradient form (pybind
    ``simOptions``, which embeds ``backendOptions``): ``NewSimulation`` and
    ``LoadSimulation``, where precision "" keeps the saved one."""

    GO_STRUCT: ClassVar[str] = "simOptions"

    precision: str = "float64"  # "float64" or "float32"; "" on load: the saved precision
    gradient: str = "auto"  # "auto", "continuum" or "consistent"


@dataclasses.dataclass(frozen=True)
class MinimizeOptions(BridgeOptions):
    """A flow's settings (pybind ``minimizeOptions``, ``SimStartMinimize``); zero values
    are the runtime's defaults (no arrest override, an estimated dt, the default check
    interval)."""

    GO_STRUCT: ClassVar[str] = "minimizeOptions"

    tol: float
    max_steps: int
    method: str
    arrest: str = ""
    dt: float = 0.0
    check_every: int = 0


@dataclasses.dataclass(frozen=True)
class EvolveOptions(BridgeOptions):
    """An evolution's settings (pybind ``evolveOptions``, ``SimStartEvolve``); dt 0 is the
    runtime's default step, record_every 0 its default interval."""

    GO_STRUCT: ClassVar[str] = "evolveOptions"

    method: str  # "rk4", "leapfrog", "rk45", "llg", "gpe" or "gpe_imaginary"
    t: float  # how long to evolve
    dt: float = 0.0
    record_every: int = 0  # steps between records
    snapshots: bool = False  # copy the field at every record
    gamma: float = 1.0  # llg: the gyromagnetic ratio
    alpha: float = 0.0  # llg: the Gilbert damping
    keep_norm: bool = False  # gpe, gpe_imaginary: keep the initial norm
    adaptive: bool = False  # the Dormand-Prince 5(4) pair with step-size control ("rk45" implies it)
    rtol: float = 0.0  # adaptive: relative tolerance (0: the runtime's default)
    atol: float = 0.0  # adaptive: absolute tolerance (0: the runtime's default)
    dt_min: float = 0.0  # adaptive: the floor of a step (0: the runtime's default)
    record_dt: float = 0.0  # adaptive: time between records (0: record_every, or even times)


@dataclasses.dataclass(frozen=True)
class RadiationOptions(BridgeOptions):
    """Settings of ``fg.radiation.fields`` (pybind ``radiationOptions``); None is Go's
    default (n_iters 2, n_substeps 4, coef_reuse true)."""

    GO_STRUCT: ClassVar[str] = "radiationOptions"

    method: str = "newton"  # "newton" or "rk4"
    n_iters: int | None = None
    n_substeps: int | None = None
    search: str = "warm"  # "warm" or "cold"
    coef_reuse: bool | None = None
    precision: str = "float64"
    retarded: bool = False
    threads: int = 0
    segment: int = 0  # samples per walk; 0: automatic
    tolerance: float = 0.0  # of u.u = c^2; 0: the default
    backend: str = "auto"


def _typed(owner: str, name: str, hint, value):
    """value as the field's type: an int for an int, a float for a float (an integer
    too), a str, a bool; None only where the hint allows it."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union else ()
    if args:
        if value is None and type(None) in args:
            return None
        (hint,) = [a for a in args if a is not type(None)]
    if hint is bool and isinstance(value, bool):
        return value
    if hint is int and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if hint is float and isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if hint is str and isinstance(value, str):
        return value
    raise TypeError(f"{owner}.{name} must be {getattr(hint, '__name__', hint)}, got {value!r}")
