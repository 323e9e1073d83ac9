"""fg.radiation: trajectory tables in, Liénard–Wiechert cubes out (CPU)."""

import gc

import numpy as np
import pyarrow as pa
import pytest

import fieldgo as fg
from fieldgo import radiation as rad
from fieldgo.runtime.bridge import go


def uniform_table(v=(0.6, 0.3, -0.2), x0=(0.5, -1.0, 2.0), c=1.0, q=1.7, n=41):
    v = np.asarray(v) * c
    g = 1 / np.sqrt(1 - v @ v / c**2)
    tau = np.linspace(-80, 80, n)
    t = g * tau
    return rad.trajectory_table(
        tau,
        t,
        x0[0] + v[0] * t,
        x0[1] + v[1] * t,
        x0[2] + v[2] * t,
        np.full(n, g),
        np.full(n, g * v[0]),
        np.full(n, g * v[1]),
        np.full(n, g * v[2]),
        charge=q,
        c=c,
    )


def circle_table(beta=0.5, periods=8, per=1024):
    w = beta
    T = 2 * np.pi / w
    t = np.linspace(-periods / 2 * T, periods / 2 * T, periods * per + 1)
    return rad.from_lab_time(
        t, np.cos(w * t), np.sin(w * t), 0 * t, -beta * np.sin(w * t), beta * np.cos(w * t), 0 * t, charge=1.0
    ), T


def test_uniform_motion_exact():
    c, q = 2.0, 1.7
    v = np.array([0.6, 0.3, -0.2]) * c
    x0 = np.array([0.5, -1.0, 2.0])
    tab = uniform_table(c=c, q=q)
    obs = np.array([[5, 1, -2], [-3, 7, 0.5], [40, -25, 10.0]])
    times = np.linspace(-10, 10, 40)
    cube = rad.fields(tab, obs, times, n_iters=4)
    beta = v / c
    for o, xo in enumerate(obs):
        rp = xo[None, :] - x0[None, :] - v[None, :] * times[:, None]
        bxr = np.cross(beta, rp)
        den = (rp * rp).sum(1) - (bxr * bxr).sum(1)
        E = q * (1 - beta @ beta) * rp / den[:, None] ** 1.5
        B = np.cross(beta, E)
        phi = q / np.sqrt(den)
        np.testing.assert_allclose(cube.E[o], E, rtol=1e-12, atol=1e-12 * np.abs(E).max())
        np.testing.assert_allclose(cube.B[o], B, rtol=1e-12, atol=1e-12 * np.abs(B).max())
        np.testing.assert_allclose(cube["phi"][o], phi, rtol=1e-12)
        np.testing.assert_allclose(cube.numpy(("Ax", "Ay", "Az"))[o], phi[:, None] * beta, rtol=1e-12)


def test_cube_is_zero_copy_and_outlives_its_owner():
    cube = rad.fields(uniform_table(), [[5, 1, -2], [0, 3, 3]], np.linspace(-5, 5, 16))
    batch = cube.to_arrow()
    assert batch.num_rows == 2 * 16 and batch.schema.names[:10] == list(rad.COMPONENTS)
    view = cube.numpy()
    assert view.shape == (2, 16, 10)
    assert view.ctypes.data == batch.column(0).buffers()[1].address
    ex = cube["Ex"]
    np.testing.assert_array_equal(ex.ravel(), batch.column("Ex").to_numpy())
    keep = view.copy()
    del cube, batch
    gc.collect()
    np.testing.assert_array_equal(view, keep)  # the view holds the memory
    md = rad.fields(uniform_table(), [[5, 1, -2]], [0.0, 1.0]).metadata
    assert md["method"] == "newton" and md["n_iters"] == "2" and md["observers"] == "1"


def test_circular_on_axis_and_schott():
    beta = 0.5
    tab, T = circle_table(beta)
    info = rad.validate(tab)
    assert info["particles"] == 1 and info["rows"] == 8 * 1024 + 1
    # On axis: retarded lab time t - sqrt(Z^2 + 1) (the lab-time samples go through
    # the proper-time integration and a spline in tau: exact to ~1e-9 here).
    times = 2 + np.arange(256) * T / 64
    cube = rad.fields(tab, [[0, 0, 3.0]], times, retarded=True)
    np.testing.assert_allclose(cube.retarded_time(0)[0], times - np.sqrt(10), rtol=0, atol=1e-9 * T)
    p = rad.harmonic_powers(cube, T, range(1, 8))[0]
    assert np.all(p[1:] < 1e-12 * p[0]), p / p[0]


