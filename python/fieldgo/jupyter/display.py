"""Rich representations: a Theory as LaTeX, a Simulation as an HTML card, a Field
and a history as PNG pictures. Each function takes the object and returns the
string or bytes a Jupyter front end shows; ``register`` hooks them into IPython."""

from __future__ import annotations

import html
import math
import numbers
import re

from ..errors import ParameterError
from ..frontend._lazy import sympy

__all__ = [
    "theory_latex",
    "energy_latex",
    "TheoryView",
    "simulation_html",
    "field_png",
    "history_png",
    "register",
    "unregister",
]


# --- Theory -> LaTeX ---------------------------------------------------------------

_SECOND = {"dxx": r"\partial_{x}^{2} ", "dyy": r"\partial_{y}^{2} ", "dxy": r"\partial_{x}\partial_{y} "}
# The z slots of a theory that uses z (tracer.Z_SLOTS).
_Z = {
    "dz": r"\partial_{z} ",
    "dzz": r"\partial_{z}^{2} ",
    "dxz": r"\partial_{x}\partial_{z} ",
    "dyz": r"\partial_{y}\partial_{z} ",
}


def _symbol_names(theory, symbols) -> dict:
    """SymPy symbol -> LaTeX, in the physicist's notation (component names,
    partial derivatives, parameter names; the printer brackets a derivative where
    it is raised to a power or multiplied by another)."""
    names = {}
    for a, f in enumerate(theory.fields):
        base = _name(f)
        names[symbols.slot["phi"][a]] = base
        names[symbols.slot["dx"][a]] = r"\partial_{x} " + base
        names[symbols.slot["dy"][a]] = r"\partial_{y} " + base
        for slot, op in _SECOND.items():
            if slot in symbols.slot:
                names[symbols.slot[slot][a]] = op + base
        for slot, op in _Z.items():
            names[symbols.zslot[slot][a]] = op + base
    names[symbols.x] = "x"
    names[symbols.y] = "y"
    names[symbols.z] = "z"
    for k, s in symbols.params.items():
        names[s] = _name(k)
    return names


def _value(v) -> str:
    """A parameter value in LaTeX (numbers as a physicist writes them)."""
    if isinstance(v, bool) or isinstance(v, str):
        return r"\text{" + _text(str(v)) + "}"
    if isinstance(v, numbers.Real):
        s = f"{float(v):.6g}"
        if "e" in s:
            mantissa, exponent = s.split("e")
            return mantissa + r" \times 10^{" + str(int(exponent)) + "}"
        return s
    if isinstance(v, tuple):
        return r"\left(" + ", ".join(_value(x) for x in v) + r"\right)"
    return r"\text{" + _text(repr(v)) + "}"


def _text(s: str) -> str:
    """Escape a plain string for \\text{...}."""
    out = []
    for ch in str(s):
        if ch in "\\":
            out.append(r"\textbackslash{}")
        elif ch in "{}_%$#&":
            out.append("\\" + ch)
        elif ch in "^~":  # no portable text-mode form in MathJax and LaTeX alike
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _tidy_numbers(expr):
    """Floats the tracer produced from Python literals (0.5, 1/(4 pi)) back as the
    fractions and multiples of pi a physicist wrote, where one fits exactly."""
    swaps = {}
    for f in expr.atoms(sympy.Float):
        v = float(f)
        for guess in (
            sympy.nsimplify(v, rational=True, tolerance=1e-15 * max(1.0, abs(v))),
            sympy.nsimplify(v, [sympy.pi], tolerance=1e-15 * max(1.0, abs(v))),
        ):
            num, den = sympy.fraction(guess)
            simple = all(
                sympy.Integer(abs(c)) < 1000 for c in (num.as_coeff_Mul()[0], den.as_coeff_Mul()[0]) if c.is_Integer
            )
            if simple and guess.free_symbols == set() and abs(float(guess) - v) <= 1e-15 * max(1.0, abs(v)):
                swaps[f] = guess
                break
    return expr.xreplace(swaps) if swaps else expr


