"""The catalogue of bad input: every mistake a user can make across the API
raises a typed fieldgo.Error subclass whose message names the problem, and never takes
the process down. Traced-code mistakes also name the user's file and line (their own
catalogue is tests/python/test_tracer_errors.py); here one of them stands for all.
"""

import math
import pathlib

import numpy as np
import pyarrow as pa
import pytest

import fieldgo as fg

HERE = pathlib.Path(__file__).name


def lattice():
    return fg.Lattice((8, 8), 0.5)


def skyrme_sim(**kw):
    return fg.Simulation(fg.theories.baby_skyrme(), grid=(16, 16), spacing=0.5, **kw)


def circle_table(n=32, bad=None):
    """A charge on a circle (radius 0.5, speed 0.5 c), sampled in proper time."""
    gamma = 1 / math.sqrt(1 - 0.25)
    tau = np.linspace(0, 20, n)
    w = 1.0 * gamma  # dphi/dtau for omega = 1
    cols = dict(
        tau=tau,
        t=gamma * tau,
        x=0.5 * np.cos(w * tau),
        y=0.5 * np.sin(w * tau),
        z=0 * tau,
        ut=gamma + 0 * tau,
        ux=-0.5 * w * np.sin(w * tau),
        uy=0.5 * w * np.cos(w * tau),
        uz=0 * tau,
    )
    if bad:
        bad(cols)
    return fg.radiation.trajectory_table(**cols, validate_=False)


def _small_cube():
    return fg.radiation.fields(circle_table(), [[3.0, 1.0, 2.0]], np.linspace(8, 12, 8))


def _fractional_ids():
    c = circle_table()
    cols = {n: c.column(n).to_numpy() for n in c.column_names if n != "particle"}
    return fg.radiation.trajectory_table(**cols, particle=np.full(c.num_rows, 0.5))


def _unsorted(c):
    c["tau"][[3, 4]] = c["tau"][[4, 3]]


def _nan_state(c):
    c["x"][5] = np.nan


def _unnormalised(c):
    c["ut"][7] *= 1.5


def _released_field():
    f = fg.Field(lattice(), ["a"])
    f.release()
    return f


def _closed_sim():
    s = skyrme_sim()
    s.close()
    return s


def _garbage_file(tmp):
    p = tmp / "garbage.arrow"
    p.write_bytes(b"this is not an arrow file")
    return p


