"""fg.sweep on a local Dask cluster of two worker processes (spawned): results bit for
bit equal to the same points run one after another here, per-point failures,
resuming, a worker killed mid-sweep, and the plain-data description of a point."""

import glob
import json
import os
import pickle
import signal
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

import fieldgo as fg

distributed = pytest.importorskip("distributed")
sweep_module = sys.modules["fieldgo.sweep"]  # fg.sweep is the function
from fieldgo.sweep import points as sweep_points  # noqa: E402
from fieldgo.sweep import worker as sweep_worker  # noqa: E402

GRID, SPACING, TOL = (48, 48), 0.25, 1e-4
KAPPAS = (0.5, 1.0, 1.5, 2.0)
MASSES = (1.0, 2.0)


def _cluster(tmp_path_factory, name):
    cache = tmp_path_factory.mktemp(name)
    # The workers compile into their own cache, so a test can count what they built.
    # Set before they spawn: the Go runtime reads its environment once, when it loads.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FIELDGO_CACHE", str(cache))
        cluster = sweep_module.local_cluster(2)
    client = distributed.Client(cluster, set_as_default=False)
    return cluster, client, cache


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster, client, cache = _cluster(tmp_path_factory, "worker-cache")
    yield client, cache
    client.close()
    cluster.close()


def _sequential(theory_for, points, initial, **minimize):
    """The reference: each point run here, one after another, with fg.Simulation."""
    results = []
    for values in points:
        theory = theory_for(values)
        sim = fg.Simulation(theory, grid=GRID, spacing=SPACING, boundary="fixed")
        sim.set_field(initial)
        sim.minimize(tol=TOL, progress=False, **minimize)
        results.append(
            dict(
                energy=sim.energy(),
                charge=sim.integral("charge"),
                steps=sim.last_status["step"],
                max_grad=sim.last_status["max_grad"],
                converged=sim.last_status["converged"],
                field=sim.field.numpy().copy(),
            )
        )
        sim.close()
    return results


def _assert_identical(table, reference):
    rows = table.to_pylist()
    assert len(rows) == len(reference)
    for row, ref in zip(rows, reference):
        assert row["error"] is None, row["error"]
        assert row["energy"] == ref["energy"]  # bit for bit, not approximately
        assert row["charge"] == ref["charge"]
        assert row["steps"] == ref["steps"]
        assert row["max_grad"] == ref["max_grad"]
        assert row["converged"] == ref["converged"]
        back = fg.load(row["file"])
        try:
            assert np.array_equal(back.field.numpy(), ref["field"])
            assert back.energy() == ref["energy"]
        finally:
            back.close()


def test_sweep_is_bit_identical_to_sequential_runs(cluster, tmp_path):
    client, cache = cluster
    theory = fg.theories.baby_skyrme()
    initial = fg.initial.skyrmion(charge=1, size=1.0)
    table = fg.sweep(
        theory,
        {"kappa": list(KAPPAS), "mass": list(MASSES)},
        grid=GRID,
        spacing=SPACING,
        initial=initial,
        minimize={"tol": TOL},
        client=client,
        out=tmp_path / "scan",
        progress=False,
    )
    assert table.num_rows == 8
    points = [{"kappa": k, "mass": m} for k in KAPPAS for m in MASSES]
    assert [{"kappa": r["kappa"], "mass": r["mass"]} for r in table.to_pylist()] == points

    def theory_for(values):
        t = fg.theories.baby_skyrme()
        t.set_params(**values)
        return t

    _assert_identical(table, _sequential(theory_for, points, initial))
    # one row per point, the same table on disk
    assert pq.read_table(tmp_path / "scan" / "results.parquet").equals(table)
    assert len(set(table["point_id"].to_pylist())) == 8
    assert set(table["backend"].to_pylist()) == {"cpu"}
    assert not any(table["resumed"].to_pylist())
    # the 8 points differ only in dynamic parameters: one source, one compiled kernel
    assert len(glob.glob(os.path.join(cache, "**", "*.so"), recursive=True)) == 1
    # every row file is there, one per point
    assert len(glob.glob(str(tmp_path / "scan" / "points" / "*.json"))) == 8