def _name(name: str) -> str:
    """A field or parameter name in LaTeX: Greek letters and subscripts as SymPy
    writes them, other multi-letter names upright (\\mathrm{mass}, not m a s s)."""
    tex = sympy.latex(sympy.Symbol(name))
    head = tex.split("_", 1)[0]
    if len(head) > 1 and not head.startswith("\\"):
        tex = r"\mathrm{" + head + "}" + tex[len(head) :]
    return tex


# A line of a shown equation holds about this many visible characters (sub- and
# superscripts counted as characters): what a notebook cell shows without a scroll bar.
LINE_WIDTH = 72


def _width(tex: str) -> int:
    """Roughly how many characters wide tex renders (commands count as one glyph)."""
    s = re.sub(r"\\(left|right)(?![A-Za-z])", "", tex)
    s = re.sub(r"\\(mathrm|operatorname|text|vec|overline|tfrac|frac)(?![A-Za-z])", "", s)
    s = re.sub(r"\\[A-Za-z]+", "x", s)
    s = re.sub(r"\\.", "x", s)
    return len(re.sub(r"[{}^_ ]", "", s))


def _slot_of(symbols, notation=None):
    """SymPy symbol -> what it reads: a site slot (phi, dx, ...), "coordinate" or "param"."""
    out = {s: k for k, syms in {**symbols.slot, **symbols.zslot}.items() for s in syms}
    out[symbols.x] = out[symbols.y] = out[symbols.z] = "coordinate"
    out.update({s: "param" for s in symbols.params.values()})
    if notation is not None:
        out.update(notation.slots)
    return out


def _derivative_degree(e, slot_of) -> int:
    """How many derivatives a term carries (|∂n|^2: 2, |∂_x n × ∂_y n|^2: 4): the
    kinetic terms come first and lowest order first, as physicists write them."""
    from ..frontend import notation as N

    if e.is_Symbol:
        return int(slot_of.get(e, "phi") not in ("phi", "coordinate", "param"))
    if e.is_Pow and e.exp.is_Number:
        return int(_derivative_degree(e.base, slot_of) * abs(e.exp))
    if isinstance(e, N._Square):
        return 2 * _derivative_degree(e.args[0], slot_of)
    if e.is_Mul or isinstance(e, (N.Dot, N.Cross)):
        return sum(_derivative_degree(a, slot_of) for a in e.args)
    return max((_derivative_degree(a, slot_of) for a in e.args), default=0)


def _is_constant(term, slot_of) -> bool:
    """Whether term depends on parameters only (a vacuum energy, say)."""
    return all(slot_of.get(s) == "param" for s in term.free_symbols)


def _ordered_terms(expr, printer, slot_of, notation=None):
    """The top-level terms of expr as a physicist orders them: terms of second order in
    derivatives and higher first, then first-order ones (DMI, rotation, couplings), then
    the potential, then constants; within a group the order the user's code made the
    operations in (|∂_x n|^2 before |∂_x n × ∂_y n|^2), then SymPy's."""
    terms = list(printer._as_ordered_terms(expr, order=None)) if expr.is_Add else [expr]

    def key(t):
        deg = _derivative_degree(t, slot_of)
        group = 0 if deg >= 2 else 1 if deg else 3 if _is_constant(t, slot_of) else 2
        return (group, notation.first_made(t) if notation is not None else 0)

    return sorted(terms, key=key)


def _signed(term, printer):
    """A term as (sign, LaTeX of its magnitude)."""
    from sympy.core.function import _coeff_isneg

    if _coeff_isneg(term):
        term = -term
        tex = printer._print(term)
        return "-", (r"\left(" + tex + r"\right)" if term.is_Add else tex)
    return "+", printer._print(term)


