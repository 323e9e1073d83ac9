"""Install a built wheel where there is no Go and run it (`make wheel-test`).

    python tools/wheel_test.py [--python 3.12 ...] [--dist dist]

For each CPython asked for (default: the one running this), a fresh venv in
build/wheel-test/cpXY, made and used with a PATH that holds no `go` (/usr/bin:/bin
when go is not there, else a folder of links to just the tools needed: cc, gcc, as,
ld), installs dist/fieldgo-*-cpXY-*.whl with pip (its dependencies from the index),
then runs tools/wheel_smoke.py (a small skyrmion relaxation on the CPU) and a subset
of tests/python against the installed package: the tests that need neither Go nor
notebooks nor the source tree's build, run from outside the tree with
--import-mode=importlib, fieldgo imported first from the venv and checked to be the
wheel's. Kernels compile into a fresh cache, so the C compiler path is exercised.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from build_wheels import find_python  # noqa: E402

# Tests that run against an installed fieldgo: no Go, no notebooks, no files of the build.
TESTS = [
    "test_versions.py",
    "test_field.py",
    "test_field_values.py",
    "test_simulation.py",
    "test_precision.py",
    "test_nbody.py",
    "test_radiation.py",
    "test_gradient_check.py",
    "test_bad_input_catalogue.py",
    "test_sourcecache.py",
    "test_cancel.py",
    "test_device_field.py",
    "test_gpu.py",  # skips without a GPU; on a GPU machine it runs
]
TEST_PACKAGES = ["pytest>=8", "hypothesis>=6"]


def stage(msg: str) -> None:
    print(f"wheel-test: {msg}", flush=True)


def no_go_path(work: pathlib.Path) -> str:
    """A PATH without go: /usr/bin:/bin when go is in neither, else links to the few tools needed."""
    plain = "/usr/bin:/bin"
    if shutil.which("go", path=plain) is None:
        return plain
    bin_dir = work / "nogo-bin"
    shutil.rmtree(bin_dir, ignore_errors=True)
    bin_dir.mkdir(parents=True)
    for tool in ("cc", "gcc", "as", "ld", "ld.bfd", "ld.gold", "c++", "g++", "uname", "ldconfig", "sh"):
        found = shutil.which(tool, path=plain + ":/usr/sbin:/sbin")
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def run(args, env, what: str, cwd=None) -> None:
    t0 = time.monotonic()
    stage(f"{what} ...")
    r = subprocess.run([str(a) for a in args], env=env, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"wheel-test: {what} failed (exit {r.returncode})")
    stage(f"{what}: done in {time.monotonic() - t0:.0f} s")


def test_one(python: str, dist: pathlib.Path, pytest_args: list[str]) -> None:
    tag = (
        "cp"
        + subprocess.run(
            [python, "-c", "import sys; print('%d%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    wheels = sorted(dist.glob(f"fieldgo-*-{tag}-{tag}-*manylinux*.whl"))
    if not wheels:
        sys.exit(f"wheel-test: no {tag} wheel in {dist}: run make wheel first")
    wheel = wheels[-1]
    work = ROOT / "build" / "wheel-test" / tag
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    path = no_go_path(work)
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", str(work)),
        "LANG": "C.UTF-8",
        "FIELDGO_CACHE": str(work / "cache"),
        "MPLBACKEND": "Agg",
        "PYTHONNOUSERSITE": "1",
    }
    for keep in ("TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "PIP_CACHE_DIR"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    stage(f"{tag}: {wheel.name} into a fresh venv, PATH={path} (go: {shutil.which('go', path=path) or 'not found'})")
    if shutil.which("go", path=path):
        sys.exit("wheel-test: go is still on the test PATH")
    venv = work / "venv"
    run([python, "-m", "venv", venv], env, f"{tag}: venv")
    py = venv / "bin" / "python"
    run(
        [py, "-m", "pip", "install", "--progress-bar", "off", wheel, *TEST_PACKAGES],
        env,
        f"{tag}: pip install the wheel",
    )
    # Run from outside the tree: the CUDA backend also looks for NVRTC in a .venv above the
    # working directory (for the repository's tests), which a user's machine has not.
    cwd = pathlib.Path(tempfile.mkdtemp(prefix=f"fieldgo-wheel-test-{tag}-"))
    run([py, ROOT / "tools" / "wheel_smoke.py"], env, f"{tag}: skyrmion relaxation", cwd=cwd)
    tests = [str(ROOT / "tests" / "python" / t) for t in TESTS]
    check = (
        "import sys, fieldgo, pytest\n"
        "assert fieldgo.__file__.startswith(sys.prefix), fieldgo.__file__\n"
        "sys.exit(pytest.main(sys.argv[1:]))\n"
    )
    run(
        [py, "-c", check, "-q", "-p", "no:cacheprovider", "--import-mode=importlib", "-x", *pytest_args, *tests],
        env,
        f"{tag}: {len(TESTS)} test files against the installed wheel",
        cwd=cwd,
    )
    shutil.rmtree(cwd, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", help="a CPython version (3.12) or interpreter; repeatable")
    ap.add_argument("--all", action="store_true", help="every CPython 3.10-3.13 this machine has")
    ap.add_argument("--dist", type=pathlib.Path, default=ROOT / "dist")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.all:
        wanted = ["3.10", "3.11", "3.12", "3.13"]
    else:
        wanted = args.python or [sys.executable]
    done = []
    for want in wanted:
        python = want if os.path.sep in want else find_python(want)
        if python is None:
            stage(f"CPython {want}: not on this machine, skipped")
            continue
        test_one(python, args.dist.resolve(), args.pytest_args)
        done.append(want)
    stage(f"passed for {', '.join(done)} in {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
