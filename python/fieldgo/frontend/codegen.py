"""SymPy expressions -> the C99 point source of docs/abi.md.

Each point function is one straight-line block: common subexpressions (``sympy.cse``)
become ``const double`` temporaries, outputs are written last. Small integer powers
become products (exactly rounded, and faster than ``pow``); constants print with
round-trip precision so the C agrees with Python's float arithmetic. ``#line``
directives point each statement at the user's function so a compiler error lands
there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from sympy.printing.c import C99CodePrinter
from sympy.printing.precedence import PRECEDENCE

_RESET = "#line __FG_RESET__"
GENERATED_NAME = "fieldgo_point.c"


class CPrinter(C99CodePrinter):
    """C99 printer with fieldgo's symbol names, exact floats and no M_PI."""

    def __init__(self, names: dict):
        super().__init__()
        self._fg_names = names

    def _print_Symbol(self, expr):
        name = self._fg_names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)

    def _print_Float(self, expr):
        text = repr(float(expr))
        return text if any(c in text for c in ".einf") else text + ".0"

    def _print_Integer(self, expr):
        # Beyond int range a C integer literal would overflow; doubles are what we compute in.
        v = int(expr)
        return str(v) if abs(v) < 2**31 else repr(float(v))

    def _print_Pi(self, expr):
        return repr(3.141592653589793)

    def _print_Exp1(self, expr):
        return repr(2.718281828459045)

    def _print_Pow(self, expr):
        base, e = expr.base, expr.exp
        if e.is_Integer and 1 <= abs(int(e)) <= 4:
            b = self.parenthesize(base, PRECEDENCE["Mul"], strict=True)
            prod = "*".join([b] * abs(int(e)))
            if abs(int(e)) == 1:
                return b if e > 0 else f"1.0/{b}"
            # The product stands for one power, so it needs its own parentheses:
            # x/y**2 must print as x/(y*y), never x/y*y.
            return f"({prod})" if e > 0 else f"1.0/({prod})"
        if e == sympy.Rational(1, 2):
            return f"sqrt({self._print(base)})"
        if e == sympy.Rational(-1, 2):
            return f"1.0/sqrt({self._print(base)})"
        return f"pow({self._print(base)}, {self._print(sympy.Float(e) if e.is_Rational else e)})"

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"

    def _print_Piecewise(self, expr):
        # One-line ternary chain; the last branch is the (cond=True) default.
        parts = []
        for value, cond in expr.args[:-1]:
            parts.append(f"({self._print(cond)}) ? ({self._print(value)}) : ")
        last_value, last_cond = expr.args[-1]
        tail = self._print(last_value)
        if last_cond != sympy.true:
            tail = f"(({self._print(last_cond)}) ? ({tail}) : NAN)"
        return "(" + "".join(parts) + "(" + tail + "))"


def _escape(filename: str) -> str:
    return filename.replace("\\", "\\\\").replace('"', '\\"')


@dataclass
class Origin:
    """Where a generated function comes from in the user's source."""

    filename: str | None = None
    lineno: int | None = None

    def directive(self) -> str | None:
        if not self.filename or not self.lineno:
            return None
        return f'#line {self.lineno} "{_escape(self.filename)}"'


def cse_block(exprs, printer: CPrinter, origin: Origin, indent="    "):
    """(statements, printed outputs) for exprs after common-subexpression elimination."""
    replacements, reduced = sympy.cse(list(exprs), symbols=sympy.numbered_symbols("t", real=True))
    return program_block(replacements, reduced, printer, origin, indent)


def program_block(statements, outputs, printer: CPrinter, origin: Origin, indent="    "):
    """(statements, printed outputs) for a straight-line program of (symbol, expression)."""
    line = origin.directive()
    stmts = []
    for sym, rhs in statements:
        if line:
            stmts.append(line)
        stmts.append(f"{indent}const double {sym} = {printer.doprint(rhs)};")
    return stmts, [printer.doprint(e) for e in outputs]


def op_counts(exprs) -> tuple[int, int]:
    """(operations before CSE, operations after CSE incl. the temporaries)."""
    exprs = list(exprs)
    before = sum(sympy.count_ops(e) for e in exprs)
    replacements, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("t", real=True))
    after = sum(sympy.count_ops(r) for _, r in replacements) + sum(sympy.count_ops(e) for e in reduced)
    return before, after


@dataclass
class PointFunctions:
    """Everything the point source is generated from."""

    name: str
    fields: list
    params: list  # dynamic parameter names, in fg_params order
    energy: object
    partials: tuple  # (de_dphi, de_ddx, de_ddy[, de_ddz]), lists of expressions; de_ddz: a 3D theory
    gradient: list
    densities: dict  # name -> expression, in declaration order
    names: dict  # SymPy symbol -> C lvalue
    origins: dict = field(default_factory=dict)  # "energy"/"gradient"/"density:<n>" -> Origin
    header: str = ""
    auxiliary: list = field(default_factory=list)  # names of auxiliary components
    # a derived gradient as derive.euler_lagrange_program's (statements, outputs); None:
    # fg_gradient is ``gradient`` after CSE (a hand-written one)
    gradient_program: tuple | None = None


def _function(signature: str, body: list, line: str | None) -> list:
    out = [signature + " {", "    (void)s; (void)p;"]
    out += body
    if line:
        out.append(_RESET)
    out.append("}")
    return out