def _truncated_save(tmp):
    s = skyrme_sim()
    s.set_field(fg.initial.skyrmion())
    p = tmp / "run.arrow"
    s.save(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    return p


def _trace_branch():
    th = fg.Theory("t", fields=["u"], params={"k": 1.0})

    @th.energy_density
    def energy(s, p):
        if s.phi.u > 0:  # branching on a traced value
            return s.phi.u
        return -s.phi.u

    return th.source


CATALOGUE = [
    # --- lattices ---
    ("lattice: zero size", lambda t: fg.Lattice((0, 8)), fg.LatticeError, "positive"),
    ("lattice: negative spacing", lambda t: fg.Lattice((8, 8), -0.1), fg.LatticeError, "spacing"),
    ("lattice: NaN spacing", lambda t: fg.Lattice((8, 8), math.nan), fg.LatticeError, "spacing"),
    ("lattice: zero spacing", lambda t: fg.Lattice((8, 8), 0.0), fg.LatticeError, "spacing"),
    ("lattice: unknown boundary", lambda t: fg.Lattice((8, 8), boundary="open"), fg.LatticeError, "boundary"),
    ("lattice: non-integer size", lambda t: fg.Lattice((8.5, 8)), fg.LatticeError, "integer"),
    # --- fields ---
    (
        "field: wrong dtype",
        lambda t: fg.Field.from_numpy(np.zeros((1, 8, 8), np.float32), lattice()),
        fg.LayoutError,
        "float64",
    ),
    (
        "field: not contiguous",
        lambda t: fg.Field.from_numpy(np.zeros((1, 8, 16))[:, :, ::2], lattice()),
        fg.LayoutError,
        "contiguous",
    ),
    (
        "field: shape does not fit",
        lambda t: fg.Field.from_numpy(np.zeros((1, 8, 9)), lattice()),
        fg.ShapeError,
        "does not fit",
    ),
    (
        "field: Arrow length does not fit",
        lambda t: fg.Field.from_arrow(pa.table({"a": np.zeros(63)}), lattice()),
        fg.ShapeError,
        "do not fit",
    ),
    (
        "field: Arrow nulls",
        lambda t: fg.Field.from_arrow(pa.table({"a": pa.array([None] * 64, pa.float64())}), lattice()),
        fg.LayoutError,
        "nulls",
    ),
    (
        "field: Arrow without lattice",
        lambda t: fg.Field.from_arrow(pa.table({"a": np.zeros(64)})),
        fg.FormatError,
        "lattice",
    ),
    ("field: use after release", lambda t: _released_field().numpy(), fg.ReleasedError, "released"),
    ("field: release twice", lambda t: _released_field().release(), fg.ReleasedError, "already"),
    ("field: duplicate component names", lambda t: fg.Field(lattice(), ["a", "a"]), fg.ShapeError, "twice"),
    ("field: unknown component", lambda t: fg.Field(lattice(), ["a"]).sum("b"), fg.ShapeError, "no component"),
    # --- theories and traced code ---
    ("theory: duplicate fields", lambda t: fg.Theory("t", fields=["u", "u"]), fg.SpecError, "duplicate"),
    ("theory: bad field name", lambda t: fg.Theory("t", fields=["1u"]), fg.SpecError, "identifier"),
    (
        "theory: NaN parameter",
        lambda t: fg.Theory("t", fields=["u"], params={"k": math.nan}),
        fg.ParameterError,
        "finite",
    ),
    ("theory: no energy density", lambda t: fg.Theory("t", fields=["u"]).source, fg.SpecError, "energy_density"),
    ("traced: branch on a traced value", lambda t: _trace_branch(), fg.TraceError, HERE),
    (
        "theory.at: wrong number of components",
        lambda t: fg.theories.baby_skyrme().at(phi=[0, 0]),
        fg.ShapeError,
        "3 components",
    ),
    (
        "theory.at: unknown parameter",
        lambda t: fg.theories.baby_skyrme().at(phi=[0, 0, 1], lam=1.0),
        fg.ParameterError,
        "unknown parameter",
    ),
    # --- simulations ---
    ("simulation: unknown backend", lambda t: skyrme_sim(backend="tpu"), fg.BackendError, "backend"),
    (
        "simulation: lattice too small for the stencils",
        lambda t: fg.Simulation(fg.theories.baby_skyrme(), grid=(4, 16)),
        fg.LatticeError,
        "5 x 5",
    ),
    ("simulation: unknown gradient form", lambda t: skyrme_sim(gradient="upwind"), fg.ParameterError, "gradient"),
    ("simulation: not a theory", lambda t: fg.Simulation("baby_skyrme", grid=(16, 16)), fg.SpecError, "Theory"),
    (
        "simulation: NaN in the initial field",
        lambda t: skyrme_sim().set_field(np.full((3, 16, 16), np.nan)),
        fg.ParameterError,
        "not finite|NaN",
    ),
    (
        "simulation: initial field of the wrong shape",
        lambda t: skyrme_sim().set_field(np.zeros((2, 16, 16))),
        fg.ShapeError,
        "does not fit",
    ),
    (
        "simulation: minimize before set_field",
        lambda t: skyrme_sim().minimize(max_steps=10),
        fg.ParameterError,
        "set_field",
    ),
    ("simulation: energy before set_field", lambda t: skyrme_sim().energy(), fg.ParameterError, "set_field"),
    (
        "simulation: zero vector under a unit-vector constraint",
        lambda t: skyrme_sim().set_field(np.zeros((3, 16, 16))),
        fg.ParameterError,
        r"zero at site \(i, j\) = \(0, 0\)",
    ),
    (
        "simulation: complex initial field",
        lambda t: skyrme_sim().set_field(np.ones((3, 16, 16), complex)),
        fg.LayoutError,
        "complex",
    ),
    (
        "simulation: initial-field function of the wrong signature",
        lambda t: skyrme_sim().set_field(lambda r: r),
        fg.ParameterError,
        r"f\(x, y\)",
    ),
    (
        "simulation: fg.initial configuration of another layout",
        lambda t: fg.Simulation(fg.theories.abelian_higgs(), grid=(16, 16)).set_field(fg.initial.skyrmion()),
        fg.ShapeError,
        "psi_re",
    ),
    (
        "sweep: initial field refused on the client",
        lambda t: fg.sweep(
            fg.theories.baby_skyrme(),
            [{"kappa": 1.0}],
            grid=(16, 16),
            initial=np.ones((3, 16, 16), complex),
            out=t,
            client="tcp://127.0.0.1:9",
        ),
        fg.LayoutError,
        "complex",
    ),
    ("simulation: unknown parameter", lambda t: skyrme_sim().set_params(lam=1.0), fg.ParameterError, "unknown"),
    ("simulation: NaN parameter", lambda t: skyrme_sim().set_params(kappa=math.nan), fg.ParameterError, "finite"),
    ("simulation: negative tolerance", lambda t: skyrme_sim().minimize(tol=-1.0), fg.ParameterError, "tol"),
    ("simulation: unknown flow", lambda t: skyrme_sim().minimize(method="newton"), fg.ParameterError, "method"),
    ("simulation: unknown density", lambda t: skyrme_sim().integral("baryon"), fg.ParameterError, "density"),
    ("simulation: resume without a flow", lambda t: skyrme_sim().resume(), fg.ParameterError, "no flow"),
    ("simulation: use after close", lambda t: _closed_sim().energy(), fg.ReleasedError, "closed"),
    ("simulation: float16 precision", lambda t: skyrme_sim(precision="float16"), fg.ParameterError, "precision"),
    # --- files ---
    ("load: missing file", lambda t: fg.load(t / "nope.arrow"), fg.FormatError, "nope.arrow"),
    ("load: not an Arrow file", lambda t: fg.load(_garbage_file(t)), fg.FormatError, "Arrow"),
    ("load: truncated file", lambda t: fg.load(_truncated_save(t)), fg.FormatError, ""),
    (
        "save: directory does not exist",
        lambda t: skyrme_sim().save(t / "no" / "dir" / "x.arrow"),
        fg.Error,
        "no/dir|no such file|directory",
    ),
    # --- trajectories ---
    (
        "trajectory: unsorted proper times",
        lambda t: fg.radiation.validate(circle_table(bad=_unsorted)),
        fg.TrajectoryError,
        "does not increase",
    ),
    (
        "trajectory: NaN state",
        lambda t: fg.radiation.validate(circle_table(bad=_nan_state)),
        fg.TrajectoryError,
        "finite|NaN",
    ),
    ("trajectory: too few knots", lambda t: fg.radiation.validate(circle_table(n=3)), fg.TrajectoryError, "4"),
    (
        "trajectory: 4-velocity not normalised",
        lambda t: fg.radiation.validate(circle_table(bad=_unnormalised)),
        fg.TrajectoryError,
        "normalis|u\\.u|c\\^2",
    ),
    (
        "radiation: observers that are not numbers",
        lambda t: fg.radiation.fields(circle_table(), [["a", "b", "c"]], [1.0]),
        fg.LayoutError,
        "observers",
    ),
    ("radiation: non-integral particle ids", lambda t: _fractional_ids(), fg.LayoutError, "particle ids"),
    (
        "radiation: unknown cube component",
        lambda t: fg.radiation.spectrum(_small_cube(), "Qx"),
        fg.ParameterError,
        "Qx",
    ),
    (
        "radiation: retarded times not asked for",
        lambda t: _small_cube().retarded_time(0),
        fg.ParameterError,
        "retarded=True",
    ),
    (
        "radiation: non-positive period",
        lambda t: fg.radiation.harmonic_powers(_small_cube(), 0.0),
        fg.ParameterError,
        "period",
    ),
    # --- N-body ---
    (
        "nbody: positions of the wrong shape",
        lambda t: fg.nbody.accelerations(np.zeros((5, 2)), np.ones(5)),
        fg.ShapeError,
        "3",
    ),
    (
        "nbody: negative mass",
        lambda t: fg.nbody.accelerations(np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]], np.array([1.0, -1.0])),
        fg.ParameterError,
        "mass",
    ),
    (
        "nbody: NaN position",
        lambda t: fg.nbody.accelerations(np.array([[0, 0, np.nan], [1, 0, 0.0]]), np.ones(2)),
        fg.ParameterError,
        "finite|NaN",
    ),
    (
        "nbody: non-positive time step",
        lambda t: fg.nbody.integrate(*fg.nbody.plummer(16), dt=0.0, steps=1),
        fg.ParameterError,
        "dt",
    ),
    # --- pictures of 3D fields ---
    (
        "isosurface: unknown density",
        lambda t: fg.isosurface(_small_skyrmion(), density="charge"),
        fg.SpecError,
        "unknown density 'charge'",
    ),
    (
        "isosurface: level outside the density's range",
        lambda t: fg.isosurface(_small_skyrmion(), level=10.0),
        fg.ParameterError,
        "level=10 is outside",
    ),
    (
        "isosurface: a plane's simulation",
        lambda t: fg.isosurface(_planar_skyrmion(), density="charge"),
        fg.LatticeError,
        "3D lattice",
    ),
    ("slice: unknown axis", lambda t: fg.slice(_small_skyrmion(), axis="t"), fg.ParameterError, "axis must be"),
    # --- vortex lines and rings ---
    ("vortex ring: zero radius", lambda t: fg.initial.vortex_ring(0.0), fg.ParameterError, "radius must be a positive"),
    (
        "vortex ring: NaN radius",
        lambda t: fg.initial.vortex_ring(math.nan),
        fg.ParameterError,
        "radius must be a positive finite",
    ),
    (
        "vortex ring: zero axis",
        lambda t: fg.initial.vortex_ring(2.0, axis=(0, 0, 0)),
        fg.ParameterError,
        "axis must be a non-zero vector",
    ),
    (
        "vortex line: zero direction",
        lambda t: fg.initial.vortex_line((0, 0, 0)),
        fg.ParameterError,
        "direction must be a non-zero vector",
    ),
    (
        "anisotropic GL 3D: non-positive inverse mass",
        lambda t: fg.theories.anisotropic_gl_3d(gamma_z=-1.0),
        fg.ParameterError,
        "gamma_z must be positive",
    ),
    # --- adaptive time steps ---
    (
        "evolve rk45: rtol zero",
        lambda t: _evolvable().evolve(0.5, method="rk45", rtol=0.0),
        fg.ParameterError,
        "rtol must be positive",
    ),
    (
        "evolve rk45: atol NaN",
        lambda t: _evolvable().evolve(0.5, method="rk45", atol=float("nan")),
        fg.ParameterError,
        "atol must be a finite number",
    ),
    (
        "evolve rk45: rtol below what float64 resolves",
        lambda t: _evolvable().evolve(0.5, method="rk45", rtol=1e-16),
        fg.ParameterError,
        "below what float64 storage resolves",
    ),
    (
        "evolve: rtol with the fixed-step rk4",
        lambda t: _evolvable().evolve(0.5, rtol=1e-8),
        fg.ParameterError,
        "rtol applies to adaptive steps",
    ),
    (
        "evolve: adaptive leapfrog",
        lambda t: _evolvable().evolve(0.5, method="leapfrog", adaptive=True),
        fg.ParameterError,
        "adaptive steps are method 'rk45'",
    ),
    (
        "evolve rk45: a tolerance the step floor does not allow",
        lambda t: _evolvable().evolve(0.5, 0.2, method="rk45", rtol=1e-12, dt_min=0.1),
        fg.StepSizeError,
        r"below its floor at t=0 \(step 0\)",
    ),
    # --- animations and tracking ---
    (
        "animate: unknown density",
        lambda t: fg.animate(_small_evolution(), density="charge"),
        fg.SpecError,
        "unknown density 'charge'",
    ),
    (
        "animate: a path with an unknown ending",
        lambda t: fg.animate(_small_evolution(), path=t / "run.avi"),
        fg.ParameterError,
        r"\.gif or \.mp4",
    ),
    (
        "animate: an evolution without snapshots",
        lambda t: fg.animate(_small_evolution(snapshots=False)),
        fg.ParameterError,
        "no snapshots",
    ),
    (
        "track: NaN threshold",
        lambda t: fg.track(_small_evolution(), threshold=float("nan")),
        fg.ParameterError,
        "threshold must be a positive finite number",
    ),
    (
        "live view: unknown key",
        lambda t: _small_skyrmion().minimize(max_steps=1, live={"every": 5, "zoom": 2}),
        fg.ParameterError,
        "unknown: zoom",
    ),
]


