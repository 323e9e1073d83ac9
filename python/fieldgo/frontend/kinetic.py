"""A kinetic term other than ½|φ̇|² (``@theory.kinetic_density``).

    @theory.kinetic_density
    def kinetic(s, v, p):         # s: the site, v: its velocities, p: the parameters
        vn = v.phi                # d_t n
        return 0.5 * vn.dot(vn) + 0.5 * p.kappa**2 * (vn.cross(s.dx).norm2() + vn.cross(s.dy).norm2())

The Lagrangian is L = ∫ K(φ, ∂φ, φ̇) - E(φ), with K a quadratic form in the velocities,
K = ½ φ̇ᵀ M(φ, ∂φ) φ̇ (the Skyrme term's time derivatives, a sigma-model metric). Its
Euler–Lagrange equation, d/dt ∂K/∂φ̇ = δK/δφ - δE/δφ, is solved for the acceleration
site by site:

    M a = R - g,    R = δK/δφ - Ṁ φ̇,    g = δE/δφ,

with Ṁ φ̇ = Σ_c (∂p/∂φ_c) φ̇_c + Σ_{c,i} (∂p/∂(∂_iφ_c)) ∂_iφ̇_c, p = M φ̇ (the time
derivative of the momentum at fixed φ̈). Under the unit-vector constraint the
constraint force λφ joins the right side and φ·a = -|φ̇|² fixes λ (M then needs to
be positive on the tangent space only). The conserved energy is ∫ K + E.

The engine evaluates R and M with the gradient kernel of a *kinetic unit*: a point
source of C = n + n(n+1)/2 components (the field's n, their velocities' n, and
n(n-1)/2 more that are never read) whose energy density is K and whose gradient is
(R_0 .. R_{n-1}, then M's upper triangle row by row). One pass over the lattice gives
every R and M entry of every site, and the energy reduction gives ∫ K. Every backend
runs its own gradient kernel on it, so no kernel is specific to this; core solves the
small systems per site (core/kinetic.go). The unit's C travels inside the theory's point
source behind :data:`PREFIX` (docs/abi.md).
"""

from __future__ import annotations

from . import derive, diagnostics, tracer
from ._lazy import sympy
from .gauss import embed as _embed
from .gauss import extract as _extract
from .gauss import phase_site, velocity_names
from .symbolic import Expr, to_sympy

PREFIX = "//fg-kinetic| "
_BEGIN = "/* the kinetic unit: the lines behind " + PREFIX.strip() + " (docs/abi.md) */"
ARGS = ("s", "v", "p")


def unit_size(n: int) -> int:
    """C, the kinetic unit's component count for a field of n components."""
    return n + n * (n + 1) // 2


def unit_fields(fields) -> list:
    """The kinetic unit's component names: the field's, the velocities', then the
    unread ones that give the gradient room for M."""
    fields = list(fields)
    n = len(fields)
    return fields + velocity_names(fields) + [f"mass_{k}_" for k in range(unit_size(n) - 2 * n)]


def _refuse(fn, message: str):
    filename, line = diagnostics.def_line(fn)
    raise diagnostics.make_error(message, filename, line)


