"""precision="float32" (issue 5): float32 storage is a CUDA backend option. These run
without a GPU: the CPU refuses it with a BackendError that says so, and
backend="auto" on a machine without a usable GPU refuses it too instead of running
float64 on the CPU. tests/python/test_gpu.py measures float32 on the device."""

import pytest

import fieldgo as fg
from fieldgo.simulation import PrecisionWarning

CUDA = fg.devices()["cuda"]


def small(**kw):
    return fg.Simulation(fg.theories.baby_skyrme(), grid=(24, 24), spacing=0.5, **kw)


def test_float32_on_the_cpu_is_a_clear_backend_error():
    with pytest.raises(fg.BackendError, match=r"float32.*CUDA backend option.*cpu backend"):
        small(backend="cpu", precision="float32")


@pytest.mark.skipif(CUDA["available"], reason="a GPU is present: auto picks CUDA (tests/python/test_gpu.py)")
def test_float32_with_auto_and_no_gpu_is_refused_not_run_in_float64():
    with pytest.raises(fg.BackendError, match=r"float32.*auto.*no usable GPU"):
        small(precision="float32")
    # float64 still falls back to the CPU, saying why.
    sim = small()
    assert sim.describe()["backend"] == "cpu" and sim.precision == "float64"
    assert "cuda unavailable" in sim.describe()["backend_note"]


@pytest.mark.skipif(not CUDA["available"], reason=f"no usable GPU: {CUDA.get('reason')}")
def test_float32_with_auto_and_a_gpu_runs_on_the_gpu():
    sim = small(precision="float32")
    d = sim.describe()
    assert d["backend"] == "cuda" and d["precision"] == "float32" and sim.precision == "float32"
    assert d["epsilon"] == 2.0 ** -24 and d["gradient_floor"] > 0
    assert "precision=float32" in repr(sim)


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
    sim = small(backend="cpu")
    sim.set_field(fg.initial.skyrmion())
    sim.minimize(tol=1e-3, max_steps=5)
    path = tmp_path / "s.arrow"
    sim.save(path)
    assert fg.load(path, backend="cpu").precision == "float64"
    with pytest.raises(fg.BackendError, match="CUDA backend option"):
        fg.load(path, backend="cpu", precision="float32")
    with pytest.raises(fg.ParameterError, match="precision"):
        fg.load(path, backend="cpu", precision="half")


def test_precision_warning_is_a_user_warning():
    assert issubclass(PrecisionWarning, UserWarning)
