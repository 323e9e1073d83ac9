"""The spin-triplet superconducting ferromagnet."""

from __future__ import annotations

import fieldgo as fg

from ._magnetic import GAUGE, MAGNET, gradient_m2, magnetic_field, magnetisation, skyrmion_density


def spin_triplet(
    q: float = 1.0,
    a: float = -4.0,
    b1: float = 3.0,
    b2: float = 0.5,
    c: float = -0.5,
    alpha: float = -1.0,
    beta: float = 1.0,
    gamma: float = 1.0,
) -> fg.Theory:
    r"""Spin-triplet superconducting ferromagnet (soliton_solver's README functional):
    magnetisation m = (m1, m2, m3), two condensates psi_1, psi_2 and A = (a_x, a_y, a_z),

    .. math::

        e = \tfrac12 \sum_\alpha |D\psi_\alpha|^2 + \tfrac12 |\nabla\times A|^2
            + \tfrac{a}{2}\sum_\alpha|\psi_\alpha|^2 + \tfrac{b_1}{4}\sum_\alpha|\psi_\alpha|^4
            + b_2 |\psi_1|^2|\psi_2|^2 + c(\psi_1\psi_2^* + \psi_1^*\psi_2)
            + \tfrac{\alpha}{2}|m|^2 + \tfrac{\beta}{4}|m|^4 + \tfrac{\gamma^2}{2}|\nabla m|^2
            - m\cdot(\nabla\times A) + \frac{(a+2c)^2}{2(b_1+2b_2)} + \frac{\alpha^2}{4\beta}

    with D_i = d_i - i q A_i and fields independent of z (so D_z psi = 0 and
    curl A = (d_y a_z, -d_x a_z, d_x a_y - d_y a_x)). All parameters are dynamic.

    Densities: ``vortex_number`` = q B_z / (2 pi), ``magnetic_field`` = B_z and
    ``skyrmion_number`` = m . (d_x m x d_y m) / ``(4 pi |m|^3)``.
    """
    fields = list(MAGNET) + list(GAUGE) + ["psi1_re", "psi1_im", "psi2_re", "psi2_im"]
    theory = fg.Theory(
        "spin_triplet",
        fields=fields,
        params={"q": q, "a": a, "b1": b1, "b2": b2, "c": c, "alpha": alpha, "beta": beta, "gamma": gamma},
    )

    @theory.energy_density
    def energy(s, p):
        gauge = (s.phi.a_x, s.phi.a_y)
        e = 0.0
        rho = []
        for k in (1, 2):
            psi = fg.complex_field(s, f"psi{k}_re", f"psi{k}_im")
            dx_psi, dy_psi = fg.covariant(psi, gauge, p.q)
            rho.append(fg.norm2(psi.value))
            e = e + 0.5 * (fg.norm2(dx_psi) + fg.norm2(dy_psi))
        psi1 = fg.complex(s.phi.psi1_re, s.phi.psi1_im)
        psi2 = fg.complex(s.phi.psi2_re, s.phi.psi2_im)
        b = magnetic_field(s)
        m = magnetisation(s)
        m2 = fg.norm2(m)
        e = e + 0.5 * fg.norm2(b)
        e = e + 0.5 * p.a * (rho[0] + rho[1]) + 0.25 * p.b1 * (rho[0] ** 2 + rho[1] ** 2)
        e = e + p.b2 * rho[0] * rho[1] + p.c * 2 * (psi1 * psi2.conj()).real
        e = e + 0.5 * p.alpha * m2 + 0.25 * p.beta * m2 * m2 + 0.5 * p.gamma**2 * gradient_m2(s)
        e = e - fg.dot(m, b)
        return e + (p.a + 2 * p.c) ** 2 / (2 * (p.b1 + 2 * p.b2)) + p.alpha**2 / (4 * p.beta)

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