def _aux_lines(pf: PointFunctions) -> list:
    """FG_NAUX and FG_AUX(k) for a theory with auxiliary components (docs/abi.md);
    nothing otherwise, so the source of every other theory is unchanged."""
    idx = [pf.fields.index(a) for a in pf.auxiliary]
    if not idx:
        return []
    test = " || ".join(f"(k) == {i}" for i in sorted(idx))
    return [
        f"#define FG_NAUX    {len(idx)}",
        f"#define FG_AUX(k)  ({test})   /* auxiliary: flowed upward (saddle form) */",
    ]


_SITE_2D = [
    "typedef struct {",
    "    double phi[FG_NCOMP];",
    "    double dx[FG_NCOMP], dy[FG_NCOMP];",
    "    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];",
    "    double x, y;",
    "} fg_site;",
]

# A theory that uses z: the site of docs/abi.md with the z members added.
_SITE_3D = [
    "typedef struct {",
    "    double phi[FG_NCOMP];",
    "    double dx[FG_NCOMP], dy[FG_NCOMP], dz[FG_NCOMP];",
    "    double dxx[FG_NCOMP], dyy[FG_NCOMP], dzz[FG_NCOMP];",
    "    double dxy[FG_NCOMP], dxz[FG_NCOMP], dyz[FG_NCOMP];",
    "    double x, y, z;",
    "} fg_site;",
]


def emit(pf: PointFunctions) -> str:
    pr = CPrinter(pf.names)
    n = len(pf.fields)
    three_d = len(pf.partials) == 4
    L = []
    if pf.header:
        L += ["/* " + h + " */" for h in pf.header.splitlines()]
    L += [
        "#ifndef __CUDACC_RTC__",
        "#include <math.h>",
        "#include <stddef.h>",
        "#endif",
        "#ifndef FG_FUNC",
        "#define FG_FUNC static inline",
        "#endif",
        f"#define FG_NCOMP   {n}",
        f"#define FG_NPARAMS {len(pf.params)}",
        f"#define FG_NDENS   {len(pf.densities)}",
        *_aux_lines(pf),
        *(["#define FG_DIM     3                  /* the site has z derivatives */"] if three_d else []),
        "",
        *(_SITE_3D if three_d else _SITE_2D),
        "",
    ]
    if pf.params:
        members = " ".join(f"double {name};" for name in pf.params)
        L.append(f"typedef struct {{ {members} }} fg_params;")
    else:
        L.append("typedef struct { double unused_; } fg_params;")
    L.append("")

    sig_args = "(const fg_site* s, const fg_params* p"
    o = pf.origins.get("energy", Origin())
    stmts, (res,) = cse_block([pf.energy], pr, o)
    L += _function(f"FG_FUNC double fg_energy{sig_args})", stmts + _with_line(o, f"    return {res};"), o.directive())
    L.append("")

    arrays = ("de_dphi", "de_ddx", "de_ddy", "de_ddz")[: len(pf.partials)]
    stmts, outs = cse_block([e for part in pf.partials for e in part], pr, o)
    body = list(stmts)
    for k, arr in enumerate(arrays):
        for a in range(n):
            body += _with_line(o, f"    {arr}[{a}] = {outs[k * n + a]};")
    L += _function(
        f"FG_FUNC void fg_partials{sig_args},\n"
        "                         double* de_dphi, double* de_ddx, double* de_ddy"
        + (", double* de_ddz)" if three_d else ")"),
        body,
        o.directive(),
    )
    L.append("")

    og = pf.origins.get("gradient", o)
    if pf.gradient_program is not None:
        statements, outputs = pf.gradient_program
        stmts, outs = program_block(statements, outputs, pr, og)
    else:
        stmts, outs = cse_block(pf.gradient, pr, og)
    body = list(stmts)
    for a in range(n):
        body += _with_line(og, f"    out[{a}] = {outs[a]};")
    L += _function(f"FG_FUNC void fg_gradient{sig_args}, double* out)", body, og.directive())
    L.append("")

    for name, expr in pf.densities.items():
        od = pf.origins.get("density:" + name, Origin())
        stmts, (res,) = cse_block([expr], pr, od)
        L += _function(
            f"FG_FUNC double fg_density_{name}{sig_args})", stmts + _with_line(od, f"    return {res};"), od.directive()
        )
        L.append("")

    L.append(f"FG_FUNC double fg_density(int k{', ' + sig_args[1:]}) {{")
    L.append("    (void)s; (void)p;")
    if pf.densities:
        L.append("    switch (k) {")
        for k, name in enumerate(pf.densities):
            L.append(f"    case {k}: return fg_density_{name}(s, p);")
        L.append("    default: return 0.0;")
        L.append("    }")
    else:
        L.append("    (void)k;")
        L.append("    return 0.0;")
    L.append("}")
    return _resolve_resets(L)


def _with_line(origin: Origin, stmt: str) -> list:
    d = origin.directive()
    return [d, stmt] if d else [stmt]


def _resolve_resets(lines: list) -> str:
    """Replace reset markers by `#line` back to the generated file's own numbering."""
    text = "\n".join(lines).split("\n")
    out = []
    for i, line in enumerate(text):
        if line == _RESET:
            # `#line N` numbers the line after the directive, which is line i + 2 (1-based).
            out.append(f'#line {i + 2} "{GENERATED_NAME}"')
        else:
            out.append(line)
    return "\n".join(out) + "\n"
