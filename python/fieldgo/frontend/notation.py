"""A theory as the physicist wrote it: |∂_x n|², n · (∂_x n × ∂_y n), |(∂_x − i q a_x) ψ|².

Showing a theory runs its point functions a second time, a *display trace*: the site's
vectors (``s.phi``, ``s.dx`` ...), their named sub-vectors (``s.phi[["m1", "m2", "m3"]]``),
complex fields and covariant derivatives then also carry their unexpanded form, and
``fg.dot``, ``fg.norm2``, ``fg.cross`` give unevaluated SymPy functions of those forms
instead of sums of component products. Anything else (a component, ``fg.Vector([...])``
of components, ``.real`` of a bare field) stays in components, as in the ordinary trace.

Code generation never sees this trace: ``Theory.symbolic()`` and the point source come from
the ordinary one (fieldgo.frontend.algebra and fieldgo.frontend.symbolic consult this module only while
:func:`show` runs, through a context variable). Every form shown is checked against the
expanded one at random points first, and one that disagrees is shown expanded instead.
"""

from __future__ import annotations

import numbers
import random
import re
from dataclasses import dataclass, field

import sympy
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from . import symbolic, tracer
from .algebra import Vector
from .symbolic import Expr, to_sympy

__all__ = [
    "show",
    "Shown",
    "Printer",
    "VecNorm2",
    "Dot",
    "Cross",
    "Component",
    "Abs2",
    "Re",
    "Im",
    "Maximum",
    "Minimum",
    "Covariant",
    "operand",
]

_SLOT_TEX = {
    "phi": "",
    "dx": r"\partial_{x} ",
    "dy": r"\partial_{y} ",
    "dxx": r"\partial_{x}^{2} ",
    "dyy": r"\partial_{y}^{2} ",
    "dxy": r"\partial_{x}\partial_{y} ",
    "dz": r"\partial_{z} ",
    "dzz": r"\partial_{z}^{2} ",
    "dxz": r"\partial_{x}\partial_{z} ",
    "dyz": r"\partial_{y}\partial_{z} ",
}


# --- the unevaluated operations ------------------------------------------------------


def operand(printer, e) -> str:
    """e as an operand of ·, × or a covariant derivative: bracketed unless it is one symbol,
    a power of one, or a function."""
    tex = printer._print(e)
    if isinstance(e, (Cross, Dot)):
        pass
    elif e.is_Symbol or e.is_Function or (e.is_Pow and e.base.is_Symbol) or e.is_Number and e >= 0:
        return tex
    return r"\left(" + tex + r"\right)"


class _RealScalar(sympy.Function):
    """An unevaluated real-valued operation (SymPy leaves it as written)."""

    def _eval_is_real(self):
        return True

    def _eval_is_extended_real(self):
        return True

    def _eval_conjugate(self):
        return self


class _Square(_RealScalar):
    def _eval_is_nonnegative(self):
        return True

    def _eval_is_extended_nonnegative(self):
        return True

    def _latex(self, printer, exp=None):
        # Printer._print_Pow shows (|v|^2)^k as |v|^{2k}; other printers get it bracketed
        inner = r"\left|" + printer._print(self.args[0]) + r"\right|^{2}"
        return inner if exp is None else r"\left(" + inner + r"\right)^{" + exp + "}"


class VecNorm2(_Square):
    """|v|² of a vector."""

    nargs = 1


class Abs2(_Square):
    """|z|² of a complex value."""

    nargs = 1


class Dot(_RealScalar):
    """u · v."""

    nargs = 2

    def _latex(self, printer, exp=None):
        tex = operand(printer, self.args[0]) + r" \cdot " + operand(printer, self.args[1])
        return tex if exp is None else r"\left(" + tex + r"\right)^{" + exp + "}"


