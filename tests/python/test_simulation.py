"""fg.Simulation from Python: relaxation, observables, history, save/load, errors."""

import math

import numpy as np
import pyarrow as pa
import pytest

import fieldgo as fg

N = 64
SPACING = 20 / (N - 1)


@pytest.fixture(scope="module")
def skyrme():
    return fg.theories.baby_skyrme()


def make(theory, **kw):
    kw.setdefault("grid", (N, N))
    kw.setdefault("spacing", SPACING)
    return fg.Simulation(theory, **kw)


def test_skyrmion_relaxes_with_unit_charge(skyrme):
    n = 128
    sim = make(skyrme, grid=(n, n), spacing=20 / (n - 1))
    sim.set_field(fg.initial.skyrmion(charge=1))
    e0 = sim.energy()
    hist = sim.minimize(tol=1e-6, max_steps=5000)
    assert isinstance(hist, pa.Table)
    assert hist.column_names == ["step", "energy", "max_grad", "charge", "resets"]
    last = hist.to_pylist()[-1]
    assert last["max_grad"] < 1e-6 and sim.last_status["converged"]
    assert sim.energy() < e0
    assert abs(abs(sim.integral("charge")) - 1) < 1e-3
    # energy density integrates to the energy (no penalty in the density)
    e = sim.density("energy")
    assert isinstance(e, fg.Field) and e.names == ("energy",)
    assert e.numpy().sum() * sim.lattice.hx**2 == pytest.approx(sim.integral("energy"), rel=1e-12)
    # the working field is a unit vector field, seen without a copy
    phi = sim.field.numpy()
    assert np.allclose((phi**2).sum(axis=0), 1.0, atol=1e-12)


def test_history_is_readable_by_polars(skyrme):
    polars = pytest.importorskip("polars")
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    sim.minimize(tol=1e-3, max_steps=300, check_every=10)
    df = polars.from_arrow(sim.history)
    assert df["step"].is_sorted() and df.height >= 2
    assert (df["energy"].diff().drop_nulls() <= 1e-9).all() or df["resets"].max() > 0


def test_field_view_aliases_go_memory(skyrme):
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    f = sim.field
    before = f.numpy().copy()
    sim.minimize(tol=1e-12, max_steps=5)
    assert not np.array_equal(before, f.numpy())  # the same view sees the flow's update


def test_dynamic_parameter_change_takes_effect(skyrme):
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    e1 = sim.energy()
    sim.set_params(mass=2.0)
    e2 = sim.energy()
    potential = sim.integral("energy")  # with mass 2
    assert e2 > e1
    assert potential == pytest.approx(e2, rel=1e-2)  # differs from E only by the small doubler penalty
    with pytest.raises(fg.ParameterError, match="unknown"):
        sim.set_params(massive=1.0)
    with pytest.raises(fg.ParameterError, match="finite"):
        sim.set_params(kappa=math.nan)


def test_threads_give_bit_identical_results(skyrme):
    out = []
    for threads in (1, 2):
        sim = make(skyrme, threads=threads)
        sim.set_field(fg.initial.skyrmion(charge=1))
        sim.minimize(tol=1e-12, max_steps=60)
        out.append((sim.energy(), sim.field.numpy().copy()))
    assert out[0][0] == out[1][0]
    assert np.array_equal(out[0][1], out[1][1])


def test_save_load_resume_is_bit_identical(skyrme, tmp_path):
    settings = dict(tol=1e-12, max_steps=400, check_every=20)
    ref = make(skyrme)
    ref.set_field(fg.initial.skyrmion(charge=1))
    ref.minimize(**settings)

    # the same run, stopped after its first chunk, saved, loaded and resumed
    b = make(skyrme)
    b.set_field(fg.initial.skyrmion(charge=1))

    class Stop(Exception):
        pass

    def stop(sim, status):
        raise Stop(status["step"])

    with pytest.raises(Stop) as stopped:
        b.minimize(callback=stop, **settings)
    assert 0 < stopped.value.args[0] < 400
    path = tmp_path / "run.arrow"
    b.save(path)
    c = fg.load(path)
    assert c.energy() == b.energy()
    assert np.array_equal(c.field.numpy(), b.field.numpy())
    assert c.history.to_pylist() == b.history.to_pylist()
    assert c.theory.name == "baby_skyrme" and c.params == skyrme.params
    c.resume()
    assert c.energy() == ref.energy()
    assert np.array_equal(c.field.numpy(), ref.field.numpy())
    assert np.array_equal(c.velocity.numpy(), ref.velocity.numpy())
    assert c.history.to_pylist() == ref.history.to_pylist()


