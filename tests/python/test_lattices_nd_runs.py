"""Lines, 3D lattices and boundaries per axis beyond the first flow: save, load and
resume bit for bit, float32 storage, the consistent gradient form, sweeps, live
views and divergence reports naming the site."""

import numpy as np
import pytest

import fieldgo as fg

U32 = 2.0**-24
# Runs that ask float32 storage for an unreachable tol on purpose (a fixed number of steps) warn.
pytestmark = pytest.mark.filterwarnings("ignore::fieldgo.PrecisionWarning")


def _phi4_3d():
    th = fg.Theory("phi4_3d", fields=["u"], params={"lam": 1.0})

    @th.energy_density
    def e(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2 + s.dz.u**2) + 0.5 * p.lam * (1 - s.phi.u**2) ** 2

    return th


def _coupled_3d():
    """Two components coupled through their z derivatives and positions: every
    partial of e, de/d(dz) included, depends on the field and on z."""
    th = fg.Theory("coupled_3d", fields=["u", "v"], params={"k": 0.7})

    @th.energy_density
    def e(s, p):
        grad = s.dx.u**2 + s.dy.u**2 + s.dz.u**2 + s.dx.v**2 + s.dy.v**2 + s.dz.v**2
        twist = p.k * s.dz.u * s.dx.v * (1 + 0.1 * s.z) + 0.3 * s.phi.u * s.dz.v * s.dy.u
        return 0.5 * grad + twist + 0.5 * (1 - s.phi.u**2 - s.phi.v**2) ** 2

    return th


def _bumpy(x, y, z):
    return np.tanh(1.3 * x + 0.3 * np.sin(1.7 * y)) + 0.1 * np.cos(2.1 * z + y)


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    "grid, spacing, origin, boundary, precision, gradient",
    [
        ((15, 7, 6), (0.3, 0.35, 0.4), (-2.1, 0.2, -1.0), ("fixed", "periodic", "periodic"), "float64", "auto"),
        ((13, 6, 7), (0.3, 0.35, 0.4), (-1.8, 0.0, 0.5), ("periodic", "fixed", "periodic"), "float32", "consistent"),
        ((41,), (0.25,), (-5.0,), "fixed", "float64", "auto"),
    ],
)
def test_save_load_resume_bit_identical(tmp_path, monkeypatch, grid, spacing, origin, boundary, precision, gradient):
    """A run stopped mid-flow, saved, loaded and resumed ends with the bits of the
    uninterrupted run; the file keeps the lattice's sizes, spacing, origin and
    boundary per axis, the storage precision and the gradient form."""
    th = _phi4_3d()
    flow = dict(tol=1e-14, max_steps=60, check_every=7, progress=False)

    def run():
        sim = fg.Simulation(
            th, grid=grid, spacing=spacing, origin=origin, boundary=boundary, precision=precision, gradient=gradient
        )
        sim.set_field(_bumpy if len(grid) == 3 else (lambda x: np.tanh(1.3 * x) + 0.05 * np.cos(3 * x)))
        return sim

    whole = run()
    whole.minimize(**flow)

    # Chunks of 5 steps, so that the flow can be stopped between two.
    monkeypatch.setattr(fg.runtime.simulation, "_CHUNK_STEPS", 5)
    first = run()

    def stop(sim, status):
        if status["step"] >= 10:
            raise _Stop

    with pytest.raises(_Stop):
        first.minimize(**flow, callback=stop)
    stopped = first.describe()["step"]
    assert 10 <= stopped < 60
    path = tmp_path / "run.arrow"
    first.save(path)
    loaded = fg.load(path)
    lat = loaded.lattice
    assert lat == first.lattice and lat.dims == len(grid)
    assert (lat.grid, lat.spacing, lat.origin) == (grid, spacing, origin)
    assert lat.boundaries == (boundary if isinstance(boundary, tuple) else (boundary,) * len(grid))
    assert loaded.precision == precision
    assert loaded.describe()["gradient"] == (gradient if gradient != "auto" else "continuum")
    assert loaded.describe()["step"] == stopped
    assert loaded.field.numpy().shape == (1, *reversed(grid))
    loaded.resume(progress=False)
    first.resume(progress=False)
    for sim in (loaded, first):
        np.testing.assert_array_equal(sim.field.numpy(), whole.field.numpy())
        np.testing.assert_array_equal(sim.velocity.numpy(), whole.velocity.numpy())
        assert sim.energy() == whole.energy()
        assert sim.last_status == whole.last_status
    assert loaded.history.to_pydict() == whole.history.to_pydict()


