"""Build fieldgo's Go bridge (the gopy-wrapped pybind package) for one Python.

    python tools/build_bridge.py [--python PYTHON] [--out DIR]

Runs gopy (pinned in go.mod as a Go tool) and leaves the extension module in
python/fieldgo/_bridge (or DIR). Used by setup.py's build hook and by the
Makefile; needs Go and a C compiler, and pybindgen in PYTHON's environment.
Prints one line per stage with its time; gopy's own output is shown when a stage
fails, or throughout with FIELDGO_BUILD_VERBOSE=1.

The extension does not link libpython: gopy's -dynamic-link takes the link flags
of sysconfig's LDSHARED, which name no libpython, so Python's symbols resolve
when the interpreter loads it (as manylinux requires). LDSHARED may also carry an
-rpath to the interpreter's library folder: harmless here, and dropped for wheels
by tools/build_wheels.py's compiler wrapper.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULE = "github.com/fieldgo/fieldgo/pybind"


def _stage(msg: str) -> None:
    print(f"fieldgo: {msg}", flush=True)


def _run(args: list[str], env: dict, what: str, note: str = "") -> None:
    """Runs one build stage, its output shown only on failure (or when verbose)."""
    t0 = time.monotonic()
    _stage(f"{what} ({note}) ..." if note else f"{what} ...")
    if os.environ.get("FIELDGO_BUILD_VERBOSE"):
        r = subprocess.run(args, cwd=ROOT, env=env)
        out = ""
    else:
        r = subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = r.stdout
    if r.returncode != 0:
        sys.stderr.write(out[-20000:])
        sys.exit(f"fieldgo: {what} failed (exit {r.returncode}); its output is above")
    _stage(f"{what}: done in {time.monotonic() - t0:.0f} s")


def _check_toolchain(env: dict) -> None:
    """One clear line where the build cannot start: no Go, or no C compiler for cgo."""
    if shutil.which("go", path=env.get("PATH")) is None:
        sys.exit(
            "fieldgo: building from source needs Go 1.26 or newer on PATH (https://go.dev/dl) and a C compiler;"
            " the prebuilt wheels (pip install fieldgo: Linux x86_64, CPython 3.10-3.13) need no Go"
        )
    cc = (env.get("CC") or "").split() or ["gcc"]
    if shutil.which(cc[0], path=env.get("PATH")) is None and shutil.which("cc", path=env.get("PATH")) is None:
        sys.exit(
            f"fieldgo: building from source needs a C compiler for cgo: {cc[0]!r} not found (install gcc, or set $CC)"
        )


def build(python: str = sys.executable, out: pathlib.Path | None = None, stamp: bool = True) -> pathlib.Path:
    """Builds the bridge for python into out; stamp: leave the Makefile's .stamp there."""
    out = (out or ROOT / "python" / "fieldgo" / "_bridge").resolve()
    env = dict(os.environ)
    _check_toolchain(env)
    tools = ROOT / ".tools"
    tools.mkdir(exist_ok=True)
    env["CGO_LDFLAGS_ALLOW"] = ".*"  # gopy passes the Python link flags through cgo
    env["GOFLAGS"] = env.get("GOFLAGS", "") + " -mod=mod"
    # gopy runs goimports from PATH: build both pinned tools into .tools/.
    _run(
        ["go", "build", "-o", str(tools) + os.sep, "github.com/go-python/gopy", "golang.org/x/tools/cmd/goimports"],
        env,
        "building gopy and goimports (pinned in go.mod)",
    )
    env["PATH"] = str(tools) + os.pathsep + env.get("PATH", "")
    # gopy needs the output folder inside the module and named with a leading "_".
    tmp = ROOT / f"_bridge_build_{os.getpid()}"  # one per build: concurrent builds must not collide
    shutil.rmtree(tmp, ignore_errors=True)
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    try:
        _run(
            [
                str(tools / "gopy"),
                "build",
                f"-output={tmp.name}",
                f"-vm={python}",
                "-name=pybind",
                "-dynamic-link=true",
                MODULE,
            ],
            env,
            f"building the bridge for Python {version} with gopy",
            "Go compiles the runtime twice: about 2 minutes on 2 cores, less with Go's build cache warm",
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
    if stamp:
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
