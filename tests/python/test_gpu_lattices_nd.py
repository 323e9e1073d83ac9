"""Lines, 3D lattices and boundaries per axis on the CUDA backend (kernels/src
cuda_site3d.cu, kernels/cuda grid.go). These tests run on a machine with a usable
NVIDIA GPU and skip elsewhere, saying why.

Agreement bound between CPU and GPU runs, as in test_gpu.py: both compute in float64
without fast-math and differ only by reassociation (reduction order, FMA contraction),
so after n steps fields agree within n * 1e3 * u * max(1, |phi|). Two GPU runs are the
same bits: the reductions' order depends on the grid alone. float32 storage against
the CPU's float32 storage: n * 8 * u32 * max(1, |phi|) (test_gpu.py's float32 bound).
"""

import numpy as np
import pytest

import fieldgo as fg

CUDA = fg.devices()["cuda"]
pytestmark = pytest.mark.skipif(not CUDA["available"], reason=f"no usable GPU: {CUDA.get('reason')}")
U = 2.0**-53
U32 = 2.0**-24
STEPS = 100


def _phi4_3d():
    th = fg.Theory("phi4_3d", fields=["u"], params={"lam": 1.0})

    @th.energy_density
    def e(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2 + s.dz.u**2) + 0.5 * p.lam * (1 - s.phi.u**2) ** 2

    return th


def _coupled_3d():
    """Two components coupled through their z derivatives and positions."""
    th = fg.Theory("coupled_3d", fields=["u", "v"], params={"k": 0.7})

    @th.energy_density
    def e(s, p):
        grad = s.dx.u**2 + s.dy.u**2 + s.dz.u**2 + s.dx.v**2 + s.dy.v**2 + s.dz.v**2
        twist = p.k * s.dz.u * s.dx.v * (1 + 0.1 * s.z) + 0.3 * s.phi.u * s.dz.v * s.dy.u
        return 0.5 * grad + twist + 0.5 * (1 - s.phi.u**2 - s.phi.v**2) ** 2

    return th


def _bumpy(x, y, z):
    return np.tanh(1.3 * x + 0.3 * np.sin(1.7 * y)) + 0.1 * np.cos(2.1 * z + y)


def _coupled_field(x, y, z):
    return [np.tanh(1.3 * x) + 0.1 * np.cos(2.1 * z + y), 0.3 * np.sin(0.9 * y + 0.4 * z) * np.exp(-(x**2) / 4)]


CASES = {
    "phi4 3D fixed x periodic y z": (
        _phi4_3d,
        (33, 12, 10),
        (0.25, 0.3, 0.35),
        ("fixed", "periodic", "periodic"),
        _bumpy,
    ),
    "coupled 3D fixed": (_coupled_3d, (25, 14, 12), 0.3, "fixed", _coupled_field),
    "coupled 3D periodic": (_coupled_3d, (24, 12, 12), 0.3, "periodic", _coupled_field),
    "phi4 line": (_phi4_3d, (81,), 0.15, "fixed", lambda x: np.tanh(1.3 * x) + 0.05 * np.cos(3 * x)),
}


def _run(case, backend, precision="float64", steps=STEPS):
    th, grid, spacing, boundary, fill = CASES[case]
    sim = fg.Simulation(th(), grid=grid, spacing=spacing, boundary=boundary, backend=backend, precision=precision)
    sim.set_field(fill)
    sim.minimize(tol=1e-300, max_steps=steps, check_every=25, dt=0.02, progress=False)
    return sim


@pytest.mark.filterwarnings("ignore::fieldgo.PrecisionWarning")
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpu_and_cpu_agree_beyond_the_plane_and_gpu_runs_repeat_exactly(case):
    cpu, gpu, again = _run(case, "cpu"), _run(case, "cuda"), _run(case, "cuda")
    assert gpu.backend == "cuda" and cpu.backend == "cpu"
    a, b, c = cpu.field.numpy(), gpu.field.numpy(), again.field.numpy()
    assert np.isfinite(a).all() and a.shape == b.shape
    bound = STEPS * 1e3 * U * max(1.0, np.abs(a).max())
    assert np.abs(a - b).max() <= bound, f"{case}: max |cpu - gpu| = {np.abs(a - b).max():.3e} > {bound:.3e}"
    assert np.array_equal(b, c), f"{case}: two GPU runs differ"
    assert gpu.energy() == again.energy()
    assert gpu.energy() == pytest.approx(cpu.energy(), rel=1e-11, abs=1e-12)
    ha, hb = cpu.history.to_pylist(), gpu.history.to_pylist()
    assert [r["step"] for r in ha] == [r["step"] for r in hb]
    assert [r["resets"] for r in ha] == [r["resets"] for r in hb]


