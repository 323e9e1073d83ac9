"""The Maxwell–Chern–Simons–Higgs model: static vortices with electric charge."""

from __future__ import annotations

import fieldgo as fg


def chern_simons_higgs(q: float = 1.0, lam: float = 0.5, kappa: float = 0.5, u: float = 1.0) -> fg.Theory:
    r"""Maxwell–Chern–Simons–Higgs (soliton_solver's "Maxwell Chern Simons Higgs",
    its anyon example): a complex scalar psi = psi_re + i psi_im, a gauge field
    A = (a_x, a_y) and the electric potential a_0, an auxiliary field. Static
    solutions are saddle points of

    .. math::

        e = \tfrac12 |D\psi|^2 + \tfrac12 B^2 + \tfrac{\lambda}{8}(u^2 - |\psi|^2)^2
            - \tfrac12 |\nabla a_0|^2 - \tfrac12 q^2 a_0^2 |\psi|^2 - \kappa\, a_0 B,
        \qquad D_i\psi = \partial_i\psi - i q A_i \psi,\ B = \partial_x a_y - \partial_y a_x,

    a maximum in a_0 at Gauss's law ``(Delta - q^2 |psi|^2) a_0 = kappa B``, where e
    integrates to the energy of the static field, with ``+|grad a_0|^2/2 +
    q^2 a_0^2 |psi|^2/2`` (soliton_solver's energy; it writes D = d + i q A, the same
    theory under A -> -A, kappa -> -kappa). All parameters are dynamic.

    Densities: ``vortex_number`` q B / (2 pi), ``magnetic_field`` B,
    ``electric_charge`` -Delta a_0 (soliton_solver's; the Higgs screens a_0, so its
    integral vanishes for a localised vortex), ``noether_charge`` ``q^2 a_0 |psi|^2``
    (Gauss's law integrated: -kappa times the flux),
    ``physical_energy`` the static energy density (equal to e's integral at Gauss's law).
    """
    theory = fg.Theory(
        "chern_simons_higgs",
        fields=["a_x", "a_y", "psi_re", "psi_im", "a_0"],
        params={"q": q, "lam": lam, "kappa": kappa, "u": u},
        auxiliary=["a_0"],
    )

    def parts(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        dx_psi, dy_psi = fg.covariant(psi, (s.phi.a_x, s.phi.a_y), p.q)
        b = fg.curl(s, "a_x", "a_y")
        matter = (
            0.5 * (fg.norm2(dx_psi) + fg.norm2(dy_psi)) + 0.5 * b * b + p.lam / 8 * (p.u**2 - fg.norm2(psi.value)) ** 2
        )
        electric = 0.5 * (s.dx.a_0**2 + s.dy.a_0**2) + 0.5 * p.q**2 * s.phi.a_0**2 * fg.norm2(psi.value)
        return matter, electric, b, psi

    @theory.energy_density
    def energy(s, p):
        matter, electric, b, _ = parts(s, p)
        return matter - electric - p.kappa * s.phi.a_0 * b

    @theory.density("vortex_number")
    def vortex_number(s, p):
        return p.q * fg.curl(s, "a_x", "a_y") / (2 * fg.pi)

    @theory.density("magnetic_field")
    def magnetic_field(s, p):
        return fg.curl(s, "a_x", "a_y")

    @theory.density("electric_charge")
    def electric_charge(s, p):
        return -(s.dxx.a_0 + s.dyy.a_0)

    @theory.density("noether_charge")
    def noether_charge(s, p):
        _, _, _, psi = parts(s, p)
        return p.q**2 * s.phi.a_0 * fg.norm2(psi.value)

    @theory.density("physical_energy")
    def physical_energy(s, p):
        matter, electric, _, _ = parts(s, p)
        return matter + electric

    return theory