def _equation(lhs: str, terms, width: int = LINE_WIDTH) -> list:
    """Rows of an aligned block: ``lhs &= t1 + t2`` and, where a line would pass
    ``width`` visible characters, ``&\\quad + t3 ...`` lines under it (terms are
    (sign, LaTeX) pairs; a term never splits)."""
    if not terms:
        return [lhs + " &= 0"]
    lines, line, used = [], "", 0
    for k, (sign, tex) in enumerate(terms):
        w = _width(tex) + 3
        if k and used + w > width and line:
            lines.append(line)
            line, used = "", 0
        if not line:
            line = ("- " if sign == "-" else "") + tex if not lines else sign + " " + tex
        else:
            line += " " + sign + " " + tex
        used += w
    lines.append(line)
    rows = [lhs + " &= " + lines[0]]
    rows += [r"&\quad " + ln for ln in lines[1:]]
    return rows


def _expression_terms(expr, printer, slot_of, notation=None):
    return [_signed(t, printer) for t in _ordered_terms(expr, printer, slot_of, notation)]


def _gradient_terms(g, own, symbols, printer, slot_of):
    """A derived gradient component (of field number ``own``), collected: one term per
    second derivative with its coefficient factored (one \\nabla^2 where the x and y
    ones share it), the field's own first, then the first-order rest, collected by
    parameter with each coefficient factored."""
    order = [own] + [a for a in range(len(symbols.fields)) if a != own]
    slots = {**symbols.slot, **symbols.zslot}
    # A gradient with z derivatives has the 3D Laplacian: dzz joins dxx and dyy.
    three_d = bool(sympy.sympify(g).free_symbols & symbols.z_symbols())
    kinds = ("dxx", "dyy", "dxy") + (("dzz", "dxz", "dyz") if three_d else ())
    second = [slots[k][a] for a in order for k in kinds]
    params = sorted(symbols.params.values(), key=str)
    expanded = sympy.expand(g)
    if not expanded.has(*second):
        parts, rest = {}, expanded
    else:
        parts = sympy.collect(expanded, second, evaluate=False)
        rest = parts.pop(sympy.S.One, sympy.S.Zero)
    names = printer._settings["symbol_names"]
    terms = []
    for a in order:
        diagonal = [slots[k][a] for k in ("dxx", "dyy", "dzz")[: 3 if three_d else 2]]
        xx = diagonal[0]
        found = [(s, parts[s]) for s in (slots[k][a] for k in kinds) if s in parts]
        if all(d in parts for d in diagonal) and all(sympy.expand(parts[d] - parts[xx]) == 0 for d in diagonal):
            lap = sympy.Symbol(f"laplacian_{a}")
            names[lap] = r"\nabla^{2} " + _name(symbols.fields[a])
            printer.rank[lap] = 3
            found = [(lap, parts[xx])] + [(s, c) for s, c in found if s not in diagonal]
        for s, c in found:
            coeff = sympy.factor_terms(sympy.collect(sympy.factor(c), params))
            sign = "+"
            if coeff.could_extract_minus_sign():
                sign, coeff = "-", -coeff
            if coeff == 1:
                tex = printer._print(s)
            elif coeff.is_Add:
                tex = r"\left(" + printer._print(coeff) + r"\right) " + printer._print(s)
            else:
                tex = printer._print(sympy.Mul(coeff, s))
            terms.append((sign, tex))
    if rest != 0:
        rest = sympy.collect(rest, params, func=sympy.factor)
        terms += _expression_terms(rest, printer, slot_of)
    return terms


_RANK = {"coordinate": 0, "param": 0, "phi": 1, "dx": 2, "dy": 2, "dz": 2}
_RANK.update(dict.fromkeys(("dxx", "dyy", "dxy", "dzz", "dxz", "dyz"), 3))


def _printer(theory, symbols, notation):
    from ..frontend import notation as N

    names = _symbol_names(theory, symbols)
    names.update(notation.names)
    rank = {s: _RANK[k] for s, k in _slot_of(symbols, notation).items()}
    return N.Printer(names, set(symbols.params.values()), rank)


