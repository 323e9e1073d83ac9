"""fieldgo: lattice field theories written in Python, run by a Go runtime.

Imported as::

    import fieldgo as fg

The package is layered: ``fieldgo.frontend`` turns a theory written in Python into C
point source and never loads the Go runtime; ``fieldgo.runtime`` is Python's side of
the Go engine (the bridge, simulations, lattices, fields, devices); ``fieldgo.nbody``,
``fieldgo.radiation`` and ``fieldgo.sweep`` are the workloads built on it, and
``fieldgo.jupyter`` the notebook extension. This module is the public namespace.
"""

from .errors import *  # noqa: F401,F403  (the exception hierarchy is public)
from .errors import Error

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (tool.setuptools.dynamic)

# --- front end (theories, tracer, codegen) ---
from .frontend.theory import Theory, Static, UnitVector, PointResult  # noqa: E402
from .frontend.symbolic import sqrt, exp, log, sin, cos, tan, atan2, pow, abs, min, max, where, pi  # noqa: E402,A004
from .frontend.algebra import dot, cross, norm2, norm, complex, complex_field, covariant, curl, Vector, Complex  # noqa: E402,A004
from . import theories  # noqa: E402
from . import cache  # noqa: E402  (fg.cache.info(), fg.cache.clear(kind))

# --- data (lattices, fields) ---
from .runtime.lattice import Lattice
from .runtime.field import Field, allocated_bytes
from .runtime import fieldvalues  # fg.fieldvalues.ConstraintWarning (docs/robustness.md)

# --- engine (simulations) ---
from .runtime.simulation import PrecisionWarning, Simulation, load
from .runtime.evolution import Evolution, read_evolution
from . import initial
from . import observables  # noqa: E402  (fg.observables.baryon_number(sim), ...)
from .runtime.devices import devices
from .versions import show_versions

# --- jupyter ---
from .plotting import plot, plot_history  # noqa: E402
from .visualisation import isosurface, isosurface_mesh, runge_colours, slice, to_vtk, view3d  # noqa: E402,A004
from .animation import Animation, animate  # noqa: E402
from .tracking import track  # noqa: E402
from .jupyter import load_ipython_extension, unload_ipython_extension  # noqa: E402

# --- trajectories ---
from . import radiation  # noqa: E402
from . import nbody  # noqa: E402

# --- sweeps ---
from .sweep import sweep  # noqa: E402
