"""Auxiliary fields: components fixed by their own field equation, flowed to
the saddle of the energy (docs/auxiliary.md)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo.theories._chiral import dmi_energy, dmi_tensor  # noqa: E402
from fieldgo.theories._magnetic import MAGNET, gradient_m2, skyrmion_density  # noqa: E402


def antiskyrmion(R=2.0):
    """soliton_solver's "anti" ansatz (Heusler DMI): m3 = cos f, f = pi exp(-(r/R)^2)."""

    def f(X, Y):
        r, th = np.hypot(X, Y), np.arctan2(Y, X)
        fr = np.pi * np.exp(-((r / R) ** 2))
        return -np.sin(fr) * np.sin(th), -np.sin(fr) * np.cos(th), np.cos(fr), 0 * X

    return f


def plain_chiral_magnet(dmi="heusler"):
    """The chiral magnet without demagnetisation, written with no auxiliary field."""
    tensor = dmi_tensor(dmi)
    th = fg.Theory(
        "chiral_magnet_plain",
        fields=list(MAGNET),
        params={"J": 40e-12, "K": 0.8e6, "D": 4e-3, "M": 580e3, "B": 0.0, "mu0": 1.25663706127e-6},
        constraint=fg.UnitVector(),
    )

    @th.energy_density
    def energy(s, p):
        scale = p.J / p.D**2
        k, h = p.K * scale, p.M * p.B * scale
        m3 = s.phi.m3
        return 0.5 * gradient_m2(s) + dmi_energy(s, tensor) + h * (1 - m3) + k * (1 - m3 * m3)

    @th.density("skyrmion_number")
    def q(s, p):
        return skyrmion_density(s)

    return th


# --- declaring ------------------------------------------------------------------------


def test_auxiliary_is_in_the_spec_and_the_source():
    th = fg.theories.chiral_magnet()
    assert th.spec["auxiliary"] == ["psi"]
    assert "#define FG_AUX(k)  ((k) == 3)" in th.source
    assert "#define FG_NAUX    1" in th.source
    plain = plain_chiral_magnet()
    assert "auxiliary" not in plain.spec and "FG_AUX" not in plain.source


def test_bad_auxiliary_declarations_are_spec_errors():
    with pytest.raises(fg.SpecError, match="not one of the fields"):
        fg.Theory("t", fields=["a", "b"], auxiliary=["c"])
    with pytest.raises(fg.SpecError, match="every field is auxiliary"):
        fg.Theory("t", fields=["a"], auxiliary="a")


def test_engine_refuses_auxiliary_spec_without_fg_aux():
    th = plain_chiral_magnet()

    class Doctored:
        name, fields, params, dynamic_params = th.name, th.fields, th.params, th.dynamic_params
        spec = {**th.spec, "auxiliary": ["m3"]}
        source = th.source

    with pytest.raises(fg.SpecError, match="FG_AUX"):
        fg.Simulation(Doctored(), grid=(8, 8), spacing=0.5, backend="cpu")


def test_unit_vector_constraint_leaves_the_auxiliary_component_alone():
    sim = fg.Simulation(fg.theories.chiral_magnet(), grid=(8, 8), spacing=0.5, boundary="periodic", backend="cpu")
    with pytest.warns(fg.fieldvalues.ConstraintWarning, match=r"\|\(m1, m2, m3\)\| is 5"):
        sim.set_field(lambda X, Y: (0 * X + 3.0, 0 * X, 0 * X + 4.0, 0 * X + 0.25))
    f = sim.field.numpy()
    assert np.allclose(f[0], 0.6) and np.allclose(f[2], 0.8)
    assert np.all(f[3] == 0.25)
    sim.close()


# --- demagnetisation off = the theory without an auxiliary field, bit for bit ----------


@pytest.mark.parametrize("boundary", ["periodic", "fixed"])
def test_demag_off_equals_the_theory_without_auxiliary_bit_for_bit(boundary):
    steps = 60
    out = []
    for th in (fg.theories.chiral_magnet(dmi="heusler", demag=False), plain_chiral_magnet()):
        sim = fg.Simulation(th, grid=(40, 40), spacing=0.3, boundary=boundary, backend="cpu")
        sim.set_field(lambda X, Y: antiskyrmion()(X, Y)[: len(th.fields)])  # noqa: B023  (called here)
        hist = sim.minimize(tol=1e-12, max_steps=steps, check_every=10).to_pydict()
        f = sim.field.numpy().copy()
        out.append((hist, sim.energy(), f, sim.integral("skyrmion_number")))
        sim.close()
    (h4, e4, f4, q4), (h3, e3, f3, q3) = out
    assert h4["step"][-1] == h3["step"][-1] == steps
    assert h4["energy"] == h3["energy"] and h4["resets"] == h3["resets"]
    assert e4 == e3 and q4 == q3
    assert np.array_equal(f4[:3], f3)  # every bit of m
    assert np.all(f4[3] == 0.0)  # psi never moves: nothing sources it


# --- the auxiliary equation at convergence, against numpy.fft --------------------------


def _d1(f, axis, h):
    return (-np.roll(f, -2, axis) + 8 * np.roll(f, -1, axis) - 8 * np.roll(f, 1, axis) + np.roll(f, 2, axis)) / (12 * h)


def _d2(f, axis, h):
    return (
        -np.roll(f, -2, axis) + 16 * np.roll(f, -1, axis) - 30 * f + 16 * np.roll(f, 1, axis) - np.roll(f, 2, axis)
    ) / (12 * h * h)


