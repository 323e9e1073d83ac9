"""fg.animate (GIF and MP4 frames of an evolution, one colour scale, inline display)
and fg.track (lumps of a density followed across snapshots) on small runs of lines,
planes and a 3D lattice."""

import base64
import importlib.util
import io
import math
import re

import numpy as np
import pytest

import fieldgo as fg

pytestmark = pytest.mark.filterwarnings(r"ignore:fork\(\) after fieldgo:RuntimeWarning")


def _phi4(three_d=False):
    th = fg.Theory("phi4_track" + ("_3d" if three_d else ""), fields=["u"], params={"lam": 1.0})

    @th.energy_density
    def e(s, p):
        grad = s.dx.u**2 + (s.dy.u**2 + s.dz.u**2 if three_d else 0)
        return 0.5 * grad + 0.5 * p.lam * (1 - s.phi.u**2) ** 2

    @th.density("kinkness")
    def q(s, p):
        return 0.5 * s.dx.u

    return th


def _wave(dims):
    th = fg.Theory(f"wave{dims}", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * (s.dx.u**2 + (s.dy.u**2 if dims == 2 else 0))

    return th


def _kink_run(h=0.05, v=0.5, T=4.0, **kw):
    sim = fg.Simulation(_phi4(), grid=(int(round(20 / h)) + 1,), spacing=h, boundary="fixed", backend="cpu")
    phi, vel = fg.initial.boost(np.tanh, v, centre=-2.0)
    sim.set_field(phi)
    sim.set_velocity(vel)
    return sim.evolve(T, dt=0.7 * h, record_every=8, **kw)  # a frame moves the kink 2.8 h: every phase


def _spreading_lump(T=3.0):
    """A Gaussian at rest under the 2D wave equation: its peak falls as it spreads."""
    sim = fg.Simulation(_wave(2), grid=(41, 41), spacing=0.25, boundary="periodic", backend="cpu")
    sim.set_field(lambda x, y: np.exp(-(x**2 + y**2)))
    return sim.evolve(T, dt=0.05, record_every=6)


# --- animations --------------------------------------------------------------------


def test_gif_has_a_frame_per_snapshot_and_the_size_reported(tmp_path):
    import imageio.v3 as iio

    ev = _kink_run(T=2.0)
    anim = fg.animate(ev, density="energy", path=tmp_path / "kink.gif", fps=8, dpi=60)
    frames = iio.imread(tmp_path / "kink.gif", index=None)
    assert anim.frames == len(ev) == frames.shape[0] == 9  # steps 0, 8, .., 56 and the last, 58
    w, h = anim.size
    assert frames.shape[1:3] == (h, w) and w % 16 == 0 and h % 16 == 0
    assert anim.path == tmp_path / "kink.gif"
    # the frames differ: the kink moves
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).max() > 100


