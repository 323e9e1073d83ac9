"""Build hook: compiles the Go bridge with gopy before packaging.

Everything declarative lives in pyproject.toml; this file only makes
``pip install .`` and ``pip install -e .`` run tools/build_bridge.py and mark the
wheel as platform-specific.
"""

import os
import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithBridge(build_py):
    """Builds the bridge for the Python running the build: into the source tree for
    an editable install (which imports it from there), else into the build folder,
    so a wheel carries only its own Python's extension, whatever the tree holds."""

    def run(self):
        sys.path.insert(0, str(ROOT / "tools"))
        import build_bridge

        if self.editable_mode:
            # `make setup` builds the bridge as a stage of its own, with its progress shown.
            if not os.environ.get("FIELDGO_SKIP_BRIDGE"):
                build_bridge.build(sys.executable)
            super().run()
        else:
            super().run()
            build_bridge.build(sys.executable, pathlib.Path(self.build_lib) / "fieldgo" / "_bridge", stamp=False)


class PlatformDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithBridge}, distclass=PlatformDistribution)
