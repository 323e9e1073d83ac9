"""The Faddeev–Skyrme model (fg.theories.faddeev_skyrme), its hopfions
(fg.initial.hopfion) and the Hopf charge (fg.observables.hopf_charge)."""

import numpy as np
import pytest

import fieldgo as fg

BS_UNIT = 16 * np.sqrt(2) * np.pi**2  # E / BS_UNIT: Battye and Sutcliffe's normalisation at kappa = 1


@pytest.fixture(scope="module")
def theory():
    return fg.theories.faddeev_skyrme()


def cube(theory, half, h):
    n = int(round(2 * half / h)) + 1
    return fg.Simulation(theory, grid=(n, n, n), spacing=h)


def test_hopf_charge_of_the_charge_one_hopfion_converges_to_one_at_fourth_order(theory):
    errors = []
    for h in (0.25, 0.2, 0.15):
        sim = cube(theory, 4.0, h)
        sim.set_field(fg.initial.hopfion(1, 1))
        errors.append(fg.observables.hopf_charge(sim) - 1.0)
    orders = [np.log(errors[0] / errors[1]) / np.log(1.25), np.log(errors[1] / errors[2]) / np.log(4 / 3)]
    assert all(3.0 < p < 4.6 for p in orders), (errors, orders)
    assert abs(errors[-1]) < 0.015
    # the ansatz is a little above the minimal charge-1 energy, 1.22 in these units
    assert 1.22 < sim.energy() / BS_UNIT < 1.4


@pytest.mark.parametrize(("a", "b"), [(2, 1), (1, 2)])
def test_hopf_charge_is_a_times_b(theory, a, b):
    sim = cube(theory, 4.0, 0.15)
    sim.set_field(fg.initial.hopfion(a, b))
    assert fg.observables.hopf_charge(sim) == pytest.approx(a * b, abs=0.04 * a * b)
    # turned in space and in the target: the same charge
    sim.set_field(fg.initial.hopfion(a, b, rotation=(0.9, 0.3, -0.2, 0.1), isorotation=(0.8, 0.0, 0.0, 0.6)))
    assert fg.observables.hopf_charge(sim) == pytest.approx(a * b, abs=0.05 * a * b)


def test_relaxation_lowers_the_energy_and_keeps_the_charge(theory):
    sim = cube(theory, 4.0, 0.25)
    sim.set_field(fg.initial.hopfion(1, 1, size=1.3))
    before = sim.energy()
    sim.minimize(tol=1e-4, max_steps=40, check_every=20)
    assert sim.energy() < before
    assert fg.observables.hopf_charge(sim) == pytest.approx(1.0, abs=0.08)
    terms = fg.observables.energy_terms(sim)
    assert terms["e2"] + terms["e4"] + terms["e0"] == pytest.approx(terms["total"], rel=1e-12)


def test_hopfion_and_hopf_charge_refuse_bad_input(theory):
    with pytest.raises(fg.ParameterError, match="a must be a positive integer"):
        fg.initial.hopfion(0, 1)
    with pytest.raises(fg.ParameterError, match="profile must be a callable"):
        fg.initial.hopfion(profile="ring")
    sim = fg.Simulation(fg.theories.skyrme(), grid=(8, 8, 8), spacing=0.5)
    with pytest.raises(fg.ShapeError, match="3 components"):
        sim.set_field(fg.initial.hopfion())
    sim.set_field(fg.initial.hedgehog())
    with pytest.raises(fg.SpecError, match="unit 3-vector"):
        fg.observables.hopf_charge(sim)
    with pytest.raises(fg.ParameterError, match="not one"):
        fg.initial.product_ansatz(fg.initial.hedgehog(), fg.initial.hopfion())