def test_mp4_has_a_frame_per_snapshot_at_the_rate_asked(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as iio2

    ev = _spreading_lump()
    anim = fg.animate(ev, density=None, path=tmp_path / "lump.mp4", fps=5, dpi=50)
    reader = iio2.get_reader(tmp_path / "lump.mp4")
    try:
        meta = reader.get_meta_data()
        assert reader.count_frames() == anim.frames == len(ev)
        assert meta["size"] == anim.size and meta["fps"] == 5.0 and meta["codec"] == "h264"
    finally:
        reader.close()


def test_the_colour_scale_is_the_whole_runs(tmp_path):
    """The lump's peak falls as it spreads: each frame's centre pixel has the colour of
    its value on the scale of the whole run, not on a scale of its own frame."""
    import imageio.v3 as iio
    from matplotlib import colormaps

    from fieldgo.animation import _Drawer

    ev = _spreading_lump()
    values = np.stack([s[0] for s in ev.snapshots])
    anim = fg.animate(ev, density=None, path=tmp_path / "lump.gif", dpi=60)
    ((cmap, lo, hi),) = anim.scales
    top = np.abs(values).max()
    assert (cmap, lo, hi) == ("RdBu_r", -top, top)  # u dips below 0 behind the front: signed
    frames = iio.imread(tmp_path / "lump.gif", index=None)

    drawer = _Drawer(anim._src, None, anim.scales, dpi=60, figsize=None, title=None)
    drawer.frame(0.0, [values[0]])
    box = drawer.fig.axes[0].get_window_extent()
    height = drawer.canvas.get_width_height()[1]
    row, col = int(height - (box.y0 + box.y1) / 2), int((box.x0 + box.x1) / 2)
    centre = values[:, 20, 20]
    assert centre[0] == 1.0 and centre[-1] < 0.5
    for k in (0, len(ev) - 1):
        want = np.array(colormaps[cmap]((centre[k] - lo) / (hi - lo))[:3]) * 255
        own = np.array(colormaps[cmap]((centre[k] + np.abs(values[k]).max()) / (2 * np.abs(values[k]).max()))[:3])
        got = frames[k, row, col].astype(float)
        assert np.abs(got - want).max() < 12, (k, got, want)
        if k:
            assert np.abs(got - own * 255).max() > 40  # a frame's own scale would look otherwise


def test_vmin_vmax_are_used_as_given(tmp_path):
    ev = _kink_run(T=1.0)
    anim = fg.animate(ev, density="kinkness", vmin=-0.1, vmax=0.6)
    assert anim.scales == [("RdBu_r", -0.1, 0.6)]
    anim = fg.animate(ev, density="kinkness")
    ((cmap, lo, hi),) = anim.scales
    assert cmap == "RdBu_r" and lo == -hi and 0.49 < hi < 0.6  # a declared density: signed


def test_inline_display_embeds_the_media():
    ev = _kink_run(T=1.0)
    anim = fg.animate(ev, embed="gif", dpi=40)
    html = anim._repr_html_()
    m = re.search(r'src="data:image/gif;base64,([^"]+)"', html)
    assert m and html.startswith("<img")
    import imageio.v3 as iio

    frames = iio.imread(io.BytesIO(base64.b64decode(m.group(1))), index=None, extension=".gif")
    assert frames.shape[0] == anim.frames == len(ev)
    if importlib.util.find_spec("imageio_ffmpeg") is not None:
        html = fg.animate(ev, embed="mp4", dpi=40)._repr_html_()
        assert html.startswith("<video") and 'src="data:video/mp4;base64,' in html


def test_an_evolution_file_animates_and_saves_twice(tmp_path):
    """The snapshots of a file are read one at a time; its theory comes from the file."""
    import imageio.v3 as iio

    _kink_run(T=1.0, out=tmp_path / "run.arrow")
    ev = fg.read_evolution(tmp_path / "run.arrow")
    anim = fg.animate(ev, density="energy", every=2, dpi=40, title="kink")
    assert anim.frames == math.ceil(len(ev) / 2)
    anim.save(tmp_path / "a.gif")
    anim.save(tmp_path / "b.gif")
    assert iio.imread(tmp_path / "b.gif", index=None).shape[0] == anim.frames


def test_a_3d_run_is_drawn_by_a_plane(tmp_path):
    import imageio.v3 as iio

    ev = _kink_3d(T=0.4)
    anim = fg.animate(ev, axis="y", index=3, path=tmp_path / "k.gif", dpi=40)
    frames = iio.imread(tmp_path / "k.gif", index=None)
    assert frames.shape[:3] == (len(ev), anim.size[1], anim.size[0])
    with pytest.raises(fg.ParameterError, match="index=9 is outside"):
        fg.animate(ev, axis="y", index=9)


def test_missing_imageio_is_a_backend_error_naming_the_extra(monkeypatch, tmp_path):
    import sys

    ev = _kink_run(T=0.5)
    monkeypatch.setitem(sys.modules, "imageio", None)
    with pytest.raises(fg.BackendError, match=r"fieldgo\[anim\]"):
        fg.animate(ev, path=tmp_path / "a.gif")


def test_without_ffmpeg_mp4_is_refused_and_the_inline_view_is_a_gif(monkeypatch, tmp_path):
    import sys

    ev = _kink_run(T=0.5)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    with pytest.raises(fg.BackendError, match=r"imageio-ffmpeg.*fieldgo\[anim\]"):
        fg.animate(ev, path=tmp_path / "a.mp4")
    assert not (tmp_path / "a.mp4").exists()
    assert fg.animate(ev, dpi=30)._repr_html_().startswith('<img alt="3 frames')


# --- tracking ----------------------------------------------------------------------


def test_a_boosted_kink_is_tracked_at_its_speed(tmp_path):
    v = 0.5
    ev = _kink_run(v=v, out=tmp_path / "kink.arrow")
    table = fg.track(ev, density="energy")
    assert table.column_names == ["frame", "t", "id", "x", "weight", "sites", "peak"]
    assert table.num_rows == len(ev) and set(table.column("id").to_pylist()) == {0}
    t, x = table.column("t").to_numpy(), table.column("x").to_numpy()
    slope, x0 = np.polyfit(t, x, 1)
    assert abs(slope - v) < 1e-3 and abs(x0 + 2.0) < 1e-3
    # the centre moves smoothly across sites: 1.8e-6 measured (weights |e| - threshold:
    # 8e-5, |e| alone: 3.6e-3)
    assert np.abs(x - (-2.0 + v * t)).max() < 1e-5
    # the file read back tracks the same
    assert fg.track(fg.read_evolution(tmp_path / "kink.arrow")).equals(table)


def test_two_lumps_keep_their_ids():
    """Two pulses of the 1D wave equation, u = f(x - t) + f(-x - t), move apart."""
    sim = fg.Simulation(_wave(1), grid=(241,), spacing=0.1, boundary="periodic", backend="cpu")

    def f(s):
        return np.exp(-4 * (s + 6) ** 2)

    def df(s):
        return -8 * (s + 6) * np.exp(-4 * (s + 6) ** 2)

    sim.set_field(lambda x: f(x) + f(-x))
    sim.set_velocity(lambda x: -df(x) - df(-x))
    ev = sim.evolve(3.0, dt=0.05, record_every=10)
    table = fg.track(ev, density=None, component="u", threshold=0.1).to_pylist()
    assert len(table) == 2 * len(ev)
    for row in table:
        expect = -6 + row["t"] if row["id"] == 0 else 6 - row["t"]
        assert abs(row["x"] - expect) < 0.02, row


def test_a_lump_across_a_periodic_edge_is_one_lump_on_its_side():
    lat_sim = fg.Simulation(_wave(2), grid=(40, 32), spacing=0.25, boundary="periodic", backend="cpu")
    x, y = lat_sim.lattice.x, lat_sim.lattice.y
    period = 40 * 0.25
    xc, yc = x[-2] + 0.3 * 0.25, y[16]

    def lump(X, Y):
        return sum(np.exp(-((X - xc + k * period) ** 2) - (Y - yc) ** 2) for k in (-1, 0, 1))

    lat_sim.set_field(lump)
    (row,) = fg.track(lat_sim, density=None, component="u", threshold=0.05).to_pylist()
    assert abs(row["x"] - xc) < 1e-3 and abs(row["y"] - yc) < 1e-12
    assert row["t"] == 0.0 and row["id"] == 0
    # a fixed lattice cuts it in two, one on each side
    fixed = fg.Field.from_numpy(lat_sim.field.numpy(), fg.Lattice((40, 32), 0.25), names=["u"])
    rows = fg.track(fixed, density=None, component="u", threshold=0.05).to_pylist()
    assert len(rows) == 2 and rows[0]["x"] < 0 < rows[1]["x"]


_ORIGIN_3D = (-4.0, 0.5, -1.0)


def test_a_skyrmion_and_an_antiskyrmion_are_lumps_of_their_charge():
    """On one simulation: a row at t = sim.time, the weight the charge's sign and size."""
    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(48, 48), spacing=0.25, backend="cpu")
    for q in (1, -1):
        sim.set_field(fg.initial.skyrmion(charge=q, centre=(1.0, -0.5)))
        (row,) = fg.track(sim, density="charge", threshold=1e-3).to_pylist()
        assert abs(row["x"] - 1.0) < 1e-12 and abs(row["y"] + 0.5) < 1e-12 and row["t"] == sim.time == 0.0
        assert np.sign(row["weight"]) == q and abs(row["weight"] - sim.integral("charge")) < 0.02


