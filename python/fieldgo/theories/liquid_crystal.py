"""The chiral liquid crystal, with optional flexoelectric self-interaction through an
auxiliary electrostatic potential."""

from __future__ import annotations

import math

import fieldgo as fg

from ..errors import SpecError
from ._chiral import dmi_energy, dmi_tensor
from ._magnetic import MAGNET, gradient_m2, skyrmion_density

_DEFORMATIONS = {"twist": "bloch", "splay-bend": "neel"}


def liquid_crystal(
    deformation: str = "twist",
    depol: bool = True,
    K: float = 10e-12,
    P: float = 7.0e-6,
    d: float = 4e-6,
    e1: float = 2e-12,
    e3: float = 4e-12,
    w0: float = 1.0,
    eps0: float = 8.854e-12,
    voltage: float = 4.0,
    delta_eps: float = 3.7,
) -> fg.Theory:
    r"""Chiral nematic liquid crystal (soliton_solver's "Liquid crystal"): a unit
    director n = (m1, m2, m3) and the electrostatic potential phi_e, an auxiliary field,

    .. math::

        e = \tfrac12 |\nabla n|^2 + \sum_{ij} D_{ij}\, (n\times\partial_i n)_j
            + \tfrac12 (c_E + c_w)(1 - n_3^2)
            + P[n]\cdot\nabla\phi_e - \frac{\epsilon}{2} |\nabla\phi_e|^2,
        \qquad P_i = n_i\, \nabla\cdot n - \frac{e_3}{e_1} (n\cdot\nabla) n_i

    (i, j in the plane) in units of length 1/q0 = P/(2 pi) and energy K, with
    c_E = eps0 delta_eps E^2 / (q0^2 K) (E = voltage/d), c_w = w0 / (q0^2 K) and
    epsilon = K eps0 / e1^2 computed from the dynamic parameters. ``deformation``:
    "twist" (D_ij of Dresselhaus type, Bloch skyrmions) or "splay-bend" (Rashba,
    Neel). P is the flexoelectric polarisation in units of e1.

    phi_e is auxiliary: the energy is a maximum in it, at
    epsilon Delta phi_e = div P, where the phi_e terms equal the electrostatic energy
    ``P.grad(phi_e) / 2 = epsilon |grad phi_e|^2 / 2 >= 0`` (soliton_solver's
    depolarisation). ``depol=False`` leaves the coupling out (phi_e stays idle).

    Densities: ``skyrmion_number``, ``electric_charge`` = -div P (soliton_solver's
    bound charge), ``electrostatic_energy`` ``epsilon |grad phi_e|^2 / 2``.
    """
    try:
        dmi = _DEFORMATIONS[deformation]
    except KeyError:
        raise SpecError(f"unknown deformation {deformation!r}: use one of {', '.join(_DEFORMATIONS)}") from None
    tensor = dmi_tensor(dmi)
    theory = fg.Theory(
        "liquid_crystal",
        fields=[*MAGNET, "phi_e"],
        params={
            "K": K,
            "P": P,
            "d": d,
            "e1": e1,
            "e3": e3,
            "w0": w0,
            "eps0": eps0,
            "voltage": voltage,
            "delta_eps": delta_eps,
        },
        constraint=fg.UnitVector(),
        auxiliary=["phi_e"],
    )

    def couplings(p):
        q0 = 2 * math.pi / p.P
        pot = 1 / (q0**2 * p.K)
        field = p.voltage / p.d
        return pot * p.eps0 * p.delta_eps * field**2, pot * p.w0, p.K * p.eps0 / p.e1**2

    def polarisation(s, p):
        n = (s.phi.m1, s.phi.m2)
        dn = ((s.dx.m1, s.dx.m2), (s.dy.m1, s.dy.m2))  # dn[j][i] = d_j n_i
        div = s.dx.m1 + s.dy.m2
        r = p.e3 / p.e1
        return [n[i] * div - r * (n[0] * dn[0][i] + n[1] * dn[1][i]) for i in (0, 1)]

    def charge(s, p):
        """-div P, from the second derivatives: d_i (n_i div n) - r d_i (n_j d_j n_i)."""
        n = (s.phi.m1, s.phi.m2)
        d1 = ((s.dx.m1, s.dx.m2), (s.dy.m1, s.dy.m2))  # d1[j][i] = d_j n_i
        d2 = {
            (0, 0): (s.dxx.m1, s.dxx.m2),
            (1, 1): (s.dyy.m1, s.dyy.m2),
            (0, 1): (s.dxy.m1, s.dxy.m2),
            (1, 0): (s.dxy.m1, s.dxy.m2),
        }  # d2[i,j][k] = d_i d_j n_k
        div = d1[0][0] + d1[1][1]
        r = p.e3 / p.e1
        total = div * div
        for i in (0, 1):
            total = total + n[i] * (d2[i, 0][0] + d2[i, 1][1])
            for j in (0, 1):
                total = total - r * (d1[i][j] * d1[j][i] + n[j] * d2[i, j][i])
        return -total

    @theory.energy_density
    def energy(s, p):
        c_e, c_w, eps = couplings(p)
        n3 = s.phi.m3
        e = 0.5 * gradient_m2(s) + dmi_energy(s, tensor) + 0.5 * (c_e + c_w) * (1 - n3 * n3)
        if depol:
            pol = polarisation(s, p)
            e = e + pol[0] * s.dx.phi_e + pol[1] * s.dy.phi_e
        return e - 0.5 * eps * (s.dx.phi_e**2 + s.dy.phi_e**2)

    @theory.density("skyrmion_number")
    def skyrmion_number(s, p):
        return skyrmion_density(s)

    @theory.density("electric_charge")
    def electric_charge(s, p):
        return charge(s, p)

    @theory.density("electrostatic_energy")
    def electrostatic_energy(s, p):
        _, _, eps = couplings(p)
        return 0.5 * eps * (s.dx.phi_e**2 + s.dy.phi_e**2)

    return theory