def _wall(h, **kw):
    n = int(round(12 / h)) + 1
    sim = fg.Simulation(_phi4_3d(), grid=(n, 6, 6), spacing=h, boundary=("fixed", "periodic", "periodic"), **kw)
    sim.set_field(lambda x, y, z: np.tanh(1.3 * x) + 0 * y + 0 * z)
    return sim, 6 * h * 6 * h


def _float32_values(a):
    return np.array_equal(a, a.astype(np.float32).astype(np.float64))


def test_float32_wall_in_3d_has_the_float64_energy_four_thirds_per_area():
    """float32 storage relaxes the 3D wall to the float64 energy within float32's
    bound (1e-6 relative, as for the planar skyrmion), 4/3 per area to the stencils'
    accuracy at h = 0.1; the stored values are float32 and the same on 1 and 2 threads."""
    res = {}
    for prec, threads in (("float64", None), ("float32", 1), ("float32", 2)):
        sim, area = _wall(0.1, precision=prec, threads=threads)
        tol = 1e-9 if prec == "float64" else 2 * sim.describe()["gradient_floor"]
        hist = sim.minimize(tol=tol, max_steps=20_000, progress=False)
        assert hist["max_grad"][-1].as_py() < tol
        res[(prec, threads)] = (sim.energy() / area, sim.field.numpy().copy())
    e64, _ = res[("float64", None)]
    e32, f32 = res[("float32", 1)]
    assert abs(e64 - 4 / 3) < 2e-5
    assert 0 < abs(e32 - e64) <= 1e-6 * e64
    assert _float32_values(f32) and f32.shape == (1, 6, 6, 121)
    assert np.array_equal(f32, res[("float32", 2)][1])


def test_consistent_form_relaxes_the_3d_wall_and_the_1d_kink():
    """The consistent form (the exact gradient of the lattice energy, with the doubler
    penalty) relaxes the 3D wall and the 1D kink to 4/3 per area; its energy converges
    with the spacing at fourth order, as the continuum form's does."""
    errors = []
    for h in (0.2, 0.1):
        sim, area = _wall(h, gradient="consistent")
        assert sim.describe()["gradient"] == "consistent" and sim.describe()["penalty"] > 0
        sim.minimize(tol=1e-8, max_steps=40_000, progress=False)
        assert sim.last_status["converged"]
        errors.append(sim.energy() / area - 4 / 3)
    assert abs(errors[1]) < 2e-5
    assert abs(errors[0] / errors[1]) > 12
    kink = fg.Simulation(_phi4_3d(), grid=(121,), spacing=0.1, gradient="consistent")
    kink.set_field(lambda x: np.tanh(1.3 * x))
    kink.minimize(tol=1e-8, max_steps=40_000, progress=False)
    assert kink.energy() == pytest.approx(4 / 3, abs=2e-5)


def test_divergence_in_3d_names_the_site_i_j_k():
    """One site far off (v = 1e50 at (i, j, k) = (7, 4, 3)) overflows there first: the
    DivergenceError names that site as (i, j, k), and the last good field is kept."""
    sim = fg.Simulation(_coupled_3d(), grid=(12, 10, 9), spacing=0.3, boundary="periodic")
    a = np.empty((2, 9, 10, 12))
    a[0], a[1] = 0.5, 0.2
    a[1, 3, 4, 7] = 1e50
    sim.set_field(a)
    with pytest.raises(fg.DivergenceError, match=r"not finite at site \(7, 4, 3\)"):
        sim.minimize(dt=0.1, max_steps=1000, check_every=5, progress=False)
    np.testing.assert_array_equal(sim.field.numpy(), a)  # diverged in step 0: the start is kept


def test_ctrl_c_stops_a_3d_flow_at_a_step_it_reports():
    """Ctrl-C (KeyboardInterrupt from a timer thread) stops a 3D flow within 100 ms;
    the field is bit for bit that of an uninterrupted run to the step reported."""
    import _thread
    import threading
    import time

    def make():
        sim = fg.Simulation(_phi4_3d(), grid=(40, 32, 32), spacing=0.2, boundary=("fixed", "periodic", "periodic"))
        sim.set_field(_bumpy)
        return sim

    sim = make()
    sim.minimize(tol=1e-14, max_steps=1, progress=False)  # compiled and estimated before the clock starts
    sent = {}

    def fire():
        sent["t"] = time.perf_counter()
        _thread.interrupt_main()

    timer = threading.Timer(0.3, fire)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            try:
                sim.minimize(tol=1e-14, max_steps=10**8, check_every=20, progress=False)
            finally:
                caught = time.perf_counter()
    finally:
        timer.cancel()
    assert caught - sent["t"] < 0.100
    steps = sim.last_status["step"]
    assert 0 < steps < 10**8
    ref = make()
    ref.minimize(tol=1e-14, max_steps=1, progress=False)
    ref.minimize(tol=1e-14, max_steps=steps, check_every=20, progress=False)
    np.testing.assert_array_equal(sim.field.numpy(), ref.field.numpy())


