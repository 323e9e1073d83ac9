"""Build fieldgo's Go bridge (the gopy-wrapped pybind package) for one Python.

    python tools/build_bridge.py [--python PYTHON] [--out DIR]

Runs gopy (pinned in go.mod as a Go tool) and leaves the extension module in
python/fieldgo/_bridge (or DIR). Used by setup.py's build hook and by the
Makefile; needs Go and a C compiler, and pybindgen in PYTHON's environment.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULE = "github.com/fieldgo/fieldgo/pybind"


def build(python: str = sys.executable, out: pathlib.Path | None = None) -> pathlib.Path:
    out = (out or ROOT / "python" / "fieldgo" / "_bridge").resolve()
    if shutil.which("go") is None:
        sys.exit("fieldgo: building the bridge needs Go 1.26 (https://go.dev/dl) on PATH")
    tools = ROOT / ".tools"
    tools.mkdir(exist_ok=True)
    env = dict(os.environ)
    env["CGO_LDFLAGS_ALLOW"] = ".*"  # gopy passes the Python link flags through cgo
    env["GOFLAGS"] = env.get("GOFLAGS", "") + " -mod=mod"
    # gopy runs goimports from PATH: build both pinned tools into .tools/.
    subprocess.run(
        ["go", "build", "-o", str(tools) + os.sep, "github.com/go-python/gopy", "golang.org/x/tools/cmd/goimports"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    env["PATH"] = str(tools) + os.pathsep + env.get("PATH", "")
    # gopy needs the output folder inside the module and named with a leading "_".
    tmp = ROOT / f"_bridge_build_{os.getpid()}"  # one per build: concurrent builds must not collide
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        subprocess.run(
            [
                str(tools / "gopy"),
                "build",
                f"-output={tmp.name}",
                f"-vm={python}",
                "-name=pybind",
                "-dynamic-link=true",
                MODULE,
            ],
            cwd=ROOT,
            env=env,
            check=True,
        )
        out.mkdir(parents=True, exist_ok=True)
        for old in out.iterdir():
            if old.is_file():
                old.unlink()
        for f in tmp.iterdir():
            # Keep what Python loads: the extension and gopy's wrappers.
            if f.name.startswith("_pybind.") and f.suffix == ".so" or f.name in ("pybind.py", "go.py", "__init__.py"):
                shutil.copy2(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (out / ".stamp").write_text(python + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    print("fieldgo: bridge built in", build(args.python, args.out))


if __name__ == "__main__":
    main()
