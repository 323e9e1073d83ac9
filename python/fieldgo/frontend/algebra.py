"""Vectors over field components and complex numbers, for traced and plain values.

``Vector`` is what ``s.phi``, ``s.dx`` ... are: a fixed-length sequence addressed by
index (``v[0]``), by component name (``v["n1"]``, ``v.n1``), by a slice or a list of
names (``v["m1", "m2", "m3"]`` gives a sub-vector). ``Complex`` pairs a real and an
imaginary part. Both hold traced Exprs while tracing and floats when a theory is
evaluated numerically, so helpers here never look at which one they hold.
"""

from __future__ import annotations

import numbers

from . import diagnostics, symbolic

__all__ = ["Vector", "Complex", "complex", "dot", "cross", "norm2", "norm", "complex_field", "covariant", "curl"]

# While a theory is traced for display (fieldgo.frontend.notation), vectors and complex values also
# carry their unexpanded form (``_whole``) and dot, norm2, cross keep the operation.
_shown = symbolic._shown


class Vector:
    """A read-only vector over named components."""

    __slots__ = ("_vals", "_names", "_label", "_whole")

    def __init__(self, values, names=None, label="vector", whole=None):
        object.__setattr__(self, "_vals", tuple(values))
        object.__setattr__(self, "_names", tuple(names) if names is not None else None)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_whole", whole)  # the display trace's form, else None

    # --- addressing -------------------------------------------------------------
    def _index(self, key) -> int:
        if isinstance(key, bool) or symbolic.is_traced(key):
            diagnostics.raise_trace_error(f"index {key!r} into {self._label} must be a static int or component name")
        if isinstance(key, numbers.Integral):
            k = int(key)
            if not -len(self._vals) <= k < len(self._vals):
                diagnostics.raise_trace_error(
                    f"component index {k} out of range for {self._label} with {len(self._vals)} components"
                )
            return k % len(self._vals)
        if isinstance(key, str):
            if self._names is None or key not in self._names:
                known = ", ".join(self._names or ())
                diagnostics.raise_trace_error(f"unknown component name {key!r} in {self._label} (components: {known})")
            return self._names.index(key)
        diagnostics.raise_trace_error(f"{self._label} is indexed by int or component name, not {type(key).__name__}")

    def __getitem__(self, key):
        if isinstance(key, slice):
            idx = range(*key.indices(len(self._vals)))
            return self._sub(list(idx))
        if isinstance(key, (tuple, list)):
            return self._sub([self._index(k) for k in key])
        return self._vals[self._index(key)]

    def _sub(self, idx):
        names = [self._names[i] for i in idx] if self._names else None
        return _shown(Vector([self._vals[i] for i in idx], names, self._label), "sub", self, idx)

    def __getattr__(self, name):
        names = object.__getattribute__(self, "_names")
        if names and name in names:
            return self._vals[names.index(name)]
        if name.startswith("__") or not diagnostics._active:
            raise AttributeError(name)  # introspection outside a trace stays polite
        label = object.__getattribute__(self, "_label")
        diagnostics.raise_trace_error(
            f"unknown component name {name!r} in {label} (components: {', '.join(names or ())})"
        )

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute {name!r} on {self._label}")

    def __setitem__(self, key, value):
        diagnostics.raise_trace_error(f"assignment to {self._label}[{key!r}]: site values are read-only")

    def __len__(self):
        return len(self._vals)

    def __iter__(self):
        return iter(self._vals)

    def __bool__(self):
        diagnostics.raise_trace_error(f"truth value of {self._label} (a vector)")

    @property
    def names(self):
        return self._names

    def tolist(self):
        return list(self._vals)

    # --- arithmetic ---------------------------------------------------------------
    def _zip(self, other, op, linear):
        # linear: "vector" for u ± v, "scale" for v * c and v / c (what the display
        # trace keeps whole; elementwise products and v + c it shows in components)
        if isinstance(other, Vector):
            if len(other) != len(self):
                diagnostics.raise_trace_error(f"vector lengths differ: {len(self)} and {len(other)}")
            out = Vector([op(a, b) for a, b in zip(self._vals, other._vals)], self._names, "vector")
            return _shown(out, "vector", self, other, op) if linear == "vector" else out
        if isinstance(other, (numbers.Real, symbolic.Expr)):
            out = Vector([op(a, other) for a in self._vals], self._names, "vector")
            return _shown(out, "scale", self, other, op) if linear == "scale" else out
        return NotImplemented

    def __add__(self, o):
        return self._zip(o, lambda a, b: a + b, "vector")

    def __radd__(self, o):
        return self._zip(o, lambda a, b: b + a, "vector")

    def __sub__(self, o):
        return self._zip(o, lambda a, b: a - b, "vector")

    def __rsub__(self, o):
        return self._zip(o, lambda a, b: b - a, "vector")

    def __mul__(self, o):
        return self._zip(o, lambda a, b: a * b, "scale")

    def __rmul__(self, o):
        return self._zip(o, lambda a, b: b * a, "scale")

    def __truediv__(self, o):
        return self._zip(o, lambda a, b: a / b, "scale")

    def __neg__(self):
        return _shown(Vector([-a for a in self._vals], self._names, "vector"), "neg", self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        diagnostics.raise_trace_error(f"numpy function np.{ufunc.__name__} called on {self._label} (use fg.* helpers)")

    def __array_function__(self, func, types, args, kwargs):
        diagnostics.raise_trace_error(
            f"numpy function np.{func.__name__} called on {self._label} (use fg.dot, fg.cross, fg.norm2)"
        )

    def __array__(self, *a, **k):
        diagnostics.raise_trace_error(f"numpy array built from {self._label} (use fg.dot, fg.cross, fg.norm2)")

    def __repr__(self):
        return f"Vector({list(self._vals)!r})"


class Complex:
    """A complex number built from two real values (traced or plain)."""

    __slots__ = ("re", "im", "_whole")

    def __init__(self, re, im=0.0):
        object.__setattr__(self, "re", re)
        object.__setattr__(self, "im", im)
        object.__setattr__(self, "_whole", None)  # the display trace's form, else None

    def __setattr__(self, name, value):
        diagnostics.raise_trace_error(f"assigning attribute {name!r} on a complex value")

    @property
    def real(self):
        return _shown(self.re, "real", self)

    @property
    def imag(self):
        return _shown(self.im, "imag", self)

    def conj(self):
        return _shown(Complex(self.re, -self.im), "complex_op", self, None, _conjugate)

    def abs2(self):
        """``|z|^2 = re^2 + im^2`` (no square root)."""
        return _shown(self.re * self.re + self.im * self.im, "abs2", self)

    def __abs__(self):
        return symbolic.sqrt(self.abs2())

    def __fg_abs__(self):
        return abs(self)

    @staticmethod
    def _of(o):
        if isinstance(o, Complex):
            return o
        if isinstance(o, (numbers.Real, symbolic.Expr)):
            return _shown(Complex(o, 0.0), "scalar")
        return None

    def __add__(self, o):
        o = self._of(o)
        return (
            NotImplemented
            if o is None
            else _shown(Complex(self.re + o.re, self.im + o.im), "complex_op", self, o, _add)
        )

    __radd__ = __add__

    def __sub__(self, o):
        o = self._of(o)
        return (
            NotImplemented
            if o is None
            else _shown(Complex(self.re - o.re, self.im - o.im), "complex_op", self, o, _sub)
        )

    def __rsub__(self, o):
        o = self._of(o)
        return (
            NotImplemented
            if o is None
            else _shown(Complex(o.re - self.re, o.im - self.im), "complex_op", o, self, _sub)
        )

    def __mul__(self, o):
        o = self._of(o)
        if o is None:
            return NotImplemented
        return _shown(
            Complex(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re), "complex_op", self, o, _mul
        )

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = self._of(o)
        if o is None:
            return NotImplemented
        d = o.abs2()
        n = self * o.conj()
        return _shown(Complex(n.re / d, n.im / d), "complex_op", self, o, _div)

    def __rtruediv__(self, o):
        o = self._of(o)
        return NotImplemented if o is None else o / self

    def __neg__(self):
        return _shown(Complex(-self.re, -self.im), "complex_op", self, None, _neg)

    def __pow__(self, n):
        # Integer powers unroll into products: exact, and cheap for small n.
        if not isinstance(n, numbers.Integral) or isinstance(n, bool):
            diagnostics.raise_trace_error("complex power needs a static int exponent")
        n = int(n)
        if n < 0:
            return 1.0 / (self ** (-n))
        if n == 0:
            return Complex(1, 0)
        result = None  # not Complex(1, 0): keeps 1.0*x out of the tree
        base = self
        while n:
            if n & 1:
                result = base if result is None else result * base
            n >>= 1
            if n:
                base = base * base
        return result

    def __bool__(self):
        diagnostics.raise_trace_error("truth value of a complex value")

    def __repr__(self):
        return f"Complex({self.re!r}, {self.im!r})"


def complex(re, im=0.0) -> Complex:  # noqa: A001  (fg.complex reads as the maths does)
    """The complex number re + i im."""
    return _shown(Complex(re, im), "complex")


# What the display trace does to the unexpanded forms of complex values.
def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _mul(a, b):
    return a * b


def _div(a, b):
    return a / b


def _neg(a):
    return -a


def _conjugate(a):
    from ._lazy import sympy

    return sympy.conjugate(a)


def dot(a, b):
    """Euclidean dot product of two vectors (any sequences of equal length)."""
    u, v = list(a), list(b)
    if len(u) != len(v):
        diagnostics.raise_trace_error(f"fg.dot of vectors of lengths {len(u)} and {len(v)}")
    total = u[0] * v[0]
    for x, y in zip(u[1:], v[1:]):
        total = total + x * y
    return _shown(total, "dot", a, b)


def cross(a, b) -> Vector:
    """Cross product of two 3-vectors."""
    u, v = list(a), list(b)
    if len(u) != 3 or len(v) != 3:
        diagnostics.raise_trace_error(f"fg.cross needs two 3-vectors, got lengths {len(u)} and {len(v)}")
    return _shown(
        Vector([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]), "cross", a, b
    )


def norm2(v):
    """Squared norm: ``|v|^2`` for a vector, ``|z|^2`` for a complex number, ``v^2`` for a scalar."""
    if isinstance(v, Complex):
        return v.abs2()
    if isinstance(v, (Vector, list, tuple)):
        return dot(v, v)
    return v * v


def norm(v):
    """Euclidean norm sqrt(norm2(v))."""
    return symbolic.sqrt(norm2(v))


class ComplexField:
    """A complex field at a site, from a (real, imaginary) pair of components."""

    __slots__ = ("_site", "_re", "_im")

    def __init__(self, site, re: str, im: str):
        self._site, self._re, self._im = site, re, im

    def _get(self, which):
        v = getattr(self._site, which)
        return _shown(Complex(v[self._re], v[self._im]), "field", which, self._re, self._im)

    value = property(lambda self: self._get("phi"), doc="psi at the site")
    dx = property(lambda self: self._get("dx"), doc="d_x psi")
    dy = property(lambda self: self._get("dy"), doc="d_y psi")
    dxx = property(lambda self: self._get("dxx"))
    dyy = property(lambda self: self._get("dyy"))
    dxy = property(lambda self: self._get("dxy"))
    dz = property(lambda self: self._get("dz"), doc="d_z psi (3D theories)")
    dzz = property(lambda self: self._get("dzz"))
    dxz = property(lambda self: self._get("dxz"))
    dyz = property(lambda self: self._get("dyz"))


def complex_field(site, re: str, im: str) -> ComplexField:
    """``psi = fg.complex_field(s, "psi_re", "psi_im")``: psi.value, psi.dx, psi.dy are Complex."""
    return ComplexField(site, re, im)


def covariant(psi: ComplexField, a, q):
    """Gauge-covariant derivatives (D_x psi, D_y psi), D_i psi = d_i psi - i q A_i psi.

    ``a`` is the pair (A_x, A_y) of gauge-field values at the site, or the triple
    (A_x, A_y, A_z) in a 3D theory: then (D_x psi, D_y psi, D_z psi).
    """
    if len(a) not in (2, 3):
        raise TypeError(f"fg.covariant takes the gauge field's (A_x, A_y) or (A_x, A_y, A_z), got {len(a)} values")
    v = psi.value

    def d(dpsi, ai, i):
        # -i q A psi = q A (psi.im - i psi.re), written out to keep zeros out of the tree
        return _shown(Complex(dpsi.re + q * ai * v.im, dpsi.im - q * ai * v.re), "covariant", v, dpsi, q, ai, i)

    # d_z psi is read only for a triple: reading it makes the point source a 3D one
    derivs = (lambda: psi.dx, lambda: psi.dy, lambda: psi.dz)
    return tuple(d(derivs[i](), ai, i) for i, ai in enumerate(a))


def curl(site, ax: str, ay: str):
    """The magnetic field B = d_x A_y - d_y A_x of the named gauge components."""
    return site.dx[ay] - site.dy[ax]
