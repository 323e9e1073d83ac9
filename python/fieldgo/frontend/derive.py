"""Energy density -> partial derivatives and the continuum Euler–Lagrange gradient.

For e(phi, d_x phi, d_y phi, x, y):

    out_a = de/dphi_a - D_x de/d(d_x phi_a) - D_y de/d(d_y phi_a)

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


def partials(energy, sym: Symbols) -> Partials:
    return Partials(
        [_d(energy, v) for v in sym.phi],
        [_d(energy, v) for v in sym.dx],
        [_d(energy, v) for v in sym.dy],
    )


def _total(f, sym: Symbols, direction: str):
    """D_x f or D_y f, differentiating only through the symbols f contains."""
    s = sym.slot
    if direction == "x":
        coord, d_phi, d_dx, d_dy = sym.x, s["dx"], s["dxx"], s["dxy"]
    else:
        coord, d_phi, d_dx, d_dy = sym.y, s["dy"], s["dxy"], s["dyy"]
    free = f.free_symbols
    terms = []
    if coord in free:
        terms.append(_d(f, coord))
    for b in range(len(sym.fields)):
        for var, factor in ((s["phi"][b], d_phi[b]), (s["dx"][b], d_dx[b]), (s["dy"][b], d_dy[b])):
            if var in free:
                terms.append(_d(f, var) * factor)
    return sympy.Add(*terms)


def euler_lagrange(p: Partials, sym: Symbols) -> list:
    """The continuum gradient out_a for every component a."""
    return [
        p.de_dphi[a] - _total(p.de_ddx[a], sym, "x") - _total(p.de_ddy[a], sym, "y") for a in range(len(sym.fields))
    ]