class Cross(sympy.Function):
    """u × v (vector-valued: it only appears inside the operations above)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        return operand(printer, self.args[0]) + r" \times " + operand(printer, self.args[1])


class Component(_RealScalar):
    """(v)_j: the component j (0-based, shown 1-based) of a vector-valued operation."""

    nargs = 2

    def _latex(self, printer, exp=None):
        tex = r"\left(" + printer._print(self.args[0]) + r"\right)_{" + str(int(self.args[1]) + 1) + "}"
        return tex if exp is None else tex + "^{" + exp + "}"


class Re(_RealScalar):
    nargs = 1

    def _latex(self, printer, exp=None):
        tex = r"\operatorname{Re}\left(" + printer._print(self.args[0]) + r"\right)"
        return tex if exp is None else r"\left(" + tex + r"\right)^{" + exp + "}"


class Im(_RealScalar):
    nargs = 1

    def _latex(self, printer, exp=None):
        tex = r"\operatorname{Im}\left(" + printer._print(self.args[0]) + r"\right)"
        return tex if exp is None else r"\left(" + tex + r"\right)^{" + exp + "}"


class _Extremum(_RealScalar):
    nargs = 2

    def _latex(self, printer, exp=None):
        a, b = (printer._print(x) for x in self.args)
        tex = "\\" + self.op + r"\left(" + a + ", " + b + r"\right)"
        return tex if exp is None else tex + "^{" + exp + "}"


class Maximum(_Extremum):
    """max(a, b) as written (fg.max), not as the ternary the code uses."""

    op = "max"


class Minimum(_Extremum):
    """min(a, b) as written (fg.min)."""

    op = "min"


class Covariant(sympy.Function):
    """(∂_i − i q a_i) ψ, written out so the display needs no separate definition of D_i.
    Arguments: ψ, ∂_i ψ, q, a_i, i (0 for x, 1 for y, 2 for z)."""

    nargs = 5

    def _latex(self, printer, exp=None):
        psi, _, q, a, i = self.args
        qa = printer._print(q * a)
        op = r"\left(\partial_{" + "xyz"[int(i)] + r"} - i " + qa + r"\right) "
        tex = op + operand(printer, psi)
        return tex if exp is None else r"\left(" + tex + r"\right)^{" + exp + "}"


# --- the trace ---------------------------------------------------------------------------


@dataclass
class _Vec:
    slot: str
    names: tuple
    components: tuple  # SymPy symbols of the ordinary trace


class Notation:
    """The display trace in progress: the symbols it made for whole vectors and complex
    fields, their LaTeX, and what each stands for (to expand and check a shown form)."""

    def __init__(self, symbols: tracer.Symbols):
        self.symbols = symbols
        self.vectors: dict = {}  # Symbol -> _Vec
        self.complexes: dict = {}  # Symbol -> (re, im) SymPy expressions
        self.names: dict = {}  # Symbol -> LaTeX
        self.slots: dict = {}  # Symbol -> the site slot it stands for (phi, dx, ...)
        self.order: dict = {}  # operation -> when the user's code made it (for term order)
        self.component = {c: (k, a) for k, cs in self._all_slots().items() for a, c in enumerate(cs)}

    def _all_slots(self) -> dict:
        """Slot name -> its component symbols, the z slots of a 3D site included."""
        return {**self.symbols.slot, **self.symbols.zslot}

    # symbols for whole vectors and complex fields
    def vector(self, slot: str, idx) -> object:
        fields = self.symbols.fields
        names = tuple(fields[i] for i in idx)
        if len(idx) < 2:
            return None  # (∂_x u)^2 reads better than |∂_x \vec u|^2
        base = _vector_base(names)
        if base is not None and set(names) != {f for f in fields if _vector_base((f,)) == base}:
            base = None  # n1, n2 of n1 ... n4: \vec{n} is the whole of them
        if base is None:
            if len(idx) != len(fields):
                return None  # an assortment of components: shown in components
            body = r"\vec{\phi}"
        else:
            body = r"\vec{" + _name(base) + "}"
        sym = sympy.Symbol(f"vec[{slot}:{','.join(names)}]")
        if sym not in self.vectors:
            self.vectors[sym] = _Vec(slot, names, tuple(self._all_slots()[slot][i] for i in idx))
            self.names[sym] = _SLOT_TEX[slot] + body
            self.slots[sym] = slot
        return sym

    def complex_field(self, slot: str, re_name: str, im_name: str, value):
        stem = _complex_stem(re_name, im_name)
        if stem is None:
            return None
        sym = sympy.Symbol(f"cplx[{slot}:{re_name},{im_name}]", complex=True)
        if sym not in self.complexes:
            self.complexes[sym] = (to_sympy(value.re), to_sympy(value.im))
            self.names[sym] = _SLOT_TEX[slot] + _name(stem)
            self.slots[sym] = slot
        return sym

    # the hooks fieldgo.frontend.algebra calls while a display trace runs
    def annotate(self, result, how, *args):
        handler = getattr(self, "_on_" + how, None)
        if handler is None:
            return result
        out = handler(result, *args)
        if isinstance(out, Expr) and out is not result:
            self.order.setdefault(out.e, len(self.order))
        return out

    def first_made(self, term) -> float:
        """When the user's code made the earliest operation in term (inf: none)."""
        seen = [self.order[f] for f in term.atoms(sympy.Function) if f in self.order]
        return min(seen, default=float("inf"))

    @staticmethod
    def _whole(v):
        return getattr(v, "_whole", None)

    @staticmethod
    def _set(obj, whole):
        if whole is not None:
            object.__setattr__(obj, "_whole", whole)
        return obj

    def _on_sub(self, result, parent, idx):
        w = self._whole(parent)
        if w is None or w not in self.vectors:
            return result
        info = self.vectors[w]
        all_idx = [self.symbols.fields.index(n) for n in info.names]
        return self._set(result, self.vector(info.slot, [all_idx[i] for i in idx]))

    def _on_vector(self, result, a, b, op):
        wa, wb = self._whole(a), self._whole(b)
        if wa is not None and wb is not None:
            return self._set(result, op(wa, wb))
        return result

    def _on_scale(self, result, a, b, op):
        wa = self._whole(a)
        if wa is not None and isinstance(b, (Expr, numbers.Real)) and not isinstance(b, bool):
            return self._set(result, op(wa, to_sympy(b)))
        return result

    def _on_neg(self, result, a):
        wa = self._whole(a)
        return result if wa is None else self._set(result, -wa)

    def _on_dot(self, result, a, b):
        wa, wb = self._whole(a), self._whole(b)
        if wa is None or wb is None:
            return result
        return Expr(VecNorm2(wa) if wa == wb else Dot(wa, wb))

    def _on_cross(self, result, a, b):
        wa, wb = self._whole(a), self._whole(b)
        if wa is None or wb is None:
            return result
        c = Cross(wa, wb)
        return Vector([Expr(Component(c, j)) for j in range(3)], None, "vector", whole=c)

    # complex values
    def _on_field(self, result, slot, re_name, im_name):
        return self._set(result, self.complex_field(slot, re_name, im_name, result))

    def _on_complex(self, result):
        re_, im_ = to_sympy(result.re), to_sympy(result.im)
        if re_ in self.component and im_ in self.component:
            (k, a), (k2, b) = self.component[re_], self.component[im_]
            fields = self.symbols.fields
            if k == k2 and _complex_stem(fields[a], fields[b]) is not None:  # fg.complex(s.phi.psi_re, s.phi.psi_im)
                return self._set(result, self.complex_field(k, fields[a], fields[b], result))
        w = re_ + sympy.I * im_
        if w.has(Re, Im):  # Im(w) - i Re(w) is -i w
            w2 = sympy.factor_terms(
                sympy.expand(
                    w.replace(Re, lambda z: (z + sympy.conjugate(z)) / 2).replace(
                        Im, lambda z: (z - sympy.conjugate(z)) / (2 * sympy.I)
                    )
                )
            )
            if not w2.has(Re, Im) and sympy.count_ops(w2) <= sympy.count_ops(w):
                w = w2
        return self._set(result, w)

    def _on_scalar(self, result):
        return self._set(result, to_sympy(result.re) + sympy.I * to_sympy(result.im))

    def _on_max(self, result, a, b):
        return Expr(Maximum(to_sympy(a), to_sympy(b)))

    def _on_min(self, result, a, b):
        return Expr(Minimum(to_sympy(a), to_sympy(b)))

    def _on_covariant(self, result, psi, dpsi, q, a, i):
        wp, wd = self._whole(psi), self._whole(dpsi)
        if wp is None or wd is None:
            return result
        return self._set(result, Covariant(wp, wd, to_sympy(q), to_sympy(a), sympy.Integer(i)))

    def _on_complex_op(self, result, a, b, op):
        wa, wb = self._whole(a), self._whole(b)
        if wa is not None and (b is None or wb is not None):
            return self._set(result, op(wa) if b is None else op(wa, wb))
        return result

    def _on_abs2(self, result, z):
        wz = self._whole(z)
        return result if wz is None else Expr(Abs2(wz))

    def _on_real(self, result, z):
        wz = self._whole(z)
        return result if not self._complex_expression(wz) else Expr(Re(wz))

    def _on_imag(self, result, z):
        wz = self._whole(z)
        return result if not self._complex_expression(wz) else Expr(Im(wz))

    def _complex_expression(self, w) -> bool:
        """Re(...) is worth showing for an expression of complex fields, not for a field
        itself (its real part is a component) nor for re + i im of real scalars."""
        return w is not None and w not in self.complexes and any(s in self.complexes for s in w.free_symbols)

    # --- expanding and checking -------------------------------------------------------
    def value(self, e):
        """The component form of a shown expression: a SymPy scalar (real, or complex
        for complex values) or, for a vector-valued one, a tuple of them."""
        if isinstance(e, tuple):
            return e
        if e.is_Symbol:
            if e in self.vectors:
                return self.vectors[e].components
            if e in self.complexes:
                re_, im_ = self.complexes[e]
                return self.value(re_) + sympy.I * self.value(im_)
            return e
        if e.is_Atom:
            return e
        args = [self.value(a) for a in e.args]
        if isinstance(e, Cross):
            (a1, a2, a3), (b1, b2, b3) = args
            return (a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1)
        if isinstance(e, VecNorm2):
            return sympy.Add(*[c * c for c in args[0]])
        if isinstance(e, Dot):
            return sympy.Add(*[x * y for x, y in zip(*args)])
        if isinstance(e, Component):
            return args[0][int(args[1])]
        if isinstance(e, Abs2):
            r, i = sympy.expand(args[0]).as_real_imag()
            return r * r + i * i
        if isinstance(e, Re):
            return sympy.expand(args[0]).as_real_imag()[0]
        if isinstance(e, Im):
            return sympy.expand(args[0]).as_real_imag()[1]
        if isinstance(e, Covariant):
            psi, dpsi, q, a, _ = args
            return dpsi - sympy.I * q * a * psi
        if isinstance(e, Maximum):
            return sympy.Piecewise((args[0], args[0] >= args[1]), (args[1], True))
        if isinstance(e, Minimum):
            return sympy.Piecewise((args[0], args[0] <= args[1]), (args[1], True))
        vectors = [a for a in args if isinstance(a, tuple)]
        if vectors:
            if e.is_Add:
                return tuple(sympy.Add(*c) for c in zip(*vectors))
            if e.is_Mul and len(vectors) == 1:
                scale = sympy.Mul(*[a for a in args if not isinstance(a, tuple)])
                return tuple(scale * c for c in vectors[0])
            raise ValueError(f"vector in a scalar operation: {e}")
        return e.func(*args)

    def agrees(self, shown, expanded, tries: int = 3) -> bool:
        """Whether the shown form equals the expanded one (at a few random points, to
        1e-9 relative): a display that is wrong is worse than one that is long."""
        try:
            value = self.value(shown)
        except Exception:
            return False
        if isinstance(value, tuple):
            return False
        value, expanded = sympy.sympify(value), sympy.sympify(expanded)
        free = sorted(value.free_symbols | expanded.free_symbols, key=str)
        rng = random.Random(20240611)
        for _ in range(tries):
            point = {s: sympy.Float(rng.uniform(0.2, 0.9)) for s in free}
            try:
                a = complex(value.xreplace(point).evalf(30))
                b = complex(expanded.xreplace(point).evalf(30))
            except (TypeError, ValueError, ZeroDivisionError):
                continue
            if not all(map(_finite, (a.real, a.imag, b.real, b.imag))):
                continue
            return abs(a - b) <= 1e-9 * (1.0 + abs(b))
        return False


