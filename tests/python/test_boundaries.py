"""What each boundary means, measured on a Baby Skyrme skyrmion (kappa = mass = 1).

The box is 64 x 64 sites at spacing 0.25 (side 15.75): the relaxed skyrmion's tail
is about 4e-4 at the edges. Two starting fields, ``fg.initial.skyrmion`` of size 1
and of size 2, relax to the same minimum only if the boundary leaves nothing of the
starting field in the problem: ``"free"`` and ``"periodic"`` do, ``"fixed"`` holds
the outer two layers at the starting field (the size-2 hedgehog's tail there is
pi exp(-4) = 0.06) and does not.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402

GRID, SPACING, TOL = (64, 64), 0.25, 1e-8


def relaxed(theory, boundary, size, gradient="auto"):
    sim = fg.Simulation(theory, grid=GRID, spacing=SPACING, boundary=boundary, backend="cpu", gradient=gradient)
    sim.set_field(fg.initial.skyrmion(size=size))
    sim.minimize(tol=TOL, max_steps=20_000)
    assert sim.last_status["converged"]
    out = dict(
        energy=sim.energy(),
        e=sim.integral("energy"),
        charge=sim.integral("charge"),
        gradient=sim.describe()["gradient"],
    )
    sim.close()
    return out


@pytest.fixture(scope="module")
def skyrme():
    return fg.theories.baby_skyrme()


@pytest.fixture(scope="module")
def free(skyrme):
    return [relaxed(skyrme, "free", size) for size in (1.0, 2.0)]


def test_free_boundary_energy_does_not_depend_on_the_starting_field(free):
    a, b = free
    assert a["gradient"] == "consistent"  # the free boundary's energy is what the flow descends
    # measured: equal to 1e-14 (32.23286348641 both)
    assert abs(a["energy"] - b["energy"]) < 1e-9 * abs(a["energy"])
    assert abs(a["charge"] - 1) < 3e-3 and abs(a["charge"] - b["charge"]) < 1e-9


def test_free_boundary_agrees_with_periodic_within_the_discretisation_error(skyrme, free):
    e_free = free[0]["e"]  # the energy density's integral: no doubler penalty
    same_energy = relaxed(skyrme, "periodic", 1.0, gradient="consistent")
    default = relaxed(skyrme, "periodic", 1.0)
    # The same discrete energy inside; what differs is the tail at the edges
    # (measured 1.1e-5, 3.5e-7 relative).
    assert abs(e_free - same_energy["e"]) < 1e-6 * e_free
    # The periodic default (the continuum form) differs from the consistent form by
    # their O(h^4) discretisation errors, measured 1.3e-3 here (4e-5 relative); the
    # energy itself moves by 0.066 between spacing 0.25 and 1/6.
    assert abs(e_free - default["e"]) < 1e-4 * e_free


def test_fixed_boundary_energy_depends_on_the_starting_field(skyrme, free):
    a, b = (relaxed(skyrme, "fixed", size) for size in (1.0, 2.0))
    # measured: 32.2318 (size 1) and 32.2875 (size 2): the held layers keep the
    # size-2 hedgehog's tail, which the free boundary lets go
    assert abs(a["energy"] - b["energy"]) > 1e-3 * abs(a["energy"])
    assert abs(b["energy"] - free[1]["energy"]) > 1e-3 * abs(b["energy"])


def test_free_boundary_refuses_the_continuum_form(skyrme):
    with pytest.raises(fg.ParameterError, match="consistent"):
        fg.Simulation(skyrme, grid=(16, 16), boundary="free", backend="cpu", gradient="continuum")


def test_free_boundary_energy_counts_every_site(skyrme):
    # A field that varies up to the edges: the free energy density is non-zero on
    # the outer layers (where "fixed" has none) and integrates to the energy.
    sim = fg.Simulation(skyrme, grid=(24, 20), spacing=0.3, boundary="free", backend="cpu")
    sim.set_field(fg.initial.skyrmion(size=3.0))
    dens = sim.density("energy").numpy()[0]
    assert (dens[0, :] > 0).all() and (dens[:, -1] > 0).all()
    assert abs(dens.sum() * 0.3 * 0.3 - sim.integral("energy")) < 1e-10 * sim.integral("energy")
    assert sim.lattice.boundary == "free"
    assert fg.Lattice((8, 8), boundary="free").boundary == "free"
