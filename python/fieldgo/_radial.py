"""The radial profile f(r) of a Skyrmion in the rational map ansatz, solved in 1D.

U = exp(i f(r) n_R . tau) with a rational map R of degree B and angular integral I
(I = 1 for the hedgehog R(z) = z) has the energy, in the Skyrme units of
``fg.theories.skyrme`` (Houghton, Manton and Sutcliffe 1998),

    E = 4 pi int_0^inf [r^2 f'^2 + 2 B sin^2 f (1 + f'^2) + I sin^4 f / r^2
                        + 2 m^2 r^2 (1 - cos f)] dr,

with f(0) = pi and f(inf) = 0. Its Euler-Lagrange equation is solved by Newton's
method on a compactified grid r = L s / (1 - s), s in [0, 1], L = sqrt(B)
(second-order differences; the tridiagonal Jacobian is exact, by the complex step),
continued from the hedgehog in (B, I) and from m = 0 in the mass where a direct
Newton solve diverges, and the energy is Richardson-extrapolated from grids of n and
2n cells, so the minimal energies come out to about 1e-7: 1.23145 x 12 pi^2 for the
hedgehog, 1.41622 with m = 1.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import DivergenceError


def _tridiagonal_solve(sub, diag, sup, rhs):
    """Thomas' algorithm: sub[k] multiplies x[k-1], sup[k] x[k+1] in row k."""
    n = diag.size
    b, d = diag.astype(float).copy(), rhs.astype(float).copy()
    for k in range(1, n):
        w = sub[k] / b[k - 1]
        b[k] -= w * sup[k - 1]
        d[k] -= w * d[k - 1]
    x = np.empty(n)
    x[-1] = d[-1] / b[-1]
    for k in range(n - 2, -1, -1):
        x[k] = (d[k] - sup[k] * x[k + 1]) / b[k]
    return x


class _Grid:
    def __init__(self, n, scale):
        self.n, self.scale = n, scale
        self.s = np.linspace(0.0, 1.0, n + 1)
        self.ds = 1.0 / n
        si = self.s[1:-1]
        self.r = scale * si / (1 - si)
        self.r_s = scale / (1 - si) ** 2
        self.r_ss = 2 * scale / (1 - si) ** 3


def _residual(g, f, degree, inertia, mass):
    """The Euler-Lagrange equation at the inner nodes, divided by its f'' coefficient
    (so that it reads f_ss + ... in the grid variable s)."""
    full = np.concatenate(([np.pi], f, [0.0]))
    f_s = (full[2:] - full[:-2]) / (2 * g.ds)
    f_ss = (full[2:] - 2 * full[1:-1] + full[:-2]) / g.ds**2
    r = g.r
    f_r = f_s / g.r_s
    f_rr = (f_ss - f_s * g.r_ss / g.r_s) / g.r_s**2
    sin, sin2 = np.sin(f), np.sin(2 * f)
    lead = r**2 + 2 * degree * sin**2
    eq = (
        lead * f_rr + 2 * r * f_r - degree * sin2 * (1 - f_r**2) - inertia * sin**2 * sin2 / r**2 - mass**2 * r**2 * sin
    )
    return eq * g.r_s**2 / lead


def _relax(g, degree, inertia, mass, f):
    step = 1e-30  # complex step: derivatives exact to rounding
    for _ in range(100):
        res = _residual(g, f, degree, inertia, mass).real
        n = f.size
        sub, diag, sup = np.zeros(n), np.zeros(n), np.zeros(n)
        for colour in range(3):
            idx = np.arange(colour, n, 3)
            dirn = np.zeros(n)
            dirn[idx] = 1.0
            col = _residual(g, f + 1j * step * dirn, degree, inertia, mass).imag / step
            diag[idx] = col[idx]
            below = idx[idx + 1 < n]
            sub[below + 1] = col[below + 1]
            above = idx[idx >= 1]
            sup[above - 1] = col[above - 1]
        dx = _tridiagonal_solve(sub, diag, sup, -res)
        worst = np.abs(res).max()
        damp = 1.0
        while damp > 1e-3 and np.abs(_residual(g, f + damp * dx, degree, inertia, mass)).max() >= worst:
            damp /= 2
        f = f + damp * dx
        if np.abs(dx).max() < 1e-11:
            return f
    raise DivergenceError(
        f"the radial profile (degree {degree}, I = {inertia:g}, mass {mass:g}) did not converge in 100 Newton steps"
    )


def _energy(g, f, degree, inertia, mass):
    full = np.concatenate(([np.pi], f, [0.0]))
    f_s = np.gradient(full, g.ds, edge_order=2)
    r = np.concatenate(([0.0], g.r))
    r_s = np.concatenate(([g.scale], g.r_s))
    f_r = f_s[:-1] / r_s
    sin = np.sin(full[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        quartic = np.where(r > 0, inertia * sin**4 / np.where(r > 0, r, 1.0) ** 2, 0.0)
    dens = r**2 * f_r**2 + 2 * degree * sin**2 * (1 + f_r**2) + quartic + 2 * mass**2 * r**2 * (1 - np.cos(full[:-1]))
    integrand = np.concatenate((4 * np.pi * dens * r_s, [0.0]))  # the integrand vanishes at r = inf
    return float(np.sum(integrand[1:] + integrand[:-1]) * g.ds / 2)


def _continue(g, start, end, f):
    """The profile at parameters ``end`` = (B, I, m) from f, the profile at ``start``,
    by continuation along the straight line between them: steps that make Newton
    diverge are halved until they converge. Newton straight from a guess diverges for
    large B (B = 8, I = 85.6) and, from the massless profile, for B >= 2 at m = 1 (the
    tail turns from a power into an exponential)."""
    done, step = 0.0, 1.0
    while done < 1.0:
        t = min(1.0, done + step)
        params = [a + t * (b - a) for a, b in zip(start, end)]
        try:
            f = _relax(g, *params, f)
        except DivergenceError:
            step /= 2
            if step < 1.0 / 4096:
                raise
            continue
        done = t
    return f


def solve(degree, inertia, mass, cells=2000):
    """(s grid, f on it, scale, energy): the minimising profile and its energy."""
    scale = math.sqrt(degree)
    energies, profiles = [], []
    for n in (cells, 2 * cells):
        g = _Grid(n, scale)
        if profiles:  # the fine grid starts from the coarse solution
            f = _relax(g, degree, inertia, mass, np.interp(g.s[1:-1], profiles[-1][0], profiles[-1][1]))
        else:
            guess = 4 * np.arctan(np.exp(-g.r / scale))
            try:
                f = _relax(g, degree, inertia, 0.0, guess)
            except DivergenceError:  # from the hedgehog, whose profile Newton always finds
                f = _continue(g, (1, 1.0, 0.0), (degree, inertia, 0.0), _relax(g, 1, 1.0, 0.0, guess))
            if mass > 0:
                f = _continue(g, (degree, inertia, 0.0), (degree, inertia, mass), f)
        energies.append(_energy(g, f, degree, inertia, mass))
        profiles.append((g.s, np.concatenate(([np.pi], f, [0.0]))))
    s, f = profiles[-1]
    return s, f, scale, (4 * energies[1] - energies[0]) / 3
