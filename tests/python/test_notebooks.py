"""Every notebook in notebooks/ runs top to bottom without an error, on the CPU, in a
fresh kernel; each ends with cells that assert what it shows. The notebooks in git are
exactly what tools/make_notebooks.py generates, with no outputs."""

import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
BUDGET_S = 60  # each notebook, on a 2-core CI machine


def test_there_are_notebooks():
    names = [p.name for p in NOTEBOOKS]
    for want in (
        "01_quickstart.ipynb",
        "02_your_own_theory.ipynb",
        "03_arrow_exchange.ipynb",
        "04_numba_to_fieldgo.ipynb",
        "05_sweep.ipynb",
        "07_skyrmions_3d.ipynb",
        "08_soliton_dynamics.ipynb",
    ):
        assert want in names


def test_notebooks_are_generated_and_stripped():
    nbformat = pytest.importorskip("nbformat")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_notebooks.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and "assert" in code[-1].source, f"{path.name} must end with a cell of checks"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    client = nbclient.NotebookClient(
        nb,
        timeout=BUDGET_S * 2,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    t0 = time.perf_counter()
    with _environ(env):
        client.execute()
    elapsed = time.perf_counter() - t0
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert elapsed < BUDGET_S, f"{path.name} took {elapsed:.1f} s"
    # what the notebook shows: rich outputs, not just text
    mimes = {m for c in code for o in c.get("outputs", []) for m in o.get("data", {})}
    assert "image/png" in mimes, f"{path.name} shows no figure"


class _environ:
    """Set os.environ for the kernel the client starts (it inherits ours)."""

    def __init__(self, env):
        self.env, self.saved = env, None

    def __enter__(self):
        self.saved = dict(os.environ)
        os.environ.update(self.env)

    def __exit__(self, *exc):
        os.environ.clear()
        os.environ.update(self.saved)