def _finite(v: float) -> bool:
    return v == v and abs(v) != float("inf")


def _vector_base(names):
    """The common stem of n1, n2, n3 or a_x, a_y, a_z (n, a); None if there is none."""
    stems = set()
    for n in names:
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*?)_?([0-9]+|[xyz])", n)
        if m is None:
            return None
        stems.add(m.group(1))
    return stems.pop() if len(stems) == 1 else None


def _complex_stem(re_name, im_name):
    for a, b in (("_re", "_im"), ("re", "im"), ("_r", "_i"), ("_real", "_imag")):
        if (
            re_name.endswith(a)
            and im_name.endswith(b)
            and re_name[: -len(a)] == im_name[: -len(b)]
            and re_name[: -len(a)]
        ):
            return re_name[: -len(a)]
    return None


def _name(name: str) -> str:
    from ..jupyter.display import _name as tex_name

    return tex_name(name)


# --- running ---------------------------------------------------------------------------------


@dataclass
class Shown:
    """A theory's functions traced for display: SymPy expressions in the operations the
    user wrote, or the expanded ones where a shown form did not check out."""

    notation: Notation
    energy: object
    gradient: list | None  # a hand-written gradient's components, else None
    densities: dict = field(default_factory=dict)


def _site(n: Notation, second: bool, role: str) -> tracer.Site:
    sym = n.symbols
    every = list(range(len(sym.fields)))
    values: dict = {}
    for k in tracer.SLOTS:
        values[k] = Vector([Expr(v) for v in sym.slot[k]], sym.fields, f"s.{k}", whole=n.vector(k, every))
    for k in tracer.Z_SLOTS:
        values[k] = Vector([Expr(v) for v in sym.zslot[k]], sym.fields, f"s.{k}", whole=n.vector(k, every))
    values["x"] = Expr(sym.x)
    values["y"] = Expr(sym.y)
    values["z"] = Expr(sym.z)
    return tracer.Site(values, second, role)