def test_nan_initial_field_is_refused(skyrme):
    sim = make(skyrme)
    bad = np.zeros((3, N, N))
    bad[2] = 1.0
    bad[0, 5, 7] = np.nan
    with pytest.raises(fg.Error, match="(?i)nan|finite"):
        sim.set_field(bad)


def test_divergence_names_the_step_and_keeps_the_last_good_field():
    # Unconstrained, a dt far beyond the stability limit blows up within steps.
    sim = fg.Simulation(fg.theories.abelian_higgs(), grid=(32, 32), spacing=0.4)
    sim.set_field(fg.initial.vortex())
    with pytest.raises(fg.DivergenceError, match="step.*stable only for dt <") as info:
        sim.minimize(tol=1e-12, max_steps=2000, dt=5.0, check_every=5)
    assert isinstance(info.value, FloatingPointError)
    phi = sim.field.numpy()
    assert np.isfinite(phi).all()
    assert np.isfinite(sim.energy())
    _ = sim.history  # readable


def test_unstable_dt_under_a_constraint_is_refused_before_any_step(skyrme):
    # On the sphere such a flow cannot blow up (the projection keeps the field
    # finite): it would churn to max_steps. It is refused with the limit instead.
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    with pytest.raises(fg.ParameterError, match="stability limit.*stable only for dt <"):
        sim.minimize(tol=1e-6, dt=5.0)
    sim.minimize(tol=1e-6, max_steps=5)  # the default dt still runs


def wall():
    """A constant force F up to a wall at L, where the gradient turns NaN (eps = 0)."""
    th = fg.Theory("wall", fields=["phi"], params={"F": 1.0, "L": 1.0, "eps": 0.0})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.phi**2 + s.dy.phi**2) - p.F * s.phi.phi + p.eps * fg.sqrt(p.L - s.phi.phi)

    return th


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_divergence_in_the_last_rk4_stage_is_named_and_keeps_the_field(backend):
    # From rest, stage 3 evaluates at phi + dt^2 F / 4 and stage 4 at phi + dt^2 F / 2:
    # starting 3/8 dt^2 F below the wall, only stage 4 crosses it, at step 0. On the
    # GPU the step is the first of a two-step graph, whose second step must not run
    # (it would report stage 2, or overwrite the buffers of the last good field).
    if backend == "cuda" and not fg.devices()["cuda"]["available"]:
        pytest.skip("no usable GPU")
    dt = 0.1
    phi0 = np.full((32, 32), 1.0 - 0.375 * dt * dt)
    sim = fg.Simulation(wall(), grid=(32, 32), spacing=0.5, boundary="periodic", backend=backend)
    sim.set_field(phi0)
    with pytest.raises(fg.DivergenceError, match=r"step 0 \(RK4 stage 4.*site \(0, 0\)"):
        sim.minimize(tol=1e-12, max_steps=10, dt=dt, progress=False)
    assert np.array_equal(sim.field.numpy()[0], phi0)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_an_energy_that_overflows_while_the_field_is_finite_is_named(backend):
    # phi = 1e80: the gradient 4 phi^3 = 4e240 is finite, the energy phi^4 is not.
    if backend == "cuda" and not fg.devices()["cuda"]["available"]:
        pytest.skip("no usable GPU")
    th = fg.Theory("quartic", fields=["phi"], params={"a": 1.0})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.phi**2 + s.dy.phi**2) + p.a * s.phi.phi**4

    phi0 = np.full((16, 16), 1e80)
    sim = fg.Simulation(th, grid=(16, 16), spacing=0.5, boundary="periodic", backend=backend)
    sim.set_field(phi0)
    with pytest.raises(
        fg.DivergenceError, match=r"step 0 \(RK4 stage 1.*energy is not finite while the field and its gradient are"
    ):
        sim.minimize(tol=1e-12, max_steps=10, dt=0.1, progress=False)
    assert np.array_equal(sim.field.numpy()[0], phi0)


