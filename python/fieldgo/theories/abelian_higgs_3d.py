"""The abelian Higgs model in three dimensions (vortex lines and rings)."""

from __future__ import annotations

import fieldgo as fg


def abelian_higgs_3d(q: float = 1.0, lam: float = 1.0, u: float = 1.0) -> fg.Theory:
    r"""The abelian Higgs model (Ginzburg–Landau superconductor) in 3D: a complex scalar
    psi = psi_re + i psi_im and a gauge field A = (a_x, a_y, a_z),

    .. math::

        e = \tfrac12 \sum_i |D_i\psi|^2 + \tfrac12 |B|^2 + \tfrac{\lambda}{8}(u^2 - |\psi|^2)^2,
        \qquad D_i\psi = \partial_i\psi - i q A_i \psi,
        \qquad B = \nabla \times A.

    Parameters ``q``, ``lam`` (lambda), ``u`` are dynamic. At lam = q = u = 1 the model
    is critically coupled: a straight vortex line of winding N has tension
    ``E / L = pi |N|``, the energy of :func:`abelian_higgs`'s planar vortex per unit
    length; lines and rings with z dependence relax under that tension.

    Densities:

    * ``flux_x``, ``flux_y``, ``flux_z``: the magnetic field B; a line along z carries
      flux 2 pi N / q through every plane z = const.
    * ``vortex_number_z``: q B_z / (2 pi), whose integral over a plane counts the lines
      through it (its integral over the lattice is N times the line's length along z).

    Gauss's law (``@theory.gauss_law``), as in :func:`abelian_higgs`: in temporal gauge
    E_i = -d_t A_i and rho = -q Im(conj(psi) d_t psi), G = div E - rho.
    """
    theory = fg.Theory(
        "abelian_higgs_3d", fields=["psi_re", "psi_im", "a_x", "a_y", "a_z"], params={"q": q, "lam": lam, "u": u}
    )

    def field(s):
        return (
            s.dy["a_z"] - s.dz["a_y"],
            s.dz["a_x"] - s.dx["a_z"],
            fg.curl(s, "a_x", "a_y"),
        )

    @theory.energy_density
    def energy(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        d = fg.covariant(psi, (s.phi.a_x, s.phi.a_y, s.phi.a_z), p.q)
        kinetic = 0.5 * (fg.norm2(d[0]) + fg.norm2(d[1]) + fg.norm2(d[2]))
        bx, by, bz = field(s)
        return kinetic + 0.5 * (bx * bx + by * by + bz * bz) + p.lam / 8 * (p.u**2 - fg.norm2(psi.value)) ** 2

    @theory.gauss_law
    def gauss(s, v, p):
        psi, psi_t = fg.complex_field(s, "psi_re", "psi_im").value, fg.complex_field(v, "psi_re", "psi_im").value
        div_e = -(v.dx.a_x + v.dy.a_y + v.dz.a_z)
        return div_e + p.q * (psi.conj() * psi_t).imag

    @theory.density("flux_x")
    def flux_x(s, p):
        return field(s)[0]

    @theory.density("flux_y")
    def flux_y(s, p):
        return field(s)[1]

    @theory.density("flux_z")
    def flux_z(s, p):
        return field(s)[2]

    @theory.density("vortex_number_z")
    def vortex_number_z(s, p):
        return p.q * field(s)[2] / (2 * fg.pi)

    return theory
