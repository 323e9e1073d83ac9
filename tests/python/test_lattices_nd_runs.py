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

    # Chunks of about a millisecond, so that the flow can be stopped between two.
    monkeypatch.setattr(fg.runtime.simulation, "_CHUNK_SECONDS", 0.001)
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
