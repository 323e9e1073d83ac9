"""The Ginzburg–Landau superconductor in 3D with an anisotropic effective-mass tensor."""

from __future__ import annotations

import fieldgo as fg


def anisotropic_gl_3d(
    q: float = 1.0,
    lam: float = 1.0,
    u: float = 1.0,
    gamma_x: float = 1.0,
    gamma_y: float = 1.0,
    gamma_z: float = 1.0,
) -> fg.Theory:
    r"""The abelian Higgs model (one-component Ginzburg–Landau superconductor) in 3D
    with a diagonal inverse effective-mass tensor gamma = diag(gamma_x, gamma_y, gamma_z):
    a complex scalar psi = psi_re + i psi_im and a gauge field A = (a_x, a_y, a_z),

    .. math::

        e = \tfrac12 \sum_i \gamma_i |D_i\psi|^2 + \tfrac12 |B|^2
            + \tfrac{\lambda}{8}(u^2 - |\psi|^2)^2,
        \qquad D_i\psi = \partial_i\psi - i q A_i \psi,
        \qquad B = \nabla \times A.

    gamma_i = 1 / m_i for effective masses m_i: a uniaxial superconductor with its hard
    axis along z is gamma = (1, 1, 1/Gamma^2) (Gamma the anisotropy ratio); the planar
    :func:`anisotropic_gl` weights each axis' covariant derivatives likewise
    (gamma_xx, gamma_yy), and at gamma = (1, 1, 1) this is :func:`abelian_higgs_3d`.
    All parameters are dynamic; the gamma_i must be positive.

    A straight line along axis k (i, j the other two axes) has the tension
    ``E / L = s_k E_2(q s_k, lam, u)`` with ``s_k = sqrt(gamma_i gamma_j)`` and
    ``E_2(q, lam, u)`` the planar :func:`abelian_higgs` vortex energy: rescaling
    x_i -> x_i / sqrt(gamma_i) and A_i -> A_i sqrt(gamma_i) / s_k maps the line onto the
    isotropic planar vortex of charge q s_k (on a lattice, onto the planar lattice of
    spacings h_i / sqrt(gamma_i)). At lam = q^2 s_k^2 that line is critically coupled,
    ``E / L = pi u^2 |N| s_k``.

    Densities: ``flux_x``, ``flux_y``, ``flux_z`` (B) and ``vortex_number_x``,
    ``vortex_number_y``, ``vortex_number_z`` (q B_i / (2 pi): integrated over a plane
    normal to axis i they count the lines through it).
    """
    for name, g in (("gamma_x", gamma_x), ("gamma_y", gamma_y), ("gamma_z", gamma_z)):
        if not g > 0:
            raise fg.ParameterError(f"{name} must be positive (an inverse effective mass), got {g!r}")
    theory = fg.Theory(
        "anisotropic_gl_3d",
        fields=["psi_re", "psi_im", "a_x", "a_y", "a_z"],
        params={"q": q, "lam": lam, "u": u, "gamma_x": gamma_x, "gamma_y": gamma_y, "gamma_z": gamma_z},
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
        kinetic = 0.5 * (p.gamma_x * fg.norm2(d[0]) + p.gamma_y * fg.norm2(d[1]) + p.gamma_z * fg.norm2(d[2]))
        bx, by, bz = field(s)
        return kinetic + 0.5 * (bx * bx + by * by + bz * bz) + p.lam / 8 * (p.u**2 - fg.norm2(psi.value)) ** 2

    @theory.density("flux_x")
    def flux_x(s, p):
        return field(s)[0]

    @theory.density("flux_y")
    def flux_y(s, p):
        return field(s)[1]

    @theory.density("flux_z")
    def flux_z(s, p):
        return field(s)[2]

    @theory.density("vortex_number_x")
    def vortex_number_x(s, p):
        return p.q * field(s)[0] / (2 * fg.pi)

    @theory.density("vortex_number_y")
    def vortex_number_y(s, p):
        return p.q * field(s)[1] / (2 * fg.pi)

    @theory.density("vortex_number_z")
    def vortex_number_z(s, p):
        return p.q * field(s)[2] / (2 * fg.pi)

    return theory
