"""Run a user's point function on stand-ins (to trace it) or on numbers (to check it).

The same objects serve both: a :class:`Site` holds :class:`~fieldgo.frontend.algebra.Vector`s of
either traced symbols or floats, :class:`Params` holds either parameter symbols (dynamic
parameters) and plain values (static ones), or plain values only. Tracing therefore
unrolls Python loops and branches over static values exactly as a numeric run takes them.
"""

from __future__ import annotations

import numbers
import sys

import numpy as np

from . import diagnostics
from ._lazy import sympy
from .algebra import Vector
from .symbolic import Cond, Expr

FIRST = ("phi", "dx", "dy")
SECOND = ("dxx", "dyy", "dxy")
SLOTS = FIRST + SECOND
# The z slots of a three-dimensional site. A theory whose functions never read them
# (nor s.z) is planar: its point source is the two-axis one of docs/abi.md, the same
# bytes as before z existed.
Z_FIRST = ("dz",)
Z_SECOND = ("dzz", "dxz", "dyz")
Z_SLOTS = Z_FIRST + Z_SECOND


class Symbols:
    """The SymPy symbols of one theory's site values and dynamic parameters."""

    def __init__(self, fields, dynamic_params):
        n = len(fields)
        self.fields = tuple(fields)
        self.slot = {k: tuple(sympy.Symbol(f"{k}_{a}", real=True) for a in range(n)) for k in SLOTS}
        self.zslot = {k: tuple(sympy.Symbol(f"{k}_{a}", real=True) for a in range(n)) for k in Z_SLOTS}
        self.x = sympy.Symbol("x", real=True)
        self.y = sympy.Symbol("y", real=True)
        self.z = sympy.Symbol("z", real=True)
        self.params = {name: sympy.Symbol(f"p_{name}", real=True) for name in dynamic_params}

    @property
    def phi(self):
        return self.slot["phi"]

    @property
    def dx(self):
        return self.slot["dx"]

    @property
    def dy(self):
        return self.slot["dy"]

    @property
    def dz(self):
        return self.zslot["dz"]

    def z_symbols(self) -> set:
        """Every symbol of the z axis: the z slots and the coordinate z."""
        return {v for syms in self.zslot.values() for v in syms} | {self.z}

    def uses_z(self, *exprs) -> bool:
        """Whether any of exprs reads a z symbol: the theory is three-dimensional."""
        zs = self.z_symbols()
        return any(bool(getattr(e, "free_symbols", set()) & zs) for e in exprs)

    def c_names(self):
        """SymPy symbol -> the C lvalue it reads, per docs/abi.md."""
        out = {}
        for k, syms in self.slot.items():
            for a, sym in enumerate(syms):
                out[sym] = f"s->{k}[{a}]"
        for k, syms in self.zslot.items():
            for a, sym in enumerate(syms):
                out[sym] = f"s->{k}[{a}]"
        out[self.x] = "s->x"
        out[self.y] = "s->y"
        out[self.z] = "s->z"
        for name, sym in self.params.items():
            out[sym] = f"p->{name}"
        return out


class Site:
    """One lattice site: ``s.phi``, ``s.dx``, ``s.dy``, ``s.dz``, the second derivatives
    ``s.dxx``, ``s.dyy``, ``s.dzz``, ``s.dxy``, ``s.dxz``, ``s.dyz``, and the coordinates
    ``s.x``, ``s.y``, ``s.z``.

    The vectors are addressed by index or component name: ``s.phi[0]``, ``s.phi["n1"]``,
    ``s.phi.n1``. In an energy density only the first derivatives exist (the
    Euler–Lagrange form is derived for e(phi, d phi, x, y, z)). A theory that reads
    any z value is three-dimensional; on a 1D or 2D lattice its field is constant
    along z (``s.dz`` is zero there).
    """

    __slots__ = ("_values", "_second", "_role")

    def __init__(self, values: dict, second_derivatives: bool, role: str):
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_second", second_derivatives)
        object.__setattr__(self, "_role", role)

    def _get(self, name):
        if (name in SECOND or name in Z_SECOND) and not self._second:
            diagnostics.raise_trace_error(
                f"second derivative s.{name} used in an {self._role} (an energy density may "
                "depend on s.phi, s.dx, s.dy, s.dz, s.x, s.y, s.z only)"
            )
        return self._values[name]

    phi = property(lambda self: self._get("phi"))
    dx = property(lambda self: self._get("dx"))
    dy = property(lambda self: self._get("dy"))
    dxx = property(lambda self: self._get("dxx"))
    dyy = property(lambda self: self._get("dyy"))
    dxy = property(lambda self: self._get("dxy"))
    dz = property(lambda self: self._get("dz"))
    dzz = property(lambda self: self._get("dzz"))
    dxz = property(lambda self: self._get("dxz"))
    dyz = property(lambda self: self._get("dyz"))
    x = property(lambda self: self._values["x"])
    y = property(lambda self: self._values["y"])
    z = property(lambda self: self._values["z"])

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        diagnostics.raise_trace_error(
            f"unknown site attribute s.{name} (a site has phi, dx, dy, dz, dxx, dyy, dzz, dxy, dxz, dyz, x, y, z)"
        )

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute s.{name} on the site (sites are read-only)")

    def __bool__(self):  # pragma: no cover - nobody branches on a site, but be explicit
        return True


