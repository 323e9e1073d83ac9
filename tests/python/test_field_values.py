"""What a simulation is given as its field: results that are right or refused.

A simulation with no field says so instead of relaxing or measuring zeros; a field off
the unit sphere is normalised with a warning, and a zero vector is refused by site;
complex values and functions of the wrong signature are typed errors; the skyrmion
ansatz has the charge it is asked for under the built-in densities, and fills the
chiral magnet's auxiliary potential; fg.sweep takes exactly what set_field takes and
refuses the rest before a cluster is involved."""

import warnings

import numpy as np
import pytest

import fieldgo as fg
from fieldgo.runtime.fieldvalues import ConstraintWarning

GRID = (24, 24)


def skyrme(grid=GRID, spacing=0.5):
    return fg.Simulation(fg.theories.baby_skyrme(), grid=grid, spacing=spacing, boundary="fixed")


def kink_theory():
    th = fg.Theory("kink", fields=["u"], params={"lam": 1.0})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2) + 0.25 * p.lam * (s.phi.u**2 - 1) ** 2

    return th


def kink(x, y):
    return np.tanh(x)  # one component, returned bare


# --- no field set --------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.minimize(max_steps=10),
        lambda s: s.energy(),
        lambda s: s.integral("charge"),
        lambda s: s.density("charge"),
    ],
    ids=["minimize", "energy", "integral", "density"],
)
def test_no_field_is_a_typed_error_naming_set_field(call):
    with skyrme() as sim:
        with pytest.raises(fg.ParameterError, match=r"set_field"):
            call(sim)
        sim.set_field(fg.initial.skyrmion())
        call(sim)  # the same call works once a field is set


def test_a_loaded_simulation_has_its_saved_field(tmp_path):
    with skyrme() as sim:
        sim.set_field(fg.initial.skyrmion())
        sim.save(tmp_path / "s.arrow")
        e = sim.energy()
    back = fg.load(tmp_path / "s.arrow")
    try:
        assert back.energy() == e
    finally:
        back.close()


def test_writing_through_the_field_view_counts_as_setting_it():
    with skyrme() as sim:
        if sim.backend != "cpu":
            pytest.skip("the writable view is the CPU backend's")
        view = sim.field.numpy()
        view[:] = fg.initial.skyrmion().components(["n1", "n2", "n3"], (), *sim.lattice.meshgrid())
        assert sim.energy() > 0


# --- the unit-vector constraint ----------------------------------------------------------


def test_zero_vector_is_refused_naming_the_site():
    with skyrme() as sim:
        f = np.array(fg.initial.skyrmion().components(sim.theory.fields, (), *sim.lattice.meshgrid()))
        f[:, 5, 7] = 0.0
        with pytest.raises(fg.ParameterError, match=r"\(i, j\) = \(7, 5\)"):
            sim.set_field(f)


def test_off_sphere_field_is_normalised_everywhere_with_a_warning():
    with skyrme() as sim:
        f = 2.0 * np.array(fg.initial.skyrmion().components(sim.theory.fields, (), *sim.lattice.meshgrid()))
        with pytest.warns(ConstraintWarning, match=r"\|\(n1, n2, n3\)\| is 2"):
            sim.set_field(f)
        n = sim.field.numpy()
        # held boundary sites included: the engine alone left them at |n| = 2
        assert np.allclose(np.sum(n * n, axis=0), 1.0, atol=1e-14)
        e = sim.energy()
        sim.set_field(f / 2)
        assert sim.energy() == pytest.approx(e, rel=1e-13)


def test_unit_field_sets_silently():
    with skyrme() as sim, warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.set_field(fg.initial.skyrmion())


# --- complex values and function signatures ---------------------------------------------------


def test_complex_array_is_refused():
    with fg.Simulation(fg.theories.bose_einstein_condensate(), grid=GRID, spacing=0.5) as sim:
        psi = np.ones((2, *sim.lattice.shape), dtype=complex)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # not numpy's ComplexWarning: fieldgo's own error
            with pytest.raises(fg.LayoutError, match="complex.*psi_re, psi_im"):
                sim.set_field(psi)
            with pytest.raises(fg.LayoutError, match="complex"):
                sim.set_field(lambda x, y: (x + 1j * y, 0 * x))


def test_function_of_the_wrong_signature_is_named():
    def profile(r):
        return np.tanh(r)

    with fg.Simulation(kink_theory(), grid=GRID, spacing=0.5) as sim:
        with pytest.raises(fg.ParameterError, match=r"profile\(r\) cannot be called as f\(x, y\)"):
            sim.set_field(profile)


def test_type_error_inside_a_function_stays_the_users():
    def broken(x, y):
        return len(3)

    with fg.Simulation(kink_theory(), grid=GRID, spacing=0.5) as sim:
        with pytest.raises(TypeError, match="len") as info:
            sim.set_field(broken)
        assert not isinstance(info.value, fg.Error)


# --- the skyrmion ansatz -------------------------------------------------------------------


@pytest.mark.parametrize("ansatz", ["bloch", "neel", "anti"])
@pytest.mark.parametrize("charge", [1, -1, 2])
def test_skyrmion_has_the_charge_asked_for(charge, ansatz):
    with skyrme(grid=(128, 128), spacing=0.1) as sim:
        sim.set_field(fg.initial.skyrmion(charge=charge, ansatz=ansatz))
        assert sim.integral("charge") == pytest.approx(charge, abs=0.01 * abs(charge))


def test_skyrmion_in_the_chiral_magnet_fills_psi_and_has_its_charge():
    with fg.Simulation(fg.theories.chiral_magnet(), grid=(64, 64), spacing=0.2) as sim:
        sim.set_field(fg.initial.skyrmion(charge=1))
        f = sim.field.numpy()
        assert f.shape[0] == 4 and np.all(f[3] == 0.0)
        assert sim.integral("skyrmion_number") == pytest.approx(1.0, abs=0.01)


def test_skyrmion_refuses_a_theory_of_another_layout():
    with fg.Simulation(fg.theories.abelian_higgs(), grid=GRID, spacing=0.5) as sim:
        with pytest.raises(fg.ShapeError, match="skyrmion.*psi_re"):
            sim.set_field(fg.initial.skyrmion())


# --- sweeps take what set_field takes ----------------------------------------------------------


def test_sweep_refuses_a_bad_initial_before_using_the_cluster(tmp_path):
    # the address is never reached: the check runs on the client first
    for initial, error in (
        (fg.initial.skyrmion(), fg.ShapeError),
        (lambda r: r, fg.ParameterError),
        (np.zeros((4, 16, 16), complex), fg.LayoutError),
    ):
        with pytest.raises(error):
            fg.sweep(
                fg.theories.abelian_higgs(),
                [{"q": 1.0}],
                grid=(16, 16),
                initial=initial,
                out=tmp_path,
                client="tcp://127.0.0.1:9",
            )
    assert not (tmp_path / "results.parquet").exists()


def test_sweep_payload_is_set_fields_array():
    from fieldgo.sweep import points

    th = kink_theory()
    lat = fg.Lattice((40, 32), 0.25)
    arr, label, _ = points.initial_payload(kink, lat, th.spec)
    assert arr.shape == (1, 32, 40) and label.startswith("kink(x, y)")
    with fg.Simulation(th, grid=(40, 32), spacing=0.25) as sim:
        sim.set_field(kink)
        assert np.array_equal(sim.field.numpy(), arr)
