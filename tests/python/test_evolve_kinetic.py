"""A kinetic density other than |v|^2/2 (@theory.kinetic_density): the Euler-Lagrange
equation of L = K - e solved for the acceleration site by site, its conserved energy
and momentum, and what it refuses."""

import math
from pathlib import Path

import numpy as np
import pytest

import fieldgo as fg
from fieldgo import DivergenceError, ParameterError, TraceError

HERE = Path(__file__).resolve()


def line_of(marker: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), start=1):
        if f"# <-- {marker}" in text:
            return i
    raise AssertionError(marker)


def _metric_line(c=1.0):
    """A line whose kinetic energy has a field-dependent metric, K = e^(2 c u) u'^2 / 2.
    On a uniform field (no gradient energy) every site follows
    d/dt (e^(2cu) u') = c e^(2cu) u'^2, i.e. u'' = -c u'^2: u = u0 + ln(1 + c v0 t) / c."""
    th = fg.Theory("metric_line", fields=["u"], params={"c": c})

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2

    @th.kinetic_density
    def k(s, v, p):
        return 0.5 * fg.exp(2 * p.c * s.phi.u) * v.phi.u**2

    return th


def test_a_field_dependent_metric_follows_the_exact_motion_at_fourth_order():
    """The momentum's time derivative (dM/dt v, the term a constant mass lacks) is what
    turns e^(2cu) u'' into u'' = -c u'^2; RK4's error falls 16-fold per halving of dt,
    and the energy K (the whole of it here) is conserved to that order."""
    u0, v0, c, T = 0.3, 0.8, 0.7, 2.0
    exact = u0 + math.log(1 + c * v0 * T) / c
    errors, drifts = [], []
    for dt in (0.1, 0.05, 0.025):
        sim = fg.Simulation(_metric_line(c), grid=(8,), spacing=0.5, boundary="periodic", backend="cpu")
        sim.set_field(np.full((1, 8), u0))
        sim.set_velocity(np.full((1, 8), v0))
        h = sim.evolve(T, dt=dt).history
        errors.append(np.abs(sim.field.numpy()[0] - exact).max())
        energy = h.column("energy").to_numpy()
        assert energy[0] == pytest.approx(8 * 0.5 * 0.5 * math.exp(2 * c * u0) * v0**2, rel=1e-14)
        assert h.column("kinetic").to_numpy()[0] == energy[0]
        drifts.append(abs(energy[-1] / energy[0] - 1))
    assert errors[0] < 1e-5
    for a, b in zip(errors, errors[1:]):
        assert 13 < a / b < 20, errors
    assert drifts[1] < drifts[0] / 10 and drifts[2] < 1e-8, drifts


def _heavy_wave(m):
    th = fg.Theory("heavy_wave", fields=["u"], params={"m": m})

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2

    @th.kinetic_density
    def k(s, v, p):
        return 0.5 * p.m**2 * v.phi.u**2

    return th


def test_a_constant_mass_slows_the_wave_and_carries_the_momentum_m_squared_v():
    """K = m^2 u'^2 / 2: waves travel at 1/m, u = sin(x - t/m); the momentum is
    P = -integral of (m^2 u') u_x = m pi over a period (the velocity alone would give
    pi / m)."""
    m, n, T = 2.0, 128, 1.5
    sim = fg.Simulation(_heavy_wave(m), grid=(n,), spacing=2 * np.pi / n, boundary="periodic", backend="cpu")
    (x,) = sim.lattice.meshgrid()
    sim.set_field(np.sin(x)[None])
    sim.set_velocity(-np.cos(x)[None] / m)
    h = sim.evolve(T, dt=0.01).history
    assert np.abs(sim.field.numpy()[0] - np.sin(x - T / m)).max() < 1e-7
    momentum = h.column("momentum_x").to_numpy()
    assert momentum[0] == pytest.approx(m * np.pi, rel=1e-6)  # the stencil's h^4 error
    assert np.ptp(momentum) < 1e-9 * m * np.pi
    assert h.column("kinetic").to_numpy()[0] == pytest.approx(np.pi / 2, rel=1e-12)


def _relativistic_baby_skyrme():
    """The Baby Skyrme model with the kinetic term of its Lorentz-invariant Lagrangian:
    the Skyrme term's time derivatives, K = |n'|^2/2 + (kappa^2/2)(|n' x n_x|^2 + |n' x n_y|^2)."""
    th = fg.theories.baby_skyrme()

    @th.kinetic_density
    def k(s, v, p):
        return 0.5 * fg.norm2(v.phi) + 0.5 * p.kappa**2 * (
            fg.norm2(fg.cross(v.phi, s.dx)) + fg.norm2(fg.cross(v.phi, s.dy))
        )

    return th