def _tidy(e):
    """Numbers as written, and each top-level term with its common factors pulled out
    (0.5 b b is traced as (b/2)(b): shown as b^2/2)."""
    e = _tidy_numbers(e) if isinstance(e, sympy.Basic) else sympy.sympify(e)
    return sympy.Add(*[sympy.factor_terms(t) for t in sympy.Add.make_args(e)])


def energy_latex(theory) -> str:
    """The energy density alone, on one line, in the operations the theory was written
    with (what ``Theory.latex()`` returns)."""
    from ..frontend import notation

    st = theory.symbolic()
    shown = notation.show(theory, st)
    printer = _printer(theory, st.symbols, shown.notation)
    terms = _expression_terms(_tidy(shown.energy), printer, _slot_of(st.symbols, shown.notation), shown.notation)
    return _equation("e", terms, width=10**9)[0].split(" &= ", 1)[1]


def theory_latex(theory, gradient: bool = False, densities: bool = True) -> str:
    """A display-math block: the energy density e, optionally the gradient
    (derived Euler–Lagrange or hand-written) per component, the declared densities,
    and the theory's fields, constraint and parameter values.

    The energy and densities read as they were written (|∂_x n|^2, n · (∂_x n × ∂_y n),
    fieldgo.frontend.notation), a derived gradient is collected by second derivative, and a
    long sum continues on further lines (``LINE_WIDTH``)."""
    from ..frontend import notation

    st = theory.symbolic()
    shown = notation.show(theory, st)
    printer = _printer(theory, st.symbols, shown.notation)
    slot_of = _slot_of(st.symbols, shown.notation)

    def terms(expr):
        return _expression_terms(_tidy(expr), printer, slot_of, shown.notation)

    # A long constant (a vacuum energy of the parameters) gets a row of its own: e = ... + e_0.
    energy = _tidy(shown.energy)
    constant = sympy.Add(*[t for t in sympy.Add.make_args(energy) if _is_constant(t, slot_of)])
    if constant != 0 and _width(printer._print(constant)) > LINE_WIDTH // 2:
        e0 = sympy.Symbol("e_0")
        printer._settings["symbol_names"][e0] = "e_{0}"
        slot_of[e0] = "param"
        rows = _equation("e", terms(energy - constant + e0)) + _equation("e_{0}", terms(constant))
    else:
        rows = _equation("e", terms(energy))
    if gradient:
        label = "hand-written" if st.gradient_kind == "hand" else "Euler–Lagrange"
        rows.append(r"&\text{gradient (" + _text(label) + r")}")
        for a, f in enumerate(theory.fields):
            lhs = r"\frac{\delta E}{\delta " + _name(f) + "}"
            if shown.gradient is not None:  # hand-written: as written
                rows += _equation(lhs, terms(shown.gradient[a]))
            else:
                rows += _equation(lhs, _gradient_terms(_tidy(st.gradient[a]), a, st.symbols, printer, slot_of))
    if densities:
        for name, d in shown.densities.items():
            rows += _equation(r"\rho_{\text{" + _text(name) + r"}}", terms(d))
    fields = ", ".join(_name(f) for f in theory.fields)
    field_row = r"\text{fields: } & (" + fields + ")"
    if getattr(theory, "constraint", None) is not None:
        # the unit vector by its name where it has one (|\vec{n}| = 1); auxiliary fields are not in it
        aux = set(getattr(theory, "auxiliary", ()))
        unit = shown.notation.vector("phi", [a for a, f in enumerate(theory.fields) if f not in aux])
        vec = shown.notation.names.get(unit, r"\vec{\phi}")
        field_row += r",\quad \left|" + vec + r"\right| = 1"
    rows.append(field_row)
    params = [_name(k) + " = " + _value(v) for k, v in theory.params.items()]
    if params:  # a long list continues on further lines
        line: list = []
        lines: list = []
        for p in params:
            if line and _width(r",\ ".join(line + [p])) > LINE_WIDTH:
                lines.append(line)
                line = []
            line.append(p)
        lines.append(line)
        rows.append(r"\text{parameters: } & " + r",\ ".join(lines[0]) + ("," if len(lines) > 1 else ""))
        rows += ["& " + r",\ ".join(ln) + ("," if k < len(lines) - 2 else "") for k, ln in enumerate(lines[1:])]
    return "$$\n\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}\n$$"