def test_factory_static_params_and_function_initial(cluster, tmp_path):
    client, _ = cluster
    points = [
        dict(potential="broken", N=1, kappa=1.0),
        dict(potential="broken", N=2, kappa=1.0),
        dict(potential="standard", kappa=0.5),
    ]

    def initial(x, y):  # a plain function: evaluated on the client, sent as values
        r2 = x * x + y * y
        f = np.pi * np.exp(-np.sqrt(r2))
        th = np.arctan2(y, x)
        return np.sin(f) * np.cos(th), np.sin(f) * np.sin(th), np.cos(f)

    table = fg.sweep(
        fg.theories.baby_skyrme,
        points,
        grid=GRID,
        spacing=SPACING,
        initial=initial,
        minimize={"tol": TOL},
        client=client,
        out=tmp_path,
        progress=False,
    )
    assert table.column_names[:5] == ["point_id", "potential", "N", "kappa", "theory"]
    assert table["N"].to_pylist() == [1, 2, None]
    _assert_identical(table, _sequential(lambda v: fg.theories.baby_skyrme(**v), points, initial))
    assert table["initial"][0].as_py().startswith("test_factory_static_params_and_function_initial.")


def test_one_component_function_returning_a_bare_array(cluster, tmp_path):
    """What set_field accepts, a sweep accepts: one component returned bare."""
    client, _ = cluster
    theory = fg.Theory("kink", fields=["u"], params={"lam": 1.0})

    @theory.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2) + 0.25 * p.lam * (s.phi.u**2 - 1) ** 2

    def kink(x, y):
        return np.tanh(x)

    table = fg.sweep(
        theory,
        {"lam": [1.0, 2.0]},
        grid=(40, 32),
        spacing=0.25,
        initial=kink,
        minimize={"tol": TOL},
        client=client,
        out=tmp_path,
        progress=False,
    )
    assert table["error"].to_pylist() == [None, None]
    for row, lam in zip(table.to_pylist(), (1.0, 2.0)):
        sim = fg.Simulation(theory, grid=(40, 32), spacing=0.25, boundary="fixed")
        sim.set_params(lam=lam)
        sim.set_field(kink)
        sim.minimize(tol=TOL, progress=False)
        assert row["energy"] == sim.energy() and row["converged"]
        sim.close()


def test_sweep_over_3d_and_1d_lattices(cluster, tmp_path):
    """Points on a 3D box with a boundary per axis and on a line: the rows are bit for
    bit the runs made here, the saved files load with their lattices, and the wall's
    energy per area is 4/3 sqrt(lam)."""
    client, _ = cluster
    theory = fg.Theory("wall3d", fields=["u"], params={"lam": 1.0})

    @theory.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2 + s.dz.u**2) + 0.5 * p.lam * (1 - s.phi.u**2) ** 2

    def wall(x, y, z):
        return np.tanh(1.2 * x) + 0.05 * np.cos(y) * np.sin(z)

    def kink(x):
        return np.tanh(1.2 * x)

    box = dict(grid=(49, 6, 5), spacing=(0.25, 0.3, 0.35), boundary=("fixed", "periodic", "periodic"))
    line = dict(grid=(49,), spacing=0.25, boundary="fixed", initial=kink)
    points = [dict(lam=1.0), dict(lam=0.5), dict(lam=0.5, **line)]
    table = fg.sweep(
        theory,
        points,
        **box,
        initial=wall,
        minimize={"tol": 1e-8},
        client=client,
        out=tmp_path,
        progress=False,
    )
    assert table["error"].to_pylist() == [None] * 3
    assert table["initial"][0].as_py().startswith("test_sweep_over_3d_and_1d_lattices.<locals>.wall(x, y, z)")
    for row, point in zip(table.to_pylist(), points):
        settings = {**box, **point}
        lam, init = settings.pop("lam"), settings.pop("initial", wall)
        sim = fg.Simulation(theory, **settings)
        sim.set_params(lam=lam)
        sim.set_field(init)
        sim.minimize(tol=1e-8, progress=False)
        assert row["energy"] == sim.energy() and row["steps"] == sim.last_status["step"] and row["converged"]
        back = fg.load(row["file"])
        try:
            assert back.lattice == sim.lattice
            assert np.array_equal(back.field.numpy(), sim.field.numpy())
        finally:
            back.close()
        area = 6 * 0.3 * 5 * 0.35 if len(settings["grid"]) == 3 else 1.0
        assert row["energy"] / area == pytest.approx(4 / 3 * np.sqrt(lam), rel=1e-3)  # h = 0.25
        sim.close()