@pytest.mark.filterwarnings("ignore::fieldgo.PrecisionWarning")
def test_gpu_float32_beyond_the_plane_agrees_with_the_cpu_float32():
    case = "phi4 3D fixed x periodic y z"
    cpu, gpu = _run(case, "cpu", "float32"), _run(case, "cuda", "float32")
    assert gpu.describe()["precision"] == "float32"
    a, b = cpu.field.numpy(), gpu.field.numpy()
    assert np.array_equal(b, b.astype(np.float32))
    bound = STEPS * 8 * U32 * max(1.0, np.abs(a).max())
    assert np.abs(a - b).max() <= bound, f"max |cpu - gpu| = {np.abs(a - b).max():.3e} > {bound:.3e}"


def test_gpu_phi4_wall_in_3d_and_kink_on_a_line_have_energy_four_thirds():
    """The phi^4 domain wall, fixed along x and periodic along y and z, relaxes on the
    GPU to 4/3 per unit area; the kink on a line to 4/3."""
    h = 0.1
    wall = fg.Simulation(
        _phi4_3d(), grid=(121, 6, 6), spacing=h, boundary=("fixed", "periodic", "periodic"), backend="cuda"
    )
    wall.set_field(lambda x, y, z: np.tanh(1.3 * x) + 0 * y + 0 * z)
    wall.minimize(tol=1e-9, max_steps=20000, progress=False)
    assert wall.last_status["converged"]
    per_area = wall.energy() / (6 * h * 6 * h)
    assert per_area == pytest.approx(4 / 3, abs=2e-5)
    kink = fg.Simulation(_phi4_3d(), grid=(121,), spacing=h, boundary="fixed", backend="cuda")
    kink.set_field(lambda x: np.tanh(1.3 * x))
    kink.minimize(tol=1e-9, max_steps=50000, progress=False)
    assert kink.last_status["converged"]
    assert kink.energy() == pytest.approx(4 / 3, abs=2e-5)
    assert kink.energy() == pytest.approx(per_area, abs=1e-10)


def test_gpu_planar_theory_on_a_3d_lattice_agrees_with_the_cpu():
    """A planar theory (no z derivatives) on a 3D lattice: every plane relaxes on its own,
    the same on both backends."""
    th = fg.theories.baby_skyrme()

    def fill(x, y, z):
        f = np.pi * np.exp(-(x**2 + y**2) / 2) * (1 + 0.05 * np.cos(2 * np.pi * z / 1.25))
        a = np.arctan2(y, x)
        return [np.sin(f) * np.cos(a), np.sin(f) * np.sin(a), np.cos(f)]

    out = {}
    for backend in ("cpu", "cuda"):
        sim = fg.Simulation(
            th, grid=(40, 40, 5), spacing=0.25, boundary=("fixed", "fixed", "periodic"), backend=backend
        )
        sim.set_field(fill)
        sim.minimize(tol=1e-300, max_steps=STEPS, check_every=25, dt=0.02, progress=False)
        out[backend] = sim
    a, b = out["cpu"].field.numpy(), out["cuda"].field.numpy()
    assert np.abs(a - b).max() <= STEPS * 1e3 * U * max(1.0, np.abs(a).max())


@pytest.mark.parametrize("case", ["coupled 3D fixed", "phi4 3D fixed x periodic y z", "phi4 line"])
def test_gpu_consistent_form_beyond_the_plane_agrees_with_the_cpu(case):
    """The consistent gradient form (the lattice energy's exact gradient with the doubler
    penalty) on the GPU: the CPU's flow, and the same bits run to run."""
    th, grid, spacing, boundary, fill = CASES[case]

    def run(backend):
        sim = fg.Simulation(th(), grid=grid, spacing=spacing, boundary=boundary, backend=backend, gradient="consistent")
        sim.set_field(fill)
        sim.minimize(tol=1e-300, max_steps=STEPS, check_every=25, dt=0.02, progress=False)
        assert sim.describe()["gradient"] == "consistent"
        return sim

    cpu, gpu, again = run("cpu"), run("cuda"), run("cuda")
    a, b = cpu.field.numpy(), gpu.field.numpy()
    bound = STEPS * 1e3 * U * max(1.0, np.abs(a).max())
    assert np.abs(a - b).max() <= bound, f"{case}: max |cpu - gpu| = {np.abs(a - b).max():.3e} > {bound:.3e}"
    assert np.array_equal(b, again.field.numpy())
    assert gpu.energy() == pytest.approx(cpu.energy(), rel=1e-11, abs=1e-12)


