"""First-order dynamics through Simulation.evolve: the Landau-Lifshitz-Gilbert
equation (uniform precession at gamma B, relaxation at the damping's rate, energy
conserved or dissipated on a skyrmion) and the Gross-Pitaevskii equation (a dark
soliton's speed against its depth, the norm conserved; imaginary time reaching
minimize's ground state, with and without the norm kept), a skyrmion's Thiele drift
across a field gradient, and their bad input."""

import math

import numpy as np
import pytest

import fieldgo as fg


def _zeeman(b=2.0):
    """A unit 3-vector in the uniform field b along z: H = -dE/dn = b z."""
    th = fg.Theory("zeeman", fields=["nx", "ny", "nz"], params={"b": b}, constraint=fg.UnitVector())

    @th.energy_density
    def e(s, p):
        grad = sum(s.dx[c] ** 2 + s.dy[c] ** 2 for c in ("nx", "ny", "nz"))
        return 0.5 * grad - p.b * s.phi.nz

    return th


def _gpe_line(g=1.0, w=0.0, c=1.0):
    """e = |psi'|^2/2 + w^2 x^2 |psi|^2/2 + g/2 (|psi|^2 - c)^2."""
    th = fg.Theory("gpe_line", fields=["psi_re", "psi_im"], params={"g": g, "w": w, "c": c})

    @th.energy_density
    def e(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        rho = fg.norm2(psi.value)
        return 0.5 * fg.norm2(psi.dx) + 0.5 * p.w**2 * s.x**2 * rho + 0.5 * p.g * (rho - p.c) ** 2

    return th


def _magnet(theta0, b=2.0):
    sim = fg.Simulation(_zeeman(b), grid=(8, 8), spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(lambda x, y: (math.sin(theta0) + 0 * x, 0 * x, math.cos(theta0) + 0 * x))
    return sim


@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_llg_precesses_at_gamma_b_and_relaxes_at_the_damping_rate(alpha):
    gamma, b, theta0 = 1.5, 2.0, 1.0
    sim = _magnet(theta0, b)
    ev = sim.evolve(4.0, 0.02, method="llg", gamma=gamma, alpha=alpha, record_every=5)
    h = ev.history
    t = h.column("t").to_numpy()
    mx, my, mz = (h.column(c).to_numpy() for c in ("m_x", "m_y", "m_z"))
    omega = gamma * b / (1 + alpha**2)
    phase = np.unwrap(np.arctan2(my, mx))
    assert np.polyfit(t, phase, 1)[0] == pytest.approx(omega, abs=1e-5)
    theta = 2 * np.arctan(math.tan(theta0 / 2) * np.exp(-alpha * omega * t))
    np.testing.assert_allclose(np.arccos(mz), theta, atol=1e-6)
    n = sim.field.numpy()
    assert np.abs(np.sqrt((n * n).sum(axis=0)) - 1).max() < 1e-14
    assert (h.column("kinetic").to_numpy() == 0).all()
    assert "momentum_x" not in h.column_names and ev.method == "llg"


def test_llg_on_a_skyrmion_conserves_or_dissipates_the_energy():
    """dE/dt = -alpha gamma/(1+alpha^2) |n x H|^2: conserved without damping (the
    consistent gradient is that of the energy reported), decreasing with it."""
    th = fg.theories.baby_skyrme(kappa=0.3, mass=0.3)
    for alpha in (0.0, 0.3):
        sim = fg.Simulation(th, grid=(33, 33), spacing=0.25, boundary="periodic", backend="cpu", gradient="consistent")
        sim.set_field(fg.initial.skyrmion(charge=1, size=1.2))
        e = sim.evolve(0.3, 0.002, method="llg", alpha=alpha, record_every=15).history.column("energy").to_numpy()
        if alpha == 0:
            assert abs(e[-1] - e[0]) < 1e-6 * e[0]
        else:
            assert (np.diff(e) < 0).all() and e[-1] < e[0] - 1e-4


@pytest.mark.parametrize("v", [0.3, 0.7])
def test_dark_soliton_moves_at_the_speed_its_depth_gives(v):
    """psi = i v + sqrt(1 - v^2) tanh(sqrt(1 - v^2) x): |psi|^2 dips to v^2 and the dip
    moves at v (i psi' = -psi''/2 + (|psi|^2 - 1) psi)."""
    k = math.sqrt(1 - v * v)
    sim = fg.Simulation(_gpe_line(), grid=(241,), spacing=0.125, boundary="fixed", backend="cpu")
    sim.set_field(lambda x: (k * np.tanh(k * x), v + 0 * x))
    T = 3.0
    ev = sim.evolve(T, method="gpe", record_every=1000)
    re, im = sim.field.numpy()
    rho = re**2 + im**2
    i = int(np.argmin(rho))
    a, b, c = rho[i - 1 : i + 2]
    x = sim.lattice.x[i] + 0.125 * 0.5 * (a - c) / (a - 2 * b + c)  # the parabola through the smallest three
    assert x / T == pytest.approx(v, abs=3e-4)
    assert rho.min() == pytest.approx(v * v, abs=1e-3)
    norm = ev.history.column("norm").to_numpy()
    assert abs(norm[-1] / norm[0] - 1) < 1e-7
    e = ev.history.column("energy").to_numpy()
    assert abs(e[-1] - e[0]) < 1e-7 * abs(e[0])


def test_imaginary_time_reaches_the_ground_state_minimize_finds():
    th = _gpe_line(g=1.0, w=1.0, c=2.0)

    def sim():
        s = fg.Simulation(th, grid=(81,), spacing=0.2, boundary="free", backend="cpu")
        s.set_field(lambda x: (1.2 * np.exp(-(x**2) / 6), 0 * x))
        return s

    ref = sim()
    ref.minimize(tol=1e-10)
    want = ref.field.numpy()
    assert want[0].max() > 1.0  # a condensate, not the vacuum
    free = sim()
    free.evolve(40.0, method="gpe_imaginary", keep_norm=False, snapshots=False)
    np.testing.assert_allclose(free.field.numpy(), want, atol=1e-7)
    # With the norm kept (the default) from a Gaussian of the ground state's norm.
    norm = 0.2 * (want**2).sum()
    kept = sim()
    kept.set_field(lambda x: (math.sqrt(norm / math.sqrt(math.pi)) * np.exp(-(x**2) / 2), 0 * x))
    ev = kept.evolve(40.0, method="gpe_imaginary", snapshots=False)
    np.testing.assert_allclose(ev.history.column("norm").to_numpy(), norm, rtol=1e-12)
    np.testing.assert_allclose(kept.field.numpy(), want, atol=1e-7)


def test_bad_input_is_typed_and_named():
    magnet = _magnet(0.5)
    gpe = fg.Simulation(_gpe_line(), grid=(41,), spacing=0.2, boundary="fixed", backend="cpu")
    gpe.set_field(lambda x: (np.tanh(x), 0 * x))
    sg = fg.Theory("sine_gordon", fields=["u"])

    @sg.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 1 - fg.cos(s.phi.u)

    line = fg.Simulation(sg, grid=(41,), spacing=0.2, boundary="periodic", backend="cpu")
    line.set_field(lambda x: 4 * np.arctan(np.exp(x)))
    cases = [
        (gpe, dict(method="llg"), "unit-vector theory of 3 components"),
        (line, dict(method="llg"), "unit-vector theory of 3 components"),
        (magnet, dict(method="gpe"), "complex fields"),
        (line, dict(method="gpe_imaginary"), "(name_re, name_im) pairs"),
        (magnet, dict(method="llg", alpha=-0.1), "alpha"),
        (magnet, dict(method="llg", gamma=float("nan")), "gamma"),
        (magnet, dict(method="llg", gamma=0.0), "gamma"),
        (gpe, dict(method="gpe", alpha=0.1), "parameters of method 'llg'"),
        (magnet, dict(method="llg", keep_norm=True), "keep_norm"),
        (gpe, dict(method="gpe", keep_norm=1), "keep_norm"),
        (magnet, dict(method="llg", dt=10.0), "stability limit"),
    ]
    for sim, kw, want in cases:
        with pytest.raises(fg.ParameterError) as info:
            sim.evolve(1.0, **kw)
        assert want in str(info.value), (kw, str(info.value))


def test_llg_skyrmion_drifts_across_a_field_gradient_as_thiele_says():
    """Thiele's equation: a skyrmion of charge Q pushed by a force F (here
    F = -beta M x-hat, M = int (1 - n3), from the energy term beta x (1 - n3)) moves
    perpendicular to it at |v| = gamma |F| / (4 pi |Q|) without damping (a cycloid
    about that drift, averaged out by the fit over t = 20)."""
    th = fg.Theory(
        "tilted_skyrme",
        fields=["n1", "n2", "n3"],
        params={"kappa": 1.0, "mass": 1.0, "beta": 0.0},
        constraint=fg.UnitVector(),
    )

    @th.energy_density
    def e(s, p):
        grad = 0.5 * (fg.norm2(s.dx) + fg.norm2(s.dy)) + 0.5 * p.kappa**2 * fg.norm2(fg.cross(s.dx, s.dy))
        return grad + (p.mass**2 + p.beta * s.x) * (1 - s.phi.n3)

    @th.density("charge")
    def q(s, p):
        return fg.dot(s.phi, fg.cross(s.dx, s.dy)) / (4 * fg.pi)

    @th.density("m")
    def m(s, p):
        return 1 - s.phi.n3

    sim = fg.Simulation(th, grid=(48, 48), spacing=0.25, boundary="periodic", backend="cpu", gradient="consistent")
    sim.set_field(fg.initial.skyrmion(charge=1, size=1.5))
    sim.minimize(tol=1e-6)
    Q, M = sim.integral("charge"), sim.integral("m")
    beta = 0.02
    sim.set_params(beta=beta)
    ev = sim.evolve(20.0, method="llg", record_every=20)
    X, Y = sim.lattice.meshgrid()
    w = [1 - snap[2] for snap in ev.snapshots]
    xs = [(wk * X).sum() / wk.sum() for wk in w]
    ys = [(wk * Y).sum() / wk.sum() for wk in w]
    vx, vy = np.polyfit(ev.times, xs, 1)[0], np.polyfit(ev.times, ys, 1)[0]
    want = beta * M / (4 * math.pi * abs(Q))
    assert abs(vy) == pytest.approx(want, rel=0.03)
    assert abs(vx) < 0.03 * abs(vy)
    energy = ev.history.column("energy").to_numpy()
    assert abs(energy[-1] - energy[0]) < 1e-4 * abs(energy[0])  # along an equipotential