def test_failing_point_is_an_error_row(cluster, tmp_path):
    client, _ = cluster
    points = [{"kappa": k} for k in KAPPAS]
    points.insert(2, {"kappa": 1.0, "minimize": {"dt": 100.0}})  # beyond the stability limit
    points.append({"kappa": float("nan")})  # refused on the worker
    table = fg.sweep(
        fg.theories.baby_skyrme(),
        points,
        grid=GRID,
        spacing=SPACING,
        initial="skyrmion",
        minimize={"tol": TOL},
        client=client,
        out=tmp_path,
        progress=False,
    )
    rows = table.to_pylist()
    assert len(rows) == 6
    bad = rows[2]
    assert bad["error_type"] == "ParameterError" and "stability limit" in bad["error"]
    assert bad["energy"] is None and bad["file"] is None and bad["converged"] is False
    assert rows[5]["error_type"] == "ParameterError"
    good = [r for k, r in enumerate(rows) if k not in (2, 5)]
    assert all(r["error"] is None and r["converged"] and os.path.exists(r["file"]) for r in good)
    assert json.loads((tmp_path / "points" / f"{bad['point_id']}.json").read_text())["error_type"] == "ParameterError"


def test_resume_runs_only_missing_points(cluster, tmp_path):
    client, _ = cluster
    theory = fg.theories.baby_skyrme()
    kw = dict(
        grid=GRID,
        spacing=SPACING,
        initial=fg.initial.skyrmion(),
        minimize={"tol": TOL},
        client=client,
        out=tmp_path,
        progress=False,
    )
    first = fg.sweep(theory, {"kappa": [0.5, 1.0, 1.5, 2.0]}, **kw)
    stamps = {p: os.stat(p).st_mtime_ns for p in glob.glob(str(tmp_path / "points" / "*"))}
    assert len(stamps) == 8

    second = fg.sweep(theory, {"kappa": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]}, **kw)
    assert second.num_rows == 8
    executed = [r for r in second.to_pylist() if not r["resumed"]]
    assert [r["kappa"] for r in executed] == [2.5, 3.0, 3.5, 4.0]
    # the resumed rows are the stored ones, unchanged (wall times included), files untouched
    cols = [c for c in first.column_names if c != "resumed"]
    assert second.slice(0, 4).select(cols).equals(first.select(cols))
    assert all(os.stat(p).st_mtime_ns == t for p, t in stamps.items())
    assert pq.read_table(tmp_path / "results.parquet").num_rows == 8

    # a point whose field file is gone runs again; so does one whose row is missing
    os.unlink(second["file"][1].as_py())
    os.unlink(tmp_path / "points" / f"{second['point_id'][6].as_py()}.json")
    third = fg.sweep(theory, {"kappa": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]}, **kw)
    assert [r["kappa"] for r in third.to_pylist() if not r["resumed"]] == [1.0, 3.5]
    assert third["energy"].to_pylist() == second["energy"].to_pylist()


