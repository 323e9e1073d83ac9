"""A hand-written gradient checked against the derivative of the energy density.

A soliton_solver-style ``@theory.gradient`` is a second statement of the physics: a slip
in it (a factor 2 in one term) relaxes the field to the minimum of another energy while
the engine reports the energy the user wrote. The check compares it with the
Euler–Lagrange form SymPy derives from ``@theory.energy_density`` at a few points of a
smooth test field (its values and exact derivatives, so that every identity the field
obeys, |n| = 1 among them, holds at the points), with parameters away from zero; for a
theory that uses z the field varies along z too and its z derivatives are compared. Under a
unit-vector constraint only the tangent parts are compared, since the flow projects
the gradient: a hand gradient may drop or add terms along n. Deterministic (fixed test
field), and exact up to rounding, so the tolerance is tight.
"""

from __future__ import annotations

import math
import random

from ._lazy import sympy

#: A component is refused when it differs from the derived one by more than this,
#: relative to the largest |gradient| at the point (at least 1).
TOLERANCE = 1e-8

#: Points of the test field (x, y) where the two are compared.
POINTS = ((0.31, -0.47), (-0.83, 0.26), (0.57, 0.91))

#: Points (x, y, z) for a theory that uses z: its z derivatives and z vary too.
POINTS_3D = ((0.31, -0.47, 0.22), (-0.83, 0.26, -0.61), (0.57, 0.91, 0.38))

#: The slots of a three-dimensional site, first and second derivatives by axis
#: pairs: (slot, axes differentiated along; 0 x, 1 y, 2 z).
_SLOTS_3D = (
    ("phi", ()),
    ("dx", (0,)),
    ("dy", (1,)),
    ("dz", (2,)),
    ("dxx", (0, 0)),
    ("dyy", (1, 1)),
    ("dzz", (2, 2)),
    ("dxy", (0, 1)),
    ("dxz", (0, 2)),
    ("dyz", (1, 2)),
)


def _test_field(n: int, constrained: list, rng: random.Random):
    """A function (x, y) -> the six slots (phi, dx, dy, dxx, dyy, dxy), each n values, of
    smooth components c0 + c1 sin(k1 x + k2 y + ph) + c2 cos(k3 x - k4 y), the
    constrained ones divided by their joint norm (derivatives by the chain rule, exact
    to rounding)."""
    coef = [
        [rng.uniform(-1, 1) for _ in range(3)] + [rng.uniform(0.5, 1.5) for _ in range(4)] + [rng.uniform(0, math.pi)]
        for _ in range(n)
    ]

    def raw(x, y):
        f = [[0.0] * n for _ in range(6)]  # f, fx, fy, fxx, fyy, fxy
        for a, (c0, c1, c2, k1, k2, k3, k4, ph) in enumerate(coef):
            u, v = k1 * x + k2 * y + ph, k3 * x - k4 * y
            su, cu, sv, cv = math.sin(u), math.cos(u), math.sin(v), math.cos(v)
            f[0][a] = c0 + c1 * su + c2 * cv
            f[1][a] = c1 * k1 * cu - c2 * k3 * sv
            f[2][a] = c1 * k2 * cu + c2 * k4 * sv
            f[3][a] = -c1 * k1 * k1 * su - c2 * k3 * k3 * cv
            f[4][a] = -c1 * k2 * k2 * su - c2 * k4 * k4 * cv
            f[5][a] = -c1 * k1 * k2 * su + c2 * k3 * k4 * cv
        return f

    def slots(x, y):
        f, fx, fy, fxx, fyy, fxy = raw(x, y)
        if not constrained:
            return [f, fx, fy, fxx, fyy, fxy]

        def dot(p, q):
            return sum(p[a] * q[a] for a in constrained)

        r = math.sqrt(dot(f, f))
        s = 1 / r
        a_x, a_y = dot(f, fx), dot(f, fy)
        s_x, s_y = -a_x / r**3, -a_y / r**3
        s_xx = -(dot(fx, fx) + dot(f, fxx)) / r**3 + 3 * a_x * a_x / r**5
        s_yy = -(dot(fy, fy) + dot(f, fyy)) / r**3 + 3 * a_y * a_y / r**5
        s_xy = -(dot(fx, fy) + dot(f, fxy)) / r**3 + 3 * a_x * a_y / r**5
        out = [list(f), list(fx), list(fy), list(fxx), list(fyy), list(fxy)]
        for a in constrained:
            out[0][a] = f[a] * s
            out[1][a] = fx[a] * s + f[a] * s_x
            out[2][a] = fy[a] * s + f[a] * s_y
            out[3][a] = fxx[a] * s + 2 * fx[a] * s_x + f[a] * s_xx
            out[4][a] = fyy[a] * s + 2 * fy[a] * s_y + f[a] * s_yy
            out[5][a] = fxy[a] * s + fx[a] * s_y + fy[a] * s_x + f[a] * s_xy
        return out

    return slots


