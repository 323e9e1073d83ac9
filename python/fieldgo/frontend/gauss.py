"""Gauss's law of a gauge theory evolved in temporal gauge (``@theory.gauss_law``).

    @theory.gauss_law
    def gauss(s, v, p):           # s: the site, v: its velocities, p: the parameters
        div_e = -(v.dx.a_x + v.dy.a_y)                                    # E = -d_t A
        rho = -p.q * (s.phi.psi_re * v.phi.psi_im - s.phi.psi_im * v.phi.psi_re)
        return div_e - rho

``v`` is a site of time derivatives: ``v.phi`` is d_t phi, ``v.dx`` is d_x d_t phi,
and so on, with the same component names as ``s``. The function returns the
constraint density G per site, which the exact dynamics keeps at its initial value
(zero for physical data); ``Simulation.evolve`` records its largest ``|G|`` and its
L2 norm at every record, as a measure of the scheme's error.

The engine evaluates G as a density of a *phase-space unit*: a point source of 2n
components, the n of the field and then their n velocities, whose one density is G.
Every backend runs its density kernel on it, so no kernel is specific to this. The
unit's C travels inside the theory's point source, each line behind
:data:`PREFIX` (a comment to every C compiler: the theory's own functions and its
FG_DIM are unchanged); core/theory.go reads it back (docs/abi.md).
"""

from __future__ import annotations

from . import diagnostics, tracer
from ._lazy import sympy
from .algebra import Vector
from .symbolic import Expr, to_sympy

PREFIX = "//fg-gauss| "
_BEGIN = "/* the phase-space unit of the Gauss law: the lines behind " + PREFIX.strip() + " (docs/abi.md) */"
DENSITY = "gauss_law"
ARGS = ("s", "v", "p")


def velocity_names(fields) -> list:
    """The phase-space unit's names of the velocity components."""
    return [f"{f}_t" for f in fields]


def phase_site(
    sym: tracer.Symbols, lo: int, n: int, fields, label: str, role: str, second_derivatives: bool = True
) -> tracer.Site:
    """The traced site of components lo..lo+n of a phase-space unit's symbols (the
    field's at 0, the velocities' at n), with the field's component names; without
    second_derivatives reading s.dxx etc. is a TraceError."""
    values: dict = {
        k: Vector([Expr(x) for x in sym.slot[k][lo : lo + n]], fields, f"{label}.{k}") for k in tracer.SLOTS
    }
    for k in tracer.Z_SLOTS:
        values[k] = Vector([Expr(x) for x in sym.zslot[k][lo : lo + n]], fields, f"{label}.{k}")
    values["x"], values["y"], values["z"] = Expr(sym.x), Expr(sym.y), Expr(sym.z)
    return tracer.Site(values, second_derivatives, role)


def trace(fn, fields, dynamic, static: dict):
    """(G as SymPy, the phase-space Symbols): fn run on stand-ins of the field's site,
    the velocities' site and the parameters."""
    fields = list(fields)
    n = len(fields)
    sym = tracer.Symbols(fields + velocity_names(fields), list(dynamic))
    pvals = {k: Expr(s) for k, s in sym.params.items()}
    pvals.update(static)
    s, v = phase_site(sym, 0, n, fields, "s", "Gauss law"), phase_site(sym, n, n, fields, "v", "Gauss law")
    g = to_sympy(tracer.scalar_result(fn, (s, v, tracer.Params(pvals)), "gauss_law"))
    velocities = {x for k in sym.slot for x in sym.slot[k][n:]} | {x for k in sym.zslot for x in sym.zslot[k][n:]}
    if not (getattr(g, "free_symbols", set()) & velocities):
        # A constraint on the field alone is no Gauss law (v.dx read as s.dx?): the
        # velocities are what the law ties to the charge.
        filename, line = diagnostics.def_line(fn)
        raise diagnostics.make_error(
            "@theory.gauss_law must read the velocities v (v.phi, v.dx, ...): Gauss's law ties the electric "
            "field, minus the time derivative of the gauge field in temporal gauge, to the charge density of the "
            "matter's velocities; this function depends on the field s only",
            filename,
            line,
        )
    return g, sym


def unit_source(name: str, fields, dynamic, g, sym: tracer.Symbols, origin, three_d: bool) -> str:
    """The C99 point source of the phase-space unit: 2n components, zero energy and
    gradient, and the one density G (``fg_density(0)``); three_d gives its site the z
    slots (the theory's site has them, or G reads them)."""
    from . import codegen

    n2 = 2 * len(fields)
    zero = [sympy.S.Zero] * n2
    partials = (zero, zero, zero) + ((zero,) if three_d else ())
    pf = codegen.PointFunctions(
        name=name + "_gauss_law",
        fields=list(fields) + velocity_names(fields),
        params=list(dynamic),
        energy=sympy.S.Zero,
        partials=partials,
        gradient=zero,
        densities={DENSITY: g},
        names=sym.c_names(),
        origins={"density:" + DENSITY: origin},
        header=f"fieldgo phase-space unit of theory {name!r}: the field, then its velocities",
    )
    return codegen.emit(pf)


def embed(source: str, prefix: str = PREFIX, begin: str = _BEGIN) -> str:
    """The unit as lines of the theory's point source, each behind prefix."""
    lines = source.rstrip("\n").split("\n")
    return "\n".join([begin] + [prefix + line for line in lines]) + "\n"


def extract(point_source: str, prefix: str = PREFIX) -> str | None:
    """The unit embedded behind prefix in a theory's point source, or None."""
    lines = [line[len(prefix) :] for line in point_source.split("\n") if line.startswith(prefix)]
    return "\n".join(lines) + "\n" if lines else None