@pytest.fixture(scope="module")
def skyrmion(baby_skyrmion_profile):
    """The relaxed charge-1 Baby Skyrmion as a function of (x, y) and its energy E0."""
    radii, profile, energy = baby_skyrmion_profile

    def field(x, y):
        a = np.interp(np.hypot(x, y), radii, profile, right=0.0)
        phase = -np.arctan2(y, x) + np.pi / 2
        return np.sin(a) * np.cos(phase), np.sin(a) * np.sin(phase), np.cos(a)

    return field, energy


def test_a_boosted_baby_skyrmion_is_a_travelling_solution_only_with_the_skyrme_kinetic_term(skyrmion):
    """Lorentz invariance: the static Skyrmion boosted to v = 0.5 has energy gamma E0
    and moves rigidly when the kinetic term has the Skyrme term's time derivatives
    (the unit-vector constraint through the per-site bordered system). With
    |n'|^2/2 alone the energy misses v^2 gamma E4 (7%) and the shape breathes."""
    field, e0 = skyrmion
    v, T = 0.5, 4.0
    gamma = 1 / math.sqrt(1 - v * v)
    out = {}
    for name, th in (("relativistic", _relativistic_baby_skyrme()), ("plain", fg.theories.baby_skyrme())):
        sim = fg.Simulation(th, grid=(113, 65), spacing=0.25, origin=(-14, -8), backend="cpu")
        phi, vel = fg.initial.boost(field, v, centre=-3.0)
        sim.set_field(phi)
        sim.set_velocity(vel)
        h = sim.evolve(T, dt=0.02, record_every=50).history
        X, Y = sim.lattice.meshgrid()
        there = np.array(fg.initial.boost(field, v, centre=-3.0 + v * T)[0](X, Y))
        n = sim.field.numpy()
        assert np.abs(np.einsum("cji,cji->ji", n, n) - 1).max() < 1e-12
        out[name] = (h.column("energy").to_numpy(), np.abs(n - there).max(), h.column("charge").to_numpy())
    energy, shape, charge = out["relativistic"]
    assert energy[0] == pytest.approx(gamma * e0, rel=1e-3)
    assert abs(energy[-1] / energy[0] - 1) < 3e-4
    assert shape < 0.02
    assert np.abs(charge - 1).max() < 5e-3 and np.ptp(charge) < 1e-4  # the lattice's charge, kept
    plain_energy, plain_shape, _ = out["plain"]
    assert abs(plain_energy[0] / (gamma * e0) - 1) > 0.05
    assert plain_shape > 5 * shape


def test_the_built_in_relativistic_baby_skyrme_model_is_the_same_dynamics():
    user = _relativistic_baby_skyrme()
    built_in = fg.theories.baby_skyrme(relativistic=True)
    assert built_in.has_kinetic_density and not fg.theories.baby_skyrme().has_kinetic_density
    fields = []
    for th in (user, built_in):
        sim = fg.Simulation(th, grid=(32, 28), spacing=0.3, backend="cpu")
        sim.set_field(fg.initial.skyrmion(charge=1))
        X, Y = sim.lattice.meshgrid()
        sim.set_velocity(np.array([0.3 * np.exp(-(X**2 + Y**2)), 0 * X, 0 * X]))
        sim.evolve(0.2, dt=0.02)
        fields.append(sim.field.numpy().copy())
    assert np.array_equal(fields[0], fields[1])


