"""Describing the points, on the client: the parameter grid, each point's theory traced
once per structure, its initial configuration turned into plain values and checked,
and its flow settings."""

from __future__ import annotations

import hashlib
import itertools
import json
import numbers
import warnings

import numpy as np

from .. import initial as _initial
from ..errors import ParameterError, ShapeError, SpecError
from ..frontend.theory import Static
from ..runtime.fieldvalues import ConstraintWarning, constraint_of, field_values
from ..runtime.lattice import Lattice
from .ids import ID_LENGTH

# Point keys that set the run instead of the theory (per-point overrides of the
# sweep's arguments); every other key is a theory (or factory) parameter.
RESERVED = ("grid", "spacing", "boundary", "origin", "initial", "minimize")
MINIMIZE_KEYS = ("tol", "max_steps", "method", "arrest", "dt", "check_every")


def expand_params(params) -> list:
    """A list of dicts, or a dict of lists (their Cartesian product, in key order)."""
    if params is None:
        return [{}]
    if isinstance(params, dict):
        names = list(params)
        values = []
        for name in names:
            v = params[name]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise ParameterError(f"params[{name!r}] must be a list of values, got {v!r}")
            values.append(list(v))
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]
    try:
        points = [dict(p) for p in params]
    except (TypeError, ValueError):
        raise ParameterError(
            f"params must be a list of dicts or a dict of lists, got {type(params).__name__}"
        ) from None
    if not points:
        raise ParameterError("params is empty: a sweep needs at least one point")
    return points


def _is_theory(obj) -> bool:
    return hasattr(obj, "spec") and hasattr(obj, "source") and hasattr(obj, "params")


class Theories:
    """Turns a point's parameters into (name, spec, source, dynamic values).

    A theory object is traced once per set of static values; a factory is called
    per point and its result traced once per distinct structure (the pickled point
    functions and static values), so a factory swept over dynamic parameters costs
    one trace, not one per point.
    """

    def __init__(self, theory_or_factory):
        self.obj = theory_or_factory
        self.factory = not _is_theory(theory_or_factory)
        if self.factory and not callable(theory_or_factory):
            raise SpecError(
                f"sweep needs an fg.Theory or a function returning one, got {type(theory_or_factory).__name__}"
            )
        self._traced: dict = {}

    def __call__(self, values: dict):
        if self.factory:
            try:
                theory = self.obj(**values)
            except TypeError as exc:
                raise ParameterError(f"the theory factory does not take {sorted(values)}: {exc}") from None
            if not _is_theory(theory):
                raise SpecError(f"the theory factory returned {type(theory).__name__}, not an fg.Theory")
            dynamic = {k: v for k, v in theory.params.items() if k in theory.spec["params"]}
            static = {k: v for k, v in theory.params.items() if k not in theory.spec["params"]}
        else:
            theory = self.obj
            names = list(theory.spec["params"])
            unknown = [k for k in values if k not in theory.params]
            if unknown:
                raise ParameterError(
                    f"unknown parameter(s) {unknown} for theory {theory.name!r} "
                    f"(parameters: {', '.join(theory.params) or 'none'})"
                )
            dynamic = {k: values.get(k, theory.params[k]) for k in names}
            static = {k: values.get(k, v) for k, v in theory.params.items() if k not in names}
        for k, v in dynamic.items():
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ParameterError(f"dynamic parameter {k!r} must be a number, got {v!r}")
        dynamic = {k: float(v) for k, v in dynamic.items()}
        source = self._source(theory, static)
        return theory.name, dict(theory.spec), source, dynamic

    def _source(self, theory, static):
        key = self._key(theory, static)
        if key is not None and key in self._traced:
            return self._traced[key]
        if hasattr(theory, "_build"):
            static = {k: (v.value if isinstance(v, Static) else v) for k, v in static.items()}
            source = theory._build({**theory.static_params, **static})[1]
        else:  # a theory read back by fg.load: its source is fixed
            source = theory.source
        if key is not None:
            self._traced[key] = source
        return source

    def _key(self, theory, static):
        if not self.factory:
            return ("static",) + tuple(sorted((k, repr(v)) for k, v in static.items()))
        try:
            import cloudpickle

            fns = (
                getattr(theory, "_energy_fn", None),
                getattr(theory, "_gradient_fn", None),
                getattr(theory, "_density_fns", None),
            )
            blob = cloudpickle.dumps(fns)
        except Exception:  # noqa: BLE001  (no fingerprint: trace this one)
            return None
        return (
            theory.name,
            tuple(theory.fields),
            json.dumps(theory.spec, sort_keys=True),
            tuple(sorted((k, repr(v)) for k, v in static.items())),
            hashlib.sha256(blob).hexdigest(),
        )


