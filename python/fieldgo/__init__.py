"""fieldgo: lattice field theories written in Python, run by a Go runtime.

    import fieldgo as fg
"""

from .errors import *  # noqa: F401,F403  (the exception hierarchy is public)
from .errors import Error

__version__ = "0.1.0"

# --- front end (theories, tracer, codegen) ---

# --- data (lattices, fields) ---

# --- engine (simulations) ---
