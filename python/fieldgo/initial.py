"""Built-in initial configurations.

Each function returns a callable ``f(x, y) -> components`` (arrays broadcast over
the lattice) for :meth:`fieldgo.Simulation.set_field`, which asks it for the
theory's components (``components``): a skyrmion fills auxiliary components after
its unit vector (the chiral magnet's ``psi``, the liquid crystal's ``phi_e``) with
zeros. The callables are small objects of module-level classes (not closures), so
they pickle: ``fg.sweep`` ships them to Dask workers, and their ``repr`` names them
exactly (a sweep point's id).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import ParameterError, ShapeError

_ANSATZ = ("bloch", "neel", "anti")


class _Configuration:
    """An initial configuration: called as ``f(x, y)``; equal, hashed and printed by
    its arguments (``_args``, set by each subclass)."""

    __slots__ = ()
    _args: tuple = ()

    def _values(self):
        return tuple(getattr(self, a) for a in self._args)

    def __eq__(self, other):
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self):
        return hash((type(self).__name__,) + self._values())

    def __repr__(self):
        args = ", ".join(f"{a}={getattr(self, a)!r}" for a in self._args)
        return f"fg.initial.{type(self).__name__.lower()}({args})"

    # Whether a theory's auxiliary components after the configuration's own are
    # zero-filled (True) or any other component count is refused (False: a vortex's
    # components would land in the wrong places of a theory that orders A first).
    _fills_extra = False

    def components(self, fields, auxiliary, x, y):
        """The configuration for a theory with components ``fields`` (``auxiliary``
        among them): its own components, then zeros for trailing auxiliary fields
        where ``_fills_extra`` allows (the chiral magnet's potential psi)."""
        own = list(self(x, y))
        fields, extra = list(fields), list(fields)[len(own) :]
        if len(own) == len(fields):
            return own
        if self._fills_extra and extra and all(f in auxiliary for f in extra):
            zero = np.zeros(np.broadcast(x, y).shape)
            return own + [zero] * len(extra)
        fill = " and zeros for auxiliary fields after them" if self._fills_extra else ""
        raise ShapeError(f"{self!r} gives {len(own)} components{fill}; the theory's fields are {fields}")


def _real(name, v, positive=False):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ParameterError(f"{name} must be a finite number, got {v!r}")
    if positive and v <= 0:
        raise ParameterError(f"{name} must be positive, got {v!r}")
    return float(v)


def _centre(centre):
    try:
        cx, cy = centre
    except (TypeError, ValueError):
        raise ParameterError(f"centre must be (x, y), got {centre!r}") from None
    return _real("centre x", cx), _real("centre y", cy)


def skyrmion(charge: int = 1, size: float = 1.0, centre=(0.0, 0.0), ansatz: str = "bloch"):
    """A Baby Skyrme (or magnetic) skyrmion of charge ``charge``: the built-in
    theories' charge density n . (d_x n x d_y n) / (4 pi) (Baby Skyrme ``charge``,
    the magnets' ``skyrmion_number``) integrates to ``charge``.

    Hedgehog profile f(r) = pi exp(-r/size): n3 = cos f runs from -1 at the centre to
    the vacuum n3 = 1. With that polarity the charge is minus the winding of the
    in-plane vector (n1, n2), so its angle is ``-charge*theta + gamma``: gamma = pi/2
    for ``"bloch"``, 0 for ``"neel"``, -pi/2 for ``"anti"`` (soliton_solver's
    antiskyrmion ansatz).

    In a magnet magnetised along +z, the Bloch and Neel skyrmions a bulk or
    interfacial DMI stabilises wind (n1, n2) once counter-clockwise, so they have
    charge -1 by this density: ``skyrmion(charge=-1, ansatz="bloch")``; charge +1
    there is an antiskyrmion (Heusler DMI). The Baby Skyrme model does not tell the
    two apart: its charge-1 skyrmion is ``skyrmion(charge=1)``.

    A theory whose components after the first three are auxiliary (the chiral
    magnet's ``psi``, the liquid crystal's ``phi_e``) gets the unit vector in its
    first three and zeros in the rest.
    """
    if isinstance(charge, bool) or not isinstance(charge, numbers.Integral) or charge == 0:
        raise ParameterError(f"charge must be a non-zero integer, got {charge!r}")
    size = _real("size", size, positive=True)
    cx, cy = _centre(centre)
    if ansatz not in _ANSATZ:
        raise ParameterError(f"unknown ansatz {ansatz!r}: use one of {_ANSATZ}")
    return Skyrmion(int(charge), size, (cx, cy), ansatz)


class Skyrmion(_Configuration):
    """The field of :func:`skyrmion` (validated arguments)."""

    __slots__ = ("charge", "size", "centre", "ansatz")
    _args = __slots__
    _fills_extra = True
    _HELICITY = {"bloch": np.pi / 2, "neel": 0.0, "anti": -np.pi / 2}

    def __init__(self, charge, size, centre, ansatz):
        self.charge, self.size, self.centre, self.ansatz = charge, size, centre, ansatz

    def __call__(self, x, y):
        charge, size, ansatz = self.charge, self.size, self.ansatz
        cx, cy = self.centre
        r, th = np.hypot(x - cx, y - cy), np.arctan2(y - cy, x - cx)
        f = np.pi * np.exp(-r / size)
        phase = -charge * th + self._HELICITY[ansatz]
        return np.sin(f) * np.cos(phase), np.sin(f) * np.sin(phase), np.cos(f)


def vortex(winding: int = 1, centre=(0.0, 0.0), size: float = 1.0, q: float = 1.0, u: float = 1.0):
    """An Abelian Higgs vortex of winding ``winding``: components (psi_re, psi_im, a_x, a_y).

    psi = u tanh(r/size)^|N| e^{i N theta} and A_theta = N/(q r) (1 - sech(r/size)^2), so the
    covariant derivative decays at infinity and the flux is 2 pi N / q.
    """
    if isinstance(winding, bool) or not isinstance(winding, numbers.Integral):
        raise ParameterError(f"winding must be an integer, got {winding!r}")
    size, q, u = _real("size", size, True), _real("q", q, True), _real("u", u)
    cx, cy = _centre(centre)
    return Vortex(int(winding), (cx, cy), size, q, u)


class Vortex(_Configuration):
    """The field of :func:`vortex` (validated arguments)."""

    __slots__ = ("winding", "centre", "size", "q", "u")
    _args = __slots__

    def __init__(self, winding, centre, size, q, u):
        self.winding, self.centre, self.size, self.q, self.u = winding, centre, size, q, u

    def __call__(self, x, y):
        n, size, q, u = self.winding, self.size, self.q, self.u
        cx, cy = self.centre
        r, th = np.hypot(x - cx, y - cy), np.arctan2(y - cy, x - cx)
        amp = u * np.tanh(r / size) ** abs(n)
        s = r / size
        # (1 - sech^2) / r, finite at r = 0
        with np.errstate(invalid="ignore", divide="ignore"):
            a_over_r = np.where(r > 1e-12, np.tanh(s) ** 2 / np.where(r > 0, r, 1.0), 0.0)
        a_theta = n / q * a_over_r
        return (amp * np.cos(n * th), amp * np.sin(n * th), -np.sin(th) * a_theta, np.cos(th) * a_theta)
