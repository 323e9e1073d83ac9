"""What ``Simulation.set_field`` and ``fg.sweep``'s ``initial=`` accept, turned into
one array of float64 values shaped (ncomp, ny, nx).

Both go through :func:`field_values`, so a sweep refuses (on the client, before a
cluster starts) exactly what ``set_field`` refuses, and accepts exactly what it
accepts. The rules:

* an array (ncomp, ny, nx), or (ny, nx) for a one-component theory; an ``fg.Field``;
  a function ``f(x, y)`` returning the components (arrays or numbers over the
  lattice; one bare array for one component); an ``fg.initial`` configuration
  (a skyrmion fills a theory's auxiliary fields after its unit vector with zeros;
  the Skyrme configurations, ``fg.initial.hedgehog`` and the like, are 3D ones);
* complex values are refused (``LayoutError``): the engine's fields are real, so a
  complex order parameter is two components, e.g. ``psi_re`` and ``psi_im``;
* a function that cannot be called as ``f(x, y)`` is refused (``ParameterError``
  naming the function and the signature it has);
* under a unit-vector constraint the constrained (non-auxiliary) components are
  normalised at every site, held boundary sites included, with a
  :class:`ConstraintWarning` when a site was off the sphere by more than
  ``UNIT_TOLERANCE``; a site where they are all zero has no direction and is refused
  (``ParameterError`` naming the site). NaN and Inf are refused by the engine.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ..errors import LayoutError, ParameterError, ShapeError

__all__ = ["field_values", "constraint_of", "ConstraintWarning", "UNIT_TOLERANCE"]

# |n| this far from 1 is a field the user did not mean to be a unit vector (rounding
# in any ansatz stays near 1e-15); below it normalising is silent and harmless.
UNIT_TOLERANCE = 1e-6


class ConstraintWarning(UserWarning):
    """A field given to ``set_field`` broke the theory's constraint and was projected
    onto it (a unit-vector field normalised)."""


def constraint_of(spec) -> dict:
    """The constraint keywords of :func:`field_values` for a theory spec (docs/abi.md)."""
    return dict(unit_vector=spec.get("constraint") == "unit_vector", auxiliary=tuple(spec.get("auxiliary", ())))


def field_values(value, lattice, fields, *, unit_vector=False, auxiliary=(), stacklevel=3):
    """``value`` as a C-contiguous float64 array (len(fields), ny, nx), checked and,
    for a unit-vector theory, normalised (see the module docstring)."""
    from .. import initial as _initial
    from .field import Field

    ncomp = len(fields)
    shape = lattice.shape
    owned = False  # whether arr is a new array no one else holds (else it is copied)
    if isinstance(value, Field):
        arr = value.numpy()
    elif isinstance(value, _initial._Configuration):
        if value.dims == 2 and lattice.dims != 2:
            raise ShapeError(
                f"{value!r} is planar: planar fg.initial configurations are planar for now, not available for a "
                f"{lattice.dims}D lattice {lattice.grid}; give an array, a function "
                f"f({', '.join('xyz'[: lattice.dims])}) or a 3D configuration (fg.initial.hedgehog, ...)"
            )
        if value.dims != lattice.dims:
            raise ShapeError(
                f"{value!r} is a field in {value.dims} dimensions: it is not available for a {lattice.dims}D "
                f"lattice {lattice.grid}; use a lattice grid=(nx, ny, nz)"
            )
        comps = value.components(fields, auxiliary, *_initial._open_grid(lattice))
        if _owned(comps, (ncomp, *shape)):
            arr = comps  # made for this call, in its final layout
        else:
            arr = _stack(comps, ncomp, shape, value)
        owned = True
    elif callable(value):
        coords = lattice.meshgrid()
        _check_signature(value, len(coords))
        comps = value(*coords)
        if ncomp == 1 and not isinstance(comps, (tuple, list)):
            comps = [comps]  # one component: the function may return it bare
        arr = _stack(comps, ncomp, shape, value)
        owned = True
    else:
        arr = np.asarray(value)
    if np.iscomplexobj(arr):
        raise LayoutError(
            f"field values are complex (dtype {arr.dtype}): fieldgo fields are real; "
            f"give the real and imaginary parts as two components (e.g. psi_re, psi_im)"
        )
    if ncomp == 1 and arr.shape == shape:
        arr = arr[None]  # one component given as (ny, nx)
    if arr.shape != (ncomp, *shape):
        axes = ", ".join("n" + "xyz"[k] for k in reversed(range(len(shape))))
        raise ShapeError(f"field of shape {arr.shape} does not fit: want (ncomp, {axes}) = {(ncomp, *shape)}")
    if not np.issubdtype(arr.dtype, np.number):
        raise ShapeError(f"field values must be numbers, got dtype {arr.dtype}")
    arr = np.array(arr, dtype=np.float64, order="C", copy=None if owned else True)
    if unit_vector:
        _normalise(arr, fields, auxiliary, stacklevel + 1)
    return arr


def _name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module not in ("__main__", "builtins") else name


def _check_signature(fn, dims=2):
    """Refuse a function that cannot take the lattice's coordinates ((x, y), or
    (x,) and (x, y, z) on lines and 3D lattices) before calling it, so that a
    TypeError raised inside a correctly shaped function stays the user's own."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin or extension callable: calling it is the only check
    try:
        sig.bind(*([0.0] * dims))
    except TypeError:
        args = ", ".join("xyz"[:dims])
        coords = " and ".join("xyz"[:dims]) if dims < 3 else "x, y and z"
        shape = ", ".join("n" + "xyz"[k] for k in reversed(range(dims)))
        raise ParameterError(
            f"the initial-field function {_name(fn)}{sig} cannot be called as f({args}): "
            f"set_field calls it with the lattice coordinates {coords} (arrays "
            f"shaped ({shape})) and wants the components back"
        ) from None