def show(theory, st) -> Shown:
    """Trace theory's functions for display; st is its ``symbolic()`` (the expanded
    forms each shown one must equal)."""
    n = Notation(st.symbols)
    pvals = {k: Expr(s) for k, s in st.symbols.params.items()}
    pvals.update(st.static)
    params = tracer.Params(pvals)

    def checked(fn, role, expanded, second):
        try:
            shown = to_sympy(tracer.scalar_result(fn, (_site(n, second, role), params), role))
        except Exception:
            return expanded
        return shown if n.agrees(shown, expanded) else expanded

    token = symbolic._notation.set(n)
    try:
        energy = checked(theory._energy_fn, "energy_density", st.energy, False)
        densities = {
            name: checked(fn, f"density {name!r}", st.densities[name], True) for name, fn in theory._density_fns.items()
        }
        gradient = None
        if st.gradient_kind == "hand":
            try:
                out = tracer.gradient_result(theory._gradient_fn, _site(n, True, "gradient"), params, theory.fields, 0)
                gradient = [to_sympy(v) for v in out]
            except Exception:
                gradient = list(st.gradient)
            gradient = [g if n.agrees(g, e) else e for g, e in zip(gradient, st.gradient)]
    finally:
        symbolic._notation.reset(token)
    return Shown(n, energy, gradient, densities)


