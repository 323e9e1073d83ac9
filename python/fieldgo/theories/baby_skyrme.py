"""The Baby Skyrme model with soliton_solver's eight potentials."""

from __future__ import annotations

import fieldgo as fg
from fieldgo.errors import SpecError

# soliton_solver's potentials V(n); the energy adds mass^2 V(n).
POTENTIALS = ("standard", "holomorphic", "easy plane", "dihedral-2", "aloof", "dihedral-3", "broken", "double vacua")

_ALIASES = {
    "standard": "standard",
    "holomorphic": "holomorphic",
    "easy plane": "easy plane",
    "easyplane": "easy plane",
    "dihedral 2": "dihedral-2",
    "dihedral2": "dihedral-2",
    "aloof": "aloof",
    "dihedral 3": "dihedral-3",
    "dihedral3": "dihedral-3",
    "broken": "broken",
    "double vacua": "double vacua",
    "doublevacua": "double vacua",
    "two vacua": "double vacua",
}


def _canonical(potential: str) -> str:
    key = str(potential).strip().lower().replace("_", " ").replace("-", " ")
    try:
        return _ALIASES[key]
    except KeyError:
        raise SpecError(f"unknown Baby Skyrme potential {potential!r}; choose one of {', '.join(POTENTIALS)}") from None


def potential_value(name: str, n, N=1):
    """V(n) for the named potential (n a 3-vector; N the broken potential's power)."""
    n1, n2, n3 = n
    if name == "standard":
        return 1 - n3
    if name == "holomorphic":
        return (1 - n3) ** 4
    if name == "easy plane":
        return 0.5 * n1 * n1
    if name == "dihedral-2":
        return 0.5 * (1 - n1 * n1) * (1 - n3 * n3)
    if name == "aloof":
        t = 1 - n3
        return 0.5 * t * (1 + t**3)
    if name == "dihedral-3":
        return 16.0 * (1 - n3) * (1 + 3 * n3 * n3 + 3 * n1 * n2 * n2 - n1**3)
    if name == "broken":
        w = 1 - fg.complex(n1, n2) ** N
        return (1 - n3) * fg.norm2(w)
    if name == "double vacua":
        return 1 - n3 * n3
    raise SpecError(f"unknown Baby Skyrme potential {name!r}")


def baby_skyrme(
    potential: str = "standard", kappa: float = 1.0, mass: float = 1.0, N: int = 1, relativistic: bool = False
) -> fg.Theory:
    r"""The Baby Skyrme model, a unit 3-vector field n = (n1, n2, n3):

    .. math::

        e = \tfrac12 (|\partial_x n|^2 + |\partial_y n|^2)
            + \tfrac{\kappa^2}{2} |\partial_x n \times \partial_y n|^2 + m^2 V(n)

    with ``mass`` = m and V one of soliton_solver's potentials:

    ===============  ================================================
    standard         1 - n3
    holomorphic      (1 - n3)^4
    easy plane       n1^2 / 2
    dihedral-2       (1 - n1^2)(1 - n3^2) / 2
    aloof            t (1 + t^3) / 2,  t = 1 - n3
    dihedral-3       16 (1 - n3)(1 + 3 n3^2 + 3 n1 n2^2 - n1^3)
    broken           ``(1 - n3) |1 - (n1 + i n2)^N|^2``   (N: static int)
    double vacua     1 - n3^2
    ===============  ================================================

    Parameters ``kappa`` and ``mass`` are dynamic; ``N`` (broken potential only) is
    static. Density ``charge`` = n . (d_x n x d_y n) / (4 pi), the skyrmion number
    density (soliton_solver's sign and normalisation).

    ``evolve`` moves n by n'' = -dE/dn on the sphere (the kinetic term ``|n'|^2/2``). With
    ``relativistic=True`` the theory declares the kinetic density of the model's
    Lorentz-invariant Lagrangian, the Skyrme term's time derivatives included,

    .. math::

        K = \tfrac12 |\dot n|^2
            + \tfrac{\kappa^2}{2} (|\dot n \times \partial_x n|^2 + |\dot n \times \partial_y n|^2),

    so that a boosted static solution travels unchanged with energy gamma E; each
    step then solves for the acceleration site by site (docs/dynamics.md, a kinetic
    density), some five times the cost of the plain step on the CPU.
    """
    name = _canonical(potential)
    params: dict[str, float | fg.Static] = {"kappa": kappa, "mass": mass}
    if name == "broken":
        params["N"] = fg.Static(int(N))
    theory = fg.Theory("baby_skyrme", fields=["n1", "n2", "n3"], params=params, constraint=fg.UnitVector())

    @theory.energy_density
    def energy(s, p):
        dn_x, dn_y = s.dx, s.dy
        dirichlet = 0.5 * (fg.norm2(dn_x) + fg.norm2(dn_y))
        skyrme = 0.5 * p.kappa**2 * fg.norm2(fg.cross(dn_x, dn_y))
        order = p.N if name == "broken" else 1
        return dirichlet + skyrme + p.mass**2 * potential_value(name, s.phi, order)

    @theory.density("charge")
    def charge(s, p):
        return fg.dot(s.phi, fg.cross(s.dx, s.dy)) / (4 * fg.pi)

    if relativistic:

        @theory.kinetic_density
        def kinetic(s, v, p):
            vn = v.phi
            return 0.5 * fg.norm2(vn) + 0.5 * p.kappa**2 * (fg.norm2(fg.cross(vn, s.dx)) + fg.norm2(fg.cross(vn, s.dy)))

    return theory
