"""The ferromagnetic superconductor."""

from __future__ import annotations

import fieldgo as fg

from ._magnetic import GAUGE, MAGNET, gradient_m2, magnetic_field, magnetisation, skyrmion_density


def ferromagnetic_superconductor(
    q: float = 1.0,
    a: float = -4.0,
    b: float = 1.0,
    alpha: float = -1.0,
    beta: float = 1.0,
    gamma: float = 1.0,
    eta1: float = 0.0,
    eta2: float = 0.0,
) -> fg.Theory:
    r"""Ferromagnetic superconductor (soliton_solver's README functional): magnetisation
    m = (m1, m2, m3), condensate psi = psi_re + i psi_im, A = (a_x, a_y, a_z),

    .. math::

        e = \tfrac12|D\psi|^2 + \tfrac12|\nabla\times A|^2 + \tfrac{\gamma^2}{2}|\nabla m|^2
            - m\cdot(\nabla\times A) + \eta_1|m|^2|\psi|^2 + \eta_2|\nabla m|^2|\psi|^2
            + \tfrac{a}{2}|\psi|^2 + \tfrac{b}{4}|\psi|^4 + \tfrac{\alpha}{2}|m|^2
            + \tfrac{\beta}{4}|m|^4 - \frac{\alpha^2 b + a^2\beta - 4a\alpha\eta_1}
                                          {16\eta_1^2 - 4b\beta}

    with D_i = d_i - i q A_i and fields independent of z. All parameters are dynamic.

    Densities: ``vortex_number`` = q B_z / (2 pi), ``magnetic_field`` = B_z and
    ``skyrmion_number`` = m . (d_x m x d_y m) / ``(4 pi |m|^3)``.
    """
    fields = list(MAGNET) + list(GAUGE) + ["psi_re", "psi_im"]
    theory = fg.Theory(
        "ferromagnetic_superconductor",
        fields=fields,
        params={"q": q, "a": a, "b": b, "alpha": alpha, "beta": beta, "gamma": gamma, "eta1": eta1, "eta2": eta2},
    )

    @theory.energy_density
    def energy(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        dx_psi, dy_psi = fg.covariant(psi, (s.phi.a_x, s.phi.a_y), p.q)
        rho = fg.norm2(psi.value)
        m = magnetisation(s)
        m2 = fg.norm2(m)
        bfield = magnetic_field(s)
        grad_m = gradient_m2(s)
        e = 0.5 * (fg.norm2(dx_psi) + fg.norm2(dy_psi)) + 0.5 * fg.norm2(bfield)
        e = e + 0.5 * p.gamma**2 * grad_m - fg.dot(m, bfield)
        e = e + p.eta1 * m2 * rho + p.eta2 * grad_m * rho
        e = e + 0.5 * p.a * rho + 0.25 * p.b * rho * rho + 0.5 * p.alpha * m2 + 0.25 * p.beta * m2 * m2
        vacuum = (p.alpha**2 * p.b + p.a**2 * p.beta - 4 * p.a * p.alpha * p.eta1) / (16 * p.eta1**2 - 4 * p.b * p.beta)
        return e - vacuum

    @theory.density("vortex_number")
    def vortex_number(s, p):
        return p.q * fg.curl(s, "a_x", "a_y") / (2 * fg.pi)

    @theory.density("magnetic_field")
    def magnetic_field_z(s, p):
        return fg.curl(s, "a_x", "a_y")

    @theory.density("skyrmion_number")
    def skyrmion_number(s, p):
        return skyrmion_density(s)

    return theory
