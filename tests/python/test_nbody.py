"""fg.nbody: accelerations against a numpy reference, error types, Plummer spheres,
leapfrog trajectories as Arrow (Table, stream, IPC file), Kepler orbit."""

import gc
import math

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

import fieldgo as fg


def reference(pos, m, eps):
    """float64 direct sum in numpy, self excluded; also sum_j |a_ij| per component."""
    d = pos[None, :, :] - pos[:, None, :]  # d[i, j] = x_j - x_i
    r2 = (d**2).sum(-1) + eps * eps
    np.fill_diagonal(r2, 1.0)
    inv = 1 / np.sqrt(r2)
    w = m[None, :] * inv**3
    np.fill_diagonal(w, 0.0)
    terms = w[:, :, None] * d
    phi = -(m[None, :] * inv * (1 - np.eye(len(m)))).sum(1)
    return terms.sum(1), np.abs(terms).sum(1), phi


@pytest.fixture(scope="module")
def sphere():
    return fg.nbody.plummer(300, seed=3)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("eps", [0.0, 0.02])
def test_accuracy_bound(sphere, precision, eps):
    # |a_i - a_ref| <= k u sum_j |a_ij| with k = error_bound_k(N) = (N - 1) + 20: N - 1 for a
    # sum of N - 1 terms (worst case) and 20 for one term's roundings (core/nbody
    # TermErrorUlps). The numpy reference sums in a different order (pairwise), so
    # its own error (the same bound with u = 2^-53) is added. Inputs are rounded to
    # float32 for the float32 run: the arithmetic is measured, not the input rounding.
    pos, _, m = sphere
    if precision == "float32":
        pos = pos.astype(np.float32).astype(np.float64)
        m = m.astype(np.float32).astype(np.float64)
    ref, scale, phi_ref = reference(pos, m, eps)
    a, phi = fg.nbody.accelerations(pos, m, softening=eps, precision=precision, potentials=True)
    n = len(m)
    k = fg.nbody.error_bound_k(n)
    assert k == n - 1 + 20
    tol = k * (fg.nbody.unit_roundoff(precision) + 2.0**-53) * scale
    assert np.all(np.abs(a - ref) <= tol), np.max(np.abs(a - ref) / tol)
    assert np.all(np.abs(phi - phi_ref) <= k * (fg.nbody.unit_roundoff(precision) + 2.0**-53) * np.abs(phi_ref))


def test_float32_inputs_and_arrow(sphere):
    pos, _, m = sphere
    a64 = fg.nbody.accelerations(pos, m, softening=0.01)
    p32 = pos.astype(np.float32)
    a = fg.nbody.accelerations(p32, m.astype(np.float32), softening=0.01)
    b = fg.nbody.accelerations(p32.astype(np.float64), m.astype(np.float32).astype(np.float64), softening=0.01)
    np.testing.assert_array_equal(a, b)  # float32 input is widened exactly
    t = pa.table({"x": pos[:, 0], "y": pos[:, 1], "z": pos[:, 2]})
    np.testing.assert_array_equal(fg.nbody.accelerations(t, pa.array(m), softening=0.01), a64)
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(pos.ravel()), 3)
    np.testing.assert_array_equal(fg.nbody.accelerations(fsl, m, softening=0.01), a64)


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_unsoftened_finite_and_zero_mass(sphere, backend):
    pos, _, m = sphere
    m = m.copy()
    m[::5] = 0.0
    keep = m > 0
    _, scale, _ = reference(pos[keep], m[keep], 0.0)
    for precision in ("float64", "float32"):
        a = fg.nbody.accelerations(pos, m, softening=0.0, precision=precision, backend=backend)
        assert np.all(np.isfinite(a))
        # Zero-mass bodies feel the others...
        assert np.all(np.linalg.norm(a[::5], axis=1) > 0)
        # ...and pull on none. The CPU sums each target's sources in index order, so
        # removing them (terms of exactly +0) changes nothing, bit for bit. On a GPU the
        # sum is split over threads by N (kernels/src/nbody.cu), so the two runs add in
        # different orders: they agree within twice the rounding bound instead.
        b = fg.nbody.accelerations(pos[keep], m[keep], precision=precision, backend=backend)
        if backend == "cpu":
            np.testing.assert_array_equal(b, a[keep])
        else:
            k = fg.nbody.error_bound_k(len(m))
            assert np.all(np.abs(b - a[keep]) <= 2 * k * fg.nbody.unit_roundoff(precision) * scale)


