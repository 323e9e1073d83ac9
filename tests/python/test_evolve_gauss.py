"""Gauss's law of the abelian Higgs model in temporal gauge (``@theory.gauss_law``):
G = div E - rho with E = -d_t A and rho = -q Im(conj(psi) d_t psi), recorded by evolve
as ``gauss_max`` and ``gauss_l2``. The exact dynamics conserves G, so for consistent
initial data its growth is the scheme's error, and for inconsistent data it stays at
its initial value; bad declarations raise TraceError at the user's line."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fieldgo as fg
from fieldgo import SpecError, TraceError

HERE = Path(__file__).resolve()


def line_of(marker: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), start=1):
        if text.rstrip().endswith("# <-- " + marker):
            return i
    raise AssertionError(f"marker {marker!r} not found")


def d1(f, h, axis):
    """The engine's fourth-order central difference along a numpy axis."""
    return (-np.roll(f, -2, axis) + 8 * np.roll(f, -1, axis) - 8 * np.roll(f, 1, axis) + np.roll(f, 2, axis)) / (12 * h)


def _vortex_sim(h, L=10.0, q=1.0, theory=None):
    th = theory or fg.theories.abelian_higgs(q=q)
    n = int(round(2 * L / h)) + 1
    sim = fg.Simulation(th, grid=(n, n), spacing=h, origin=(-L, -L), boundary="fixed", backend="cpu")
    sim.set_field(fg.initial.vortex(1, q=q))
    X, Y = sim.lattice.meshgrid()
    f = sim.field.numpy().copy()
    return sim, f[0] + 1j * f[1], X, Y


def _perturbed_vortex(h, dt, q=1.0, theory=None, method="rk4", T=3.0):
    """A vortex (the ansatz: it is not static, so it moves) kicked by a breathing of
    |psi| (d_t psi = g psi, no charge) and a transverse d_t A = curl chi (no
    divergence): G = 0 at t = 0, exactly for the discrete stencils."""
    sim, psi, X, Y = _vortex_sim(h, q=q, theory=theory)
    g = 0.3 * np.exp(-((X - 0.5) ** 2 + Y**2) / 2)
    chi = 0.3 * np.exp(-((X + 1) ** 2 + (Y - 0.5) ** 2) / 2)
    sim.set_velocity(np.array([(g * psi).real, (g * psi).imag, d1(chi, h, 0), -d1(chi, h, 1)]))
    ev = sim.evolve(T, dt, method=method, record_every=10)
    return ev.history


def test_consistent_data_violation_is_the_discretisation_error():
    """G starts at roundoff and grows only by the scheme's error, which falls with the
    lattice at a fixed Courant number dt = h/4 (measured: L2 norm 2.7e-2, 4.5e-3, 4.2e-4
    at h = 0.4, 0.2, 0.1, ratios 6.0 and 10.7 on the way to the fourth-order stencils'
    16); at h = 0.2 halving dt, or leapfrog, changes it by 1e-4: the error is the
    spatial one."""
    q = 1.5  # a coupling other than 1: rho's factor q is part of what is checked
    l2 = {}
    for h in (0.4, 0.2, 0.1):
        hist = _perturbed_vortex(h, h / 4, q=q)
        gmax, gl2 = hist.column("gauss_max").to_numpy(), hist.column("gauss_l2").to_numpy()
        assert gmax[0] < 1e-9 and gl2[0] < 1e-9
        assert np.all(np.isfinite(gl2)) and gl2[-1] > 0
        l2[h] = gl2.max()
    assert l2[0.4] / l2[0.2] > 4.5 and l2[0.2] / l2[0.1] > 8, l2
    # the charge the kick sets moving is O(1) (the gauge kick below: G of 1.5)
    assert l2[0.2] < 1e-2, l2
    finer_dt = _perturbed_vortex(0.2, 0.025, q=q).column("gauss_l2").to_numpy().max()
    assert finer_dt == pytest.approx(l2[0.2], rel=0.01)
    leapfrog = _perturbed_vortex(0.2, 0.05, q=q, method="leapfrog").column("gauss_l2").to_numpy().max()
    assert leapfrog == pytest.approx(l2[0.2], rel=0.01)


