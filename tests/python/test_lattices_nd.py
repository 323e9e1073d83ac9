"""Lattices of one and three axes: the phi^4 wall and kink, fields constant along z,
the numpy layout, and the refusals of what these lattices do not offer yet."""

import numpy as np
import pytest

import fieldgo as fg


def _phi4(uses_z=True):
    th = fg.Theory("phi4_3d" if uses_z else "phi4_xy", fields=["u"])

    if uses_z:

        @th.energy_density
        def e(s, p):
            return 0.5 * (s.dx.u**2 + s.dy.u**2 + s.dz.u**2) + 0.5 * (1 - s.phi.u**2) ** 2

    else:

        @th.energy_density
        def e2(s, p):
            return 0.5 * (s.dx.u**2 + s.dy.u**2) + 0.5 * (1 - s.phi.u**2) ** 2

    return th


def _n(length, h):
    return int(round(length / h)) + 1


def test_phi4_wall_in_3d_has_energy_four_thirds_per_area_converging_as_h4():
    th = _phi4()
    errors = []
    for h in (0.2, 0.1):
        sim = fg.Simulation(th, grid=(_n(12, h), 6, 6), spacing=h, boundary=("fixed", "periodic", "periodic"))
        sim.set_field(lambda x, y, z: np.tanh(1.3 * x) + 0 * y + 0 * z)
        hist = sim.minimize(tol=1e-9, max_steps=20_000)
        assert hist["max_grad"][-1].as_py() < 1e-9
        errors.append(sim.energy() / (6 * h * 6 * h) - 4 / 3)
        assert sim.describe()["backend"] == "cpu"
    assert abs(errors[1]) < 2e-5
    assert abs(errors[0] / errors[1]) > 12  # fourth order: 16 for a halved spacing


def test_phi4_kink_in_1d_has_energy_four_thirds_with_both_flows():
    th = _phi4(uses_z=False)  # a planar theory on a line: dy is zero there
    # Gradient flow is slow near the minimum (its rate is the smallest eigenvalue):
    # a looser tolerance reaches the same energy to the test's accuracy.
    for method, tol in (("anf", 1e-8), ("gradient", 1e-4)):
        sim = fg.Simulation(th, grid=(_n(12, 0.1),), spacing=0.1, boundary="fixed")
        sim.set_field(lambda x: np.tanh(1.3 * x))
        sim.minimize(tol=tol, max_steps=200_000, method=method)
        assert sim.energy() == pytest.approx(4 / 3, abs=2e-5)
        assert sim.field.numpy().shape == (1, 121)


def test_field_constant_along_z_has_the_planar_energy_times_the_z_extent():
    h, n, nz = 0.25, 25, 7

    def f(x, y, *z):
        return np.tanh(x) * np.tanh(0.7 * y + 0.2 * x)

    for th in (_phi4(True), _phi4(False)):
        plane = fg.Simulation(th, grid=(n, n), spacing=h, boundary="fixed")
        plane.set_field(f)
        box = fg.Simulation(th, grid=(n, n, nz), spacing=h, boundary=("fixed", "fixed", "periodic"))
        box.set_field(f)
        assert box.energy() == pytest.approx(plane.energy() * nz * h, rel=1e-12)


def test_planar_theory_source_has_no_z_and_3d_source_declares_it():
    assert "FG_DIM" not in _phi4(False).source
    src = _phi4(True).source
    assert "#define FG_DIM     3" in src
    assert "double* de_ddz)" in src


def test_fields_are_x_fastest_views_shaped_ncomp_nz_ny_nx():
    th = _phi4()
    sim = fg.Simulation(th, grid=(7, 6, 5), spacing=(0.1, 0.2, 0.3), boundary="periodic")
    lat = sim.lattice
    assert lat.shape == (5, 6, 7) and lat.grid == (7, 6, 5) and lat.spacing == (0.1, 0.2, 0.3)
    sim.set_field(lambda x, y, z: x + 10 * y + 100 * z)
    a = sim.field.numpy()
    assert a.shape == (1, 5, 6, 7)
    X, Y, Z = lat.meshgrid()
    np.testing.assert_allclose(a[0], X + 10 * Y + 100 * Z)
    assert a.strides == (5 * 6 * 7 * 8, 6 * 7 * 8, 7 * 8, 8)
    sim.set_field(np.arange(210.0).reshape(1, 5, 6, 7))
    assert sim.field.numpy()[0, 4, 5, 6] == 209.0
    assert sim.field.to_arrow().num_rows == 210


def test_lattice_checks_the_axes():
    assert fg.Lattice((9,), 0.5).shape == (9,)
    assert fg.Lattice((9, 8, 7), 0.5).boundaries == ("fixed",) * 3
    with pytest.raises(fg.LatticeError, match="grid must be"):
        fg.Lattice((4, 4, 4, 4), 0.1)
    with pytest.raises(fg.LatticeError, match="spacing"):
        fg.Lattice((9, 8, 7), (0.1, 0.2))
    with pytest.raises(fg.LatticeError, match="free"):
        fg.Lattice((9, 8, 7), 0.1, boundary=("free", "fixed", "fixed"))


def test_refusals_name_what_is_missing():
    th = _phi4()
    grid = (8, 8, 8)
    with pytest.raises(fg.LatticeError, match="free"):
        fg.Simulation(th, grid=grid, boundary=("periodic", "free", "periodic"))
    sim = fg.Simulation(th, grid=grid, boundary="periodic")
    sim.set_field(lambda x, y, z: np.tanh(x))
    with pytest.raises(fg.ParameterError, match=r"f\(x, y, z\)"):
        sim.set_field(lambda x, y: x)
    with pytest.raises(fg.ShapeError, match="planar for now"):
        sim.set_field(fg.initial.skyrmion(charge=1))
    with pytest.raises(fg.ShapeError, match="does not fit"):
        sim.set_field(np.zeros((1, 8, 8)))