def _small_evolution(snapshots=True):
    th = fg.Theory("phi4_catalogue", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 0.5 * (1 - s.phi.u**2) ** 2

    sim = fg.Simulation(th, grid=(41,), spacing=0.25, backend="cpu")
    sim.set_field(np.tanh)
    return sim.evolve(0.5, snapshots=snapshots)


def _evolvable():
    th = fg.Theory("phi4_catalogue", fields=["u"])

    @th.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 0.5 * (1 - s.phi.u**2) ** 2

    sim = fg.Simulation(th, grid=(41,), spacing=0.25, backend="cpu")
    phi, vel = fg.initial.boost(np.tanh, 0.5)
    sim.set_field(phi)
    sim.set_velocity(vel)
    return sim


def _small_skyrmion():
    sim = fg.Simulation(fg.theories.skyrme(mass=1.0), grid=(12, 12, 12), spacing=0.5)
    sim.set_field(fg.initial.hedgehog(profile="optimal", mass=1.0))
    return sim


def _planar_skyrmion():
    sim = skyrme_sim()
    sim.set_field(fg.initial.skyrmion(charge=1))
    return sim


@pytest.mark.parametrize("what, call, error, match", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_bad_input_raises_a_typed_error(what, call, error, match, tmp_path):
    with pytest.raises(error) as info:
        call(tmp_path)
    assert isinstance(info.value, fg.Error)
    if match:
        import re

        assert re.search(match, str(info.value)), f"{what}: message {str(info.value)!r} does not name {match!r}"


def test_the_catalogue_is_large_enough():
    assert len(CATALOGUE) >= 30
    assert len({c[2] for c in CATALOGUE}) >= 10  # many kinds of error, not one catch-all


def test_missing_c_compiler_is_a_backend_error(tmp_path):
    # Go reads the environment when it starts: a fresh process with no compiler and an
    # empty cache, so the kernels must be compiled.
    import os
    import subprocess
    import sys

    script = (
        "import fieldgo as fg\n"
        "try:\n"
        "    fg.Simulation(fg.theories.baby_skyrme(), grid=(16, 16), spacing=0.5, backend='cpu')\n"
        "except fg.BackendError as e:\n"
        "    print('BackendError:', e)\n"
    )
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"), FIELDGO_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "BackendError:" in out.stdout and "no-such-cc" in out.stdout, out.stdout + out.stderr[-2000:]
