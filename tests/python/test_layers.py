"""The package's layers: the front end (fieldgo.frontend) turns a theory into C point
source and never loads the Go runtime. It imports neither fieldgo.runtime, nor the
bridge, nor a workload built on them; a theory traces, derives, generates its C, runs
on one site (Theory.at, the system C compiler) and shows itself as LaTeX with none of
them loaded."""

import ast
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "fieldgo"
# What the front end may not import: the runtime, the bridge and the workloads.
FORBIDDEN = ("fieldgo.runtime", "fieldgo._bridge", "fieldgo.nbody", "fieldgo.radiation", "fieldgo.sweep")


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").exists()


def _imports(path: pathlib.Path, package: str):
    """Every module an import statement of path loads (at any depth: lazy imports
    inside functions count), as absolute names; ``from fieldgo import Simulation``
    loads ``fieldgo`` itself, the whole public namespace."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield node.lineno, sub if _is_module(sub) else base


def test_front_end_source_never_imports_the_runtime():
    bad = []
    for path in sorted((PACKAGE / "frontend").glob("*.py")):
        for line, name in _imports(path, "fieldgo.frontend"):
            if name == "fieldgo" or name.startswith(FORBIDDEN):
                bad.append(f"frontend/{path.name}:{line} imports {name}")
    assert not bad, "\n".join(bad)


# Runs with fieldgo's own __init__ (which exports the whole public API) replaced by an
# empty package, so that only what the front end imports itself is loaded.
_PROBE = r"""
import sys, types
pkg = types.ModuleType("fieldgo")
pkg.__path__ = [sys.argv[1]]
sys.modules["fieldgo"] = pkg

import importlib, pathlib
for path in sorted(pathlib.Path(sys.argv[1], "frontend").glob("*.py")):
    importlib.import_module("fieldgo.frontend" + ("" if path.stem == "__init__" else "." + path.stem))

from fieldgo.frontend.algebra import dot
from fieldgo.frontend.theory import Theory, UnitVector

theory = Theory("probe", fields=["n1", "n2", "n3"], params={"kappa": 1.0}, constraint=UnitVector())

@theory.energy_density
def energy(s, p):
    return 0.5 * (dot(s.dx, s.dx) + dot(s.dy, s.dy)) + p.kappa * (1 - s.phi[2])

assert "fg_energy" in theory.source
assert theory.at(phi=[0.0, 0.0, 1.0]).energy == 0.0
assert "kappa" in theory.latex()
loaded = sorted(m for m in sys.modules if m == "fieldgo" or m.startswith("fieldgo."))
print("\n".join(loaded))
"""


def test_front_end_traces_without_the_runtime(tmp_path):
    env = {"FIELDGO_CACHE": str(tmp_path)}  # a cold cache: the theory is traced, not read back
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(PACKAGE)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env},
    )
    assert out.returncode == 0, out.stderr
    loaded = out.stdout.split()
    assert "fieldgo.frontend.codegen" in loaded  # it did trace
    assert not [m for m in loaded if m.startswith(FORBIDDEN)], loaded