class TheoryView:
    """What ``theory.display(gradient=True)`` returns: shows as LaTeX in Jupyter,
    its ``str`` is the LaTeX source."""

    def __init__(self, theory, gradient=False, densities=True):
        self.theory, self.gradient, self.densities = theory, gradient, densities

    def _repr_latex_(self):
        return theory_latex(self.theory, self.gradient, self.densities)

    def __str__(self):
        return self._repr_latex_()

    def __repr__(self):
        return f"<{type(self).__name__} of {self.theory!r}, gradient={self.gradient}>"


# --- Simulation -> HTML card --------------------------------------------------------

_CSS = """<style>
.fieldgo-card{font-family:var(--jp-content-font-family,sans-serif);font-size:13px;
  border:1px solid #c9d3df;border-radius:6px;padding:8px 12px;max-width:46em;
  background:var(--jp-layout-color1,#fff);color:var(--jp-content-font-color1,#111)}
.fieldgo-card h4{margin:0 0 6px 0;font-size:14px}
.fieldgo-card table{border-collapse:collapse}
.fieldgo-card th{text-align:left;padding:1px 12px 1px 0;font-weight:600;vertical-align:top;white-space:nowrap}
.fieldgo-card td{padding:1px 8px 1px 0;font-family:var(--jp-code-font-family,monospace)}
.fieldgo-card .note{color:#8a5a00}
</style>"""


def _e(v) -> str:
    return html.escape(str(v), quote=True)


def _num(v, fmt=".10g") -> str:
    if v is None:
        return "—"
    try:
        v = float(v)
    except (TypeError, ValueError):
        return _e(v)
    return format(v, fmt) if math.isfinite(v) else str(v)


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def _kernels_html(kernels) -> str:
    """The backend's compiled kernels (registers and occupancy when it reports them)."""
    if not kernels:
        return "<span class='note'>not reported by this backend</span>"
    if isinstance(kernels, dict):
        kernels = [dict(name=k, **(v if isinstance(v, dict) else {"info": v})) for k, v in kernels.items()]
    if isinstance(kernels, list) and all(isinstance(k, dict) for k in kernels):
        cols = []
        for k in kernels:
            for c in k:
                if c not in cols:
                    cols.append(c)
        head = "".join(f"<th>{_e(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{_e(k.get(c, ''))}</td>" for c in cols) + "</tr>" for k in kernels)
        return f"<table><tr>{head}</tr>{body}</table>"
    return ", ".join(_e(k) for k in kernels) if isinstance(kernels, list) else _e(kernels)


def _lattice_row(lat) -> str:
    """Sizes, spacing and the extent of every axis the lattice has (1, 2 or 3)."""
    axes = "xyz"[: lat.dims]
    coords = (lat.x, lat.y, lat.z)
    sizes = " × ".join(str(n) for n in lat.grid)
    spacing = ", ".join(f"{h:.6g}" for h in lat.spacing)
    extent = ", ".join(f"{a} ∈ [{c[0]:.4g}, {c[-1]:.4g}]" for a, c in zip(axes, coords))
    return f"{sizes} sites, spacing ({spacing}), {extent}"