def trace(fn, fields, dynamic, static: dict):
    """(K as SymPy, the unit's Symbols): fn run on stand-ins of the field's site, the
    velocities' site and the parameters, checked to be a quadratic form in the
    velocities that reads none of their derivatives."""
    fields = list(fields)
    n = len(fields)
    sym = tracer.Symbols(unit_fields(fields), list(dynamic))
    pvals = {k: Expr(s) for k, s in sym.params.items()}
    pvals.update(static)
    # like an energy density, K reads first derivatives only (its Euler-Lagrange
    # expression is built from d/dphi and d/d(d_i phi))
    s = phase_site(sym, 0, n, fields, "s", "@theory.kinetic_density", second_derivatives=False)
    v = phase_site(sym, n, n, fields, "v", "@theory.kinetic_density", second_derivatives=False)
    k = sympy.sympify(to_sympy(tracer.scalar_result(fn, (s, v, tracer.Params(pvals)), "kinetic_density")))
    free = k.free_symbols
    vel = list(sym.phi[n : 2 * n])
    derivs = {x for key in sym.slot if key != "phi" for x in sym.slot[key][n : 2 * n]}
    derivs |= {x for key in sym.zslot for x in sym.zslot[key][n : 2 * n]}
    if free & derivs:
        _refuse(
            fn,
            "@theory.kinetic_density may read the velocities v.phi but not their derivatives (v.dx, v.dxx, ...): "
            "the engine solves K = 1/2 v.M.v for the acceleration site by site, which needs M to act on the "
            "site's own velocity",
        )
    if not free & set(vel):
        _refuse(fn, "@theory.kinetic_density must read the velocities v.phi: it is the kinetic energy density")
    try:
        poly = sympy.Poly(sympy.expand(k), *vel)
    except sympy.PolynomialError:
        poly = None
    if poly is None or any(sum(m) != 2 for m in poly.monoms()):
        _refuse(
            fn,
            "@theory.kinetic_density must be a quadratic form in the velocities, K = 1/2 v.M(phi, dphi).v: every "
            "term of degree two in v.phi (no constant, linear or higher terms, no v.phi inside a function)",
        )
    return k, sym


def unit_source(name: str, fields, dynamic, k, sym: tracer.Symbols, origin, three_d: bool) -> str:
    """The C99 point source of the kinetic unit (module docstring): energy K, gradient
    (R, M's upper triangle), no densities; three_d gives its site the z slots."""
    from . import codegen

    fields = list(fields)
    n = len(fields)
    c = unit_size(n)
    vel = sym.phi[n : 2 * n]
    parts = derive.partials(k, sym, three_d)
    statements, outs = derive.euler_lagrange_program(parts, sym)
    # the momentum's time derivative at fixed acceleration: phi -> v, d_i phi -> d_i v
    tangent = {}
    axes = ("dx", "dy") + (("dz",) if three_d else ())
    for b in range(n):
        tangent[sym.phi[b]] = vel[b]
        for ax in axes:
            slot = sym.zslot if ax == "dz" else sym.slot
            tangent[slot[ax][b]] = slot[ax][n + b]
    momentum = [derive._d(k, vel[a]) for a in range(n)]
    mdot = [derive._directional(momentum[a], tangent) for a in range(n)]
    mass = [sympy.diff(momentum[a], vel[b]) for a in range(n) for b in range(a, n)]
    replacements, reduced = sympy.cse(mdot + mass, symbols=sympy.numbered_symbols("q", real=True))
    statements = list(statements) + list(replacements)
    outputs = [outs[a] - reduced[a] for a in range(n)] + list(reduced[n:])
    assert len(outputs) == c
    zero = [sympy.S.Zero] * c
    pf = codegen.PointFunctions(
        name=name + "_kinetic",
        fields=unit_fields(fields),
        params=list(dynamic),
        energy=k,
        partials=(zero, zero, zero) + ((zero,) if three_d else ()),
        gradient=outputs,
        densities={},
        names=sym.c_names(),
        origins={"energy": origin, "gradient": origin},
        header=f"fieldgo kinetic unit of theory {name!r}: the field, its velocities, then unread components; "
        "energy K, gradient (dK/dphi - dM/dt v, M's upper triangle)",
        gradient_program=(statements, outputs),
    )
    return codegen.emit(pf)


def embed(source: str) -> str:
    """The unit as lines of the theory's point source, each behind PREFIX."""
    return _embed(source, PREFIX, _BEGIN)


def extract(point_source: str) -> str | None:
    """The kinetic unit embedded in a theory's point source, or None."""
    return _extract(point_source, PREFIX)
