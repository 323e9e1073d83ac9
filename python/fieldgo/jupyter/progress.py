"""What ``Simulation.minimize`` shows while it runs: a tqdm progress bar (step,
energy, max |grad|, rate) and, with ``live=``, a picture of the field redrawn in
place (on a 3D lattice one plane: the middle one along z, or the plane that a dict
``live={"every": 50, "axis": "x", "density": "energy"}`` chooses with fg.plot's
arguments). Progress is on by default inside a Jupyter kernel and off in scripts and
tests ($FIELDGO_PROGRESS=1 or 0 overrides the default)."""

from __future__ import annotations

import os
import sys
import time
import warnings

__all__ = ["in_notebook", "Monitor", "LIVE_EVERY", "LIVE_MIN_SECONDS"]

LIVE_EVERY = 100  # live=True: redraw at most every this many steps
LIVE_MIN_SECONDS = 0.25  # and not more often than this (a redraw costs ~50 ms)


def in_notebook() -> bool:
    """True inside a Jupyter (IPython) kernel, False in scripts, terminals and tests."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        ip = ipython.get_ipython()
    except Exception:
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def _progress_default() -> bool:
    env = os.environ.get("FIELDGO_PROGRESS", "")
    if env in ("0", "1"):
        return env == "1"
    return in_notebook()


def _tqdm_class():
    """tqdm.auto's choice, without its warning when ipywidgets is missing (the text
    bar works in every front end)."""
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            from tqdm.std import tqdm

            return tqdm
    from tqdm.auto import tqdm

    return tqdm


def _is_widget_bar(cls) -> bool:
    """Whether tqdm's class draws an ipywidgets bar (tqdm.notebook, or tqdm.auto's
    choice in a kernel with ipywidgets)."""
    try:
        from tqdm.notebook import tqdm as notebook_tqdm
    except ImportError:
        return False
    return isinstance(cls, type) and issubclass(cls, notebook_tqdm)


class Monitor:
    """Progress bar and live field view for one minimize call."""

    def __init__(self, sim, max_steps: int, progress=None, live=False):
        if progress is None:
            progress = _progress_default()
        self.view: dict = {}
        if isinstance(live, dict):
            self.view = _live_view(sim, live)
            live = live.get("every", True)
        if live is True:
            every = LIVE_EVERY
        elif live is False or live is None:
            every = 0
        elif isinstance(live, int) and live > 0:
            every = int(live)
        else:
            from ..errors import ParameterError

            raise ParameterError(
                f"live must be True, False, a positive number of steps or a dict of fg.plot's arguments, got {live!r}"
            )
        if every and not in_notebook():
            warnings.warn("live=True needs a Jupyter kernel to draw in; ignored", stacklevel=3)
            every = 0
        self.sim = sim
        self.every = every
        self.bar = None
        self.bar_handle = None
        if progress:
            cls = _tqdm_class()
            if _is_widget_bar(cls):
                # The widget is displayed here, with a display id, so that close() can
                # publish it again: the text/plain a saved notebook keeps is the one
                # of the last publication, else the bar as it started (0/max_steps).
                self.bar = cls(total=max_steps, unit="step", desc="minimize", leave=True, display=False)
                from IPython.display import display

                self.bar_handle = display(self.bar.container, display_id=True)
            else:
                self.bar = cls(total=max_steps, unit="step", desc="minimize", leave=True)
        self.handle = None
        self.last_drawn_step = None
        self.last_drawn_time = 0.0
        self.status: dict | None = None

    def update(self, status: dict) -> None:
        self.status = status
        if self.bar is not None:
            self.bar.update(status["step"] - self.bar.n)
            self.bar.set_postfix(
                energy=_fmt(status.get("energy"), ".10g"), max_grad=_fmt(status.get("max_grad"), ".3e"), refresh=False
            )
        if self.every:
            step = status["step"]
            due = self.last_drawn_step is None or (
                step - self.last_drawn_step >= self.every
                and time.monotonic() - self.last_drawn_time >= LIVE_MIN_SECONDS
            )
            if due or status.get("done"):
                self.draw(status)

    def draw(self, status: dict) -> None:
        """Draw the field now, in place of the previous picture."""
        from IPython.display import Image, display

        from ..plotting import figure_png, plot

        if "density" in self.view or "component" in self.view:
            fig = plot(self.sim, **self.view)
        else:
            fig = plot(self.sim.field, **self.view)
        flow = "converged" if status.get("converged") else "running" if not status.get("done") else "stopped"
        # one panel (and its colorbar) is too narrow for the status on one line
        sep = "\n" if len(fig.axes) <= 2 else ", "
        fig.suptitle(
            f"step {status['step']}: energy {_fmt(status.get('energy'), '.10g')}{sep}"
            f"max |grad| {_fmt(status.get('max_grad'), '.2e')} ({flow})"
        )
        image = Image(data=figure_png(fig, dpi=72), format="png")
        if self.handle is None:
            self.handle = display(image, display_id=True)
        else:
            self.handle.update(image)
        self.last_drawn_step = status["step"]
        self.last_drawn_time = time.monotonic()

    def close(self, interrupted: bool = False) -> None:
        """Finish the bar (green when the run ended, left as it stands when it was
        interrupted). No redraw after an interrupt: the caller gets control back first."""
        if self.bar is not None:
            st = self.status
            if st is not None and st.get("done") and not interrupted:
                self.bar.total = self.bar.n  # a finished run is a full bar, however few steps it took
                widget = getattr(self.bar, "container", None)
                if widget is not None:
                    # the notebook widget keeps the maximum it was made with: 381/381
                    # would be drawn 2% full against max_steps
                    widget.children[1].max = max(self.bar.n, 1)
            self.bar.close()
            if self.bar_handle is not None:
                self.bar_handle.update(self.bar.container)


_LIVE_KEYS = ("every", "axis", "index", "at", "density", "component")


def _live_view(sim, live: dict) -> dict:
    """fg.plot's arguments of a live view given as a dict (``every`` aside), checked
    before the flow starts: known keys, and a plane the lattice has."""
    from ..errors import ParameterError
    from ..plotting import _section

    unknown = sorted(set(live) - set(_LIVE_KEYS))
    if unknown:
        raise ParameterError(f"live= takes the keys {', '.join(_LIVE_KEYS)}; unknown: {', '.join(map(str, unknown))}")
    view = {k: v for k, v in live.items() if k != "every"}
    _section([], sim.lattice, view.get("axis"), view.get("index"), view.get("at"))
    return view


def _fmt(v, spec):
    return "nan" if v is None else format(v, spec)
