"""The abelian Higgs model (Ginzburg–Landau superconductor)."""

from __future__ import annotations

import fieldgo as fg


def abelian_higgs(q: float = 1.0, lam: float = 1.0, u: float = 1.0) -> fg.Theory:
    r"""The abelian Higgs model: a complex scalar psi = psi_re + i psi_im and a gauge
    field A = (a_x, a_y),

    .. math::

        e = \tfrac12 |D\psi|^2 + \tfrac12 B^2 + \tfrac{\lambda}{8}(u^2 - |\psi|^2)^2,
        \qquad D_i\psi = \partial_i\psi - i q A_i \psi,
        \qquad B = \partial_x a_y - \partial_y a_x.

    Parameters ``q``, ``lam`` (lambda), ``u`` are dynamic. At lam = q = u = 1 the
    model is critically coupled: a winding-N vortex has ``E = pi |N|``.

    Densities:

    * ``flux``: the magnetic field B; its integral is the flux, 2 pi N / q for N
      vortices (flux quantisation follows from D psi -> 0 at infinity).
    * ``vortex_number``: q B / (2 pi), whose integral is the winding number N for any
      q (soliton_solver's vortex density, with the charge on the right side).
    * ``current_x``, ``current_y``: the supercurrent J_i = q Im(conj(psi) D_i psi)
      (equal to -de/dA_i of the matter part; Ampère: curl B = J at a solution).

    Gauss's law (``@theory.gauss_law``): ``evolve`` runs in temporal gauge, A_0 = 0,
    with the kinetic term ``(|d_t psi|^2 + |d_t A|^2)/2``, so ``E_i = -d_t A_i`` and
    varying A_0 in ``|D_0 psi|^2/2`` gives the charge density
    ``rho = -q Im(conj(psi) d_t psi)``:
    ``G = div E - rho = -(d_i d_t A_i - q Im(conj(psi) d_t psi))``, which the dynamics
    conserves (``d_t rho = d_i J_i = -d_t div E``).
    """
    theory = fg.Theory("abelian_higgs", fields=["psi_re", "psi_im", "a_x", "a_y"], params={"q": q, "lam": lam, "u": u})

    def parts(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        dx_psi, dy_psi = fg.covariant(psi, (s.phi.a_x, s.phi.a_y), p.q)
        return psi, dx_psi, dy_psi

    @theory.energy_density
    def energy(s, p):
        psi, dx_psi, dy_psi = parts(s, p)
        b = fg.curl(s, "a_x", "a_y")
        kinetic = 0.5 * (fg.norm2(dx_psi) + fg.norm2(dy_psi))
        return kinetic + 0.5 * b * b + p.lam / 8 * (p.u**2 - fg.norm2(psi.value)) ** 2

    @theory.gauss_law
    def gauss(s, v, p):
        psi, psi_t = fg.complex_field(s, "psi_re", "psi_im").value, fg.complex_field(v, "psi_re", "psi_im").value
        div_e = -(v.dx.a_x + v.dy.a_y)
        return div_e + p.q * (psi.conj() * psi_t).imag

    @theory.density("flux")
    def flux(s, p):
        return fg.curl(s, "a_x", "a_y")

    @theory.density("vortex_number")
    def vortex_number(s, p):
        return p.q * fg.curl(s, "a_x", "a_y") / (2 * fg.pi)

    @theory.density("current_x")
    def current_x(s, p):
        psi, dx_psi, _ = parts(s, p)
        return p.q * (psi.value.conj() * dx_psi).imag

    @theory.density("current_y")
    def current_y(s, p):
        psi, _, dy_psi = parts(s, p)
        return p.q * (psi.value.conj() * dy_psi).imag

    return theory
