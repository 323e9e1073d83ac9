"""Energy density -> partial derivatives and the continuum Euler–Lagrange gradient.

For e(phi, d_x phi, d_y phi, x, y):

    out_a = de/dphi_a - D_x de/d(d_x phi_a) - D_y de/d(d_y phi_a)

(and - D_z de/d(d_z phi_a) for a theory that uses z, with d_z phi in every D)

with the total derivatives expanded by the chain rule through the site's values,

    D_x f = df/dx + sum_b (df/dphi_b d_x phi_b + df/d(d_x phi_b) d_xx phi_b
                           + df/d(d_y phi_b) d_xy phi_b)

and D_y likewise (d_y phi_b, d_xy phi_b, d_yy phi_b). This is the form soliton_solver's
hand-derived ``do_gradient_step_point`` kernels compute.
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
    s, zs = sym.slot, sym.zslot
    if direction == "x":
        coord, d_phi, d_dx, d_dy, d_dz = sym.x, s["dx"], s["dxx"], s["dxy"], zs["dxz"]
    elif direction == "y":
        coord, d_phi, d_dx, d_dy, d_dz = sym.y, s["dy"], s["dxy"], s["dyy"], zs["dyz"]
    else:
        coord, d_phi, d_dx, d_dy, d_dz = sym.z, zs["dz"], zs["dxz"], zs["dyz"], zs["dzz"]
    free = f.free_symbols
    terms = []
    if coord in free:
        terms.append(_d(f, coord))
    for b in range(len(sym.fields)):
        pairs = [(s["phi"][b], d_phi[b]), (s["dx"][b], d_dx[b]), (s["dy"][b], d_dy[b])]
        if three_d:
            pairs.append((zs["dz"][b], d_dz[b]))
        for var, factor in pairs:
            if var in free:
                terms.append(_d(f, var) * factor)
    return sympy.Add(*terms)


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
