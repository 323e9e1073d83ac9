"""Symbolic stand-ins for traced values, and math functions that accept them.

A traced function runs once with :class:`Expr` objects in place of numbers. Each
arithmetic operation builds a SymPy expression; anything Python would need a concrete
number for (``if``, ``float()``, ``math.sin``, numpy) raises :class:`~fieldgo.TraceError`
naming the construct and the user's line (see :mod:`fieldgo.frontend.diagnostics`).

The math functions here (``fg.sqrt``, ``fg.where`` ...) work on plain floats too, so
the same user function can be evaluated numerically (``Theory.evaluate``).
"""

from __future__ import annotations

import contextvars
import math
import numbers

from . import diagnostics
from ._lazy import sympy

__all__ = [
    "Expr",
    "Cond",
    "is_traced",
    "to_sympy",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "atan2",
    "pow",
    "abs",
    "min",
    "max",
    "where",
    "pi",
]

pi = math.pi

# The display trace in progress (fieldgo.frontend.notation.show), else None. While one runs, vectors
# and complex values (fieldgo.frontend.algebra) also carry their unexpanded form and fg.dot, fg.norm2,
# fg.cross, fg.min, fg.max give unevaluated operations; the ordinary trace, and so the
# generated code, never sees them.
_notation: contextvars.ContextVar = contextvars.ContextVar("fieldgo_notation", default=None)


def _shown(result, how, *args):
    """result, or what the display trace in progress makes of it."""
    n = _notation.get()
    return result if n is None else n.annotate(result, how, *args)


def _unwrap(v):
    """The SymPy object for an Expr, Cond or plain number."""
    if isinstance(v, (Expr, Cond)):
        return v.e
    if isinstance(v, bool):
        return sympy.true if v else sympy.false
    if isinstance(v, numbers.Integral):
        return sympy.Integer(int(v))
    if isinstance(v, numbers.Real):
        return sympy.Float(float(v), 53)
    diagnostics.raise_trace_error(
        f"cannot combine a traced value with {type(v).__name__!r}; "
        "only numbers and fieldgo values can be used in traced functions"
    )


def _wrap(e):
    return Expr(e)


def _is_operand(o) -> bool:
    return isinstance(o, Expr) or (isinstance(o, numbers.Real) and not isinstance(o, bool))


def _binary(o, op):
    if not _is_operand(o):
        return NotImplemented
    return _wrap(op(_unwrap(o)))


class _Traced:
    """What Expr and Cond share: refuse every conversion to a concrete Python value."""

    __slots__ = ("e",)

    def __init__(self, e):
        object.__setattr__(self, "e", e)

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute {name!r} on a traced value")

    def __float__(self):
        diagnostics.raise_conversion_error("float")

    def __int__(self):
        diagnostics.raise_conversion_error("int")

    def __index__(self):
        diagnostics.raise_conversion_error("int")

    def __complex__(self):
        diagnostics.raise_conversion_error("complex")

    def __iter__(self):
        diagnostics.raise_trace_error("iteration over a traced scalar")

    def __len__(self):
        diagnostics.raise_trace_error("len() of a traced scalar")

    def __array__(self, *args, **kwargs):
        diagnostics.raise_trace_error(
            "numpy array built from a traced value (numpy cannot be traced; use fg.* functions)"
        )

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = getattr(ufunc, "__name__", str(ufunc))
        diagnostics.raise_trace_error(f"numpy function np.{name} called on a traced value (use fg.{name} or operators)")

    def __array_function__(self, func, types, args, kwargs):
        diagnostics.raise_trace_error(f"numpy function np.{func.__name__} called on a traced value (use fg.* helpers)")

    def __round__(self, *a):
        diagnostics.raise_conversion_error("round")

    def __repr__(self):
        return f"{type(self).__name__}({self.e})"


