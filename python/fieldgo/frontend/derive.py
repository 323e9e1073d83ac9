"""Energy density -> partial derivatives and the continuum Euler–Lagrange gradient.

For e(phi, d_x phi, d_y phi, x, y):

    out_a = de/dphi_a - D_x de/d(d_x phi_a) - D_y de/d(d_y phi_a)

(and - D_z de/d(d_z phi_a) for a theory that uses z, with d_z phi in every D)

with the total derivatives expanded by the chain rule through the site's values,

    D_x f = df/dx + sum_b (df/dphi_b d_x phi_b + df/d(d_x phi_b) d_xx phi_b
                           + df/d(d_y phi_b) d_xy phi_b)

and D_y likewise (d_y phi_b, d_xy phi_b, d_yy phi_b). This is the form soliton_solver's
hand-derived ``do_gradient_step_point`` kernels compute.

The point source computes the same gradient as a straight-line program instead
(``euler_lagrange_program``): the partials once, with their common subexpressions, then
per direction i the total derivative D_i of every de/d(d_i phi_a) by forward
differentiation through those subexpressions, whose tangents are the site's next
derivatives (phi_b -> d_i phi_b, d_j phi_b -> d_ij phi_b). The expanded form writes the
Hessian of e in the first derivatives term by term; a quartic term like the Skyrme
model's then keeps ~100 coefficients live at once (242 registers a CUDA thread), where
the program keeps the partials' dot products and their tangents (167).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._lazy import sympy
from .tracer import Symbols


@dataclass
class Partials:
    de_dphi: list
    de_ddx: list
    de_ddy: list
    de_ddz: list | None = None  # a three-dimensional theory's; None for a planar one


def _d(f, v):
    """df/dv as code can compute it: the distributions SymPy returns at the kinks of
    abs, min, max and where (DiracDelta, Heaviside) become their values away from
    the kink, as for any piecewise-smooth energy evaluated pointwise."""
    d = sympy.diff(f, v)
    if d.has(sympy.DiracDelta):
        d = d.replace(lambda e: isinstance(e, sympy.DiracDelta), lambda e: sympy.S.Zero)
    if d.has(sympy.Heaviside):
        d = d.replace(
            lambda e: isinstance(e, sympy.Heaviside),
            lambda e: sympy.Piecewise((sympy.S.One, e.args[0] > 0), (sympy.S.Zero, True)),
        )
    return d


def partials(energy, sym: Symbols, three_d: bool = False) -> Partials:
    """The partials of e; with three_d also de/d(d_z phi) (a theory that uses z)."""
    return Partials(
        [_d(energy, v) for v in sym.phi],
        [_d(energy, v) for v in sym.dx],
        [_d(energy, v) for v in sym.dy],
        [_d(energy, v) for v in sym.dz] if three_d else None,
    )


def _total(f, sym: Symbols, direction: str, three_d: bool = False):
    """D_x f, D_y f or D_z f, differentiating only through the symbols f contains.
    A planar theory (three_d False) has no z symbols: D_x and D_y are as they were
    before z existed, term for term."""
    return _directional(f, _tangent_map(sym, direction, three_d))


def euler_lagrange(p: Partials, sym: Symbols) -> list:
    """The continuum gradient out_a for every component a (with - D_z de/d(d_z phi_a)
    for a three-dimensional theory, whose partials carry de_ddz)."""
    if p.de_ddz is None:
        return [
            p.de_dphi[a] - _total(p.de_ddx[a], sym, "x") - _total(p.de_ddy[a], sym, "y") for a in range(len(sym.fields))
        ]
    return [
        p.de_dphi[a]
        - _total(p.de_ddx[a], sym, "x", True)
        - _total(p.de_ddy[a], sym, "y", True)
        - _total(p.de_ddz[a], sym, "z", True)
        for a in range(len(sym.fields))
    ]


def _tangent_map(sym: Symbols, direction: str, three_d: bool) -> dict:
    """symbol -> its total derivative along direction (the coordinate's is 1)."""
    s, zs = sym.slot, sym.zslot
    if direction == "x":
        coord, d_phi, d_dx, d_dy, d_dz = sym.x, s["dx"], s["dxx"], s["dxy"], zs["dxz"]
    elif direction == "y":
        coord, d_phi, d_dx, d_dy, d_dz = sym.y, s["dy"], s["dxy"], s["dyy"], zs["dyz"]
    else:
        coord, d_phi, d_dx, d_dy, d_dz = sym.z, zs["dz"], zs["dxz"], zs["dyz"], zs["dzz"]
    out = {coord: sympy.S.One}
    for b in range(len(sym.fields)):
        out[s["phi"][b]] = d_phi[b]
        out[s["dx"][b]] = d_dx[b]
        out[s["dy"][b]] = d_dy[b]
        if three_d:
            out[zs["dz"][b]] = d_dz[b]
    return out


def _directional(expr, tangent: dict):
    """sum over the symbols v of expr that have a tangent: (d expr / dv) tangent[v]."""
    return sympy.Add(*[_d(expr, v) * tangent[v] for v in sorted(expr.free_symbols, key=str) if v in tangent])


def euler_lagrange_program(p: Partials, sym: Symbols) -> tuple[list, list]:
    """The continuum gradient as (statements, outputs): statements are (symbol,
    expression) pairs in evaluation order, each reading the site, the parameters and
    earlier symbols; outputs[a] is out_a in those symbols. Equal to
    ``euler_lagrange(p, sym)`` up to rounding."""
    n = len(sym.fields)
    three_d = p.de_ddz is not None
    directions = ("x", "y", "z") if three_d else ("x", "y")
    fluxes: list[list] = [p.de_ddx, p.de_ddy] + ([p.de_ddz] if p.de_ddz is not None else [])
    replacements, reduced = sympy.cse(
        list(p.de_dphi) + [e for flux in fluxes for e in flux], symbols=sympy.numbered_symbols("t", real=True)
    )
    statements = list(replacements)
    outputs = list(reduced[:n])
    for k, direction in enumerate(directions):
        flux = reduced[n + k * n : n + (k + 1) * n]
        # only the subexpressions this direction's fluxes read get tangents
        needed = set().union(*(e.free_symbols for e in flux))
        for t, rhs in reversed(replacements):
            if t in needed:
                needed |= rhs.free_symbols
        tangent = _tangent_map(sym, direction, three_d)
        for t, rhs in replacements:
            if t not in needed or isinstance(rhs, sympy.logic.boolalg.Boolean):
                continue  # a condition of a Piecewise is constant between its kinks
            d = _directional(rhs, tangent)
            if d != 0:
                dt = sympy.Symbol(f"d{direction}_{t}", real=True)
                statements.append((dt, d))
                tangent[t] = dt
        outputs = [outputs[a] - _directional(flux[a], tangent) for a in range(n)]
    return statements, outputs
