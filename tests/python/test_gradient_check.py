"""A hand-written gradient is checked against the derivative of the energy density."""

import pytest

import fieldgo as fg


def chiral_magnet(dmi_factor):
    """A Bloch chiral magnet with a soliton_solver-style gradient whose DMI term is
    2 D curl m times dmi_factor (1 is right)."""
    th = fg.Theory("magnet_hand", fields=["m1", "m2", "m3"], params={"D": 1.0, "h": 0.5}, constraint=fg.UnitVector())

    @th.energy_density
    def energy(s, p):
        m, dx, dy = s.phi, s.dx, s.dy
        dmi = m.m1 * dy.m3 - m.m2 * dx.m3 + m.m3 * (dx.m2 - dy.m1)
        return 0.5 * (fg.norm2(dx) + fg.norm2(dy)) + p.D * dmi + p.h * (1 - m.m3)

    @th.gradient
    def gradient(s, p, out):
        curl = (s.dy.m3, -s.dx.m3, s.dx.m2 - s.dy.m1)
        for a in range(3):
            out[a] = -(s.dxx[a] + s.dyy[a]) + dmi_factor * 2 * p.D * curl[a]
        out["m3"] -= p.h

    return th


def test_a_right_hand_gradient_passes():
    th = chiral_magnet(1.0)
    th.check_gradient()
    sim = fg.Simulation(th, grid=(16, 16), spacing=0.5)
    sim.set_field(fg.initial.skyrmion(charge=-1))
    assert sim.energy() == sim.energy()


def test_a_factor_two_slip_in_the_dmi_term_is_refused_naming_the_component():
    th = chiral_magnet(0.5)
    with pytest.raises(fg.SpecError, match=r"test_gradient_check\.py:\d+.*component 'm\d' differs") as info:
        fg.Simulation(th, grid=(16, 16), spacing=0.5)
    assert "not the derivative of its energy density" in str(info.value)
    with pytest.raises(fg.SpecError):
        th.check_gradient()


def test_terms_along_n_do_not_count_under_the_constraint():
    # A soliton_solver habit: subtracting the radial part (a Lagrange multiplier term)
    # in the gradient itself. The flow projects anyway, so it is the same gradient.
    th = chiral_magnet(1.0)
    inner = th._gradient_fn

    @th.gradient
    def gradient(s, p, out):
        inner(s, p, out)
        for a in range(3):
            out[a] = out[a] + 3.0 * s.phi[a] * p.h

    th.check_gradient()


def test_a_derived_gradient_needs_no_check():
    fg.theories.baby_skyrme().check_gradient()
