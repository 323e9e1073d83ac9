"""fieldgo in Jupyter: ``%load_ext fieldgo``.

Loading the extension registers rich displays (a Theory as LaTeX, a Simulation as an
HTML card, a Field as a picture, a minimize history as a plot of energy and
``max |grad|``) and the ``%fieldgo`` line magic (``devices``, ``kernels``, ``cache``,
``cache clear``). Progress bars and the live field view of ``minimize`` need no
extension: they are on whenever the code runs in a Jupyter kernel.
"""

from __future__ import annotations

from . import display, magics, progress
from .display import TheoryView, simulation_html, theory_latex
from .progress import in_notebook

__all__ = [
    "load_ipython_extension",
    "unload_ipython_extension",
    "display",
    "magics",
    "progress",
    "TheoryView",
    "simulation_html",
    "theory_latex",
    "in_notebook",
]


def load_ipython_extension(ip) -> None:
    """Called by ``%load_ext fieldgo``."""
    from ..plotting import _ensure_figure_display

    display.register(ip)
    ip.register_magic_function(magics.fieldgo_magic, magic_kind="line", magic_name="fieldgo")
    _ensure_figure_display()


def unload_ipython_extension(ip) -> None:
    display.unregister(ip)