class Expr(_Traced):
    """A traced real scalar: a thin, immutable wrapper of a SymPy expression."""

    __slots__ = ()

    def __bool__(self):
        diagnostics.raise_bool_error(comparison=False)

    # Arithmetic builds SymPy trees; Python numbers on either side are exact constants.
    # Other operands (Complex, Vector) get NotImplemented so their reflected op runs.
    def __add__(self, o):
        return _binary(o, lambda b: self.e + b)

    def __radd__(self, o):
        return _binary(o, lambda b: b + self.e)

    def __sub__(self, o):
        return _binary(o, lambda b: self.e - b)

    def __rsub__(self, o):
        return _binary(o, lambda b: b - self.e)

    def __mul__(self, o):
        return _binary(o, lambda b: self.e * b)

    def __rmul__(self, o):
        return _binary(o, lambda b: b * self.e)

    def __truediv__(self, o):
        return _binary(o, lambda b: self.e / b)

    def __rtruediv__(self, o):
        return _binary(o, lambda b: b / self.e)

    def __pow__(self, o):
        if not _is_operand(o):
            return NotImplemented
        return _wrap(sympy.Pow(self.e, _power_exponent(o)))

    def __rpow__(self, o):
        return _binary(o, lambda b: sympy.Pow(b, self.e))

    def __neg__(self):
        return _wrap(-self.e)

    def __pos__(self):
        return self

    def __abs__(self):
        return _wrap(sympy.Abs(self.e))

    def __floordiv__(self, o):
        diagnostics.raise_trace_error("floor division // of a traced value")

    __rfloordiv__ = __floordiv__

    def __mod__(self, o):
        diagnostics.raise_trace_error("modulo % of a traced value")

    __rmod__ = __mod__

    # Comparisons give a Cond, usable in fg.where but never as a Python bool.
    def __lt__(self, o):
        return Cond(self.e < _unwrap(o))

    def __le__(self, o):
        return Cond(self.e <= _unwrap(o))

    def __gt__(self, o):
        return Cond(self.e > _unwrap(o))

    def __ge__(self, o):
        return Cond(self.e >= _unwrap(o))

    def __eq__(self, o):
        return Cond(sympy.Eq(self.e, _unwrap(o)))

    def __ne__(self, o):
        return Cond(sympy.Ne(self.e, _unwrap(o)))

    __hash__ = object.__hash__


class Cond(_Traced):
    """A traced comparison; combine with ``&``, ``|``, ``~`` and use in ``fg.where``."""

    __slots__ = ()

    def __bool__(self):
        diagnostics.raise_bool_error(comparison=True)

    def __and__(self, o):
        return Cond(sympy.And(self.e, _unwrap(o)))

    def __rand__(self, o):
        return Cond(sympy.And(_unwrap(o), self.e))

    def __or__(self, o):
        return Cond(sympy.Or(self.e, _unwrap(o)))

    def __ror__(self, o):
        return Cond(sympy.Or(_unwrap(o), self.e))

    def __invert__(self):
        return Cond(sympy.Not(self.e))

    __hash__ = object.__hash__


def _power_exponent(o):
    # 2.0 is written as 2 so the C printer emits x*x, and the derivative stays exact.
    if isinstance(o, float) and o.is_integer() and abs(o) <= 64:
        return sympy.Integer(int(o))
    return _unwrap(o)


def is_traced(*vals) -> bool:
    return any(isinstance(v, (Expr, Cond)) for v in vals)


def to_sympy(v):
    """The SymPy expression of a traced or plain scalar."""
    return _unwrap(v)


def _unary(name, pyfunc, symname):
    def f(x):
        if isinstance(x, Expr):
            return _wrap(getattr(sympy, symname)(x.e))
        if hasattr(x, "__fg_" + name + "__"):  # Complex and friends opt in
            return getattr(x, "__fg_" + name + "__")()
        return pyfunc(x)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"{name}(x): works on traced values and on plain numbers."
    return f


sqrt = _unary("sqrt", math.sqrt, "sqrt")
exp = _unary("exp", math.exp, "exp")
log = _unary("log", math.log, "log")
sin = _unary("sin", math.sin, "sin")
cos = _unary("cos", math.cos, "cos")
tan = _unary("tan", math.tan, "tan")


def _py_abs(x):
    return x.__abs__() if hasattr(x, "__abs__") else math.fabs(x)


abs = _unary("abs", _py_abs, "Abs")  # noqa: A001  (fg.abs reads as the physicist writes it)


def atan2(y, x):
    """atan2(y, x), the angle of the point (x, y)."""
    if is_traced(y, x):
        return _wrap(sympy.atan2(_unwrap(y), _unwrap(x)))
    return math.atan2(y, x)


def pow(x, y):  # noqa: A001
    """x ** y."""
    if is_traced(x, y):
        return _wrap(sympy.Pow(_unwrap(x), _power_exponent(y)))
    return x**y


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b`` (a C ternary; both sides are traced)."""
    if isinstance(cond, Cond):
        return _wrap(sympy.Piecewise((_unwrap(a), cond.e), (_unwrap(b), True)))
    if isinstance(cond, Expr):
        diagnostics.raise_trace_error("fg.where needs a comparison as its condition, got a traced number")
    return a if cond else b


def min(a, b):  # noqa: A001
    """The smaller of a and b; traced as a ternary so its derivative is piecewise."""
    if is_traced(a, b):
        return _shown(where(Expr(_unwrap(a)) <= b, a, b), "min", a, b)
    return a if a <= b else b


def max(a, b):  # noqa: A001
    """The larger of a and b."""
    if is_traced(a, b):
        return _shown(where(Expr(_unwrap(a)) >= b, a, b), "max", a, b)
    return a if a >= b else b
