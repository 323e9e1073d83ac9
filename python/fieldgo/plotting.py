"""Quick figures of simulations, fields, densities and histories.

    fg.plot(sim)                      # the energy density
    fg.plot(sim, density="charge")    # a declared density (signed: diverging colours)
    fg.plot(sim.field)                # every component side by side
    fg.plot(sim, component="n3")      # one component of the working field
    fg.plot(sim3d, axis="x", at=0.5)  # a 3D lattice: one plane (default the middle one across z)
    fg.plot_history(sim.history)      # energy and max |grad| (log) against step

Figures are made with matplotlib's object API, not pyplot: a script keeps no global
figure state, and in a notebook the returned Figure is displayed once, where the
cell's value is shown. Axes carry lattice coordinates (x, y), not site indices.
"""

from __future__ import annotations

import io
import sys
from typing import NamedTuple

import numpy as np

__all__ = [
    "plot",
    "plot_history",
    "figure_png",
    "colormap_for",
    "is_history",
    "history_steps",
    "Plane",
    "plane",
    "take_plane",
]

# A signed quantity whose negative and positive parts are both real features
# (charges, fluxes, components of a unit vector) gets a diverging map centred on
# zero; a quantity that is positive but for rounding (energy) a sequential one.
_DIVERGING, _SEQUENTIAL = "RdBu_r", "inferno"
_SIGNED_FRACTION = 1e-3


def colormap_for(values, name: str | None = None):
    """(cmap, vmin, vmax) for an array: diverging and symmetric about zero for a
    signed quantity, sequential otherwise.

    An energy (``name`` "energy" or ending in "energy", e.g. "demag_energy") is
    sequential: its small negative values are discretisation noise, not features.
    Any other declared density (``name`` given: a charge, a flux) is signed, so a
    Q = +1 and a Q = -1 charge density read alike. Unnamed values (field
    components) are signed when they have a negative part beyond rounding, judged
    against the largest |value|: a Q = -1 density with a 1e-12 positive maximum is
    signed; a positive one with -1e-12 dips is not."""
    a = np.asarray(values, dtype=np.float64)
    finite = a[np.isfinite(a)]
    if finite.size == 0:
        return _SEQUENTIAL, None, None
    lo, hi = float(finite.min()), float(finite.max())
    scale = max(abs(lo), abs(hi))
    energy = name is not None and str(name).endswith("energy")
    negative = lo < 0 and -lo > _SIGNED_FRACTION * scale
    if not energy and scale > 0 and (negative or name is not None):
        return _DIVERGING, -scale, scale
    return _SEQUENTIAL, lo, hi


def _new_figure(ncols: int, size=(4.4, 3.8)):
    from matplotlib.figure import Figure

    _ensure_figure_display()
    fig = Figure(figsize=(size[0] * ncols, size[1]), layout="constrained")
    axes = [fig.add_subplot(1, ncols, k + 1) for k in range(ncols)]
    return fig, axes


def _ensure_figure_display():
    """In IPython, make a bare matplotlib Figure (made without pyplot) show as PNG
    when it is a cell's value; matplotlib's inline backend registers this only once
    pyplot has been imported."""
    if "IPython" not in sys.modules:
        return
    try:
        from IPython import get_ipython
        from matplotlib.figure import Figure
    except ImportError:
        return
    ip = get_ipython()
    if ip is None:
        return
    png = ip.display_formatter.formatters["image/png"]
    try:
        png.lookup_by_type(Figure)
    except KeyError:
        png.for_type(Figure, figure_png)