def initial_payload(initial, lattice: Lattice, spec: dict):
    """(object to ship, label, id key) for an initial configuration.

    Arrays, fields and functions are turned into values here by the function
    ``Simulation.set_field`` uses (fieldvalues.field_values), so they are accepted
    and refused exactly as set_field would; an ``fg.initial`` object travels as
    itself and is checked by :func:`check_initial`."""
    if initial is None:
        return None, None, None
    if isinstance(initial, str):
        fn = getattr(_initial, initial, None)
        if fn is None or initial.startswith("_") or not callable(fn) or isinstance(fn, type):
            raise ParameterError(
                f"unknown initial configuration {initial!r}: use a function of "
                "fg.initial (e.g. 'skyrmion'), an fg.initial object or an array"
            )
        initial = fn()
    if isinstance(initial, _initial._Configuration):
        return initial, repr(initial), repr(initial)
    is_array = not callable(initial) and not (hasattr(initial, "numpy") and callable(initial.numpy))
    if is_array and not np.issubdtype(np.asarray(initial).dtype, np.number):
        raise ShapeError(
            f"initial must be an fg.initial configuration, a function f(x, y) or an array, got {type(initial).__name__}"
        )
    # Any function is evaluated here and travels as its values: nothing of the
    # user's closure is pickled. The values travel as given and the worker's
    # set_field projects them, as a set_field here would (projecting twice moves
    # the last bits); the check with the constraint refuses a zero vector here.
    arr = field_values(initial, lattice, spec["fields"])
    field_values(arr, lattice, spec["fields"], **constraint_of(spec), stacklevel=4)
    if callable(initial) and not hasattr(initial, "numpy"):
        name = getattr(initial, "__qualname__", type(initial).__name__)
        return _array_payload(arr, f"{name}({', '.join('xyz'[: lattice.dims])})")
    return _array_payload(arr, "array")


def check_initial(payload, lattice: Lattice, spec: dict, checked: set, key):
    """Evaluate an fg.initial configuration on the client for a point's lattice and
    theory, as set_field will on the worker: a mismatch (a skyrmion for a
    four-component vortex theory) is one error here, not an error row per point
    after the cluster starts. Each (configuration, lattice, theory) once."""
    if not isinstance(payload, _initial._Configuration):
        return
    mark = (key, lattice._json(), tuple(spec["fields"]))
    if mark in checked:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstraintWarning)  # the worker normalises it the same way
        field_values(payload, lattice, spec["fields"], **constraint_of(spec))
    checked.add(mark)


def _array_payload(arr, name):
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    digest = hashlib.sha256(arr.tobytes() + repr(arr.shape).encode()).hexdigest()[:ID_LENGTH]
    return arr, f"{name} {arr.shape} sha256:{digest}", f"array:{digest}"


def minimize_settings(minimize) -> dict:
    settings = dict(minimize or {})
    bad = [k for k in settings if k not in MINIMIZE_KEYS]
    if bad:
        raise ParameterError(f"minimize settings {bad} are not supported in a sweep (use {', '.join(MINIMIZE_KEYS)})")
    return settings