def test_the_skyrme_models_relativistic_kinetic_term_gives_a_boosted_skyrmion_gamma_e():
    """fg.theories.skyrme(relativistic=True): the hedgehog (the 1D solver's profile,
    m = 1) boosted to v = 0.6 has energy gamma E0 to the lattice's accuracy (0.3% at
    h = 0.2, 1.4% at h = 0.3), where |phi'|^2/2 alone misses 18%; the sextic term's
    time derivatives are c6 pi^4 |B_i|^2, which for a boosted static field is v^2 times
    its e6 (to 2% at h = 0.2, 8% at h = 0.3)."""
    v = 0.6
    gamma = 1 / math.sqrt(1 - v * v)
    still = fg.initial.hedgehog(mass=1.0, profile="optimal")
    phi, vel = fg.initial.boost(still, v)
    errors = {}
    for h in (0.3, 0.2):
        n, m = int(14 / h) + 1, int(11 / h) + 1
        for rel in (True, False):
            sim = fg.Simulation(
                fg.theories.skyrme(mass=1.0, relativistic=rel), grid=(n, m, m), spacing=h, backend="cpu"
            )
            sim.set_field(still)
            e0 = sim.energy()
            sim.set_field(phi)
            sim.set_velocity(vel)
            energy = sim.evolve(0.01, dt=0.01).history.column("energy").to_numpy()[0]
            errors[h, rel] = energy / (gamma * e0) - 1
    assert abs(errors[0.2, True]) < 5e-3 and abs(errors[0.2, True]) < abs(errors[0.3, True]) / 3, errors
    assert abs(errors[0.2, False]) > 0.1, errors
    kinetic, n = {}, 36
    for c6 in (1.0, 0.0):
        sim = fg.Simulation(
            fg.theories.skyrme(mass=1.0, c6=c6, sextic=True, relativistic=True),
            grid=(n, n, n),
            spacing=0.2,
            backend="cpu",
        )
        sim.set_field(phi)
        sim.set_velocity(vel)
        if c6:
            e6 = sim.integral("e6")
        kinetic[c6] = sim.evolve(0.01, dt=0.01).history.column("kinetic").to_numpy()[0]
    assert (kinetic[1.0] - kinetic[0.0]) / (v * v * e6) == pytest.approx(1, abs=0.03)


def test_a_mass_matrix_singular_off_the_sphere_gives_the_spheres_dynamics():
    """K = |n x n'|^2/2 equals |n'|^2/2 on the sphere, but its M = |n|^2 - n n^T is
    singular along n: the bordered system needs M on the tangent space only. Its motion
    is the plain constrained RK4's to the schemes' order (the stages leave the sphere by
    O(dt^2), where the two differ): 2.6e-7 and 1.6e-8 apart at dt = 0.02 and 0.01."""

    def run(kinetic, dt):
        th = fg.theories.baby_skyrme()
        if kinetic:

            @th.kinetic_density
            def k(s, v, p):
                return 0.5 * fg.norm2(fg.cross(s.phi, v.phi))

        sim = fg.Simulation(th, grid=(40, 36), spacing=0.3, backend="cpu")
        sim.set_field(fg.initial.skyrmion(charge=1))
        X, Y = sim.lattice.meshgrid()
        n = sim.field.numpy()
        spin = 0.4 * np.exp(-(X**2 + Y**2) / 4)
        sim.set_velocity(np.array([-spin * n[1] + 0.1 * np.exp(-(X**2)), spin * n[0], 0 * X]))
        sim.evolve(1.0, dt=dt)
        return sim.field.numpy().copy()

    coarse, fine = (np.abs(run(True, dt) - run(False, dt)).max() for dt in (0.02, 0.01))
    assert coarse < 1e-6 and 12 < coarse / fine < 20, (coarse, fine)