class Params:
    """Parameters: ``p.kappa`` or ``p["kappa"]``."""

    __slots__ = ("_values",)

    def __init__(self, values: dict):
        object.__setattr__(self, "_values", values)

    def __getitem__(self, name):
        try:
            return self._values[name]
        except (KeyError, TypeError):
            diagnostics.raise_trace_error(
                f"unknown parameter name {name!r} (parameters: {', '.join(self._values) or 'none'})"
            )

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute p.{name} on the parameters (read-only)")

    def __setitem__(self, name, value):
        diagnostics.raise_trace_error(f"assigning p[{name!r}] on the parameters (read-only)")

    def __contains__(self, name):
        return name in self._values

    def keys(self):
        return self._values.keys()


class Out:
    """The writable gradient vector of a hand-written ``@theory.gradient``."""

    __slots__ = ("_vals", "_names")

    def __init__(self, names, zero):
        object.__setattr__(self, "_vals", [zero] * len(names))
        object.__setattr__(self, "_names", tuple(names))

    def _index(self, key):
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            if not -len(self._vals) <= key < len(self._vals):
                diagnostics.raise_trace_error(
                    f"component index {key} out of range for out with {len(self._vals)} components"
                )
            return int(key) % len(self._vals)
        if isinstance(key, str) and key in self._names:
            return self._names.index(key)
        if isinstance(key, str):
            diagnostics.raise_trace_error(
                f"unknown component name {key!r} in out (components: {', '.join(self._names)})"
            )
        diagnostics.raise_trace_error(f"out is indexed by a static int or component name, not {key!r}")

    def __getitem__(self, key):
        return self._vals[self._index(key)]

    def __setitem__(self, key, value):
        if isinstance(value, Cond) or not isinstance(value, (Expr, numbers.Real)):
            diagnostics.raise_trace_error(f"out[{key!r}] must be a real scalar, got {type(value).__name__}")
        self._vals[self._index(key)] = value

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute out.{name} (use out[index] = value)")

    def __len__(self):
        return len(self._vals)

    def values(self):
        return list(self._vals)


# --- building sites ----------------------------------------------------------------


def symbolic_site(symbols: Symbols, second_derivatives: bool, role: str) -> Site:
    values: dict[str, Vector | Expr] = {
        k: Vector([Expr(v) for v in symbols.slot[k]], symbols.fields, f"s.{k}") for k in SLOTS
    }
    for k in Z_SLOTS:
        values[k] = Vector([Expr(v) for v in symbols.zslot[k]], symbols.fields, f"s.{k}")
    values["x"] = Expr(symbols.x)
    values["y"] = Expr(symbols.y)
    values["z"] = Expr(symbols.z)
    return Site(values, second_derivatives, role)


def numeric_site(fields, arrays: dict, x: float, y: float, second_derivatives: bool, role: str, z: float = 0.0) -> Site:
    """A site of numbers; the z slots not in arrays are zero (a field constant along z)."""
    values: dict[str, Vector | float] = {k: Vector([float(v) for v in arrays[k]], fields, f"s.{k}") for k in SLOTS}
    for k in Z_SLOTS:
        values[k] = Vector([float(v) for v in arrays.get(k, [0.0] * len(fields))], fields, f"s.{k}")
    values["x"] = float(x)
    values["y"] = float(y)
    values["z"] = float(z)
    return Site(values, second_derivatives, role)


# --- running ----------------------------------------------------------------------


def _return_line(fn, args):
    """Re-run fn under a profiler to find the line it returned from (for error messages)."""
    line = None

    def prof(frame, event, arg):
        nonlocal line
        if event == "return" and frame.f_code is fn.__code__:
            line = frame.f_lineno

    old = sys.getprofile()
    sys.setprofile(prof)
    try:
        fn(*args)
    except Exception:
        pass
    finally:
        sys.setprofile(old)
    return line


def call(fn, *args):
    with diagnostics.tracing(fn):
        return fn(*args)


def scalar_result(fn, args, role: str):
    """Run fn(*args) and insist on a real scalar result (traced Expr or number)."""
    result = call(fn, *args)
    if isinstance(result, Expr):
        return result
    if isinstance(result, numbers.Real) and not isinstance(result, bool):
        return result
    if isinstance(result, np.floating):
        return float(result)  # a numpy scalar from a numeric run
    filename = fn.__code__.co_filename
    line = _return_line(fn, args)
    what = "None (missing return?)" if result is None else type(result).__name__
    raise diagnostics.make_error(f"{role} must return a real scalar, but returned {what}", filename, line)


def gradient_result(fn, site, params, fields, zero):
    out = Out(fields, zero)
    result = call(fn, site, params, out)
    if result is not None:
        filename = fn.__code__.co_filename
        raise diagnostics.make_error(
            f"@theory.gradient writes into out[...] and returns nothing, but it returned {type(result).__name__}",
            filename,
            _return_line(fn, (site, params, Out(fields, zero))),
        )
    return out.values()
