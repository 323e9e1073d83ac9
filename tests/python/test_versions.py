"""fg.show_versions, the single-sourced version, and what an installed fieldgo needs at
run time (a C compiler, said in one line when missing; NVRTC found where pip put it).

These run against an installed wheel too (tools/wheel_test.py): they read the source
tree only for go.mod and pyproject.toml, and skip where those are not beside them.
"""

import importlib.metadata
import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import fieldgo as fg
from fieldgo.runtime.bridge import go, wheel_nvrtc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_show_versions_names_what_a_bug_report_needs():
    buf = io.StringIO()
    fg.show_versions(file=buf)
    text = buf.getvalue()
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in text.splitlines())
    for key in (
        "fieldgo",
        "go runtime",
        "arrow-go",
        "nvrtc",
        "cuda driver",
        "c compiler",
        "python",
        "numpy",
        "pyarrow",
        "platform",
    ):
        assert key in rows, text
    assert rows["fieldgo"] == fg.__version__
    assert re.match(r"go1\.\d+", rows["go runtime"]), text
    assert re.match(r"v18\.\d+\.\d+", rows["arrow-go"]), text
    import numpy
    import pyarrow

    assert rows["numpy"] == numpy.__version__ and rows["pyarrow"] == pyarrow.__version__
    assert rows["python"].startswith("CPython " + ".".join(map(str, sys.version_info[:3])))


def test_arrow_go_is_the_one_go_mod_pins():
    gomod = ROOT / "go.mod"
    if not gomod.exists():
        pytest.skip("no go.mod beside the tests")
    pinned = re.search(r"github.com/apache/arrow-go/v18 (v\S+)", gomod.read_text()).group(1)
    assert json.loads(go.BuildInfo())["modules"]["github.com/apache/arrow-go/v18"] == pinned


def test_version_is_single_sourced():
    assert importlib.metadata.version("fieldgo") == fg.__version__
    assert go.Version() == fg.__version__  # pybind/pybind.go's Version, kept in step by this test
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():
        text = pyproject.read_text()
        assert 'dynamic = ["version"]' in text and 'attr = "fieldgo.__version__"' in text
        project = text.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
        assert not re.search(r"(?m)^version\s*=", project)  # no second copy in [project]


def test_nvrtc_line_says_version_or_why_not():
    info = fg.versions.versions()
    assert re.match(r"\d+\.\d+ \(", info["nvrtc"]) or "NVRTC not found" in info["nvrtc"], info["nvrtc"]
    if wheel_nvrtc() and "NVRTC not found" in info["nvrtc"]:
        pytest.fail(f"pip's NVRTC {wheel_nvrtc()} was not found: {info['nvrtc']}")


def test_pip_nvrtc_is_handed_to_go(tmp_path):
    """The nvidia-cuda-nvrtc wheel's library is among the NVRTC candidates Go tries,
    whether or not the venv is activated (a fake ``nvidia`` package stands in for the
    wheel: Go tries it and names it, unless a real NVRTC loads first)."""
    lib = tmp_path / "site" / "nvidia" / "cuda_nvrtc" / "lib"
    lib.mkdir(parents=True)
    fake = lib / "libnvrtc.so.12"
    fake.write_bytes(b"not a library")
    script = (
        "import json, fieldgo as fg\n"
        "from fieldgo.runtime.bridge import go, wheel_nvrtc\n"
        "print(json.dumps({'found': wheel_nvrtc(), 'nvrtc': json.loads(go.BuildInfo())['nvrtc']}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "FIELDGO_NVRTC")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site")] + [p for p in sys.path if p])
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert str(fake) in res["found"]
    if "error" in res["nvrtc"]:
        assert str(fake) in res["nvrtc"]["error"], res["nvrtc"]["error"]
    else:
        assert res["nvrtc"]["path"] != str(fake)


def test_a_missing_c_compiler_is_one_clear_line(tmp_path):
    """`pip install fieldgo` needs a C compiler at run time: without one on PATH (and no
    $CC) the CPU backend says so in one line, as a BackendError, and show_versions too."""
    script = (
        "import fieldgo as fg\n"
        "print('c compiler:', fg.versions.versions()['c compiler'])\n"
        "try:\n"
        "    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(16, 16), spacing=0.5, backend='cpu')\n"
        "    sim.set_field(fg.initial.skyrmion(charge=1))\n"
        "    sim.minimize(max_steps=2)\n"
        "except fg.BackendError as e:\n"
        "    print('BackendError:', e)\n"
    )
    (tmp_path / "empty-bin").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env.update(PATH=str(tmp_path / "empty-bin"), FIELDGO_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2, out.stdout  # one line each, no traceback or log
    assert lines[0].startswith("c compiler: not found: 'cc'"), lines[0]
    assert lines[1].startswith("BackendError: no C compiler"), lines[1]
    assert "'cc'" in lines[1].replace('"', "'") and "$CC" in lines[1], lines[1]