@pytest.mark.parametrize(
    "value, error",
    [
        (np.zeros((2, N, N)), fg.ShapeError),
        (np.zeros((3, N, N + 1)), fg.ShapeError),
        (lambda x, y: (x, y), fg.ShapeError),
        (np.array([["a"]]), fg.ShapeError),
    ],
)
def test_bad_initial_fields(skyrme, value, error):
    sim = make(skyrme)
    with pytest.raises(error):
        sim.set_field(value)


def test_bad_simulation_arguments(skyrme):
    with pytest.raises(fg.BackendError, match="backend"):
        make(skyrme, backend="tpu")
    with pytest.raises(fg.LatticeError):
        make(skyrme, spacing=-1.0)
    with pytest.raises(fg.LatticeError, match="5 x 5"):
        make(skyrme, grid=(4, 64))
    with pytest.raises(fg.ParameterError, match="gradient"):
        make(skyrme, gradient="upwind")
    with pytest.raises(fg.SpecError):
        fg.Simulation(object(), grid=(N, N))
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    for kw, match in (
        (dict(method="newton"), "method"),
        (dict(arrest="never"), "arrest"),
        (dict(tol=math.nan), "tol"),
        (dict(tol=-1.0), "tol"),
        (dict(max_steps=0), "max_steps"),
        (dict(dt=-0.1), "dt"),
    ):
        with pytest.raises(fg.ParameterError, match=match):
            sim.minimize(**kw)
    with pytest.raises(fg.ParameterError, match="density"):
        sim.integral("baryon")


def test_closed_simulation_raises(skyrme):
    sim = make(skyrme)
    sim.close()
    with pytest.raises(fg.ReleasedError):
        sim.energy()


def test_vortex_relaxes_towards_pi():
    ah = fg.theories.abelian_higgs()
    n = 48
    sim = fg.Simulation(ah, grid=(n, n), spacing=16 / (n - 1))
    sim.set_field(fg.initial.vortex(winding=1))
    sim.minimize(tol=1e-5, max_steps=20_000)
    # coarse lattice: within a few per cent of the Bogomolny bound pi, above -O(h^4) error
    assert sim.energy() / math.pi == pytest.approx(1.0, abs=0.02)
    assert sim.integral("vortex_number") == pytest.approx(1.0, abs=0.02)


def test_devices_and_backend_choice(skyrme):
    info = fg.devices()
    assert info["cpu"]["available"] and info["cpu"]["threads"] >= 1
    sim = make(skyrme, backend="auto")
    if info["cuda"]["available"]:
        assert sim.backend == "cuda"
    else:
        assert sim.backend == "cpu"
        assert info["cuda"]["reason"] in sim.describe()["backend_note"]
        with pytest.raises(fg.BackendError, match="CUDA"):
            make(skyrme, backend="cuda")


def test_describe_reports_the_compile():
    # A theory no cache has seen (a random coefficient in its source) compiles
    # once; a second simulation of it loads the cached object, and says so.
    k = float(np.random.default_rng().uniform(1, 2))
    th = fg.Theory("fresh_well", fields=["phi"], params={"lam": 1.0})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.phi**2 + s.dy.phi**2) + k * p.lam * (1 - s.phi.phi**2) ** 2

    first = make(th, backend="cpu").describe()
    again = make(th, backend="cpu").describe()
    assert first["compile_cached"] is False and again["compile_cached"] is True
    assert 0 < again["compile_seconds"] < first["compile_seconds"] < 120


def phi4():
    """A real scalar with a double well: e = 1/2 |grad phi|^2 + 1/4 (1 - phi^2)^2."""
    th = fg.Theory("phi4", fields=["phi"], params={"lam": 1.0})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.phi**2 + s.dy.phi**2) + 0.25 * p.lam * (1 - s.phi.phi**2) ** 2

    return th


def _wall_tension(h, lx=25.6, ny=8):
    nx = int(round(lx / h))
    sim = fg.Simulation(phi4(), grid=(nx, ny), spacing=h, boundary="periodic")
    sim.set_field(lambda x, y: np.cos(2 * np.pi * x / lx))  # one component: a bare array
    sim.minimize(tol=1e-10, max_steps=20_000)
    assert sim.last_status["converged"]
    return sim.energy() / (2 * ny * h), sim


