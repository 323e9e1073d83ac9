"""The Faddeev–Skyrme model in three dimensions: a unit 3-vector n, whose knotted
solitons (hopfions) carry the Hopf charge."""

from __future__ import annotations

import fieldgo as fg


def _quadratic(s):
    return 0.5 * (fg.norm2(s.dx) + fg.norm2(s.dy) + fg.norm2(s.dz))


def _quartic(s):
    d = (s.dx, s.dy, s.dz)
    total = 0.0
    for i in range(3):
        for j in range(i + 1, 3):
            total = total + fg.norm2(fg.cross(d[i], d[j]))
    return total


def faddeev_skyrme(kappa: float = 1.0, mass: float = 0.0, relativistic: bool = False) -> fg.Theory:
    r"""The Faddeev–Skyrme model, a unit 3-vector n = (n1, n2, n3) in three dimensions
    with the vacuum n = (0, 0, 1):

    .. math::

        e = \tfrac12 \sum_i |\partial_i n|^2
            + \tfrac{\kappa}{4} \sum_{i,j} |\partial_i n \times \partial_j n|^2
            + m^2 (1 - n_3)

    (the sum over i, j counts each pair twice: kappa/2 times the sum over i < j).
    ``kappa`` and ``mass`` (m) are dynamic. At kappa = 1, E / (16 sqrt(2) pi^2) is the
    energy in the normalisation of Battye and Sutcliffe (1998), in which the charge-1
    hopfion has 1.22 and energies grow roughly as ``|Q|^(3/4)``.

    Densities: ``e2`` (the first term), ``e4`` (the second), ``e0`` (the potential);
    at a solution with m = 0 Derrick's theorem gives E2 = E4. The Hopf charge Q is not
    a local density: ``fg.observables.hopf_charge(sim)`` computes it from the field
    strength F_ij = n . (d_i n x d_j n) and its gauge potential; the configurations of
    ``fg.initial.hopfion(a, b)`` have Q = a b.

    ``evolve`` moves n by n'' = -dE/dn on the sphere (the kinetic term ``|n'|^2/2``).
    With ``relativistic=True`` the theory declares the kinetic density of the model's
    Lorentz-invariant Lagrangian, the quartic term's time derivatives included,

    .. math::

        K = \tfrac12 |\dot n|^2 + \tfrac{\kappa}{2} \sum_i |\dot n \times \partial_i n|^2,

    solved for the acceleration site by site (docs/dynamics.md, a kinetic density).
    """
    theory = fg.Theory(
        "faddeev_skyrme", fields=["n1", "n2", "n3"], params={"kappa": kappa, "mass": mass}, constraint=fg.UnitVector()
    )

    @theory.energy_density
    def energy(s, p):
        return _quadratic(s) + 0.5 * p.kappa * _quartic(s) + p.mass**2 * (1 - s.phi.n3)

    @theory.density("e2")
    def e2(s, p):
        return _quadratic(s)

    @theory.density("e4")
    def e4(s, p):
        return 0.5 * p.kappa * _quartic(s)

    @theory.density("e0")
    def e0(s, p):
        return p.mass**2 * (1 - s.phi.n3)

    if relativistic:

        @theory.kinetic_density
        def kinetic(s, v, p):
            vn = v.phi
            return 0.5 * fg.norm2(vn) + 0.5 * p.kappa * sum(fg.norm2(fg.cross(vn, d)) for d in (s.dx, s.dy, s.dz))

    return theory
