"""Rich representations: a Theory as LaTeX, a Simulation as an HTML card, a Field
and a history as PNG pictures. Each function takes the object and returns the
string or bytes a Jupyter front end shows; ``register`` hooks them into IPython."""

from __future__ import annotations

import html
import math
import numbers

from .._lazy import sympy
from ..errors import ParameterError

__all__ = ["theory_latex", "TheoryView", "simulation_html", "field_png", "history_png",
           "register", "unregister"]


# --- Theory -> LaTeX ---------------------------------------------------------------

_SECOND = {"dxx": r"\partial_{x}^{2} ", "dyy": r"\partial_{y}^{2} ", "dxy": r"\partial_{x}\partial_{y} "}


def _symbol_names(theory, symbols) -> dict:
    """SymPy symbol -> LaTeX, in the physicist's notation (component names,
    partial derivatives, parameter names)."""
    names = {}
    for a, f in enumerate(theory.fields):
        base = _name(f)
        names[symbols.slot["phi"][a]] = base
        names[symbols.slot["dx"][a]] = r"\left(\partial_{x} " + base + r"\right)"
        names[symbols.slot["dy"][a]] = r"\left(\partial_{y} " + base + r"\right)"
        for slot, op in _SECOND.items():
            if slot in symbols.slot:
                names[symbols.slot[slot][a]] = r"\left(" + op + base + r"\right)"
    names[symbols.x] = "x"
    names[symbols.y] = "y"
    for k, s in symbols.params.items():
        names[s] = _name(k)
    return names


def _value(v) -> str:
    """A parameter value in LaTeX (numbers as a physicist writes them)."""
    if isinstance(v, bool) or isinstance(v, str):
        return r"\text{" + _text(v) + "}"
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
        for guess in (sympy.nsimplify(v, rational=True, tolerance=1e-15 * max(1.0, abs(v))),
                      sympy.nsimplify(v, [sympy.pi], tolerance=1e-15 * max(1.0, abs(v)))):
            num, den = sympy.fraction(guess)
            simple = all(sympy.Integer(abs(c)) < 1000 for c in (num.as_coeff_Mul()[0], den.as_coeff_Mul()[0])
                         if c.is_Integer)
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
        tex = r"\mathrm{" + head + "}" + tex[len(head):]
    return tex


def theory_latex(theory, gradient: bool = False, densities: bool = True) -> str:
    """A display-math block: the energy density e, optionally the gradient
    (derived Euler–Lagrange or hand-written) per component, the declared densities,
    and the theory's fields, constraint and parameter values."""
    st = theory.symbolic()
    names = _symbol_names(theory, st.symbols)

    def tex(expr):
        return sympy.latex(_tidy_numbers(expr), symbol_names=names, full_prec=False)

    rows = [r"e &= " + tex(st.energy)]
    if gradient:
        label = "hand-written" if st.gradient_kind == "hand" else "Euler–Lagrange"
        rows.append(r"&\text{gradient (" + _text(label) + r")}")
        for f, g in zip(theory.fields, st.gradient):
            rows.append(r"\frac{\delta E}{\delta " + _name(f) + r"} &= " + tex(g))
    if densities:
        for name, d in st.densities.items():
            rows.append(r"\rho_{\text{" + _text(name) + r"}} &= " + tex(d))
    fields = ", ".join(_name(f) for f in theory.fields)
    field_row = r"\text{fields: } & (" + fields + ")"
    if getattr(theory, "constraint", None) is not None:
        field_row += r",\quad \left|\vec{\phi}\right| = 1"
    rows.append(field_row)
    params = theory.params
    if params:
        rows.append(r"\text{parameters: } & " + r",\ ".join(
            _name(k) + " = " + _value(v) for k, v in params.items()))
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


def simulation_html(sim) -> str:
    """An HTML card: theory, lattice, boundary, backend and device, gradient form,
    kernels, flow state, current energy and the integral of every declared density."""
    if getattr(sim, "_handle", None) is None:
        return "<div class='fieldgo-card'><h4>fieldgo Simulation</h4><p>closed</p></div>"
    d = sim.describe()
    lat = sim.lattice
    theory = sim.theory
    spec = d.get("spec", {})
    x0, x1, y0, y1 = lat.extent
    backend = _e(d.get("backend", "?"))
    device = d.get("device")
    if device:
        backend += f" — {_e(device if not isinstance(device, dict) else ', '.join(f'{k}: {v}' for k, v in device.items()))}"
    if d.get("backend_note"):
        backend += f"<br><span class='note'>{_e(d['backend_note'])}</span>"
    gradient = _e(d.get("gradient", "?"))
    if spec.get("gradient"):
        gradient += f" ({_e(spec['gradient'])} point gradient)"
    if d.get("penalty"):
        gradient += f", doubler penalty {_num(d['penalty'], 'g')}"
    params = ", ".join(f"{_e(k)} = {_num(v, 'g')}" for k, v in sim.params.items()) or "none"
    head = [
        ("theory", f"{_e(theory.name)}: fields ({_e(', '.join(theory.fields))})"
                   + (", |φ| = 1" if spec.get("constraint") == "unit_vector" else "")),
        ("parameters", params),
        ("lattice", f"{lat.nx} × {lat.ny} sites, spacing ({lat.hx:.6g}, {lat.hy:.6g}), "
                    f"x ∈ [{x0:.4g}, {x1:.4g}], y ∈ [{y0:.4g}, {y1:.4g}]"),
        ("boundary", _e(lat.boundary)),
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
        state.append(("flow", f"step {int(flow.get('step', 0))}, max |grad| {_num(flow.get('max_grad'), '.3e')}, "
                              f"{int(flow.get('resets', 0))} arrests, {status}"))
    else:
        state.append(("flow", "not started"))
    return (_CSS + "<div class='fieldgo-card'><h4>fieldgo Simulation</h4><table>"
            + _rows(head) + _rows(state) + "</table></div>")


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

    from ..field import Field
    from ..simulation import Simulation
    from ..theory import Theory

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
