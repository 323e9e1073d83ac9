"""The anisotropic s+id two-component Ginzburg–Landau model."""

from __future__ import annotations

import fieldgo as fg


def anisotropic_gl(
    alpha1: float = -1.0,
    alpha2: float = -1.24503,
    beta1: float = 1.0,
    beta2: float = 1.4959,
    beta3: float = 4.02498,
    beta4: float | None = None,
    Q: float = 1.0,
    kappa: float = 0.673274,
    gamma1: float = 1.0,
    gamma2: float = 0.877868,
    gamma12: float = 0.534484,
) -> fg.Theory:
    r"""The s+id Ginzburg–Landau model of soliton_solver: two complex order parameters
    Delta_s = ds_re + i ds_im, Delta_d = dd_re + i dd_im and a gauge field (a_x, a_y):

    .. math::

        e = \tfrac12 \gamma^{\alpha\beta}_{jk} (D_j\Delta_\alpha)^* D_k\Delta_\beta
            + \tfrac{\kappa^2}{2} B^2
            + \alpha_1|\Delta_s|^2 + \alpha_2|\Delta_d|^2 + \beta_1|\Delta_s|^4
            + \beta_2|\Delta_d|^4 + \beta_3|\Delta_s|^2|\Delta_d|^2
            + \beta_4(\Delta_s^2\bar\Delta_d^2 + \bar\Delta_s^2\Delta_d^2) - e_0

    with D_j = d_j - i Q A_j, B = d_x a_y - d_y a_x, gamma diagonal in (j, k):
    gamma_xx = 2 [[g1, -g12], [-g12, g2]], gamma_yy = 2 [[g1, g12], [g12, g2]]
    (soliton_solver's ``gamma_entry``), beta4 defaulting to beta3 / 4, and e_0 the
    vacuum energy so that e -> 0 far from vortices: with beta3~ = beta3 - 2|beta4|,
    u1^2 = max(0, (2 beta2 alpha1 - beta3~ alpha2) / (beta3~^2 - 4 beta1 beta2)),
    u2^2 likewise with 1 <-> 2, and e_0 the potential at (u1, u2) with the relative
    phase that minimises the beta4 term. All parameters are dynamic.

    Densities: ``vortex_number`` = Q B / (2 pi) and ``magnetic_field`` = B.
    """
    if beta4 is None:
        beta4 = beta3 / 4.0
    params = {
        "alpha1": alpha1,
        "alpha2": alpha2,
        "beta1": beta1,
        "beta2": beta2,
        "beta3": beta3,
        "beta4": beta4,
        "Q": Q,
        "kappa": kappa,
        "gamma1": gamma1,
        "gamma2": gamma2,
        "gamma12": gamma12,
    }
    theory = fg.Theory("anisotropic_gl", fields=["a_x", "a_y", "ds_re", "ds_im", "dd_re", "dd_im"], params=params)

    def vacuum_energy(p):
        b3t = p.beta3 - 2 * fg.abs(p.beta4)
        denom = b3t * b3t - 4 * p.beta1 * p.beta2
        u1sq = fg.max(0.0, (2 * p.beta2 * p.alpha1 - b3t * p.alpha2) / denom)
        u2sq = fg.max(0.0, (2 * p.beta1 * p.alpha2 - b3t * p.alpha1) / denom)
        return p.alpha1 * u1sq + p.alpha2 * u2sq + p.beta1 * u1sq * u1sq + p.beta2 * u2sq * u2sq + b3t * u1sq * u2sq

    @theory.energy_density
    def energy(s, p):
        gauge = (s.phi.a_x, s.phi.a_y)
        ds = fg.covariant(fg.complex_field(s, "ds_re", "ds_im"), gauge, p.Q)
        dd = fg.covariant(fg.complex_field(s, "dd_re", "dd_im"), gauge, p.Q)
        # gamma^{ab}_{jj} for j = x (sign -1 on g12) and j = y (sign +1)
        kinetic = 0.0
        for j, sign in ((0, -1), (1, 1)):
            s_j, d_j = ds[j], dd[j]
            kinetic = kinetic + (
                p.gamma1 * fg.norm2(s_j) + p.gamma2 * fg.norm2(d_j) + 2 * sign * p.gamma12 * (s_j.conj() * d_j).real
            )
        b = fg.curl(s, "a_x", "a_y")
        delta_s = fg.complex(s.phi.ds_re, s.phi.ds_im)
        delta_d = fg.complex(s.phi.dd_re, s.phi.dd_im)
        ns, nd = fg.norm2(delta_s), fg.norm2(delta_d)
        mixed = 2 * (delta_s * delta_s * (delta_d * delta_d).conj()).real
        potential = (
            p.alpha1 * ns + p.alpha2 * nd + p.beta1 * ns * ns + p.beta2 * nd * nd + p.beta3 * ns * nd + p.beta4 * mixed
        )
        return kinetic + 0.5 * p.kappa**2 * b * b + potential - vacuum_energy(p)

    @theory.density("vortex_number")
    def vortex_number(s, p):
        return p.Q * fg.curl(s, "a_x", "a_y") / (2 * fg.pi)

    @theory.density("magnetic_field")
    def magnetic_field(s, p):
        return fg.curl(s, "a_x", "a_y")

    return theory