def test_schott_harmonic_map():
    beta = 0.5
    tab, T = circle_table(beta)
    R = 1e7
    thetas = np.array([0.6, np.pi / 3, 1.3])
    obs = R * np.stack([np.sin(thetas), 0 * thetas, np.cos(thetas)], axis=1)
    times = R + np.arange(4 * 64) * T / 64 - 2 * T
    cube = rad.fields(tab, obs, times)
    for n in (1, 2, 3):
        got = rad.harmonic_map(cube, T, n, distance=R)
        x = n * beta * np.sin(thetas)
        jn = _jn(n, x)
        jp = (_jn(n - 1, x) - _jn(n + 1, x)) / 2
        want = n**2 * beta**2 / (2 * np.pi) * (jn**2 / np.tan(thetas) ** 2 + beta**2 * jp**2)
        np.testing.assert_allclose(got, want, rtol=1e-3)


def _jn(n, x):
    # Bessel J_n by its integral (1/pi) int_0^pi cos(n s - x sin s) ds, trapezoid on a
    # periodic integrand (spectrally accurate).
    s = np.linspace(0, np.pi, 2001)
    f = np.cos(n * s[:, None] - np.asarray(x)[None, :] * np.sin(s)[:, None])
    return (f[0] / 2 + f[1:-1].sum(0) + f[-1] / 2) * (s[1] - s[0]) / np.pi


def test_paths_bit_identical_and_methods():
    tab, T = circle_table(0.7, periods=4, per=256)
    obs = [[6, -2, 3], [0, 10, 1]]
    times = np.linspace(0, T, 100)
    for method in ("newton", "rk4"):
        for precision in ("float64", "float32"):
            cubes = [
                rad.fields(tab, obs, times, method=method, precision=precision, search=s, coef_reuse=r)
                for s, r in (("cold", False), ("warm", False), ("warm", True))
            ]
            a = cubes[0].numpy()
            assert np.isfinite(a).all()
            for c in cubes[1:]:
                assert np.array_equal(a.view(np.uint64), c.numpy().view(np.uint64))
    ref = rad.fields(tab, obs, times, n_iters=6).numpy()
    rk = rad.fields(tab, obs, times, method="rk4", n_substeps=16).numpy()
    assert np.abs(rk - ref).max() < 1e-6 * np.abs(ref).max()
    f32 = rad.fields(tab, obs, times, precision="float32").numpy()
    err = np.abs(f32 - ref).max() / np.abs(ref).max()
    assert 0 < err < 1e-4


def test_per_observer_times_and_polars():
    tab = uniform_table()
    obs = np.array([[5, 1, -2], [0, 3, 3]])
    t2 = np.stack([np.linspace(-5, 5, 8), np.linspace(0, 3, 8)])
    cube = rad.fields(tab, obs, t2)
    one = rad.fields(tab, obs[1:], t2[1])
    np.testing.assert_array_equal(cube.numpy()[1], one.numpy()[0])
    pl = pytest.importorskip("polars")
    df = pl.from_arrow(tab)  # polars keeps the columns, drops the metadata
    np.testing.assert_array_equal(rad.fields(df, obs, t2, charge=1.7).numpy(), cube.numpy())