# --- printing ---------------------------------------------------------------------------------


class Printer(LatexPrinter):
    """SymPy's LaTeX printer with a physicist's habits: parameters and numbers in front as
    one coefficient (\\tfrac{\\kappa^{2}}{2} |...|^{2}, not \\frac{\\kappa^{2} |...|^{2}}{2}),
    coordinates and fields before derivatives in a product (x \\partial_y \\psi, not
    \\partial_y \\psi x), a derivative bracketed where it is raised to a power or multiplied
    by another, and powers of |v|^2 as powers of |v|.

    ``rank`` orders the factors: symbol -> 0 (coordinates), 1 (fields), 2 (first
    derivatives), 3 (second derivatives); parameters are the ``coefficients``."""

    def __init__(self, symbol_names: dict, coefficients: set, rank: dict):
        super().__init__({"symbol_names": symbol_names, "full_prec": False})
        self.coefficients = frozenset(coefficients)
        self.rank = rank

    def _is_coefficient(self, f) -> bool:
        return f.free_symbols <= self.coefficients

    def _rank(self, f) -> int:
        return max((self.rank.get(s, 1) for s in f.free_symbols), default=0)

    def _is_derivative(self, f) -> bool:
        return f.is_Symbol and self.rank.get(f, 1) >= 2

    def _coefficient(self, c) -> str:
        num, den = sympy.fraction(c)
        if den == 1:
            tex = self._print(num)
            return r"\left(" + tex + r"\right)" if num.is_Add else tex
        from ..jupyter.display import _width

        tn, td = self._print(num), self._print(den)
        small = max(_width(tn), _width(td)) <= 6 and not (num.is_Add or den.is_Add)
        frac = r"\tfrac" if small else r"\frac"
        return frac + "{" + tn + "}{" + td + "}"

    def _factor(self, f, alone: bool) -> str:
        if self._is_derivative(f):
            tex = self._print(f)
            return tex if alone else r"\left(" + tex + r"\right)"
        if isinstance(f, Dot) and alone:
            return self._print(f)  # (1/4 pi) n . (d_x n x d_y n)
        if isinstance(f, Dot) or f.is_Add:
            return r"\left(" + self._print(f) + r"\right)"
        return self.parenthesize(f, PRECEDENCE["Mul"])

    def _product(self, factors) -> str:
        """Factors with no numeric or parameter coefficient, ordered by rank, negative
        powers as a fraction."""
        num = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
        den = [sympy.Pow(f.base, -f.exp) for f in factors if f.is_Pow and f.exp.is_negative]
        tn = self._factors(num) if num else "1"
        return tn if not den else r"\frac{" + tn + "}{" + self._factors(den) + "}"

    def _factors(self, fs) -> str:
        # conjugates first: \overline{\psi} (\partial_x - i q a_x) \psi
        fs = sorted(fs, key=lambda f: (self._rank(f), not isinstance(f, sympy.conjugate)))
        derivatives = sum(self._is_derivative(f) for f in fs)
        out = []
        for k, f in enumerate(fs):
            # a lone derivative that ends the product stays bare: y \partial_x \psi
            alone = len(fs) == 1 or (k == len(fs) - 1 and derivatives == 1 and self._is_derivative(f))
            out.append(self._factor(f, alone))
        return " ".join(out)

    def _print_Mul(self, expr):
        c, rest = expr.as_coeff_Mul()
        if c.is_negative:
            pos = -expr
            tex = self._print(pos)
            return "- " + (r"\left(" + tex + r"\right)" if pos.is_Add else tex)
        factors = sympy.Mul.make_args(rest)
        head = [f for f in factors if self._is_coefficient(f)]
        body = [f for f in factors if not self._is_coefficient(f)]
        if not body:
            return super()._print_Mul(expr)
        if c == 1 and not head:
            return self._product(body)
        return self._coefficient(sympy.Mul(c, *head)) + " " + self._product(body)

    def _print_Add(self, expr, order=None):
        # a positive constant leads: 1 + \kappa^{2} (...), not \kappa^{2} (...) + 1
        terms = self._as_ordered_terms(expr, order=order)
        lead = [t for t in terms if t.is_Number and t > 0]
        if lead and terms[0] is not lead[0]:
            rest = [t for t in terms if t is not lead[0]]
            return super()._print_Add(sympy.Add(lead[0], *rest, evaluate=False), order="none")
        return super()._print_Add(expr, order=order)

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if isinstance(b, _Square) and e.is_Rational and e > 0:
            inner = r"\left|" + self._print(b.args[0]) + r"\right|"
            k = 2 * e
            return inner if k == 1 else inner + "^{" + self._print(k) + "}"
        if self._is_derivative(b) and e.is_Rational and e > 0:
            return r"\left(" + self._print(b) + r"\right)^{" + self._print(e) + "}"
        return super()._print_Pow(expr)