def test_live_view_and_plot_of_a_3d_run_draw_its_middle_plane(monkeypatch):
    """live=True draws the field in a notebook on 3D lattices and lines too: a 3D
    lattice by its middle plane along z (named in the title), a line as a curve."""
    import IPython.display

    from fieldgo.jupyter import progress

    sim = fg.Simulation(_phi4_3d(), grid=(15, 8, 7), spacing=0.4, boundary=("fixed", "periodic", "periodic"))
    sim.set_field(_bumpy)
    fig = fg.plot(sim.field)
    image = fig.axes[0].images[0]
    np.testing.assert_array_equal(image.get_array(), sim.field.numpy()[0, 3])
    assert f"z = {sim.lattice.z[3]:.3g}" in fig.axes[0].get_title()
    energy = fg.plot(sim).axes[0].images[0].get_array()
    assert energy.shape == (8, 15) and np.asarray(energy).max() > 0

    shown = []

    class Handle:
        def update(self, obj):
            shown.append(obj)

    def display(obj, display_id=False):
        shown.append(obj)
        return Handle()

    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", display)
    sim.minimize(tol=1e-12, max_steps=30, check_every=10, live=10, progress=False)
    pngs = [obj for obj in shown if isinstance(obj, IPython.display.Image)]
    assert pngs and all(p.data[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)

    line = fg.Simulation(_phi4_3d(), grid=(41,), spacing=0.25)
    line.set_field(lambda x: np.tanh(x))
    curve = fg.plot(line.field).axes[0].lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), line.lattice.x)
    np.testing.assert_array_equal(curve.get_ydata(), line.field.numpy()[0])
    drawn = len(shown)
    line.minimize(tol=1e-12, max_steps=20, live=5, progress=False)
    assert len(shown) > drawn


def test_free_boundary_in_3d_and_on_a_line_relaxes_the_wall_to_four_thirds():
    """boundary="free" on a 3D box and a line: no site is held, the gradient is the
    consistent form's, and a wall started bumpy along y and z relaxes to 4/3 per area
    (the natural boundary lets the bumps leave, whatever the start)."""
    h = 0.2
    box = fg.Simulation(_phi4_3d(), grid=(61, 7, 6), spacing=h, boundary="free")
    d = box.describe()
    assert d["gradient"] == "consistent" and d["backend"] == "cpu" and box.lattice.boundaries == ("free",) * 3
    box.set_field(lambda x, y, z: np.tanh(1.3 * x) + 0.1 * np.cos(0.8 * y) * np.sin(1.1 * z))
    box.minimize(tol=1e-8, max_steps=40_000, progress=False)
    assert box.last_status["converged"]
    u = box.field.numpy()[0]
    assert np.ptp(u, axis=(0, 1)).max() < 1e-6  # constant along y and z once relaxed
    assert box.energy() / (7 * h * 6 * h) == pytest.approx(4 / 3, abs=3e-4)
    line = fg.Simulation(_phi4_3d(), grid=(61,), spacing=h, boundary="free")
    line.set_field(lambda x: np.tanh(1.3 * x))
    line.minimize(tol=1e-8, max_steps=40_000, progress=False)
    assert line.energy() == pytest.approx(box.energy() / (7 * h * 6 * h), rel=1e-6)
    with pytest.raises(fg.ParameterError, match="free boundary needs the consistent"):
        fg.Simulation(_phi4_3d(), grid=(61, 7, 6), spacing=h, boundary="free", gradient="continuum")


def _d2_symbol(k, h):
    """The engine's fourth-order second-derivative stencil on cos(k x): its eigenvalue."""
    return (-2 * np.cos(2 * k * h) + 32 * np.cos(k * h) - 30) / (12 * h * h)