def test_errors():
    tab = uniform_table()
    with pytest.raises(fg.TrajectoryError, match="increase"):
        bad = tab.set_column(1, "tau", pa.array(tab.column("tau").to_numpy()[::-1].copy()))
        rad.fields(bad, [[1, 2, 3]], [0.0])
    with pytest.raises(fg.TrajectoryError, match="at least 4"):
        rad.fields(tab.slice(0, 3), [[1, 2, 3]], [0.0])
    with pytest.raises(fg.TrajectoryError, match="mass shell"):
        ux = tab.column("ux").to_numpy().copy()
        ux[3] *= 1.01
        rad.fields(tab.set_column(7, "ux", pa.array(ux)), [[1, 2, 3]], [0.0])
    with pytest.raises(fg.TrajectoryError):
        rad.from_lab_time([0, 1, 2, 3], [0] * 4, [0] * 4, [0] * 4, [0, 1.5, 0, 0], [0] * 4, [0] * 4)
    with pytest.raises(ValueError):  # TrajectoryError is a ValueError
        rad.trajectory_table([0, 1, 2, 3], [0, 1, 2, 3], *([[0] * 4] * 3), [1] * 4, [0.5] * 4, [0] * 4, [0] * 4)
    with pytest.raises(fg.ParameterError):
        rad.fields(tab, [[1, 2, 3]], [0.0], method="euler")
    with pytest.raises(fg.ParameterError):
        rad.fields(tab, [[1, 2, 3]], [0.0], n_iters=-1)
    with pytest.raises(fg.ShapeError):
        rad.fields(tab, [[1, 2, 3]], np.zeros((2, 5)))
    with pytest.raises(fg.BackendError):
        rad.fields(tab, [[1, 2, 3]], [0.0], backend="opencl")
    with pytest.raises(fg.FormatError):
        rad.fields(tab.drop_columns(["uz"]), [[1, 2, 3]], [0.0])
    with pytest.raises(fg.ParameterError, match="observation time 1 is NaN"):
        rad.fields(tab, [[1, 2, 3]], [0.0, np.nan])
    with pytest.raises(fg.ParameterError, match="observation time 0 of observer 1 is"):
        rad.fields(tab, [[1, 2, 3], [3, 2, 1]], [[0.0, 1.0], [np.inf, 1.0]])
    for tol in (np.nan, -1e-6, np.inf):
        with pytest.raises(fg.ParameterError, match="tolerance"):
            rad.fields(tab, [[1, 2, 3]], [0.0], tolerance=tol)
    with pytest.raises(fg.ParameterError, match="threads"):
        rad.fields(tab, [[1, 2, 3]], [0.0], threads=-1)
    for n in (2.7, "3", np.nan, True):  # counts are integers, not rounded or parsed
        with pytest.raises(fg.ParameterError, match="n_iters"):
            rad.fields(tab, [[1, 2, 3]], [0.0], n_iters=n)
    assert rad.fields(tab, [[1, 2, 3]], [0.0], n_iters=np.int64(3)).metadata["n_iters"] == "3"
    with pytest.raises(fg.ShapeError, match="lacks z"):
        rad.fields(tab, pa.table({"x": [1.0], "y": [2.0]}), [0.0])
    with pytest.raises(fg.ParameterError, match="charges must be finite"):
        rad.from_lab_time([0, 1, 2, 3], [0] * 4, [0] * 4, [0] * 4, [0] * 4, [0] * 4, [0] * 4, charge=np.nan)
    with pytest.raises(fg.TrajectoryError, match="t=.* does not increase along tau"):
        rad.fields(tab.set_column(2, "t", pa.array(-tab.column("t").to_numpy())), [[1, 2, 3]], [0.0])
    # Inputs that are not real numbers are named, not passed on to numpy's errors.
    with pytest.raises(fg.LayoutError, match="observers have dtype <U"):
        rad.fields(tab, [["a", "b", "c"]], [0.0])
    with pytest.raises(fg.LayoutError, match="times have dtype complex"):
        rad.fields(tab, [[1, 2, 3]], [1j])
    with pytest.raises(fg.ParameterError, match="observer 0: coordinate 2 is NaN"):  # None reads as NaN
        rad.fields(tab, [[1, 2, None]], [0.0])
    with pytest.raises(fg.LayoutError, match="observers have dtype object"):
        rad.fields(tab, [[1, 2, {}]], [0.0])
    with pytest.raises(fg.LayoutError, match="charges have dtype"):
        rad.fields(tab, [[1, 2, 3]], [0.0], charge="1")
    with pytest.raises(fg.ShapeError, match="c must be one number"):
        rad.fields(tab, [[1, 2, 3]], [0.0], c=[1.0, 2.0])
    cols = [tab.column(n).to_numpy() for n in ("tau", *rad.STATE)]
    with pytest.raises(fg.LayoutError, match="ux have dtype bool"):
        rad.trajectory_table(*cols[:6], cols[6] > 0, *cols[7:])
    with pytest.raises(fg.LayoutError, match="non-integral"):
        rad.trajectory_table(*cols, particle=np.full(cols[0].size, 0.5))
    with pytest.raises(fg.LayoutError, match="masses have dtype"):
        rad.from_lab_time([0, 1, 2, 3], [0] * 4, [0] * 4, [0] * 4, [0] * 4, [0] * 4, [0] * 4, mass="heavy")
    # The spectra's inputs.
    times = np.linspace(0, 10, 16)
    cube = rad.fields(tab, [[1, 2, 3], [3, 2, 1]], times)
    with pytest.raises(fg.ParameterError, match="no component 'Qx'"):
        rad.spectrum(cube, "Qx")
    with pytest.raises(fg.ParameterError, match="retarded=True"):
        cube.retarded_time(0)
    with pytest.raises(fg.ParameterError, match="particles 0 .. 0, counted in the table's order"):
        rad.fields(tab, [[1, 2, 3]], [0.0], retarded=True).retarded_time(7)
    with pytest.raises(fg.ShapeError, match="window has shape"):
        rad.spectrum(cube, "Ex", window=np.ones(3))
    for period in (0.0, -1.0, np.nan, "1"):
        with pytest.raises(fg.ParameterError, match="period"):
            rad.harmonic_powers(cube, period)
    span = 16 * (times[1] - times[0])
    with pytest.raises(fg.ParameterError, match="harmonics"):
        rad.harmonic_powers(cube, span, [0])
    with pytest.raises(fg.ShapeError, match="does not hold the cube's 2 observers"):
        rad.harmonic_map(cube, span, 1, shape=(3, 3))
    assert rad.harmonic_map(cube, span, 1, shape=(2, 1)).shape == (2, 1)
    # dI/dOmega = c R^2 <E_n^2>/(4 pi) with the cube's own c unless told otherwise.
    fast = rad.fields(uniform_table(c=3.0), [[1, 2, 3], [3, 2, 1]], times)
    assert fast.metadata["c"] == "3"
    np.testing.assert_array_equal(
        rad.harmonic_map(fast, span, 1, distance=5.0), rad.harmonic_map(fast, span, 1, distance=5.0, c=3.0)
    )
    np.testing.assert_allclose(
        rad.harmonic_map(fast, span, 1, distance=5.0, c=1.0) * 3,
        rad.harmonic_map(fast, span, 1, distance=5.0),
        rtol=1e-15,
    )
    uneven = rad.fields(tab, [[1, 2, 3], [3, 2, 1]], np.stack([times, 2 * times]))
    with pytest.raises(fg.ShapeError, match="same spacing for every observer"):
        rad.spectrum(uneven, "Ex")
    with pytest.raises(fg.ShapeError, match="at least 2 samples"):
        rad.spectrum(rad.fields(tab, [[1, 2, 3]], [0.0]), "Ex")
    # Float ids with integral values, and numbers in an object array, are accepted.
    same = rad.trajectory_table(*cols, particle=np.zeros(cols[0].size), charge=1.7, validate_=False)
    assert same.column("particle").type == pa.int64()
    np.testing.assert_array_equal(
        rad.fields(same, np.array([[1, 2, 3]], dtype=object), [0.0]).numpy(),
        rad.fields(tab, [[1, 2, 3]], [0.0]).numpy(),
    )