def test_a_wrong_charge_density_is_not_conserved():
    """The same run monitored with rho of the wrong sign: G grows to the size of the
    charge itself, some hundred times the right law's violation (which is what makes the
    recorded one a measure of the scheme)."""
    th = fg.theories.abelian_higgs()

    @th.gauss_law
    def wrong(s, v, p):
        psi, psi_t = fg.complex_field(s, "psi_re", "psi_im").value, fg.complex_field(v, "psi_re", "psi_im").value
        return -(v.dx.a_x + v.dy.a_y) - p.q * (psi.conj() * psi_t).imag

    right = _perturbed_vortex(0.2, 0.05).column("gauss_l2").to_numpy().max()
    bad = _perturbed_vortex(0.2, 0.05, theory=th).column("gauss_l2").to_numpy().max()
    assert bad > 30 * right, (bad, right)


def _gauge_kick(h, q):
    """The velocity along a gauge orbit, d_t psi = i q chi psi, d_t A = grad chi: it
    violates Gauss's law by G = -lap chi + q^2 |psi|^2 chi."""
    sim, psi, X, Y = _vortex_sim(h, q=q)
    chi = 0.3 * np.exp(-((X + 1) ** 2 + (Y - 0.5) ** 2) / 2)
    sim.set_velocity(np.array([(1j * q * chi * psi).real, (1j * q * chi * psi).imag, d1(chi, h, 1), d1(chi, h, 0)]))
    G = -(d1(d1(chi, h, 1), h, 1) + d1(d1(chi, h, 0), h, 0)) + q * q * np.abs(psi) ** 2 * chi
    return sim, G


def test_inconsistent_velocity_violation_is_conserved():
    """A gauge-orbit velocity: the recorded violation at t = 0 is the G computed here
    with the same stencils, and it stays there (the dynamics conserves G) to the
    discretisation's accuracy while the field moves."""
    h, q = 0.2, 1.5
    sim, G = _gauge_kick(h, q)
    inner = np.zeros_like(G, dtype=bool)
    inner[2:-2, 2:-2] = True  # the held layers have no velocity: G is not evaluated there
    l2_0 = np.sqrt((G[inner] ** 2).sum() * h * h)
    f0 = sim.field.numpy().copy()
    hist = sim.evolve(3.0, 0.05, record_every=10).history
    gl2, gmax = hist.column("gauss_l2").to_numpy(), hist.column("gauss_max").to_numpy()
    assert gl2[0] == pytest.approx(l2_0, rel=1e-10)
    assert gmax[0] == pytest.approx(np.abs(G[inner]).max(), rel=1e-10)
    assert gl2[0] > 1  # 1.457
    assert np.abs(gl2 / gl2[0] - 1).max() < 1e-2  # 4.1e-3 (2.7e-4 at h = 0.1)
    assert np.abs(sim.field.numpy() - f0).max() > 0.1  # the field did move


def test_three_dimensional_gauss_law():
    """abelian_higgs_3d: a vortex line kicked along its gauge orbit, as in the plane;
    the 3D divergence has the d_z term."""
    h, L, q = 0.4, 4.0, 1.0
    n = int(round(2 * L / h)) + 1
    sim = fg.Simulation(fg.theories.abelian_higgs_3d(), grid=(n, n, n), spacing=h, origin=(-L, -L, -L), backend="cpu")
    sim.set_field(fg.initial.vortex_line())
    f = sim.field.numpy().copy()
    psi = f[0] + 1j * f[1]
    Z, Y, X = np.meshgrid(*(sim.lattice.origin[a] + h * np.arange(n) for a in (2, 1, 0)), indexing="ij")
    chi = 0.3 * np.exp(-(X**2 + Y**2 + Z**2))
    sim.set_velocity(
        np.array([(1j * chi * psi).real, (1j * chi * psi).imag, d1(chi, h, 2), d1(chi, h, 1), d1(chi, h, 0)])
    )
    lap = sum(d1(d1(chi, h, a), h, a) for a in range(3))
    G = -lap + q * q * np.abs(psi) ** 2 * chi
    inner = np.zeros_like(G, dtype=bool)
    inner[2:-2, 2:-2, 2:-2] = True
    hist = sim.evolve(1.0, 0.1).history
    gl2 = hist.column("gauss_l2").to_numpy()
    # (the Gaussian is 1e-7 at the box edge, where the held sites have no velocity)
    assert gl2[0] == pytest.approx(np.sqrt((G[inner] ** 2).sum() * h**3), rel=1e-6)
    assert np.abs(gl2 / gl2[0] - 1).max() < 0.1  # 5.5e-2 at this coarse h = 0.4


