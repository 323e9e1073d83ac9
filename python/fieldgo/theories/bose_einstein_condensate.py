"""A rotating, harmonically trapped Bose–Einstein condensate (Gross–Pitaevskii)."""

from __future__ import annotations

import fieldgo as fg


def bose_einstein_condensate(g: float = 1.0, trap: float = 1.0, rotation: float = 0.0) -> fg.Theory:
    r"""Gross–Pitaevskii energy in trap units (hbar = m = 1), psi = psi_re + i psi_im:

    .. math::

        e = \tfrac12 |\nabla\psi|^2 + \tfrac12 \omega^2 r^2 |\psi|^2 + \tfrac{g}{2}|\psi|^4
            - \Omega\, \mathrm{Re}(\psi^* L_z \psi),
        \qquad L_z = -i (x\partial_y - y\partial_x),

    i.e. soliton_solver's functional with ``trap`` = omega, ``g`` the interaction and
    ``rotation`` = Omega (all dynamic); r^2 = x^2 + y^2 uses the site coordinates,
    so the trap is centred on the lattice origin (0, 0).

    Densities: ``density`` = ``|psi|^2`` (its integral is the particle number) and
    ``angular_momentum`` = Re(psi^* L_z psi).
    """
    theory = fg.Theory(
        "bose_einstein_condensate", fields=["psi_re", "psi_im"], params={"g": g, "trap": trap, "rotation": rotation}
    )

    def lz(s):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        w = s.x * psi.dy - s.y * psi.dx
        lz_psi = fg.complex(w.imag, -w.real)  # -i w
        return (psi.value.conj() * lz_psi).real

    @theory.energy_density
    def energy(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        rho = fg.norm2(psi.value)
        kinetic = 0.5 * (fg.norm2(psi.dx) + fg.norm2(psi.dy))
        trap = 0.5 * p.trap**2 * (s.x**2 + s.y**2) * rho
        return kinetic + trap + 0.5 * p.g * rho * rho - p.rotation * lz(s)

    @theory.density("density")
    def density(s, p):
        return fg.norm2(fg.complex(s.phi.psi_re, s.phi.psi_im))

    @theory.density("angular_momentum")
    def angular_momentum(s, p):
        return lz(s)

    return theory
