"""Theories that use z: hand-written gradients checked along z (and compiled), and
Theory.at on the generated C of a three-dimensional site."""

import numpy as np
import pytest

import fieldgo as fg


def _coupled(hand=None):
    th = fg.Theory("coupled_z", fields=["u", "v"], params={"k": 0.7})

    @th.energy_density
    def e(s, p):
        grad = s.dx.u**2 + s.dy.u**2 + s.dz.u**2 + s.dx.v**2 + s.dy.v**2 + s.dz.v**2
        return 0.5 * grad + p.k * s.dz.u * s.dx.v * (1 + 0.1 * s.z) + 0.5 * (1 - s.phi.u**2 - s.phi.v**2) ** 2

    if hand is not None:
        th.gradient(hand)
    return th


def _right(s, p, out):
    w = 2 * (1 - s.phi.u**2 - s.phi.v**2)
    t = p.k * (1 + 0.1 * s.z)
    out[0] = -(s.dxx.u + s.dyy.u + s.dzz.u) - t * s.dxz.v - 0.1 * p.k * s.dx.v - w * s.phi.u
    out[1] = -(s.dxx.v + s.dyy.v + s.dzz.v) - t * s.dxz.u - w * s.phi.v


def _wrong_in_z(s, p, out):
    w = 2 * (1 - s.phi.u**2 - s.phi.v**2)
    t = p.k * (1 + 0.1 * s.z)
    out[0] = -(s.dxx.u + s.dyy.u + s.dzz.u) - t * s.dxz.v - w * s.phi.u  # d/dz of (1 + z/10) dropped
    out[1] = -(s.dxx.v + s.dyy.v + s.dzz.v) - t * s.dxz.u - w * s.phi.v


def test_hand_gradient_with_z_is_checked_compiled_and_relaxes_as_the_derived_one():
    hand, derived = _coupled(_right), _coupled()
    assert hand.spec["gradient"] == "hand" and "#define FG_DIM     3" in hand.source
    hand.check_gradient()
    energies = []
    for th in (hand, derived):
        sim = fg.Simulation(th, grid=(13, 8, 9), spacing=0.35, boundary=("fixed", "periodic", "periodic"))
        sim.set_field(lambda x, y, z: (np.tanh(x) + 0.1 * np.sin(z + y), 0.2 * np.cos(z)))
        sim.minimize(tol=1e-9, max_steps=20_000, progress=False)
        assert sim.last_status["converged"]
        energies.append(sim.energy())
    # The same continuum gradient up to the order of its terms: the same minimum.
    assert energies[0] == pytest.approx(energies[1], rel=1e-10)


def test_hand_gradient_wrong_only_along_z_is_refused_naming_the_component_and_point():
    th = _coupled(_wrong_in_z)
    with pytest.raises(fg.SpecError, match=r"component 'u' differs.*x=.*, y=.*, z=") as info:
        th.source  # noqa: B018
    assert "components that differ: u" in str(info.value)


def test_hand_gradient_with_z_under_a_unit_vector_constraint_compares_tangent_parts():
    def theory(extra):
        th = fg.Theory("heisenberg_z", fields=["n1", "n2", "n3"], constraint=fg.UnitVector())

        @th.energy_density
        def e(s, p):
            return 0.5 * (fg.dot(s.dx, s.dx) + fg.dot(s.dy, s.dy) + fg.dot(s.dz, s.dz))

        @th.gradient
        def g(s, p, out):
            for a in range(3):
                out[a] = -(s.dxx[a] + s.dyy[a] + extra * s.dzz[a]) + 5.0 * s.phi[a]

        return th

    theory(1.0).check_gradient()  # the term along n (5 n) is projected away: accepted
    with pytest.raises(fg.SpecError, match="not the derivative"):
        theory(0.5).check_gradient()  # half the z Laplacian is not


def test_theory_at_evaluates_the_3d_point_source():
    th = _coupled(_right)
    site = dict(
        phi=[0.3, -0.2],
        dx=[0.1, 0.4],
        dy=[-0.3, 0.2],
        dz=[0.5, -0.6],
        dxx=[0.2, 0.1],
        dyy=[-0.4, 0.3],
        dzz=[0.7, 0.2],
        dxy=[0.1, 0.0],
        dxz=[-0.2, 0.6],
        dyz=[0.3, 0.1],
        x=0.4,
        y=-1.1,
        z=2.0,
    )
    r = th.at(**site, k=0.9)
    ev = th.evaluate(**site, k=0.9)
    assert r.energy == pytest.approx(ev.energy, rel=1e-14)
    np.testing.assert_allclose(r.gradient, ev.gradient, rtol=1e-14)
    t = 0.9 * (1 + 0.1 * 2.0)
    np.testing.assert_allclose(r.de_ddz, [0.5 + t * 0.4, -0.6], rtol=1e-14)
    np.testing.assert_allclose(r.de_ddx, [0.1, 0.4 + t * 0.5], rtol=1e-14)
    w = 2 * (1 - 0.09 - 0.04)
    np.testing.assert_allclose(r.de_dphi, [-w * 0.3, w * 0.2], rtol=1e-14)
    # z enters: another z gives another energy; a planar theory has no de_ddz
    assert th.at(**{**site, "z": -2.0}, k=0.9).energy != r.energy
    planar = fg.Theory("planar", fields=["u"])

    @planar.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2

    assert planar.at(phi=[0.1], dx=[2.0]).de_ddz is None
