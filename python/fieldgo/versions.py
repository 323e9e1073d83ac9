"""What this fieldgo runs on, for bug reports: ``fg.show_versions()``.

The versions come from where they are decided: the Go runtime reports its own
toolchain and the arrow-go it was built with, NVRTC and the CUDA driver as it
loads them (the same search a CUDA Simulation makes), the C compiler is the
one the CPU backend runs (``$CC``, else ``cc``), and Python packages from their
installed metadata, without importing them.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys

from . import __version__

# Python packages worth naming in a report: the core ones first, then the extras'.
_PACKAGES = (
    "numpy",
    "pyarrow",
    "sympy",
    "matplotlib",
    "pandas",
    "polars",
    "dask",
    "distributed",
    "ipykernel",
    "ipywidgets",
    "IPython",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-nvrtc",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "numba",
)
_ARROW_GO = "github.com/apache/arrow-go/v18"


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _compiler() -> str:
    cc = shlex.split(os.environ.get("CC", "") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        name = cc[0] if cc else "cc"
        return f"not found: {name!r} (the CPU backend needs a C compiler: install gcc or clang, or set $CC)"
    try:
        r = subprocess.run(cc + ["--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{' '.join(cc)}: cannot run it: {e}"
    first = (r.stdout or r.stderr).strip().splitlines()
    return f"{first[0] if first else '?'} ({shutil.which(cc[0])})"


def _kernel_driver() -> str | None:
    """The NVIDIA kernel module's version line, when the machine has one."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            line = f.readline()
    except OSError:
        return None
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  ..."
    words = line.split()
    return next((w for w in words if w[:1].isdigit() and "." in w), line.strip())


def versions() -> dict:
    """The facts :func:`show_versions` prints, as a dict (the Go side's as it reports them)."""
    from .errors import Error
    from .runtime.bridge import go

    info: dict = {
        "fieldgo": __version__,
        "fieldgo location": os.path.dirname(os.path.abspath(__file__)),
    }
    try:
        built = json.loads(go.BuildInfo())
    except (Error, AttributeError) as e:  # no bridge, or one older than BuildInfo
        built = {"error": str(e).splitlines()[0]}
    info["go runtime"] = built.get("go") or built.get("error", "?")
    info["arrow-go"] = built.get("modules", {}).get(_ARROW_GO, "?")
    nv = built.get("nvrtc", {})
    if "version" in nv:
        info["nvrtc"] = f"{nv['version']} ({nv['path']})"
    else:
        info["nvrtc"] = nv.get("error", "?").splitlines()[0].removesuffix("; tried:")
    drv = built.get("cuda_driver", {})
    info["cuda driver"] = f"CUDA {drv['version']}" if "version" in drv else drv.get("error", "?")
    kernel = _kernel_driver()
    if kernel:
        info["cuda driver"] += f", NVIDIA kernel module {kernel}"
    info["c compiler"] = _compiler()
    info["python"] = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
    for name in _PACKAGES:
        v = _package_version(name)
        if v is not None or name in ("numpy", "pyarrow"):
            info[name] = v or "not installed"
    libc = " ".join(platform.libc_ver()).strip()
    info["platform"] = f"{platform.platform()}, {platform.machine()}" + (f", {libc}" if libc else "")
    info["cpus"] = str(os.cpu_count())
    return info


def show_versions(file=None) -> None:
    """Print fieldgo's version and what it runs on, for a bug report.

    fieldgo, the Go runtime inside it and the arrow-go it was built with, NVRTC
    and the CUDA driver (or why they are missing), the C compiler the CPU backend
    uses, Python, numpy, pyarrow and the other packages that are installed, and
    the platform. Asking loads NVRTC and the CUDA driver where they are present.
    """
    info = versions()
    width = max(len(k) for k in info)
    for k, v in info.items():
        print(f"{k:<{width}}  {v}", file=file or sys.stdout)