@pytest.mark.parametrize("grid, spacing", [((12, 10, 8), (0.5, 0.6, 0.7)), ((16,), (0.4,))])
def test_auxiliary_field_in_3d_and_on_a_line_solves_its_poisson_equation(grid, spacing):
    """An auxiliary potential a with e = -|grad a|^2/2 + a rho (a saddle: Delta a = -rho)
    and rho = cos(kx x) cos(ky y) cos(kz z) on a periodic box: the flow relaxes a to the
    exact solution of the engine's discrete equation, rho / |lambda_h| with lambda_h the
    stencils' eigenvalue, and to the continuum one, rho / |k|^2, to the stencils' order."""
    d = len(grid)
    lengths = [n * h for n, h in zip(grid, spacing)]
    ks = [2 * np.pi / L for L in lengths]
    th = fg.Theory("poisson_nd", fields=["u", "a"], auxiliary=["a"])

    @th.energy_density
    def e(s, p):
        rho = fg.cos(ks[0] * s.x) if d == 1 else fg.cos(ks[0] * s.x) * fg.cos(ks[1] * s.y) * fg.cos(ks[2] * s.z)
        grad_a = s.dx.a**2 + s.dy.a**2 + s.dz.a**2
        return 0.5 * (s.dx.u**2 + s.dy.u**2 + s.dz.u**2) + 0.5 * (s.phi.u - 1) ** 2 - 0.5 * grad_a + s.phi.a * rho

    sim = fg.Simulation(th, grid=grid, spacing=spacing, origin=(0.0,) * d, boundary="periodic")
    sim.set_field(lambda *r: (1 + 0 * r[0], 0 * r[0]))
    sim.minimize(tol=1e-10, max_steps=50_000, progress=False)
    assert sim.last_status["converged"]
    coords = sim.lattice.meshgrid()
    rho = np.prod([np.cos(k * c) for k, c in zip(ks, coords)], axis=0)
    lam = sum(_d2_symbol(k, h) for k, h in zip(ks, spacing))
    a = sim.field.numpy()[1]
    np.testing.assert_allclose(a, rho / -lam, atol=1e-9 * np.abs(rho / lam).max())
    continuum = rho / sum(k * k for k in ks)
    err = np.abs(a - continuum).max() / np.abs(continuum).max()
    assert 0 < err < 2 * max((k * h) ** 4 for k, h in zip(ks, spacing)) / 90 * 1.5
    np.testing.assert_array_equal(sim.field.numpy()[0], 1.0)  # u sat at its minimum all along


@pytest.mark.parametrize("grid", [(7, 6, 5), (9,)])
def test_device_field_of_a_cpu_run_beyond_the_plane_is_the_host_memory(grid):
    """On the CPU, device_field() of a 3D or 1D run is the host field's memory, shaped
    like it, exported through the Arrow C Device Data Interface."""
    import pyarrow as pa

    sim = fg.Simulation(_coupled_3d(), grid=grid, spacing=0.5, boundary="periodic", backend="cpu")
    sim.set_field(np.arange(2 * np.prod(grid), dtype=np.float64).reshape(2, *reversed(grid)))
    d = sim.device_field()
    host = sim.field.numpy()
    assert d.device_type == "cpu" and d.shape == host.shape == (2, *reversed(grid))
    schema, array = d.__arrow_c_device_array__()
    b = pa.RecordBatch._import_from_c_device_capsule(schema, array)
    assert b.num_rows == np.prod(grid) and b.schema.names == ["u", "v"]
    for c in range(2):
        assert b.column(c).buffers()[1].address == host[c].ctypes.data
        np.testing.assert_array_equal(b.column(c).to_numpy(), host[c].ravel())
    host[1].flat[-1] = -7.0  # one memory: a write through the host view shows in the export
    assert b.column(1).to_numpy()[-1] == -7.0


def test_simulation_card_names_every_axis():
    from fieldgo.jupyter.display import simulation_html

    sim = fg.Simulation(
        _phi4_3d(), grid=(15, 8, 7), spacing=(0.4, 0.5, 0.25), boundary=("fixed", "periodic", "periodic")
    )
    sim.set_field(_bumpy)
    card = simulation_html(sim)
    z = sim.lattice.z
    assert "15 × 8 × 7 sites, spacing (0.4, 0.5, 0.25)" in card
    assert f"z ∈ [{z[0]:.4g}, {z[-1]:.4g}]" in card and "fixed, periodic, periodic" in card
    line = fg.Simulation(_phi4_3d(), grid=(21,), spacing=0.3)
    assert "21 sites, spacing (0.3), x ∈ [-3, 3]" in simulation_html(line)
