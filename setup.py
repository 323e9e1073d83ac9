"""Build hook: compiles the Go bridge with gopy before packaging.

Everything declarative lives in pyproject.toml; this file only makes
``pip install .`` and ``pip install -e .`` run tools/build_bridge.py and mark the
wheel as platform-specific.
"""

import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithBridge(build_py):
    def run(self):
        sys.path.insert(0, str(ROOT / "tools"))
        import build_bridge

        build_bridge.build(sys.executable)
        super().run()


class PlatformDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithBridge}, distclass=PlatformDistribution)
