"""soliton_solver (Numba CUDA), driven headless beside fieldgo in the same process.

soliton_solver is not a dependency: ``pip install soliton-solver`` (or give the folder
holding its package as ``--peer-src``). Its theory packages import its OpenGL viewer;
where glfw, moderngl or PyOpenGL are missing, inert stand-ins are registered (nothing
ever renders). NumPy >= 2.5 lacks ``np.row_stack``, which numba-cuda 0.30 registers an
overload for at its first compile: an alias is added. Its ``{"mode": "initial"}`` set-ups
are broken for both theories (Baby Skyrme passes one argument too few; Abelian Higgs
reads one parameter past the end), so the field is set the way its viewer does: the
ground state, then its own skyrmion or vortex kernel.
"""

from __future__ import annotations

import importlib
import sys
import time
import types

import numpy as np

THEORIES = {
    "baby_skyrme": ("soliton_solver.theories.baby_skyrme", {"unit_magnetization": True}),
    "abelian_higgs": ("soliton_solver.theories.ginzburg_landau_superconductor", {}),
}


class _Inert:
    """Anything a GUI module is asked for: callable, falsy, zero."""

    def __call__(self, *a, **k):
        return _Inert()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    __index__ = __int__


def _module_getattr(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Inert()


def _stub_gui_modules() -> None:
    for name in ("glfw", "moderngl", "OpenGL", "OpenGL.GL", "OpenGL.GLUT"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (missing, or failing without a display)
            mod = types.ModuleType(name)
            mod.__getattr__ = _module_getattr
            mod.__path__ = []  # a package, so OpenGL.GL resolves
            sys.modules[name] = mod


def load(src: str | None = None) -> bool:
    """Make soliton_solver importable (from ``src`` if given); False where it is not."""
    if src:
        sys.path.insert(0, src)
    if not hasattr(np, "row_stack"):
        np.row_stack = lambda tup, *, dtype=None, casting="same_kind": np.vstack(tup, dtype=dtype, casting=casting)
    _stub_gui_modules()
    try:
        importlib.import_module("soliton_solver.core.simulation")
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


class Peer:
    """One soliton_solver simulation of ``theory`` on n x n sites, field set."""

    def __init__(self, theory: str, n: int):
        from numba import cuda
        from soliton_solver.core.simulation import Simulation
        from soliton_solver.core.utils import launch_2d

        module, overrides = THEORIES[theory]
        th = importlib.import_module(module)
        self.sim = s = Simulation(th.params.default_params(xlen=n, ylen=n, **overrides), th)
        s.initialize({"mode": "ground"})
        if theory == "baby_skyrme":
            g, b = launch_2d(s.p_i_h, threads=s.threads2d)
            th.initial_config.create_initial_configuration_kernel[g, b](
                s.Velocity,
                s.Field,
                s.grid,
                s.k1,
                s.k2,
                s.k3,
                s.k4,
                s.l1,
                s.l2,
                s.l3,
                s.l4,
                s.Temp,
                bool(s.rp.ansatz_bloch),
                bool(s.rp.ansatz_neel),
                bool(s.rp.ansatz_anti),
                float(s.rp.skyrmion_rotation),
                float(s.rp.skyrmion_number),
                s.p_i_d,
                s.p_f_d,
            )
        else:
            g, b = launch_2d(s.p_i_h, threads=(8, 8))
            th.initial_config.create_vortex_kernel[g, b](s.Field, s.grid, n // 2, n // 2, 0, s.p_i_d, s.p_f_d)
        cuda.synchronize()
        self.energy = float(s.observables()["energy"])

    def steps(self, k: int) -> float:
        """Seconds for k arrested-Newton steps driven as its viewer drives them."""
        from numba import cuda

        cuda.synchronize()
        t0 = time.perf_counter()
        e = self.energy
        for _ in range(k):
            e, _ = self.sim.step(e)
        cuda.synchronize()
        self.energy = e
        return time.perf_counter() - t0

    def close(self) -> None:
        from numba import cuda

        del self.sim
        cuda.synchronize()