def test_gpu_auto_takes_the_gpu_beyond_the_plane():
    sim = fg.Simulation(_phi4_3d(), grid=(16, 8, 8), boundary=("fixed", "periodic", "periodic"))
    assert sim.backend == "cuda", sim.describe().get("backend_note")
    names = [k["Name"] for k in sim.describe()["kernels"]]
    assert "fg_k_nd_continuum" in names


def test_gpu_auxiliary_field_on_a_3d_lattice_agrees_with_the_cpu():
    """The chiral magnet with its magnetostatic potential (an auxiliary field, stored
    with its gradient's sign flipped and left out of the constraint) on a 3D lattice:
    the same flow on both backends."""
    th = fg.theories.chiral_magnet(demag=True)

    def fill(x, y, z):
        f = np.pi * np.exp(-(x**2 + y**2) / 2) * (1 + 0.05 * np.cos(2 * np.pi * z / 1.5))
        a = np.arctan2(y, x) + np.pi / 2
        return [np.sin(f) * np.cos(a), np.sin(f) * np.sin(a), np.cos(f), 0 * x]

    out = {}
    for backend in ("cpu", "cuda"):
        sim = fg.Simulation(
            th, grid=(32, 30, 6), spacing=0.25, boundary=("fixed", "fixed", "periodic"), backend=backend
        )
        sim.set_field(fill)
        sim.minimize(tol=1e-300, max_steps=STEPS, check_every=25, dt=0.02, progress=False)
        out[backend] = sim
    a, b = out["cpu"].field.numpy(), out["cuda"].field.numpy()
    assert out["cuda"].backend == "cuda" and np.isfinite(a).all()
    assert np.abs(a - b).max() <= STEPS * 1e3 * U * max(1.0, np.abs(a).max())


FREE_CASES = {
    "phi4 3D free": (_phi4_3d, (21, 12, 11), (0.25, 0.3, 0.35), _bumpy),
    "coupled 3D free": (_coupled_3d, (19, 12, 10), 0.3, _coupled_field),
    "phi4 line free": (_phi4_3d, (61,), 0.15, lambda x: np.tanh(1.3 * x) + 0.05 * np.cos(3 * x)),
    "baby skyrme plane free": (
        fg.theories.baby_skyrme,
        (40, 36),
        0.25,
        lambda x, y: [
            np.sin(np.pi * np.exp(-(x**2 + y**2) / 2)) * np.cos(np.arctan2(y, x)),
            np.sin(np.pi * np.exp(-(x**2 + y**2) / 2)) * np.sin(np.arctan2(y, x)),
            np.cos(np.pi * np.exp(-(x**2 + y**2) / 2)),
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(FREE_CASES))
def test_gpu_free_boundary_agrees_with_the_cpu(case):
    """The free boundary (no site held, in-box edge stencils, the consistent form) on the
    GPU's grid unit, planes of a planar theory included: the CPU's flow and energy, and
    the same bits run to run."""
    th, grid, spacing, fill = FREE_CASES[case]

    def run(backend):
        sim = fg.Simulation(th(), grid=grid, spacing=spacing, boundary="free", backend=backend)
        sim.set_field(fill)
        sim.minimize(tol=1e-300, max_steps=STEPS, check_every=25, dt=0.02, progress=False)
        assert sim.backend == backend and sim.describe()["gradient"] == "consistent"
        return sim

    cpu, gpu, again = run("cpu"), run("cuda"), run("cuda")
    a, b = cpu.field.numpy(), gpu.field.numpy()
    assert np.isfinite(a).all() and a.shape == b.shape
    bound = STEPS * 1e3 * U * max(1.0, np.abs(a).max())
    assert np.abs(a - b).max() <= bound, f"{case}: max |cpu - gpu| = {np.abs(a - b).max():.3e} > {bound:.3e}"
    assert np.array_equal(b, again.field.numpy()), f"{case}: two GPU runs differ"
    assert gpu.energy() == again.energy()
    assert gpu.energy() == pytest.approx(cpu.energy(), rel=1e-11, abs=1e-12)


def test_gpu_auto_takes_the_gpu_for_the_free_boundary():
    sim = fg.Simulation(_phi4_3d(), grid=(16, 8, 8), boundary="free")
    assert sim.backend == "cuda", sim.describe().get("backend_note")
    names = [k["Name"] for k in sim.describe()["kernels"]]
    assert "fg_k_nd_partials_free" in names and "fg_k_nd_consistent_free" in names
    with pytest.raises(fg.ParameterError):
        fg.Simulation(_phi4_3d(), grid=(16, 8, 8), boundary="free", backend="cuda", gradient="continuum")