def test_segments_are_independent_walks():
    # Each segment of samples is walked from its own cold solve: a segment of
    # the cube is, bit for bit, the cube of its times alone; segments of one
    # sample are the converged roots.
    tab, T = circle_table(0.8, periods=6, per=512)
    obs = [[6, -2, 3], [-4, 3, 1]]
    times = np.linspace(-2 * T, 2 * T, 120)  # coarse: Newton n=2 is not converged
    seg = 50
    cube = rad.fields(tab, obs, times, segment=seg, retarded=True).numpy()
    for sb in range(0, times.size, seg):
        part = rad.fields(tab, obs, times[sb : sb + seg], segment=times.size, retarded=True).numpy()
        np.testing.assert_array_equal(cube[:, sb : sb + seg].view(np.uint64), part.view(np.uint64))
    one = rad.fields(tab, obs, times, segment=1).numpy()
    conv = rad.fields(tab, obs, times, n_iters=8, segment=times.size).numpy()
    assert np.abs(one - conv).max() <= 1e-12 * np.abs(conv).max()
    with pytest.raises(fg.ParameterError, match="segment"):
        rad.fields(tab, obs, times, segment=-1)


def test_spectrum_parseval():
    tab, T = circle_table(0.6, periods=6, per=256)
    times = -T + np.arange(128) * T / 32
    cube = rad.fields(tab, [[4, 1, 2]], times)
    f, p = rad.spectrum(cube, "Ey")
    x = cube["Ey"][0]
    assert f[4] == pytest.approx(1 / T)
    assert p.sum() == pytest.approx(np.mean(x**2), rel=1e-12)