def test_columns_only_with_a_gauss_law_and_a_velocity(tmp_path):
    """A theory without a Gauss law has no column; the columns survive out=, save and
    load."""
    bs = fg.Simulation(fg.theories.baby_skyrme(), grid=(24, 24), spacing=0.3, backend="cpu")
    bs.set_field(fg.initial.skyrmion(charge=1))
    cols = bs.evolve(0.2).history.column_names
    assert "gauss_max" not in cols and "gauss_l2" not in cols
    assert "gauss_law" not in fg.theories.baby_skyrme().spec
    assert fg.theories.abelian_higgs().spec["gauss_law"] is True and fg.theories.abelian_higgs().has_gauss_law

    sim, G = _gauge_kick(0.4, 1.0)
    ev = sim.evolve(0.4, 0.1, out=tmp_path / "run.arrow")
    assert ev.history.column_names[-2:] == ["gauss_max", "gauss_l2"]
    back = fg.read_evolution(tmp_path / "run.arrow")
    assert back.history.equals(ev.history)
    sim.save(tmp_path / "sim.arrow")
    again = fg.load(tmp_path / "sim.arrow", backend="cpu").evolve(0.2, 0.1).history
    assert again.column("gauss_l2").to_numpy()[0] == pytest.approx(ev.history.column("gauss_l2").to_numpy()[-1])


# --- bad declarations: TraceError at the user's line -----------------------------------


def _trace_with(fn):
    th = fg.theories.abelian_higgs()
    th.gauss_law(fn)
    return th.source


def _check(exc_info, marker, *words):
    err = exc_info.value
    msg = str(err)
    assert f"{HERE}:{line_of(marker)}" in msg, msg
    assert err.lineno == line_of(marker)
    for w in words:
        assert w in msg, msg


def test_wrong_arity_names_the_def_line():
    with pytest.raises(TraceError) as ei:

        def g(s, p):  # <-- arity
            return s.phi.a_x

        fg.theories.abelian_higgs().gauss_law(g)
    _check(ei, "arity", "@theory.gauss_law", "(s, v, p)")


def test_a_law_without_velocities_names_the_def_line():
    def g(s, v, p):  # <-- no-velocity
        return s.dx.a_x + s.dy.a_y

    with pytest.raises(TraceError) as ei:
        _trace_with(g)
    _check(ei, "no-velocity", "must read the velocities v")


def test_a_vector_result_names_the_return_line():
    def g(s, v, p):
        return v.dx  # <-- vector

    with pytest.raises(TraceError) as ei:
        _trace_with(g)
    _check(ei, "vector", "gauss_law must return a real scalar", "Vector")


def test_branching_and_unknown_names_are_traced_errors():
    def branches(s, v, p):
        if v.phi.a_x > 0:  # <-- branch
            return v.dx.a_x
        return v.dy.a_y

    with pytest.raises(TraceError) as ei:
        _trace_with(branches)
    _check(ei, "branch", "`if` statement")

    def unknown(s, v, p):
        return v.dx.a_z  # <-- unknown-component

    with pytest.raises(TraceError) as ei:
        _trace_with(unknown)
    _check(ei, "unknown-component", "a_z")


def test_a_density_named_like_a_gauss_column_is_refused():
    th = fg.theories.abelian_higgs()

    @th.density("gauss_l2")
    def d(s, p):
        return s.phi.a_x

    with pytest.raises(SpecError, match="gauss_l2"):
        fg.Simulation(th, grid=(16, 16), spacing=0.5, backend="cpu")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