def test_killed_worker_loses_no_finished_results(tmp_path_factory, tmp_path):
    cluster, client, _ = _cluster(tmp_path_factory, "kill-cache")
    try:
        # Slow points: a fixed number of steps (tol out of reach), a second or two each.
        points = [{"kappa": 0.5 + 0.25 * k} for k in range(8)]
        result, failure = {}, {}

        def run():
            try:
                result["table"] = fg.sweep(
                    fg.theories.baby_skyrme(),
                    points,
                    grid=(96, 96),
                    spacing=0.2,
                    initial=fg.initial.skyrmion(),
                    minimize={"tol": 1e-30, "max_steps": 600},
                    client=client,
                    out=tmp_path,
                    progress=False,
                )
            except BaseException as exc:  # noqa: BLE001  (reported by the main thread)
                failure["error"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        rows_dir = tmp_path / "points"
        deadline = time.monotonic() + 60
        while len(glob.glob(str(rows_dir / "*.json"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        finished = {p: open(p).read() for p in glob.glob(str(rows_dir / "*.json"))}
        assert len(finished) >= 2, "no point finished in time"
        busy = [addr for addr, keys in client.processing().items() if keys]
        pids = client.run(os.getpid)
        victim = busy[0] if busy else next(iter(pids))
        os.kill(pids[victim], signal.SIGKILL)
        thread.join(120)
        assert not thread.is_alive()
        assert "error" not in failure, failure.get("error")
        table = result["table"]
        rows = table.to_pylist()
        assert len(rows) == 8 and all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]]
        assert all(os.path.exists(r["file"]) for r in rows)
        assert all(r["steps"] == 600 for r in rows)
        # rows finished before the kill are exactly what was stored then
        by_id = {r["point_id"]: r for r in rows}
        for path, text in finished.items():
            stored = json.loads(text)
            assert open(path).read() == text
            assert by_id[stored["point_id"]]["wall_s"] == stored["wall_s"]
            assert by_id[stored["point_id"]]["worker"] == stored["worker"]
        assert any(r["worker"] != victim for r in rows)
    finally:
        client.close()
        cluster.close()


def test_remote_style_url_output(cluster, tmp_path):
    client, _ = cluster
    table = fg.sweep(
        fg.theories.baby_skyrme(),
        [{"kappa": 1.0}, {"kappa": 2.0}],
        grid=GRID,
        spacing=SPACING,
        initial="skyrmion",
        minimize={"tol": TOL},
        client=client,
        out=f"file://{tmp_path}/scan",
        progress=False,
    )
    assert table["error"].to_pylist() == [None, None]
    for row in table.to_pylist():
        assert row["file"].startswith("file://")
        assert os.path.exists(row["file"][len("file://") :])
    assert pq.read_table(tmp_path / "scan" / "results.parquet").num_rows == 2


# --- the description of a point (no cluster) ---------------------------------------------------


def test_points_grid_and_ids_are_stable():
    assert sweep_points.expand_params({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    d = dict(source="s", spec={"params": ["kappa"]}, dynamic={"kappa": 1.0})
    assert sweep_module.point_id(d) == sweep_module.point_id(dict(d))
    assert sweep_module.point_id(d) != sweep_module.point_id({**d, "dynamic": {"kappa": 1.0 + 2e-16}})


def test_factory_traces_once_per_structure():
    theories = sweep_points.Theories(lambda kappa, mass=1.0: fg.theories.baby_skyrme(kappa=kappa, mass=mass))
    sources = {theories({"kappa": k, "mass": m})[2] for k in (0.5, 1.0, 2.0) for m in (1.0, 3.0)}
    assert len(sources) == 1 and len(theories._traced) == 1
    broken = sweep_points.Theories(fg.theories.baby_skyrme)
    a = broken({"potential": "broken", "N": 1})
    b = broken({"potential": "broken", "N": 2})
    assert a[2] != b[2] and a[3] == b[3] == {"kappa": 1.0, "mass": 1.0}


def test_initial_configurations_pickle():
    for cfg in (
        fg.initial.skyrmion(charge=2, size=1.5, centre=(0.5, -1.0), ansatz="neel"),
        fg.initial.vortex(winding=-2, size=0.7, q=2.0),
    ):
        back = pickle.loads(pickle.dumps(cfg))
        assert back == cfg and repr(back) == repr(cfg)
        x, y = np.meshgrid(np.linspace(-2, 2, 7), np.linspace(-2, 2, 5))
        assert all(np.array_equal(p, q) for p, q in zip(back(x, y), cfg(x, y)))


def test_bad_sweeps_fail_before_running(tmp_path):
    theory = fg.theories.baby_skyrme()
    with pytest.raises(fg.ParameterError, match="unknown parameter"):
        fg.sweep(theory, [{"kapa": 1.0}], out=tmp_path, client="unused:0")
    with pytest.raises(fg.ParameterError, match="not supported"):
        fg.sweep(theory, [{"kappa": 1.0}], minimize={"callback": print}, out=tmp_path)
    with pytest.raises(fg.ParameterError, match="same point"):
        fg.sweep(theory, [{"kappa": 1.0}, {"kappa": 1.0}], out=tmp_path)
    with pytest.raises(fg.ParameterError, match="unknown initial"):
        fg.sweep(theory, [{"kappa": 1.0}], initial="nothing", out=tmp_path)
    with pytest.raises(fg.ParameterError, match="out="):
        fg.sweep(theory, [{"kappa": 1.0}], out=None)
    with pytest.raises(fg.LatticeError):
        fg.sweep(theory, [{"kappa": 1.0, "grid": (0, 4)}], out=tmp_path)
    assert not os.path.exists(tmp_path / "results.parquet")


def test_run_point_in_process_reports_errors(tmp_path):
    """The task itself never raises: a failing point is its row."""
    theory = fg.theories.baby_skyrme()
    os.makedirs(tmp_path / "points")
    point = sweep_worker.Point(
        point_id="p",
        labels={"kappa": 1.0},
        theory_name="baby_skyrme",
        spec=theory.spec,
        source=theory.source,
        dynamic={"kappa": 1.0, "mass": 1.0},
        grid=(0, 8),
        spacing=(0.1, 0.1),
        boundary="fixed",
        origin=(0.0, 0.0),
        backend="cpu",
        precision="float64",
        gradient="auto",
        threads=None,
        minimize={},
        initial_label=None,
        out=str(tmp_path),
        files={"arrow": str(tmp_path / "points" / "p.arrow"), "json": str(tmp_path / "points" / "p.json")},
    )
    row = sweep_worker.run_point(point)
    assert row["error_type"] == "LatticeError" and row["file"] is None
    assert json.loads((tmp_path / "points" / "p.json").read_text())["error_type"] == "LatticeError"


def test_task_unpickles_in_a_fresh_interpreter(tmp_path):
    """What Dask ships to a spawned worker (the task function and its point) is pickled
    by module path; a fresh interpreter, as a spawned worker is, finds both."""
    import subprocess

    theory = fg.theories.baby_skyrme()
    point = sweep_worker.Point(
        point_id="p",
        labels={"kappa": 1.0},
        theory_name="baby_skyrme",
        spec=theory.spec,
        source=theory.source,
        dynamic={"kappa": 1.0, "mass": 1.0},
        grid=(8, 8),
        spacing=(0.1, 0.1),
        boundary="fixed",
        origin=(0.0, 0.0),
        backend="cpu",
        precision="float64",
        gradient="auto",
        threads=None,
        minimize={},
        initial_label=None,
        out=str(tmp_path),
    )
    blob = tmp_path / "task.pickle"
    blob.write_bytes(pickle.dumps((sweep_worker.run_point, point, fg.initial.skyrmion())))
    code = (
        "import pickle, sys; fn, point, initial = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "print(fn.__module__, fn.__qualname__, type(point).__module__, point.point_id, type(initial).__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(blob)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["fieldgo.sweep.worker", "run_point", "fieldgo.sweep.worker", "p", "fieldgo.initial"]


def test_one_worker_per_gpu_cluster(tmp_path):
    """local_cluster(gpus=...) starts one worker per device, each seeing only its own
    device and offering the resource GPU=1 that tasks ask for (here without GPUs: the
    backend falls back to the CPU and says so)."""
    cluster = sweep_module.local_cluster(gpus=[0, 1])
    client = distributed.Client(cluster, set_as_default=False)
    try:
        seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
        assert sorted(seen.values()) == ["0", "1"]
        info = client.scheduler_info()["workers"]
        assert all(w["resources"] == {"GPU": 1} for w in info.values())
        table = fg.sweep(
            fg.theories.baby_skyrme(),
            {"kappa": [1.0, 2.0, 3.0]},
            grid=GRID,
            spacing=SPACING,
            initial="skyrmion",
            minimize={"tol": TOL},
            client=client,
            resources={"GPU": 1},
            out=tmp_path,
            progress=False,
        )
        assert table["error"].to_pylist() == [None] * 3
        assert set(table["worker"].to_pylist()) <= set(seen)
    finally:
        client.close()
        cluster.close()