def test_ctrl_c_cancels_the_call_and_waits_for_it(monkeypatch):
    # Ctrl-C while fields waits for the Go call: the call is cancelled and fields
    # returns (raising KeyboardInterrupt) only after it has, so the Arrow inputs the
    # call reads are never freed under it. Made deterministic: the first wait step
    # raises KeyboardInterrupt as the signal would; the call is big enough to run on.
    # Then the same call runs normally.
    from fieldgo.runtime import interruptible

    real_wait, seen = go.CallWait, {}

    def wait(handle, ms):
        if "interrupted" not in seen:
            seen["interrupted"] = handle
            raise KeyboardInterrupt
        done = real_wait(handle, ms)
        seen["done"] = done
        return done

    def result(handle):
        try:
            return real_result(handle)
        except fg.Error as exc:
            seen["error"] = exc
            raise

    real_result = go.CallResult
    tab, obs, times = uniform_table(), np.random.default_rng(0).normal(size=(20000, 3)) * 10, np.linspace(-5, 5, 512)
    monkeypatch.setattr(go, "CallWait", wait)
    monkeypatch.setattr(go, "CallResult", result)
    with pytest.raises(KeyboardInterrupt):
        rad.fields(tab, obs, times, backend="cpu")
    monkeypatch.undo()
    assert seen["done"] is True, seen
    assert isinstance(seen.get("error"), fg.CancelledError), seen
    with pytest.raises(fg.ReleasedError):
        go.CallWait(seen["interrupted"], 1)
    assert interruptible._STEP_MS <= 50
    cube = rad.fields(tab, [[5, 1, -2], [0, 3, 3]], np.linspace(-5, 5, 16))
    assert np.isfinite(cube.numpy()).all()


def test_a_cube_on_the_device_needs_a_gpu():
    tau = np.linspace(0, 10, 50)
    traj = fg.radiation.trajectory_table(tau, tau, 0 * tau, 0 * tau, 0 * tau, 1 + 0 * tau, 0 * tau, 0 * tau, 0 * tau)
    with pytest.raises(fg.BackendError, match="GPU memory"):
        fg.radiation.fields(traj, [[10.0, 0, 0]], [12.0], backend="cpu", on_device=True)


def test_repeated_calls_keep_the_table_and_see_every_change():
    """A call with the table of the last successful call reuses its splines
    and prepared knots; a changed table (values or metadata) or tolerance is
    prepared again, and every cube has the bits of a call from scratch."""

    def fresh(*args, **kw):
        go.ForgetRadiationInputs()
        return rad.fields(*args, **kw).numpy().view(np.uint64)

    def kept(*args, **kw):
        return rad.fields(*args, **kw).numpy().view(np.uint64)

    tab, T = circle_table(0.7, periods=4, per=256)
    obs = np.array([[6.0, -2, 3], [0, 10, 1]])
    times = np.linspace(0, T, 64)
    go.ForgetRadiationInputs()
    gc.collect()
    bytes0 = fg.allocated_bytes()
    for precision in ("float64", "float32"):
        a = fresh(tab, obs, times, precision=precision)
        assert fg.allocated_bytes() > bytes0  # the table's splines are kept
        assert np.array_equal(kept(tab, obs, times, precision=precision), a)
    moved = tab.set_column(tab.schema.get_field_index("x"), "x", pa.array(tab.column("x").to_numpy() * (1 + 1e-3)))
    assert np.array_equal(kept(moved, obs, times), fresh(moved, obs, times))
    assert not np.array_equal(kept(tab, obs, times), kept(moved, obs, times))
    assert np.array_equal(kept(tab, obs, times, charge=2.0), fresh(tab, obs, times, charge=2.0))
    assert np.array_equal(kept(tab, obs * 1.5, times), fresh(tab, obs * 1.5, times))
    i = tab.schema.get_field_index("ux")
    bent = tab.set_column(i, "ux", pa.array(tab.column("ux").to_numpy() * (1 + 1e-9)))
    rad.fields(bent, obs, times)  # |u.u/c^2 - 1| ~ 1e-9: within the default tolerance, and kept
    with pytest.raises(fg.TrajectoryError):
        rad.fields(bent, obs, times, tolerance=1e-12)
    del a  # a view of the last cube
    go.ForgetRadiationInputs()
    gc.collect()
    assert fg.allocated_bytes() == bytes0