def simulation_html(sim) -> str:
    """An HTML card: theory, lattice, boundary, backend and device, gradient form,
    kernels, flow state, current energy and the integral of every declared density."""
    if getattr(sim, "_handle", None) is None:
        return "<div class='fieldgo-card'><h4>fieldgo Simulation</h4><p>closed</p></div>"
    d = sim.describe()
    lat = sim.lattice
    theory = sim.theory
    spec = d.get("spec", {})
    backend = _e(d.get("backend", "?"))
    device = d.get("device")
    if device:
        backend += (
            f" — {_e(device if not isinstance(device, dict) else ', '.join(f'{k}: {v}' for k, v in device.items()))}"
        )
    if d.get("backend_note"):
        backend += f"<br><span class='note'>{_e(d['backend_note'])}</span>"
    gradient = _e(d.get("gradient", "?"))
    if spec.get("gradient"):
        gradient += f" ({_e(spec['gradient'])} point gradient)"
    if d.get("penalty"):
        gradient += f", doubler penalty {_num(d['penalty'], 'g')}"
    params = ", ".join(f"{_e(k)} = {_num(v, 'g')}" for k, v in sim.params.items()) or "none"
    head = [
        (
            "theory",
            f"{_e(theory.name)}: fields ({_e(', '.join(theory.fields))})"
            + (", |φ| = 1" if spec.get("constraint") == "unit_vector" else ""),
        ),
        ("parameters", params),
        ("lattice", _lattice_row(lat)),
        ("boundary", _e(lat.boundary if isinstance(lat.boundary, str) else ", ".join(lat.boundary))),
        ("backend", backend),
        ("precision", _e(d.get("precision", "float64"))),
        ("gradient", gradient),
        ("kernels", _kernels_html(d.get("kernels"))),
    ]
    try:
        state = [("energy", _num(sim.energy()))]
        for name in spec.get("densities", []):
            state.append((f"∫ {name}", _num(sim.integral(name))))
    except ParameterError:  # no field set yet: the card says so instead of zeros' numbers
        state = [("field", "not set: <code>sim.set_field(...)</code>")]
    flow = d.get("flow")
    if flow:
        status = "converged" if flow.get("converged") else ("stopped" if flow.get("done") else "in progress")
        state.append(
            (
                "flow",
                f"step {int(flow.get('step', 0))}, max |grad| {_num(flow.get('max_grad'), '.3e')}, "
                f"{int(flow.get('resets', 0))} arrests, {status}",
            )
        )
    else:
        state.append(("flow", "not started"))
    return (
        _CSS
        + "<div class='fieldgo-card'><h4>fieldgo Simulation</h4><table>"
        + _rows(head)
        + _rows(state)
        + "</table></div>"
    )


# --- Field and history -> PNG ----------------------------------------------------------


def field_png(field) -> bytes | None:
    """Every component of the field as a PNG (lattice coordinates on the axes)."""
    from ..plotting import figure_png, plot

    if getattr(field, "released", False):
        return None
    fig = plot(field)
    return figure_png(fig, dpi=80)


def history_png(table) -> bytes | None:
    """Energy and max |grad| against step as PNG, for tables with a history's
    columns; None (no picture) for any other table."""
    from ..plotting import figure_png, is_history, plot_history

    if not is_history(table) or table.num_rows == 0:
        return None
    return figure_png(plot_history(table), dpi=80)


# --- IPython hooks ------------------------------------------------------------------


def _hooks():
    import pyarrow as pa

    from ..frontend.theory import Theory
    from ..runtime.field import Field
    from ..runtime.simulation import Simulation

    return [
        ("text/latex", Theory, lambda t: theory_latex(t)),
        ("text/html", Simulation, simulation_html),
        ("image/png", Field, field_png),
        ("image/png", pa.Table, history_png),
    ]


def register(ip) -> None:
    """Register the formatters with an IPython shell."""
    formatters = ip.display_formatter.formatters
    for mime, cls, fn in _hooks():
        formatters[mime].for_type(cls, fn)


def unregister(ip) -> None:
    formatters = ip.display_formatter.formatters
    for mime, cls, _ in _hooks():
        try:
            formatters[mime].pop(cls)
        except KeyError:
            pass
