"""precision="float32": float32 storage, float64 arithmetic. These run
without a GPU, on the CPU backend, which keeps the same float32 numbers in float64
memory (every stored value rounded); tests/python/test_gpu.py measures float32 on
the device, where the memory is float32 too.

The bound for float32 against float64 from the same start: each step rounds each
stored value once (relative 2^-24) and a relaxing flow does not amplify it, so after
n steps |phi32 - phi64| <= n * 8 * 2^-24 * max(1, |phi|) (as in test_gpu.py)."""

import warnings

import numpy as np
import pytest

import fieldgo as fg
from fieldgo import PrecisionWarning

CUDA = fg.devices()["cuda"]
U32 = 2.0**-24
# Runs that ask for an unreachable tol on purpose (a fixed number of steps) warn.
pytestmark = pytest.mark.filterwarnings("ignore::fieldgo.PrecisionWarning")


def small(n=24, **kw):
    return fg.Simulation(fg.theories.baby_skyrme(), grid=(n, n), spacing=12 / (n - 1), **kw)


def float32_values(a):
    a = np.asarray(a)
    return np.array_equal(a, a.astype(np.float32).astype(np.float64))


def test_float32_on_the_cpu_stores_float32_values():
    sim = small(backend="cpu", precision="float32")
    d = sim.describe()
    assert d["backend"] == "cpu" and d["precision"] == "float32" and sim.precision == "float32"
    assert d["epsilon"] == U32 and d["gradient_floor"] > 0
    assert "precision=float32" in repr(sim)
    init = fg.initial.skyrmion()(*sim.lattice.meshgrid())
    sim.set_field(init)
    assert float32_values(sim.field.numpy())  # set_field rounds, as an upload to float32 does
    assert not float32_values(init)
    sim.minimize(tol=1e-300, max_steps=30)
    assert float32_values(sim.field.numpy()) and float32_values(sim.velocity.numpy())
    assert float32_values(sim.density("charge").numpy())


@pytest.mark.parametrize("theory", ["baby_skyrme", "abelian_higgs"])
def test_float32_against_float64_within_the_rounding_bound(theory):
    th = getattr(fg.theories, theory)()
    n, steps = 48, 100
    runs = {}
    for prec in ("float64", "float32"):
        sim = fg.Simulation(th, grid=(n, n), spacing=12 / (n - 1), backend="cpu", precision=prec)
        sim.set_field(fg.initial.skyrmion() if theory == "baby_skyrme" else fg.initial.vortex())
        sim.minimize(tol=1e-300, max_steps=steps, dt=0.05)
        runs[prec] = (sim.field.numpy().copy(), sim.energy())
    (f64, e64), (f32, e32) = runs["float64"], runs["float32"]
    rel = np.max(np.abs(f32 - f64) / np.maximum(1.0, np.abs(f64)))
    assert 0 < rel <= steps * 8 * U32, rel
    assert abs(e32 - e64) <= 1e-5 * abs(e64)


def test_float32_relaxes_a_skyrmion_to_the_float64_energy_and_is_deterministic():
    res = {}
    for prec, threads in (("float64", None), ("float32", 1), ("float32", 2)):
        sim = fg.Simulation(
            fg.theories.baby_skyrme(), grid=(64, 64), spacing=0.25, backend="cpu", precision=prec, threads=threads
        )
        sim.set_field(fg.initial.skyrmion())
        tol = 1e-6 if prec == "float64" else 2 * sim.describe()["gradient_floor"]
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrecisionWarning)  # tol >= 2 F must not warn
            hist = sim.minimize(tol=tol, max_steps=20000)
        assert hist.column("max_grad")[-1].as_py() < tol
        res[(prec, threads)] = (sim.energy(), sim.integral("charge"), sim.field.numpy().copy())
    e64, q64, _ = res[("float64", None)]
    e32, q32, f1 = res[("float32", 1)]
    assert abs(e32 - e64) <= 1e-6 * abs(e64)
    assert abs(q32 - q64) <= 1e-6
    assert np.array_equal(f1, res[("float32", 2)][2])  # the same bits on 1 and 2 threads


def test_a_tolerance_below_the_float32_floor_warns_and_reports_no_false_convergence():
    sim = small(backend="cpu", precision="float32")
    sim.set_field(fg.initial.skyrmion())
    floor = sim.describe()["gradient_floor"]
    with pytest.warns(PrecisionWarning, match="floor"):
        hist = sim.minimize(tol=floor / 100, max_steps=300)
    assert hist.column("step")[-1].as_py() == 300
    assert hist.column("max_grad")[-1].as_py() >= floor / 100


@pytest.mark.skipif(CUDA["available"], reason="a GPU is present: auto picks CUDA (tests/python/test_gpu.py)")
def test_float32_with_auto_and_no_gpu_runs_on_the_cpu():
    sim = small(precision="float32")
    d = sim.describe()
    assert d["backend"] == "cpu" and sim.precision == "float32"
    assert "cuda unavailable" in d["backend_note"]


@pytest.mark.skipif(not CUDA["available"], reason=f"no usable GPU: {CUDA.get('reason')}")
def test_float32_with_auto_and_a_gpu_runs_on_the_gpu():
    sim = small(precision="float32")
    d = sim.describe()
    assert d["backend"] == "cuda" and d["precision"] == "float32" and sim.precision == "float32"
    assert d["epsilon"] == U32 and d["gradient_floor"] > 0


@pytest.mark.parametrize("bad", ["float16", "double", 32, None])
def test_unknown_precision_is_a_parameter_error(bad):
    with pytest.raises(fg.ParameterError, match="precision"):
        small(backend="cpu", precision=bad)


def test_float64_reports_its_precision_and_no_floor():
    sim = small(backend="cpu")
    d = sim.describe()
    assert d["precision"] == "float64" and sim.precision == "float64"
    assert "gradient_floor" not in d
    assert "precision" not in repr(sim)


def test_load_keeps_or_overrides_the_precision(tmp_path):
    sim = small(backend="cpu", precision="float32")
    sim.set_field(fg.initial.skyrmion())
    sim.minimize(tol=1e-300, max_steps=20)
    path = tmp_path / "s.arrow"
    sim.save(path)
    again = fg.load(path, backend="cpu")
    assert again.precision == "float32"
    np.testing.assert_array_equal(again.field.numpy(), sim.field.numpy())
    # Resumed, the float32 run continues bit for bit.
    sim.minimize(tol=1e-300, max_steps=10)
    again.minimize(tol=1e-300, max_steps=10)
    np.testing.assert_array_equal(again.field.numpy(), sim.field.numpy())
    assert fg.load(path, backend="cpu", precision="float64").precision == "float64"
    with pytest.raises(fg.ParameterError, match="precision"):
        fg.load(path, backend="cpu", precision="half")


def test_precision_warning_is_a_user_warning():
    assert issubclass(fg.PrecisionWarning, UserWarning)