def test_a_table_changed_in_place_is_seen():
    """The kept table is compared by its bytes, not by identity: trajectory_table
    wraps float64 arrays without a copy, and a change to such an array in place
    (same table, same buffers) gives the cube of a call from scratch."""
    v, n = 0.4, 41
    g = 1 / np.sqrt(1 - v * v)
    tau = np.linspace(-80, 80, n)
    t = g * tau
    x = v * t
    z0 = np.zeros(n)
    tab = rad.trajectory_table(tau, t, x, z0, z0, np.full(n, g), np.full(n, g * v), z0, z0)
    assert tab.column("x").chunk(0).buffers()[1].address == x.ctypes.data  # shared, as the change needs
    obs, times = [[3.0, 4.0, 1.0], [-2.0, 5.0, 0.5]], np.linspace(-5, 5, 16)

    def cube():
        return rad.fields(tab, obs, times).numpy().view(np.uint64).copy()

    go.ForgetRadiationInputs()
    before, x0 = cube(), x.copy()
    assert np.array_equal(cube(), before)  # kept
    x += 0.25  # the same worldline moved: still valid
    moved = cube()
    assert not np.array_equal(moved, before)
    go.ForgetRadiationInputs()
    assert np.array_equal(cube(), moved)
    x[:] = x0
    assert np.array_equal(cube(), before)
    go.ForgetRadiationInputs()


def test_observer_and_time_tables_read_in_place_or_judged():
    """Observers and times that are plain float64 columns are read where pyarrow
    keeps them, a table's slice included; one with a null is refused by name."""
    tab = uniform_table()
    obs = np.array([[3.0, 4.0, 1.0], [-2.0, 5.0, 0.5], [1.0, -6.0, 2.0], [0.5, 0.5, 7.0]])
    times = np.linspace(-5, 5, 8)
    whole = rad.fields(tab, obs, times).numpy()
    table = pa.table({"x": obs[:, 0], "y": obs[:, 1], "z": obs[:, 2]})
    part = rad.fields(tab, table.slice(1, 2), times).numpy()
    assert np.array_equal(part, rad.fields(tab, obs[1:3], times).numpy())
    assert np.array_equal(part[0], whole[1])
    holed = pa.table({"x": pa.array([3.0, None]), "y": [4.0, 5.0], "z": [1.0, 0.5]})
    with pytest.raises(fg.LayoutError, match="nulls"):
        rad.fields(tab, holed, times)


def test_options_checked_once_are_still_checked_by_type():
    """fields' options are checked and encoded once per distinct set of arguments,
    told apart by type: True after 1 is refused, 1.0 is the same as 1."""
    tab, obs, times = uniform_table(), [[3.0, 4.0, 1.0]], np.linspace(-5, 5, 8)
    one = rad.fields(tab, obs, times, n_iters=1).numpy()
    assert np.array_equal(rad.fields(tab, obs, times, n_iters=1).numpy(), one)
    with pytest.raises(fg.ParameterError, match="n_iters"):
        rad.fields(tab, obs, times, n_iters=True)
    assert np.array_equal(rad.fields(tab, obs, times, n_iters=1.0).numpy(), one)
    with pytest.raises(fg.ParameterError, match="n_iters"):
        rad.fields(tab, obs, times, n_iters=1.5)
    with pytest.raises(fg.ParameterError, match="search"):
        rad.fields(tab, obs, times, search=1)
    assert rad.fields(tab, obs, times).metadata["n_iters"] == "2"
