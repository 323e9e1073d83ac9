"""The Skyrme model in three dimensions, a unit 4-vector field (sigma, pions)."""

from __future__ import annotations

import fieldgo as fg


def _det4(a, b, c, d):
    """det[a, b, c, d] of four 4-vectors (columns), by cofactors of the first."""
    m = (a, b, c, d)

    def det3(rows, cols):
        (r0, r1, r2), (c0, c1, c2) = rows, cols
        return (
            m[c0][r0] * (m[c1][r1] * m[c2][r2] - m[c1][r2] * m[c2][r1])
            - m[c1][r0] * (m[c0][r1] * m[c2][r2] - m[c0][r2] * m[c2][r1])
            + m[c2][r0] * (m[c0][r1] * m[c1][r2] - m[c0][r2] * m[c1][r1])
        )

    total = 0.0
    for row in range(4):
        rest = tuple(r for r in range(4) if r != row)
        total = total + (-1) ** row * a[row] * det3(rest, (1, 2, 3))
    return total


def baryon_density(s):
    """B0 = -1/(2 pi^2) det[phi, d_x phi, d_y phi, d_z phi]: the hedgehog
    phi = (cos f, sin f x/r) with f(0) = pi, f(inf) = 0 integrates to +1."""
    return -_det4(s.phi, s.dx, s.dy, s.dz) / (2 * fg.pi**2)


def _quadratic(s):
    return fg.norm2(s.dx) + fg.norm2(s.dy) + fg.norm2(s.dz)


def _quartic(s):
    d = (s.dx, s.dy, s.dz)
    total = 0.0
    for i in range(3):
        for j in range(i + 1, 3):
            total = total + fg.norm2(d[i]) * fg.norm2(d[j]) - fg.dot(d[i], d[j]) ** 2
    return total


def skyrme(mass: float = 0.0, c6: float = 0.0, sextic: bool | None = None, relativistic: bool = False) -> fg.Theory:
    r"""The Skyrme model in Skyrme units: a unit 4-vector phi = (phi0, phi1, phi2, phi3),
    the SU(2) field U = phi0 + i phi . tau (phi0 the sigma field, phi1..3 the pions),
    with left currents L_i = U^dagger d_i U and baryon density B0:

    .. math::

        E = \int e\, d^3x, \qquad
        e = -\tfrac12 \mathrm{Tr}(L_i L_i) - \tfrac1{16} \mathrm{Tr}([L_i, L_j]^2)
            + m^2 \mathrm{Tr}(1 - U) + c_6\, \pi^4 B_0^2

    which on the unit sphere reads

    .. math::

        e = \sum_i |\partial_i\phi|^2
            + \sum_{i<j} \left(|\partial_i\phi|^2 |\partial_j\phi|^2
              - (\partial_i\phi\cdot\partial_j\phi)^2\right)
            + 2 m^2 (1 - \phi_0) + c_6\, \pi^4 B_0^2,
        \qquad B_0 = -\frac{1}{2\pi^2}\, \epsilon_{abcd}\, \phi_a\, \partial_x\phi_b\,
            \partial_y\phi_c\, \partial_z\phi_d .

    ``mass`` (m, the pion mass in Skyrme units, m = 2 m_pi / (e f_pi)) and ``c6`` are
    dynamic. The sextic term is lambda^2 pi^4 B0^2 of the generalised (BPS) Skyrme
    model with lambda^2 = c6. It is compiled in only when ``c6`` is non-zero or
    ``sextic=True`` (then ``c6`` is a parameter that ``sim.set_params`` can change);
    without it the theory has no ``c6`` and no ``e6``, and a flow step costs less
    than half as much. In these units the Faddeev–Bogomolny bound is
    ``E >= 12 pi^2 |B|`` (for c6 = 0); the B = 1 hedgehog has E / (12 pi^2) = 1.2315
    at m = 0 and 1.4162 at m = 1.

    Densities (each integrates, with ``sim.integral``, to its part of E or to B):

    * ``baryon``: B0, the baryon number density; the hedgehog integrates to +1, a
      rational map of degree N (``fg.initial.rational_map``) to N.
    * ``e2``: the quadratic (sigma-model) term; ``e4``: the quartic (Skyrme) term;
      ``e0``: the mass term 2 m^2 (1 - phi0); ``e6``: the sextic term (with it only).
      Their sum is the energy density. At a solution with c6 = 0, Derrick's theorem gives
      E2 - E4 + 3 E0 = 0 (``fg.observables.virial``).

    ``evolve`` moves phi by phi'' = -dE/dphi on the sphere (the kinetic term
    ``|phi'|^2/2``, with which waves travel at sqrt 2: the quadratic term is ``|d phi|^2``).
    With ``relativistic=True`` the theory declares the kinetic density of the model's
    Lorentz-invariant Lagrangian L = K - e, the time derivatives of the quadratic,
    Skyrme and sextic terms,

    .. math::

        K = |\dot\phi|^2 + \sum_i \left(|\dot\phi|^2 |\partial_i\phi|^2
              - (\dot\phi\cdot\partial_i\phi)^2\right)
            + \tfrac{c_6}{4} \sum_{j<k} \det[\phi, \dot\phi, \partial_j\phi, \partial_k\phi]^2,

    (the last is ``c6 pi^4 |B_i|^2``, the baryon current's spatial part), so that the speed
    of light is 1 and a boosted Skyrmion travels unchanged with energy gamma E; each
    step then solves for the acceleration site by site (docs/dynamics.md, a kinetic
    density).
    """
    # The sextic term's derivatives (a squared 4x4 determinant) more than double the
    # kernels' work: 40 steps of a 40^3 flow took 6.7 s with it at c6 = 0, 3.0 s without.
    with_sextic = bool(c6 != 0) if sextic is None else bool(sextic)
    params = {"mass": mass, "c6": c6} if with_sextic else {"mass": mass}
    if not with_sextic and c6 != 0:
        raise fg.ParameterError(f"c6={c6!r} needs the sextic term: leave sextic=None or set it True")
    theory = fg.Theory("skyrme", fields=["phi0", "phi1", "phi2", "phi3"], params=params, constraint=fg.UnitVector())

    @theory.energy_density
    def energy(s, p):
        e = _quadratic(s) + _quartic(s) + 2 * p.mass**2 * (1 - s.phi.phi0)
        if with_sextic:
            e = e + p.c6 * fg.pi**4 * baryon_density(s) ** 2
        return e

    @theory.density("baryon")
    def baryon(s, p):
        return baryon_density(s)

    @theory.density("e2")
    def e2(s, p):
        return _quadratic(s)

    @theory.density("e4")
    def e4(s, p):
        return _quartic(s)

    @theory.density("e0")
    def e0(s, p):
        return 2 * p.mass**2 * (1 - s.phi.phi0)

    if with_sextic:

        @theory.density("e6")
        def e6(s, p):
            return p.c6 * fg.pi**4 * baryon_density(s) ** 2

    if relativistic:

        @theory.kinetic_density
        def kinetic(s, v, p):
            vp, d = v.phi, (s.dx, s.dy, s.dz)
            k = fg.norm2(vp)
            for i in range(3):
                k = k + fg.norm2(vp) * fg.norm2(d[i]) - fg.dot(vp, d[i]) ** 2
            if with_sextic:
                for j, kk in ((0, 1), (0, 2), (1, 2)):
                    k = k + p.c6 / 4 * _det4(s.phi, vp, d[j], d[kk]) ** 2
            return k

    return theory