def _kink_3d(v=0.5, T=1.0):
    """The phi^4 kink moving along x on a 3D lattice with free boundaries (nothing held:
    the wall is not pinned at the edges), a lump centred across y and z."""
    sim = fg.Simulation(_phi4(True), grid=(81, 7, 5), spacing=0.1, boundary="free", origin=_ORIGIN_3D, backend="cpu")
    phi, vel = fg.initial.boost(lambda x, y, z: np.tanh(x), v, centre=-1.0)
    sim.set_field(phi)
    sim.set_velocity(vel)
    return sim.evolve(T, dt=0.05, record_every=4)


def test_a_3d_lump_has_x_y_z():
    ev = _kink_3d()
    table = fg.track(ev)
    assert table.column_names[3:6] == ["x", "y", "z"]
    assert table.num_rows == len(ev) and set(table.column("id").to_pylist()) == {0}
    t, x = table.column("t").to_numpy(), table.column("x").to_numpy()
    assert abs(np.polyfit(t, x, 1)[0] - 0.5) < 1e-3
    y, z = table.column("y").to_numpy(), table.column("z").to_numpy()
    assert np.abs(y - (_ORIGIN_3D[1] + 0.3)).max() < 1e-12 and np.abs(z - (_ORIGIN_3D[2] + 0.2)).max() < 1e-12


def test_bad_input_names_the_problem(tmp_path):
    """(tests/python/test_bad_input_catalogue.py has fg.animate's and a NaN threshold.)"""
    ev = _kink_run(T=0.5)
    with pytest.raises(fg.SpecError, match="unknown density 'charge'"):
        fg.track(ev, density="charge")
    with pytest.raises(fg.ParameterError, match="unknown component 'w'"):
        fg.track(ev, density=None, component="w")
    with pytest.raises(fg.ParameterError, match="threshold must be a positive"):
        fg.track(ev, threshold=-1.0)
    with pytest.raises(fg.ParameterError, match="density= or component=, not both"):
        fg.animate(ev, density="energy", component="u")
    with pytest.raises(fg.ParameterError, match="fps must be positive"):
        fg.animate(ev, fps=0)
    sim = fg.Simulation(_phi4(), grid=(41,), spacing=0.5, backend="cpu")
    sim.set_field(np.tanh)
    with pytest.raises(fg.ParameterError, match="no snapshots"):
        fg.track(sim.evolve(0.5, snapshots=False))