def test_domain_wall_tension_is_analytic_to_fourth_order():
    # A kink phi = tanh(x / sqrt 2) has tension 2 sqrt(2) / 3 per unit length. On a
    # periodic lattice: a wall and an antiwall half the box apart (overlap ~ e^{-sqrt2 d}
    # ~ 1e-8, far below the discretisation error). Measured: relative error -4.6e-4 at
    # h = 0.4, -3.0e-5 at 0.2, -2.1e-6 at 0.1 (ratios 15.3, 14.7).
    exact = 2 * math.sqrt(2) / 3
    coarse, _ = _wall_tension(0.4)
    fine, sim = _wall_tension(0.2)
    assert abs(fine / exact - 1) < 5e-5
    assert abs(coarse / exact - 1) / abs(fine / exact - 1) >= 12  # fourth order
    x = sim.lattice.x
    wall = np.abs(x + 6.4) < 3  # around the wall at x = -lx/4, where phi rises
    assert np.abs(sim.field.numpy()[0, 4][wall] - np.tanh((x[wall] + 6.4) / math.sqrt(2))).max() < 1e-4


def test_one_component_fields_can_be_given_bare():
    sim = fg.Simulation(phi4(), grid=(16, 12), spacing=0.5)
    sim.set_field(np.ones((12, 16)))
    assert sim.field.numpy().shape == (1, 12, 16)
    sim.set_field(lambda x, y: 0.5)
    assert (sim.field.numpy() == 0.5).all()


def test_history_reads_into_pandas(skyrme):
    pd = pytest.importorskip("pandas")
    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    df = sim.minimize(tol=1e-3, max_steps=200, check_every=20).to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["step", "energy", "max_grad", "charge", "resets"]
    assert df["step"].is_monotonic_increasing


def test_a_cancel_that_arrives_between_runs_does_not_stop_the_next_one(skyrme):
    from fieldgo.runtime.bridge import go

    sim = make(skyrme)
    sim.set_field(fg.initial.skyrmion(charge=1))
    sim.minimize(tol=1e-3, max_steps=20)
    go.SimCancel(sim._handle)  # as a Ctrl-C landing just after a chunk ended
    sim.minimize(tol=1e-3, max_steps=20)
    assert sim.last_status["step"] > 0


def test_history_over_calls_is_exported_once_per_flow(skyrme, tmp_path, monkeypatch):
    """A flow's history is exported when its run ends; the next minimize (and
    sim.history) reuse that table while the flow has as many rows, and export it
    again when the flow has moved on (resume) or ended (a field change). Every
    table equals a fresh export of the same moment."""
    from fieldgo.runtime import simulation

    exports = []
    real = simulation.go.SimHistory

    def counted(h, start):
        exports.append(start)
        return real(h, start)

    sim = make(skyrme, grid=(24, 24), spacing=0.5)
    sim.set_field(fg.initial.skyrmion(charge=1))
    monkeypatch.setattr(simulation.go, "SimHistory", counted)
    runs = [sim.minimize(tol=1e-300, max_steps=k, check_every=1) for k in (3, 2, 4)]
    assert len(exports) == 3  # one per call
    assert sim.history.equals(pa.concat_tables(runs)) and len(exports) == 3
    assert sim._kept_flow_history().equals(sim._flow_history())

    sim.minimize(tol=1e-300, max_steps=2, check_every=1)
    sim.resume()  # a finished flow: nothing, the same rows
    assert sim._kept_flow_history().equals(sim._flow_history())
    before = len(exports)
    sim.minimize(tol=1e-300, max_steps=2, check_every=1)
    assert len(exports) == before + 1

    sim.set_field(fg.initial.skyrmion(charge=1))  # the flow ends: its history is gone in Go
    assert sim._kept_flow_history().num_rows == 0 == sim._flow_history().num_rows
    sim.minimize(tol=1e-300, max_steps=3, check_every=1)
    assert sim.history.equals(pa.concat_tables(sim._past + [sim._flow_history()]))

    path = tmp_path / "flow.arrow"
    sim.save(path)
    loaded = fg.load(path)
    assert loaded._kept_flow_history().equals(loaded._flow_history())
    loaded.close()
    sim.close()