def test_errors():
    pos = np.zeros((4, 3))
    pos[:, 0] = np.arange(4)
    m = np.ones(4)
    with pytest.raises(fg.ShapeError):
        fg.nbody.accelerations(np.zeros((4, 2)), m)
    with pytest.raises(fg.ShapeError):
        fg.nbody.accelerations(pos, np.ones(3))
    with pytest.raises(fg.LayoutError):
        fg.nbody.accelerations(pos.astype(np.int64), m)
    with pytest.raises(fg.LayoutError):
        fg.nbody.accelerations(pos, m.astype(np.complex128))
    bad = pos.copy()
    bad[2, 1] = np.nan
    with pytest.raises(fg.ParameterError, match="non-finite position"):
        fg.nbody.accelerations(bad, m)
    with pytest.raises(fg.ParameterError, match="mass"):
        fg.nbody.accelerations(pos, np.array([1.0, -1.0, 1.0, 1.0]))
    with pytest.raises(fg.ParameterError, match="softening"):
        fg.nbody.accelerations(pos, m, softening=-0.1)
    with pytest.raises(fg.ParameterError, match="precision"):
        fg.nbody.accelerations(pos, m, precision="float16")
    with pytest.raises(fg.BackendError, match="backend"):
        fg.nbody.accelerations(pos, m, backend="tpu")
    if not fg.devices()["cuda"]["available"]:
        with pytest.raises(fg.BackendError, match="CUDA"):
            fg.nbody.accelerations(pos, m, backend="cuda")
    v = np.zeros((4, 3))
    for dt in (0.0, -0.1, float("nan")):
        with pytest.raises(fg.ParameterError, match="dt"):
            fg.nbody.integrate(pos, v, m, dt=dt, steps=1)
    with pytest.raises(fg.ShapeError):
        fg.nbody.integrate(pos, np.zeros((3, 3)), m, dt=0.1, steps=1)
    with pytest.raises(fg.ParameterError):
        fg.nbody.integrate(pos, v, m, dt=0.1, steps=1, every=0)
    # Coincident bodies without softening: a DivergenceError, not NaNs.
    with pytest.raises(fg.DivergenceError):
        fg.nbody.integrate(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), dt=0.1, steps=1)
    assert isinstance(fg.nbody.plummer(2)[0], np.ndarray)
    with pytest.raises(fg.ParameterError):
        fg.nbody.plummer(1)


def test_plummer_units():
    pos, vel, m = fg.nbody.plummer(512, seed=9)
    a, phi = fg.nbody.accelerations(pos, m, potentials=True)
    kinetic = 0.5 * np.sum(m * np.sum(vel**2, 1))
    potential = 0.5 * np.sum(m * phi)
    assert kinetic == pytest.approx(0.25, abs=1e-13)
    assert potential == pytest.approx(-0.5, abs=1e-13)
    assert m.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.abs(m @ pos).max() < 1e-14 and np.abs(m @ vel).max() < 1e-14
    again = fg.nbody.plummer(512, seed=9)
    np.testing.assert_array_equal(again[0], pos)
    assert not np.array_equal(fg.nbody.plummer(512, seed=10)[0], pos)