def _owned(comps, shape) -> bool:
    """Whether an fg.initial configuration gave its components as one new float64
    array already shaped and laid out as the field."""
    return (
        isinstance(comps, np.ndarray)
        and comps.shape == shape
        and comps.dtype == np.float64
        and comps.flags.c_contiguous
        and comps.flags.writeable
    )


def _stack(comps, ncomp, shape, fn):
    if isinstance(comps, np.ndarray) and comps.ndim == len(shape) + 1:
        comps = list(comps)
    try:
        parts = [np.broadcast_to(np.asarray(c), shape) for c in comps]
    except (TypeError, ValueError) as exc:
        raise ShapeError(
            f"the initial-field function {_name(fn)} must return {ncomp} arrays over the lattice (shape {shape}): {exc}"
        ) from None
    if len(parts) != ncomp:
        raise ShapeError(
            f"the initial-field function {_name(fn)} returned {len(parts)} components; the theory has {ncomp}"
        )
    return np.array(parts)


def _site(index):
    """A numpy index (.., j, i) as the site's names and numbers: "(i, j)", "(1, 2)"."""
    ijk = tuple(int(v) for v in reversed(tuple(index)))
    names = "(" + ", ".join("ijk"[: len(ijk)]) + ")"
    return names, "(" + ", ".join(map(str, ijk)) + ")"


def _normalise(arr, fields, auxiliary, stacklevel):
    idx = [k for k, f in enumerate(fields) if f not in set(auxiliary)]
    # In place on a view where the constrained components are adjacent (they always
    # are in the built-in theories): a 96^3 field is 28 MB, and each temporary costs.
    if not idx:
        return
    adjacent = idx == list(range(idx[0], idx[-1] + 1))
    n = arr[idx[0] : idx[-1] + 1] if adjacent else arr[idx]
    with np.errstate(invalid="ignore", over="ignore"):
        norm = np.multiply(n[0], n[0])
        square = np.empty_like(norm)
        for c in n[1:]:
            norm += np.multiply(c, c, out=square)
        np.sqrt(norm, out=norm)
    lo, hi = float(norm.min()), float(norm.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return  # NaN or Inf: the engine refuses it, naming the site
    if lo == 0:
        zero = np.argwhere(norm == 0)
        names, site = _site(zero[0])
        raise ParameterError(
            f"the field is zero at site {names} = {site} ({len(zero)} such site(s)), but the theory "
            f"constrains ({', '.join(fields[k] for k in idx)}) to unit length: a zero vector has no "
            f"direction to normalise to; give every site a non-zero vector"
        )
    if max(hi - 1.0, 1.0 - lo) > UNIT_TOLERANCE:
        dev = np.abs(norm - 1.0)
        worst = np.unravel_index(int(np.argmax(dev)), dev.shape)
        names, site = _site(worst)
        warnings.warn(
            f"the field is not a unit vector: |({', '.join(fields[k] for k in idx)})| is "
            f"{norm[worst]:.6g} at site {names} = {site} (and off 1 by more than {UNIT_TOLERANCE:g} at "
            f"{int(np.count_nonzero(dev > UNIT_TOLERANCE))} site(s)); set_field normalised it",
            ConstraintWarning,
            stacklevel=stacklevel,
        )
    if adjacent:
        n /= norm
    else:
        arr[idx] = n / norm