def _symbols(n, h):
    t = 2 * np.pi * np.fft.fftfreq(n)
    d1 = 1j * (8 * np.sin(t) - np.sin(2 * t)) / (6 * h)
    d2 = (-2 * np.cos(2 * t) + 32 * np.cos(t) - 30) / (12 * h * h)
    return d1, d2, t / h


RESIDUAL_TOL = 1e-7  # the flow's tolerance: max |dE/dphi| over m and psi


@pytest.fixture(scope="module")
def demag_skyrmion():
    th = fg.theories.chiral_magnet(dmi="heusler", demag=True)
    n, L = 112, 16.0  # h = 0.144: at h = 0.25 the antiskyrmion unwinds through the lattice
    h = L / (n - 1)
    sim = fg.Simulation(th, grid=(n, n), spacing=h, boundary="periodic", backend="cpu")
    sim.set_field(antiskyrmion())
    hist = sim.minimize(tol=RESIDUAL_TOL, max_steps=5000).to_pydict()
    p = th.params
    mu = p["mu0"] * p["M"] ** 2 * p["J"] / p["D"] ** 2
    yield sim, hist, h, mu
    sim.close()


def test_demag_flow_converges_to_a_charged_antiskyrmion(demag_skyrmion):
    sim, hist, h, mu = demag_skyrmion
    assert hist["max_grad"][-1] < RESIDUAL_TOL, hist["max_grad"][-1]
    assert sim.integral("skyrmion_number") == pytest.approx(1.0, abs=5e-3)
    assert sim.integral("demag_energy") > 0.1


def test_auxiliary_field_satisfies_its_equation_at_convergence(demag_skyrmion):
    """Residual of Delta_h psi = mu div_h m (the engine's fourth-order stencils,
    recomputed in numpy), per unit mu: below the flow's tolerance."""
    sim, hist, h, mu = demag_skyrmion
    f = sim.field.numpy()
    m1, m2, psi = f[0], f[1], f[3]
    residual = (_d2(psi, 1, h) + _d2(psi, 0, h)) / mu - (_d1(m1, 1, h) + _d1(m2, 0, h))
    assert np.max(np.abs(residual)) < 1.01 * RESIDUAL_TOL


def test_auxiliary_field_agrees_with_an_fft_solution(demag_skyrmion):
    sim, hist, h, mu = demag_skyrmion
    f = sim.field.numpy().copy()
    ny, nx = f.shape[1:]
    d1x, d2x, kx = _symbols(nx, h)
    d1y, d2y, ky = _symbols(ny, h)
    M1, M2 = np.fft.fft2(f[0]), np.fft.fft2(f[1])
    # The same discrete equation, solved exactly: (D2x + D2y) psi = mu (D1x m1 + D1y m2).
    lap = d2x[None, :] + d2y[:, None]
    rhs = mu * (d1x[None, :] * M1 + d1y[:, None] * M2)
    lap[0, 0] = 1.0
    psi_hat = rhs / lap
    psi_hat[0, 0] = 0.0
    psi_fft = np.fft.ifft2(psi_hat).real
    psi = f[3] - f[3].mean()
    scale = np.max(np.abs(psi_fft))
    assert np.max(np.abs(psi - psi_fft)) < 1e-5 * scale
    # The flow conserves the mean of psi (its source has none): it started at 0.
    assert abs(f[3].mean()) < 1e-12
    # The continuum equation solved spectrally: agrees to the discretisation error.
    klap = -(kx[None, :] ** 2 + ky[:, None] ** 2)
    klap[0, 0] = 1.0
    spec = mu * (1j * kx[None, :] * M1 + 1j * ky[:, None] * M2) / klap
    spec[0, 0] = 0.0
    assert np.max(np.abs(psi - np.fft.ifft2(spec).real)) < 2e-2 * scale
    # The energy at the exact psi: the saddle's error is second order in the residual.
    e_flow = sim.energy()
    f[3] = psi_fft
    sim.set_field(f)
    assert sim.energy() == pytest.approx(e_flow, abs=1e-9)


def test_chern_simons_gauss_law_holds_at_convergence():
    """A winding-1 vortex: Gauss's law (Delta - q^2|psi|^2) a_0 = kappa B holds
    integrated over the lattice; the Higgs screens a_0 (int Delta a_0 small), so the
    charge is nearly all Noether charge; the saddle's energy is the static energy."""
    th = fg.theories.chern_simons_higgs(q=1.0, lam=0.5, kappa=0.5, u=1.0)
    n, L = 48, 16.0
    h = L / (n - 1)
    sim = fg.Simulation(th, grid=(n, n), spacing=h, boundary="fixed", backend="cpu")

    def vortex(X, Y):
        r, t = np.hypot(X, Y), np.arctan2(Y, X)
        f = np.tanh(r)
        a = (1 - 1 / np.cosh(r)) / np.maximum(r, 1e-12)
        return -a * np.sin(t), a * np.cos(t), f * np.cos(t), f * np.sin(t), 0 * X

    sim.set_field(vortex)
    hist = sim.minimize(tol=1e-6, max_steps=8000).to_pydict()
    assert hist["max_grad"][-1] < 1e-6
    assert sim.integral("vortex_number") == pytest.approx(1.0, abs=2e-2)
    flux = sim.integral("magnetic_field")
    electric, noether = sim.integral("electric_charge"), sim.integral("noether_charge")
    assert -electric - noether == pytest.approx(0.5 * flux, rel=1e-4)  # Gauss, integrated
    assert abs(electric) < 0.05 * abs(noether)  # screened
    assert sim.energy() == pytest.approx(sim.integral("physical_energy"), rel=1e-4)
    sim.close()