def _kepler(e=0.5):
    m = np.array([0.6, 0.4])
    r, v = 1 + e, math.sqrt((1 - e) / (1 + e))
    pos = np.array([[-0.4 * r, 0, 0], [0.6 * r, 0, 0]])
    vel = np.array([[0, -0.4 * v, 0], [0, 0.6 * v, 0]])
    return pos, vel, m


def test_kepler_table_and_closure_order():
    # One period (2 pi for a = 1, M = 1) of an e = 0.5 orbit: the relative vector
    # returns to its start with an error ~ dt^2.
    pos, vel, m = _kepler()
    errs = []
    for n in (500, 1000):
        t = fg.nbody.integrate(pos, vel, m, dt=2 * math.pi / n, steps=n, every=n // 4)
        assert t.num_rows == 2 * 5 and t.column_names == ["particle", "t", "x", "y", "z", "vx", "vy", "vz"]
        assert t.schema.metadata[b"n"] == b"2"
        last = t.slice(t.num_rows - 2).to_pydict()
        assert last["t"][0] == pytest.approx(2 * math.pi)
        r = np.array([last["x"][1] - last["x"][0], last["y"][1] - last["y"][0]])
        errs.append(np.hypot(*(r - (pos[1, :2] - pos[0, :2]))))
    order = math.log2(errs[0] / errs[1])
    assert order == pytest.approx(2.0, abs=0.1), errs


def test_stream_and_energies(sphere):
    pos, vel, m = sphere
    batches = list(fg.nbody.integrate(pos, vel, m, dt=1 / 128, steps=40, every=10, softening=0.05, stream=True))
    assert [int(b.schema.metadata[b"step"]) for b in batches] == [0, 10, 20, 30, 40]
    e = [float(b.schema.metadata[b"energy"]) for b in batches]
    assert max(abs(x - e[0]) for x in e) < 1e-4 * abs(e[0])
    table, energies = fg.nbody.integrate(
        pos, vel, m, dt=1 / 128, steps=40, every=10, softening=0.05, return_energies=True
    )
    assert energies.column("energy").to_pylist() == e
    assert energies.column("step").to_pylist() == [0, 10, 20, 30, 40]
    # The table holds the same values as the stream.
    np.testing.assert_array_equal(table.column("x").to_numpy()[-len(m) :], batches[-1].column("x").to_numpy())
    # Momentum stays at rounding level (the sphere starts at rest).
    p = np.column_stack([energies.column(c).to_numpy() for c in ("px", "py", "pz")])
    assert np.abs(p).max() < 1e-14


def test_abandoned_stream_releases():
    pos, vel, m = fg.nbody.plummer(64, seed=1)
    gc.collect()  # earlier tests' garbage is freed before the baseline, not during the test
    before = fg.allocated_bytes()
    it = fg.nbody.integrate(pos, vel, m, dt=1e-3, steps=1000, every=1, softening=0.05, stream=True, queue=2)
    next(it)
    it.close()  # cancels the run and frees what Go still holds
    assert fg.allocated_bytes() == before


def test_ipc_file(tmp_path, sphere):
    pos, vel, m = sphere
    path, epath = tmp_path / "traj.arrow", tmp_path / "energies.arrow"
    energies = fg.nbody.integrate(
        pos, vel, m, dt=1 / 128, steps=30, every=10, softening=0.05, precision="float32", out=path, energies_out=epath
    )
    with pa.ipc.open_file(path) as r:
        assert r.num_record_batches == 4
        t = r.read_all()
    assert t.num_rows == 4 * len(m)
    assert t.schema.metadata[b"precision"] == b"float32"
    assert sorted(set(t.column("t").to_pylist())) == pytest.approx([0, 10 / 128, 20 / 128, 30 / 128])
    with pa.ipc.open_file(epath) as r:
        assert r.read_all().equals(energies)
    same = fg.nbody.integrate(pos, vel, m, dt=1 / 128, steps=30, every=10, softening=0.05, precision="float32")
    assert same.equals(t.replace_schema_metadata(same.schema.metadata))
