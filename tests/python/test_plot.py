"""fg.plot and fg.plot_history: colour maps by sign, lattice coordinates, histories
over several minimize calls."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo.plotting import colormap_for, figure_png, history_steps  # noqa: E402


@pytest.fixture(scope="module")
def sim():
    s = fg.Simulation(fg.theories.baby_skyrme(), grid=(40, 32), spacing=0.5, boundary="fixed")
    s.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    s.minimize(tol=1e-3, max_steps=200, check_every=5)
    s.minimize(tol=1e-4, max_steps=200, check_every=5)
    yield s
    s.close()


def test_colormaps_follow_the_sign():
    assert colormap_for(np.array([-1.0, 0.5])) == ("RdBu_r", -1.0, 1.0)
    assert colormap_for(np.array([0.0, 2.0]))[0] == "inferno"
    assert colormap_for(np.array([-1e-9, 2.0]), "energy")[0] == "inferno"
    assert colormap_for(np.array([-2.0, -1.0]))[0] == "RdBu_r"


def test_density_and_component_figures(sim):
    fig = fg.plot(sim, density="charge")
    (ax, cbar) = fig.axes
    im = ax.images[0]
    assert im.get_cmap().name == "RdBu_r" and im.get_clim()[0] == -im.get_clim()[1]
    assert np.allclose(im.get_extent(), sim.lattice.extent)
    assert ax.get_xlabel() == "x" and ax.get_ylabel() == "y"
    energy = fg.plot(sim).axes[0].images[0]
    assert energy.get_cmap().name == "inferno"
    assert np.array_equal(energy.get_array(), sim.density("energy").numpy()[0])
    three = fg.plot(sim.field)
    assert [a.get_title() for a in three.axes if a.images] == ["n1", "n2", "n3"]
    one = fg.plot(sim, component="n3").axes[0].images[0]
    assert np.array_equal(one.get_array(), sim.field.numpy()[2])
    assert figure_png(three).startswith(b"\x89PNG")


def test_into_given_axes_and_errors(sim):
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    im = fg.plot(sim, density="charge", ax=ax, colorbar=False)
    assert im in ax.images
    with pytest.raises(ValueError, match="component="):
        fg.plot(sim.field, ax=ax)
    with pytest.raises(ValueError):
        fg.plot(sim.field, density="charge")
    with pytest.raises(TypeError):
        fg.plot(np.zeros((4, 4)))


def test_history_over_two_calls(sim):
    hist = sim.history
    steps = hist.column("step").to_pylist()
    assert steps != sorted(steps)  # two calls, each from 0
    flat = history_steps(steps)
    assert np.all(np.diff(flat) >= 0) and flat[-1] > max(steps)
    fig = fg.plot_history(hist)
    ax, right = fig.axes
    assert right.get_yscale() == "log" and ax.get_xlabel() == "step"
    assert np.array_equal(ax.lines[0].get_xdata(), flat)
    with pytest.raises(ValueError, match="history"):
        fg.plot_history(sim.field.to_arrow())


def test_signed_is_judged_against_the_largest_value():
    # a Q = -1 charge density: rounding leaves a 1e-12 positive maximum
    q = -np.exp(-(np.linspace(0, 5, 50) ** 2))
    q[10] = 1e-12
    assert colormap_for(q) == ("RdBu_r", 1.0 * q.min(), -q.min())
    assert colormap_for(-q + 0 * q)[0] == "inferno"  # positive, unnamed: sequential
    assert colormap_for(-q, "charge")[0] == "RdBu_r"  # a declared density is signed
    assert colormap_for(-q, "demag_energy")[0] == "inferno"  # an energy is not


def test_negative_charge_density_figure_is_diverging():
    with fg.Simulation(fg.theories.baby_skyrme(), grid=(40, 32), spacing=0.5) as s:
        s.set_field(fg.initial.skyrmion(charge=-1))
        im = fg.plot(s, density="charge").axes[0].images[0]
        assert im.get_cmap().name == "RdBu_r" and im.get_clim()[0] == -im.get_clim()[1]