def _test_field_3d(n: int, constrained: list, rng: random.Random):
    """_test_field along three axes: components c0 + c1 sin(ku . r + ph) + c2 cos(kv . r),
    returning the ten slots of _SLOTS_3D at (x, y, z), the constrained components
    divided by their joint norm (n = f s with s = 1/|f|; derivatives by the product rule)."""
    coef = [
        ([rng.uniform(-1, 1) for _ in range(3)], [rng.uniform(0.5, 1.5) for _ in range(6)], rng.uniform(0, math.pi))
        for _ in range(n)
    ]

    def raw(r):
        d: dict = {axes: [0.0] * n for _, axes in _SLOTS_3D}
        for a, ((c0, c1, c2), k, ph) in enumerate(coef):
            ku, kv = (k[0], k[1], k[2]), (k[3], -k[4], k[5])
            u = sum(ku[i] * r[i] for i in range(3)) + ph
            v = sum(kv[i] * r[i] for i in range(3))
            su, cu, sv, cv = math.sin(u), math.cos(u), math.sin(v), math.cos(v)
            for _, axes in _SLOTS_3D:
                if not axes:
                    d[axes][a] = c0 + c1 * su + c2 * cv
                elif len(axes) == 1:
                    i = axes[0]
                    d[axes][a] = c1 * ku[i] * cu - c2 * kv[i] * sv
                else:
                    i, j = axes
                    d[axes][a] = -c1 * ku[i] * ku[j] * su - c2 * kv[i] * kv[j] * cv
        return d

    def slots(x, y, z):
        d = raw((x, y, z))
        if constrained:

            def dot(p, q):
                return sum(p[a] * q[a] for a in constrained)

            f = d[()]
            norm = math.sqrt(dot(f, f))
            s = {(): 1 / norm}
            for i in range(3):
                s[(i,)] = -dot(f, d[(i,)]) / norm**3
            for _, axes in _SLOTS_3D:
                if len(axes) == 2:
                    i, j = axes
                    ai, aj = dot(f, d[(i,)]), dot(f, d[(j,)])
                    s[axes] = -(dot(d[(i,)], d[(j,)]) + dot(f, d[axes])) / norm**3 + 3 * ai * aj / norm**5
            out = {axes: list(vals) for axes, vals in d.items()}
            for a in constrained:
                out[()][a] = f[a] * s[()]
                for i in range(3):
                    out[(i,)][a] = d[(i,)][a] * s[()] + f[a] * s[(i,)]
                for _, axes in _SLOTS_3D:
                    if len(axes) == 2:
                        i, j = axes
                        out[axes][a] = d[axes][a] * s[()] + d[(i,)][a] * s[(j,)] + d[(j,)][a] * s[(i,)] + f[a] * s[axes]
            d = out
        return [d[axes] for _, axes in _SLOTS_3D]

    return slots


def mismatches(st, unit_vector: bool, auxiliary: list) -> list:
    """``[(component index, |hand - derived|, scale, point)]`` where the hand gradient of
    the traced theory ``st`` differs from the derived one beyond TOLERANCE * scale."""
    from . import derive

    sym = st.symbols
    n = len(sym.fields)
    derived = derive.euler_lagrange(st.partials, sym)
    hand = st.gradient
    constrained = [a for a in range(n) if sym.fields[a] not in auxiliary] if unit_vector else []
    rng = random.Random(20261203)
    points: tuple[tuple[float, ...], ...]
    if st.partials.de_ddz is not None:  # a theory that uses z: the test field varies along z
        slots = _test_field_3d(n, constrained, rng)
        points = POINTS_3D
        every = {**sym.slot, **sym.zslot}
        names = [v for k, _ in _SLOTS_3D for v in every[k]] + [sym.x, sym.y, sym.z]
    else:
        slots = _test_field(n, constrained, rng)
        points = POINTS
        order = ("phi", "dx", "dy", "dxx", "dyy", "dxy")
        names = [s for k in order for s in sym.slot[k]] + [sym.x, sym.y]
    names += list(sym.params.values())
    g_hand = sympy.lambdify(names, list(hand), "math")
    g_derived = sympy.lambdify(names, list(derived), "math")
    params = [rng.uniform(0.6, 1.4) for _ in sym.params]
    out = []
    for point in points:
        args = [v for slot in slots(*point) for v in slot] + list(point) + params
        try:
            h = [float(v) for v in g_hand(*args)]
            d = [float(v) for v in g_derived(*args)]
        except (ValueError, ZeroDivisionError, OverflowError):
            continue  # singular at this point (a theory defined on part of the space only)
        if not all(math.isfinite(v) for v in h + d):
            continue
        if constrained:  # tangent parts: v - (v.n) n over the constrained components
            phi = args[:n]
            for v in (h, d):
                dot = sum(v[a] * phi[a] for a in constrained)
                for a in constrained:
                    v[a] -= dot * phi[a]
        scale = max([1.0] + [abs(v) for v in h + d])
        for a in range(n):
            diff = abs(h[a] - d[a])
            if diff > TOLERANCE * scale:
                out.append((a, diff, scale, point))
    return out
