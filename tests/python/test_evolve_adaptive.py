"""Adaptive time steps (Simulation.evolve with method="rk45", or adaptive=True with the
first-order methods): the Dormand-Prince 5(4) pair against exact solutions, its
tolerance scaling, energy conservation, records at requested times, the step floor
and bad input."""

import math

import numpy as np
import pytest

import fieldgo as fg


def _sine_gordon():
    th = fg.Theory("sine_gordon", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 1 - fg.cos(s.phi.u)

    return th


def _kink_antikink(v=0.5):
    """u = 4 arctan(sinh(g v t) / (v cosh(g x))) and its time derivative."""
    g = 1 / math.sqrt(1 - v * v)

    def u(x, t):
        return 4 * np.arctan(np.sinh(g * v * t) / (v * np.cosh(g * x)))

    def ut(x, t):
        a = np.sinh(g * v * t) / (v * np.cosh(g * x))
        return 4 / (1 + a * a) * g * np.cosh(g * v * t) / np.cosh(g * x)

    return u, ut


def _kink_antikink_line(h=0.2, **kw):
    u, ut = _kink_antikink()
    sim = fg.Simulation(
        _sine_gordon(), grid=(int(round(40 / h)) + 1,), spacing=h, boundary="periodic", backend="cpu", **kw
    )
    sim.set_field(lambda x: u(x, 0.0))
    sim.set_velocity(lambda x: ut(x, 0.0))
    return sim


def test_kink_antikink_error_falls_as_rtol_and_steps_grow_as_its_fifth_root():
    """On the exact kink-antikink (v = 0.5, h = 0.2, to t = 4): against the lattice's own
    solution (RK4 at dt = 5e-4, converged to 2e-14) the error falls tenfold per decade
    of rtol (a fifth-order solution whose steps go as rtol^(1/5)) and the steps grow by
    10^(1/5) = 1.585; at the default rtol the error against the exact solution is the
    lattice's, as with RK4."""
    T = 4.0
    ref = _kink_antikink_line()
    ref.evolve(T, 0.0005, record_every=100_000, snapshots=False)
    u_ref = ref.field.numpy()[0].copy()
    errors, steps = [], []
    for rtol in (1e-9, 1e-10, 1e-11):
        sim = _kink_antikink_line()
        ev = sim.evolve(T, method="rk45", rtol=rtol, record_every=100_000, snapshots=False)
        assert sim.time == T and ev.history.column("t").to_pylist() == [0.0, T]
        errors.append(np.abs(sim.field.numpy()[0] - u_ref).max())
        steps.append(ev.history.column("step")[-1].as_py())
        assert errors[-1] < 20 * rtol
        assert ev.history.column("rejected")[-1].as_py() <= 5
    for k in (1, 2):
        assert 6 < errors[k - 1] / errors[k] < 14, errors
        assert steps[k] / steps[k - 1] == pytest.approx(10**0.2, abs=0.12), steps

    u, _ = _kink_antikink()
    sim = _kink_antikink_line()
    ev = sim.evolve(T, method="rk45")
    err = np.abs(sim.field.numpy()[0] - u(sim.lattice.x, T)).max()
    assert err == pytest.approx(3.18e-4, rel=0.02)  # the lattice's error at h = 0.2 (RK4: 3.19e-4)
    np.testing.assert_allclose(ev[-1][0], u(sim.lattice.x, T), atol=2 * err)
    ev.history.column("dt").to_numpy()  # the controller's step at each record


def test_energy_conservation_improves_with_the_tolerance():
    """A sine-Gordon breather in the consistent form conserves the recorded energy
    exactly between steps: its drift over t = 20 is the integrator's and falls as rtol."""
    w = 0.8
    k = math.sqrt(1 - w * w)
    drifts = []
    for rtol in (1e-8, 1e-10, 1e-12):
        sim = fg.Simulation(
            _sine_gordon(), grid=(201,), spacing=0.2, boundary="periodic", backend="cpu", gradient="consistent"
        )
        sim.set_field(lambda x: 0 * x)
        sim.set_velocity(lambda x: 4 * k / np.cosh(k * x))
        ev = sim.evolve(20.0, method="rk45", rtol=rtol, record_dt=0.25, snapshots=False)
        assert ev.history.column("t").to_pylist() == [0.25 * i for i in range(81)]  # the requested times, exactly
        e = ev.history.column("energy").to_numpy()
        drifts.append(np.abs(e - e[0]).max() / e[0])
    assert drifts[0] / drifts[1] > 30 and drifts[1] / drifts[2] > 30, drifts
    assert drifts[2] < 1e-11


def test_boosted_phi4_kink_keeps_its_speed():
    """The phi^4 kink boosted to v = 0.5 moves at 0.5 and carries gamma E0 (E0 = 4/3)
    under the adaptive pair at its default tolerance."""
    th = fg.Theory("phi4_line", fields=["u"], params={"lam": 1.0})

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 0.5 * p.lam * (1 - s.phi.u**2) ** 2

    v, h, x0 = 0.5, 0.025, -2.0
    gamma = 1 / math.sqrt(1 - v * v)
    sim = fg.Simulation(th, grid=(961,), spacing=h, boundary="fixed", backend="cpu")
    phi, vel = fg.initial.boost(np.tanh, v, "x", centre=x0)
    sim.set_field(phi)
    sim.set_velocity(vel)
    x = sim.lattice.x

    def centre():
        u = sim.field.numpy()[0]
        i = int(np.nonzero((u[:-1] <= 0) & (u[1:] > 0))[0][0])
        xs, ys = x[i - 1 : i + 3], u[i - 1 : i + 3]
        roots = np.roots(np.polyfit(xs - xs[1], ys, 3)) + xs[1]
        roots = roots[np.isreal(roots)].real
        return float(roots[np.argmin(np.abs(roots - x[i]))])

    p0 = centre()
    ev = sim.evolve(6.0, method="rk45", record_dt=0.5)
    assert (centre() - p0) / 6.0 == pytest.approx(v, abs=1e-6)
    np.testing.assert_allclose(ev.history.column("energy").to_numpy(), gamma * 4 / 3, atol=1e-6)
    np.testing.assert_allclose(ev.history.column("momentum_x").to_numpy(), gamma * v * 4 / 3, atol=1e-5)
    assert ev.times.tolist() == [0.5 * i for i in range(13)]


def _zeeman():
    mag = fg.Theory("zeeman", fields=["nx", "ny", "nz"], params={"b": 2.0}, constraint=fg.UnitVector())

    @mag.energy_density
    def e(s, p):
        return 0.5 * sum(s.dx[c] ** 2 + s.dy[c] ** 2 for c in ("nx", "ny", "nz")) - p.b * s.phi.nz

    return mag


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_llg_precession_at_gamma_b(alpha):
    """A uniform magnet in B = 2 z precesses at gamma B / (1 + alpha^2) (gamma 1.5) under
    adaptive LLG, its angle to the field relaxing as tan(theta/2) = tan(theta0/2) e^(-alpha w t)."""
    gamma, b, th0 = 1.5, 2.0, 1.0
    sim = fg.Simulation(_zeeman(), grid=(8, 8), spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(lambda x, y: (math.sin(th0) + 0 * x, 0 * x, math.cos(th0) + 0 * x))
    ev = sim.evolve(4.0, method="llg", adaptive=True, gamma=gamma, alpha=alpha, rtol=1e-8, record_dt=0.05)
    h = ev.history
    t = h.column("t").to_numpy()
    assert t.tolist() == [0.05 * i for i in range(81)]
    phase = np.unwrap(np.arctan2(h.column("m_y").to_numpy(), h.column("m_x").to_numpy()))
    w = gamma * b / (1 + alpha * alpha)
    assert np.polyfit(t, phase, 1)[0] == pytest.approx(w, abs=1e-7)
    theta = 2 * np.arctan(math.tan(th0 / 2) * np.exp(-alpha * w * t))
    np.testing.assert_allclose(h.column("m_z").to_numpy(), np.cos(theta), atol=1e-7)
    assert "rejected" in h.column_names and ev.adaptive and "adaptive" in repr(ev)
    n = sim.field.numpy()
    assert np.abs((n * n).sum(axis=0) - 1).max() < 1e-14


def test_a_blow_up_stops_at_the_step_floor_naming_time_and_step():
    """u'' = u^3 (e = u'^2/2 - u^4/4, uniform u(0) = 1 at rest) blows up at
    t* = K(1/sqrt 2) = 1.8541: the controller's steps shrink with t* - t until they fall
    below dt_min; the error names the time, the field is the last accepted step's
    (finite, huge) and the history holds the records up to there."""
    th = fg.Theory("unbounded", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 - 0.25 * s.phi.u**4

    sim = fg.Simulation(th, grid=(16,), spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(lambda x: 1 + 0 * x)
    t_star = 1.854075
    with pytest.raises(fg.StepSizeError, match=r"below its floor at t=1\.854.*\(step \d+\)") as info:
        sim.evolve(3.0, method="rk45", record_dt=0.1)
    assert isinstance(info.value, fg.DivergenceError)
    assert t_star - 1e-3 < sim.time < t_star
    u = sim.field.numpy()[0]
    assert np.isfinite(u).all() and u.min() > 100
    hist = info.value.evolution.history
    assert hist.column("t").to_pylist() == pytest.approx([0.1 * i for i in range(19)])
    d = sim.describe()["evolution"]
    assert d["done"] and d["rejected"] > 0 and d["accepted"] == d["step"] > 0


def test_records_land_on_their_times_and_round_trip(tmp_path):
    """The default records fall at even times, exactly; record_every counts accepted
    steps; the file of out= keeps the int64 rejected column bit for bit; a second evolve
    continues the clock; describe() shows the controller."""
    sim = _kink_antikink_line()
    ev = sim.evolve(1.0, method="rk45", rtol=1e-9, out=tmp_path / "run.arrows")
    n = ev.history.num_rows - 1
    assert ev.times.tolist() == [k / n for k in range(n + 1)] and ev.times[-1] == 1.0
    back = fg.read_evolution(tmp_path / "run.arrows")
    assert back.history.equals(ev.history) and back.adaptive and back.method == "rk45"
    assert str(back.history.schema.field("rejected").type) == "int64"
    ev2 = sim.evolve(0.5, method="rk45", record_every=3)
    steps = ev2.history.column("step").to_pylist()
    assert all(s % 3 == 0 for s in steps[:-1]) and ev2.times[0] == 1.0 and ev2.times[-1] == 1.5
    d = sim.describe()["evolution"]
    assert d["method"] == "rk45" and d["rtol"] == 1e-6 and d["atol"] == pytest.approx(1e-9)
    assert d["accepted"] == steps[-1] and d["dt"] > 0 and d["dt_max"] >= d["dt"]
    seen = []
    sim.evolve(0.2, method="rk45", progress=False, callback=lambda s, st: seen.append(st))
    assert seen[-1]["done"] and seen[-1]["adaptive"] and seen[-1]["t_end"] == pytest.approx(1.7)
    batches = list(sim.evolve(0.2, method="rk45", record_dt=0.1, stream=True))
    assert [b.schema.metadata[b"rejected"].isdigit() for b in batches] == [True] * 3


def test_bad_tolerances_and_options_are_refused():
    sim = _kink_antikink_line()
    for name in ("rtol", "atol", "dt_min", "record_dt"):
        for bad in (0.0, -1e-6, float("nan"), float("inf"), "1e-6", True):
            with pytest.raises(fg.ParameterError, match=name):
                sim.evolve(1.0, method="rk45", **{name: bad})
    with pytest.raises(fg.ParameterError, match="rtol applies to adaptive steps"):
        sim.evolve(1.0, rtol=1e-6)
    with pytest.raises(fg.ParameterError, match="adaptive steps are method 'rk45'"):
        sim.evolve(1.0, method="leapfrog", adaptive=True)
    with pytest.raises(fg.ParameterError, match="adaptive=False"):
        sim.evolve(1.0, method="rk45", adaptive=False)
    with pytest.raises(fg.ParameterError, match="exclusive"):
        sim.evolve(1.0, method="rk45", record_every=3, record_dt=0.1)
    with pytest.raises(fg.ParameterError, match="below what float64 storage resolves"):
        sim.evolve(1.0, method="rk45", rtol=1e-16)
    with pytest.raises(fg.ParameterError, match="dt_min=0.5 must be smaller"):
        sim.evolve(1.0, 0.1, method="rk45", dt_min=0.5)
    assert sim.time == 0.0