def test_rk45_takes_the_kinetic_density_too():
    u0, v0, c, T = 0.3, 0.8, 0.7, 2.0
    sim = fg.Simulation(_metric_line(c), grid=(8,), spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(np.full((1, 8), u0))
    sim.set_velocity(np.full((1, 8), v0))
    sim.evolve(T, method="rk45", rtol=1e-10, atol=1e-12)
    assert np.abs(sim.field.numpy()[0] - (u0 + math.log(1 + c * v0 * T) / c)).max() < 1e-8


def test_a_saved_run_continues_with_its_kinetic_density(tmp_path):
    """The kinetic unit travels in the saved theory's point source: a loaded run
    continues the motion bit for bit, its history's kinetic energy the integral of K."""
    sim = fg.Simulation(_heavy_wave(1.5), grid=(64,), spacing=2 * np.pi / 64, boundary="periodic", backend="cpu")
    (x,) = sim.lattice.meshgrid()
    sim.set_field(np.sin(x)[None])
    sim.set_velocity(np.cos(2 * x)[None])
    sim.evolve(0.3, dt=0.01)
    sim.save(tmp_path / "heavy.arrow")
    back = fg.load(tmp_path / "heavy.arrow", backend="cpu")
    assert back.theory.has_kinetic_density
    a, b = sim.evolve(0.3, dt=0.01), back.evolve(0.3, dt=0.01)
    assert a.history.equals(b.history)
    assert np.array_equal(sim.field.numpy(), back.field.numpy())
    kinetic = 0.5 * 1.5**2 * np.sum(sim.velocity.numpy() ** 2) * sim.lattice.spacing[0]
    assert a.history.column("kinetic").to_numpy()[-1] == pytest.approx(kinetic, rel=1e-12)


def test_leapfrog_and_the_free_boundary_are_refused():
    sim = fg.Simulation(_metric_line(), grid=(8,), spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(np.full((1, 8), 0.1))
    with pytest.raises(ParameterError, match="leapfrog"):
        sim.evolve(1.0, dt=0.1, method="leapfrog")
    free = fg.Simulation(_metric_line(), grid=(16,), spacing=0.5, boundary="free", backend="cpu")
    free.set_field(np.full((1, 16), 0.1))
    with pytest.raises(ParameterError, match="free boundary"):
        free.evolve(1.0, dt=0.1)


def test_a_mass_matrix_that_is_not_positive_names_the_site_and_keeps_the_field():
    """K = (1 - u^2) u'^2 / 2 loses its positivity where |u| > 1: the evolution stops
    with a DivergenceError naming the site, the last recorded field kept."""
    th = fg.Theory("bad_metric", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2

    @th.kinetic_density
    def k(s, v, p):
        return 0.5 * (1 - s.phi.u**2) * v.phi.u**2

    sim = fg.Simulation(th, grid=(16,), spacing=0.5, boundary="periodic", backend="cpu")
    start = np.zeros((1, 16))
    start[0, 5] = 1.5
    sim.set_field(start)
    with pytest.raises(DivergenceError, match=r"mass matrix .* not positive definite at site \(5\)"):
        sim.evolve(1.0, dt=0.1)
    assert np.array_equal(sim.field.numpy(), start)


def _trace_with(fn):
    th = fg.theories.baby_skyrme()
    th.kinetic_density(fn)
    return th.source


def _check(exc_info, marker, *words):
    err = exc_info.value
    assert f"{HERE}:{line_of(marker)}" in str(err), str(err)
    for w in words:
        assert w in str(err), str(err)


def test_kinetic_densities_that_are_not_quadratic_forms_name_the_def_line():
    def quartic(s, v, p):  # <-- quartic
        return fg.norm2(v.phi) ** 2

    with pytest.raises(TraceError) as ei:
        _trace_with(quartic)
    _check(ei, "quartic", "quadratic form in the velocities")

    def linear(s, v, p):  # <-- linear
        return 0.5 * fg.norm2(v.phi) + v.phi.n1

    with pytest.raises(TraceError) as ei:
        _trace_with(linear)
    _check(ei, "linear", "quadratic form")

    def inside(s, v, p):  # <-- inside
        return fg.cos(v.phi.n1)

    with pytest.raises(TraceError) as ei:
        _trace_with(inside)
    _check(ei, "inside", "quadratic form")


def test_a_kinetic_density_reading_velocity_derivatives_or_none_names_the_def_line():
    def gradients(s, v, p):  # <-- gradients
        return 0.5 * fg.norm2(v.phi) + fg.norm2(v.dx)

    with pytest.raises(TraceError) as ei:
        _trace_with(gradients)
    _check(ei, "gradients", "not their derivatives")

    def curvature(s, v, p):
        return 0.5 * fg.norm2(v.phi) * (1 + s.dxx.n1**2)  # <-- curvature

    with pytest.raises(TraceError) as ei:
        _trace_with(curvature)
    _check(ei, "curvature", "second derivative s.dxx")

    def static(s, v, p):  # <-- static
        return fg.norm2(s.dx)

    with pytest.raises(TraceError) as ei:
        _trace_with(static)
    _check(ei, "static", "must read the velocities")

    with pytest.raises(TraceError, match=r"\(s, v, p\)"):
        fg.theories.baby_skyrme().kinetic_density(lambda s, p: s.phi.n1)


def test_the_spec_and_the_source_carry_the_kinetic_unit():
    th = _relativistic_baby_skyrme()
    assert th.has_kinetic_density and th.spec["kinetic_density"] is True
    unit = fg.frontend.kinetic.extract(th.source)
    assert "#define FG_NCOMP   9" in unit  # n + n(n+1)/2 for n = 3
    assert "kinetic_density" not in fg.theories.baby_skyrme().spec