def figure_png(fig, dpi: int = 100) -> bytes:
    """The figure as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or not hasattr(fig.canvas, "print_png"):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _draw(ax, values, lattice, title, name=None, colorbar=True, plane=None):
    """One panel: a curve on a line, an image on a plane (``plane``: the
    :class:`Plane` of a 3D lattice's section; default the lattice's own x-y plane)."""
    if values.ndim == 1:  # a line: the values against x
        (line,) = ax.plot(lattice.x, values, color="C0")
        ax.set_title(title)
        ax.set_xlabel("x")
        return line
    if plane is None:
        plane = Plane("z", 0, 0.0, lattice.extent, "x", "y")
    cmap, vmin, vmax = colormap_for(values, name)
    im = ax.imshow(
        values,
        origin="lower",
        extent=plane.extent,
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        interpolation="nearest",
        aspect="equal",
    )
    ax.set_title(title)
    ax.set_xlabel(plane.xlabel)
    ax.set_ylabel(plane.ylabel)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.9)
    return im


_AXES = ("x", "y", "z")


class Plane(NamedTuple):
    """A plane of a 3D lattice: the ``axis`` across it, the index ``site`` of its
    sites along that axis and their coordinate ``at``; ``extent`` (imshow's) and the axis
    names of the image's columns and rows."""

    axis: str
    site: int
    at: float
    extent: tuple
    xlabel: str
    ylabel: str


def plane(lattice, axis="z", index=None, at=None) -> Plane:
    """The plane across ``axis`` ("x", "y" or "z") of a 3D lattice at site ``index``
    (default the middle one, n // 2) or at the site nearest the coordinate ``at``.
    Refused with typed errors: a lattice that is not 3D, an unknown axis, an index
    outside the lattice, a coordinate outside its extent, both index and at."""
    from .errors import LatticeError, ParameterError

    if lattice.dims != 3:
        raise LatticeError(f"a plane needs a 3D lattice, got grid={lattice.grid}")
    if axis not in _AXES:
        raise ParameterError(f"axis must be 'x', 'y' or 'z', got {axis!r}")
    a = _AXES.index(axis)
    coords = (lattice.x, lattice.y, lattice.z)[a]
    n = len(coords)
    if index is not None and at is not None:
        raise ParameterError("give index= or at=, not both")
    if at is not None:
        try:
            at = float(at)
        except (TypeError, ValueError):
            raise ParameterError(f"at must be a coordinate, got {at!r}") from None
        h = lattice.spacing[a]
        if not (coords[0] - h / 2 <= at <= coords[-1] + h / 2):
            raise ParameterError(f"at={at:g} is outside the lattice along {axis}: [{coords[0]:g}, {coords[-1]:g}]")
        index = int(np.argmin(np.abs(coords - at)))
    elif index is None:
        index = n // 2
    else:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ParameterError(f"index must be an integer, got {index!r}")
        if not -n <= index < n:
            raise ParameterError(f"index={index} is outside the lattice along {axis} (0 to {n - 1})")
        index = int(index) % n
    # the image's columns and rows: the other two axes in order (y-z across x, x-z across y)
    u, v = [b for b in range(3) if b != a]
    cu, cv = (lattice.x, lattice.y, lattice.z)[u], (lattice.x, lattice.y, lattice.z)[v]
    extent = (cu[0], cu[-1], cv[0], cv[-1])
    return Plane(axis, index, float(coords[index]), extent, _AXES[u], _AXES[v])


def take_plane(values, p: Plane):
    """The values (..., nz, ny, nx) on plane ``p``: (..., ny, nx) across z, (..., nz, nx)
    across y, (..., nz, ny) across x, rows running along the image's vertical axis."""
    return np.take(values, p.site, axis=values.ndim - 1 - _AXES.index(p.axis))


def _section(panels, lattice, axis=None, index=None, at=None):
    """A 3D lattice is drawn by one plane (default the middle one along z, k = nz // 2),
    named in each panel's title; a line's and a plane's panels are drawn as they are."""
    if lattice.dims != 3:
        if axis is not None or index is not None or at is not None:
            from .errors import LatticeError

            raise LatticeError(f"axis=, index= and at= choose a plane of a 3D lattice, got grid={lattice.grid}")
        return panels, None
    p = plane(lattice, axis or "z", index, at)
    return [(f"{title} ({p.axis} = {p.at:.3g})", name, take_plane(values, p)) for title, name, values in panels], p


def _panels(obj, density, component, axis=None, index=None, at=None):
    """[(title, name, 2-D array; 1-D on a line)], the lattice and the plane (None but
    on a 3D lattice) for what ``plot`` was given (a 3D lattice's plane: :func:`_section`)."""
    panels, lattice = _whole_panels(obj, density, component)
    panels, p = _section(panels, lattice, axis, index, at)
    return panels, lattice, p


def _whole_panels(obj, density, component):
    from .runtime.field import Field
    from .runtime.simulation import Simulation

    if isinstance(obj, Simulation):
        lattice = obj.lattice
        if density is not None and component is not None:
            raise ValueError("give density= or component=, not both")
        if component is not None:
            f = obj.field
            return [(str(component), None, np.array(f[component]))], lattice
        if density is None:
            density = "energy"
        d = obj.density(density)
        try:
            values = np.array(d.numpy()[0])
        finally:
            d.release()
        label = "energy density" if density == "energy" else f"{density} density"
        return [(label, density, values)], lattice
    if isinstance(obj, Field):
        if density is not None:
            raise ValueError("a Field has no densities: pass the Simulation to plot a density")
        lattice = obj.lattice
        if component is not None:
            idx = obj._index(component)
            return [(obj.names[idx], None, np.array(obj[idx]))], lattice
        return [(name, None, np.array(obj[k])) for k, name in enumerate(obj.names)], lattice
    raise TypeError(f"fg.plot takes a Simulation or a Field, got {type(obj).__name__}")


def plot(
    obj,
    density: str | None = None,
    component=None,
    ax=None,
    *,
    colorbar: bool = True,
    title: str | None = None,
    axis: str | None = None,
    index: int | None = None,
    at: float | None = None,
):
    """A quick picture of a simulation or field on lattice coordinates.

    ``obj``: an ``fg.Simulation`` (default: its energy density; ``density="charge"``
    for a declared density; ``component="n3"`` for one component of the field) or an
    ``fg.Field`` (every component side by side, or ``component=``). Signed quantities
    get a diverging colour map symmetric about zero, the energy a sequential one.

    A 3D lattice is drawn by one plane (the title says which): across ``axis``
    ("x", "y" or "z"; default z) at site ``index`` (default the middle one) or at the
    site nearest the coordinate ``at`` (``fg.slice`` is the same picture). A line is
    drawn as a curve against x.

    Returns the new ``matplotlib.figure.Figure``; with ``ax=`` it draws one panel
    into that Axes and returns the image (an ``AxesImage``, e.g. for a colorbar; a
    ``Line2D`` on a line).
    """
    panels, lattice, p = _panels(obj, density, component, axis, index, at)
    if ax is not None:
        if len(panels) != 1:
            raise ValueError(f"ax= takes one panel; this field has {len(panels)} components: pass component=")
        label, name, values = panels[0]
        return _draw(ax, values, lattice, title or label, name, colorbar, p)
    fig, axes = _new_figure(len(panels))
    for a, (label, name, values) in zip(axes, panels):
        _draw(a, values, lattice, label, name, colorbar, p)
    if title:
        fig.suptitle(title)
    return fig


# --- histories -------------------------------------------------------------------

HISTORY_COLUMNS = ("step", "energy", "max_grad")


def is_history(table) -> bool:
    """Whether a pyarrow Table looks like a minimize history (step, energy, max_grad)."""
    try:
        names = set(table.schema.names)
    except AttributeError:
        return False
    return all(c in names for c in HISTORY_COLUMNS)


def history_steps(steps) -> np.ndarray:
    """Steps made monotonic: ``sim.history`` concatenates minimize calls, each
    counting from 0, so each new call continues where the previous one ended."""
    s = np.asarray(steps, dtype=np.float64)
    out = s.copy()
    offset = 0.0
    for k in range(1, len(s)):
        if s[k] < s[k - 1]:
            offset = out[k - 1] - s[k]
        out[k] = s[k] + offset
    return out


def plot_history(table, ax=None):
    """Energy (left axis) and ``max |dE/dphi|`` (right axis, log) against step.

    ``table``: a history from ``minimize`` or ``sim.history`` (pyarrow Table, or
    anything with those columns that pyarrow can read). Returns the Figure.
    """
    import pyarrow as pa

    if not isinstance(table, pa.Table):
        table = pa.table(table)
    if not is_history(table):
        raise ValueError(f"not a history: want columns {HISTORY_COLUMNS}, got {table.schema.names}")
    steps = history_steps(table.column("step").to_numpy())
    energy = table.column("energy").to_numpy(zero_copy_only=False)
    grad = table.column("max_grad").to_numpy(zero_copy_only=False)
    if ax is None:
        fig, (ax,) = _new_figure(1, size=(6.0, 3.6))
    else:
        fig = ax.figure
    ax.plot(steps, energy, color="C0", marker="." if len(steps) < 50 else None)
    ax.set_xlabel("step")
    ax.set_ylabel("energy", color="C0")
    ax.ticklabel_format(axis="y", useOffset=False)
    right = ax.twinx()
    positive = grad > 0
    right.semilogy(steps[positive], grad[positive], color="C3", marker="." if len(steps) < 50 else None)
    right.set_ylabel("max |grad|", color="C3")
    ax.set_title(f"minimize: {len(steps)} checks, last step {int(steps[-1]) if len(steps) else 0}")
    return fig
