"""The chiral magnet, with optional demagnetisation through an auxiliary potential."""

from __future__ import annotations

import fieldgo as fg

from ._chiral import dmi_energy, dmi_tensor
from ._magnetic import MAGNET, gradient_m2, skyrmion_density


def chiral_magnet(
    dmi: str = "bloch",
    demag: bool = True,
    J: float = 40e-12,
    K: float = 0.8e6,
    D: float = 4e-3,
    M: float = 580e3,
    B: float = 0.0,
    mu0: float = 1.25663706127e-6,
) -> fg.Theory:
    r"""Chiral magnet (soliton_solver's "Chiral magnet"): a unit magnetisation
    m = (m1, m2, m3) and the magnetostatic potential psi, an auxiliary field,

    .. math::

        e = \tfrac12 |\nabla m|^2 + \sum_{ij} D_{ij}\, (m\times\partial_i m)_j
            + h (1 - m_3) + k (1 - m_3^2)
            - \psi\, \nabla\cdot m - \frac{1}{2\mu} |\nabla\psi|^2

    in units of length J/D and energy J (per unit thickness), with
    k = K J / D^2, h = M B J / D^2, mu = mu0 M^2 J / D^2 computed from the
    dynamic parameters J, K, D, M, B, mu0 (soliton_solver's defaults: k = 2, h = 0,
    mu = 1.0568). ``dmi`` picks D_ij: "bloch" (Dresselhaus, bulk), "neel" (Rashba,
    interfacial) or "heusler" (anti-skyrmions).

    psi is auxiliary (``auxiliary=["psi"]``): the energy is a maximum in psi, at
    Delta psi = mu div m (the demagnetising field of the magnetic charge
    -div m), where its psi terms equal the demagnetisation energy
    ``|grad psi|^2 / (2 mu) >= 0``; the flow relaxes m downhill and psi uphill to
    that saddle, as soliton_solver does. With ``demag=False`` the coupling
    -psi div m is left out: psi stays an (idle, zero) component so that fields
    move between the two variants unchanged.

    Densities: ``skyrmion_number`` m.(d_x m x d_y m)/(4 pi), ``magnetic_charge``
    -div m, ``demag_energy`` ``|grad psi|^2 / (2 mu)``.
    """
    tensor = dmi_tensor(dmi)
    theory = fg.Theory(
        "chiral_magnet",
        fields=[*MAGNET, "psi"],
        params={"J": J, "K": K, "D": D, "M": M, "B": B, "mu0": mu0},
        constraint=fg.UnitVector(),
        auxiliary=["psi"],
    )

    def couplings(p):
        scale = p.J / p.D**2
        return p.K * scale, p.M * p.B * scale, p.mu0 * p.M**2 * scale

    @theory.energy_density
    def energy(s, p):
        k, h, mu = couplings(p)
        m3 = s.phi.m3
        e = 0.5 * gradient_m2(s) + dmi_energy(s, tensor) + h * (1 - m3) + k * (1 - m3 * m3)
        if demag:
            e = e - s.phi.psi * (s.dx.m1 + s.dy.m2)
        return e - (s.dx.psi**2 + s.dy.psi**2) / (2 * mu)

    @theory.density("skyrmion_number")
    def skyrmion_number(s, p):
        return skyrmion_density(s)

    @theory.density("magnetic_charge")
    def magnetic_charge(s, p):
        return -(s.dx.m1 + s.dy.m2)

    @theory.density("demag_energy")
    def demag_energy(s, p):
        _, _, mu = couplings(p)
        return (s.dx.psi**2 + s.dy.psi**2) / (2 * mu)

    return theory
