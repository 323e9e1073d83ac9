"""Pictures of 3D fields: isosurfaces with Runge colouring, planes through any axis,
an interactive view for Jupyter and VTK files for ParaView.

    fg.isosurface(sim)                          # baryon density at half its maximum, Runge colours
    fg.isosurface(sim, density="energy", level=2.0, colour=None)
    fg.slice(sim, axis="x", at=0.5)             # the plane x = 0.5 of the energy density
    fg.view3d(sim)                              # WebGL view of the isosurface in a notebook
    fg.to_vtk(sim, "skyrmion.vti")              # components and densities for ParaView

Isosurfaces are scikit-image's marching cubes (``pip install fieldgo[vis]``, also in the
test extra) drawn with matplotlib's mplot3d; the interactive view is a small WebGL
renderer of its own (python/fieldgo/_view3d.js, with a canvas fallback) embedded in
the HTML, so it needs no network and no notebook extension.
"""

from __future__ import annotations

import base64
import html
import json
import os
import pathlib
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from .errors import BackendError, LatticeError, ParameterError, ShapeError, SpecError

__all__ = ["Mesh", "isosurface_mesh", "isosurface", "runge_colours", "slice", "to_vtk", "view3d", "View3D"]

# What a mesh drawn flat-shaded from one light looks like: enough ambient light that
# the black (phi3 = -1) and the lit faces both read, as in the Skyrmion literature.
_AMBIENT = 0.35
_LIGHT = np.array([-0.4, -0.6, 1.0]) / np.linalg.norm([-0.4, -0.6, 1.0])


@dataclass(frozen=True)
class Mesh:
    """A triangulated isosurface in lattice coordinates.

    ``vertices`` (n, 3) as (x, y, z); ``faces`` (m, 3) vertex indices; ``normals``
    (n, 3) unit vectors pointing down the density (out of a peak); ``colours`` (n, 3)
    RGB in [0, 1] or None; ``level`` the density's value on the surface and
    ``density`` its name."""

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray
    colours: np.ndarray | None
    level: float
    density: str

    def area(self) -> float:
        """The surface's area."""
        a, b, c = (self.vertices[self.faces[:, k]] for k in range(3))
        return float(0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())

    def volume(self) -> float:
        """The volume the surface encloses (divergence theorem over its triangles);
        meaningful for a closed surface, one that does not reach the lattice's edge."""
        a, b, c = (self.vertices[self.faces[:, k]] for k in range(3))
        return float(abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0)


def runge_colours(pions) -> np.ndarray:
    """Runge colouring of pion (or unit 3-vector) values: RGB in [0, 1], shape
    (..., 3), from ``pions`` of shape (3, ...) = (pi1, pi2, pi3).

    The convention of the Skyrmion literature (Manton and Sutcliffe; Feist, Lau and
    Manton; Gudnason): the unit vector pi / ``|pi|`` is a colour on the HSL sphere,
    white where pi3 = +1, black where pi3 = -1, and around the equator the hue of
    the angle atan2(pi2, pi1): red at 0, green at 2 pi / 3, blue at 4 pi / 3, with
    lightness (1 + pi3) / 2 and full saturation. Where ``|pi|`` vanishes the colour is
    grey."""
    p = np.asarray(pions, dtype=np.float64)
    if p.ndim < 1 or p.shape[0] != 3:
        raise ShapeError(f"runge_colours takes pions of shape (3, ...), got {p.shape}")
    norm = np.sqrt(np.sum(p * p, axis=0))
    safe = np.where(norm > 0, norm, 1.0)
    p1, p2, p3 = p / safe
    hue = np.mod(np.arctan2(p2, p1), 2 * np.pi) / (2 * np.pi)
    light = np.where(norm > 0, (1 + np.clip(p3, -1, 1)) / 2, 0.5)
    sat = np.where(norm > 0, 1.0, 0.0)
    # HSL to RGB (the standard formula): channel n (red 0, green 8, blue 4) is
    # L - a max(-1, min(k - 3, 9 - k, 1)) with k = (n + 12 hue) mod 12, a = S min(L, 1 - L)
    a = sat * np.minimum(light, 1 - light)
    rgb = []
    for n in (0, 8, 4):
        k = np.mod(n + 12 * hue, 12)
        rgb.append(light - a * np.maximum(-1, np.minimum(np.minimum(k - 3, 9 - k), 1)))
    return np.clip(np.stack(rgb, axis=-1), 0.0, 1.0)


# --- what is drawn ------------------------------------------------------------------


def _declared(sim):
    return list(sim.theory.spec.get("densities", []))


def _density_of_sim(sim, name):
    if not isinstance(name, str):
        return np.asarray(name, dtype=np.float64), "density"
    if name != "energy" and name not in _declared(sim):
        raise SpecError(
            f"unknown density {name!r}: theory {sim.theory.name!r} declares {', '.join(['energy', *_declared(sim)])}"
        )
    d = sim.density(name)
    try:
        return np.array(d.numpy()[0]), name
    finally:
        d.release()


def _volume(obj, density, lattice, field):
    """(density values (nz, ny, nx), its name, lattice, the field (ncomp, nz, ny, nx)
    or None) for what the caller gave."""
    from .runtime.field import Field
    from .runtime.lattice import Lattice
    from .runtime.simulation import Simulation

    if isinstance(obj, Simulation):
        lattice = obj.lattice
        _need_3d(lattice, "an isosurface")
        if density is None:  # the baryon density where the theory has one (Skyrme), else the energy
            density = "baryon" if "baryon" in _declared(obj) else "energy"
        values, name = _density_of_sim(obj, density)
        if field is None:
            field = obj.field.numpy()
    elif isinstance(obj, Field):
        lattice = obj.lattice
        _need_3d(lattice, "an isosurface")
        if obj.ncomp == 1 and (density is None or isinstance(density, str)):
            values, name = np.array(obj.numpy()[0]), obj.names[0]
        elif isinstance(density, Field):
            values, name = np.array(density.numpy()[0]), density.names[0]
            field = obj.numpy() if field is None else field
        elif density is not None and not isinstance(density, str):
            values, name = np.asarray(density, dtype=np.float64), "density"
            field = obj.numpy() if field is None else field
        else:
            raise SpecError(
                f"a Field has no density {density!r}: pass the Simulation, or the density's "
                f"values as density= (an array or sim.density(name))"
            )
    else:
        values = np.asarray(obj, dtype=np.float64)
        name = density if isinstance(density, str) else "density"
        if values.ndim != 3:
            raise ShapeError(f"an isosurface needs a 3D array (nz, ny, nx), got shape {values.shape}")
        if lattice is None:
            nz, ny, nx = values.shape
            lattice = Lattice((nx, ny, nz), 1.0, origin=(0.0, 0.0, 0.0))
    if not isinstance(lattice, Lattice):
        raise LatticeError(f"lattice must be an fg.Lattice, got {type(lattice).__name__}")
    _need_3d(lattice, "an isosurface")
    if values.shape != lattice.shape:
        raise ShapeError(f"the density has shape {values.shape}, the lattice {lattice.shape}")
    if field is not None:
        field = np.asarray(field, dtype=np.float64)
        if field.shape[1:] != lattice.shape:
            raise ShapeError(f"the field has shape {field.shape}, want (ncomp, {', '.join(map(str, lattice.shape))})")
    return values, name, lattice, field


def _need_3d(lattice, what):
    if lattice.dims != 3:
        raise LatticeError(f"{what} needs a 3D lattice, got grid={lattice.grid}")


def _pions(field):
    """The three components Runge colouring reads: phi1..phi3 of a unit 4-vector
    (the Skyrme field, phi0 the sigma field), n1..n3 of a unit 3-vector."""
    if field is None:
        raise SpecError("colour='runge' needs the field: pass the Simulation, or field= with its components")
    if field.shape[0] == 4:
        return field[1:4]
    if field.shape[0] == 3:
        return field
    raise SpecError(
        f"colour='runge' needs a unit 4-vector (phi0..phi3, the Skyrme field) or a unit 3-vector, "
        f"got {field.shape[0]} components"
    )


def _trilinear(values, points):
    """values (nz, ny, nx) at fractional (k, j, i) points (n, 3), linearly."""
    shape = np.array(values.shape)
    p = np.clip(points, 0, shape - 1)
    lo = np.minimum(np.floor(p).astype(np.int64), shape - 2)
    lo = np.maximum(lo, 0)
    t = p - lo
    out = np.zeros(len(p))
    for dk in (0, 1):
        for dj in (0, 1):
            for di in (0, 1):
                w = (
                    (t[:, 0] if dk else 1 - t[:, 0])
                    * (t[:, 1] if dj else 1 - t[:, 1])
                    * (t[:, 2] if di else 1 - t[:, 2])
                )
                idx = np.minimum(lo + (dk, dj, di), shape - 1)
                out += w * values[idx[:, 0], idx[:, 1], idx[:, 2]]
    return out


def default_level(values) -> float:
    """Half the density's extreme value: half the maximum, or half the minimum for a
    density whose largest magnitude is negative (an anti-Skyrmion's baryon density)."""
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    return 0.5 * (hi if hi >= -lo else lo)


def isosurface_mesh(
    obj,
    density=None,
    level: float | None = None,
    colour: str | None = "runge",
    *,
    lattice=None,
    field=None,
    refine: int = 1,
) -> Mesh:
    """The isosurface ``density = level`` as a :class:`Mesh` (what :func:`isosurface`
    and :func:`view3d` draw; the arguments are theirs)."""
    return _mesh(obj, density, level, colour, lattice, field, refine)[0]


def _mesh(obj, density, level, colour, lattice, field, refine=1):
    if colour not in ("runge", None):
        raise ParameterError(f"colour must be 'runge' or None, got {colour!r}")
    values, name, lattice, field = _volume(obj, density, lattice, field)
    if not np.all(np.isfinite(values)):
        raise ParameterError(f"the {name} density has non-finite values")
    lo, hi = float(values.min()), float(values.max())
    if level is None:
        level = default_level(values)
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise ParameterError(f"level must be a number, got {level!r}") from None
    if not lo < level < hi:
        raise ParameterError(f"level={level:g} is outside the {name} density's range ({lo:g}, {hi:g}): no surface")
    if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)) or not 1 <= refine <= 8:
        raise ParameterError(f"refine must be an integer from 1 to 8, got {refine!r}")
    try:
        from skimage import measure
    except ImportError:
        raise BackendError("isosurfaces need scikit-image: pip install 'fieldgo[vis]'") from None
    hz, hy, hx = reversed(lattice.spacing)
    spacing = (hz, hy, hx)
    if refine > 1:
        # the density's cubic spline on a grid `refine` times finer: a smoother surface
        # than the lattice's own cells give, nearer the continuum one
        from scipy import ndimage

        fine = ndimage.zoom(values, refine, order=3)
        spacing = tuple(h * (n - 1) / (m - 1) for h, n, m in zip(spacing, values.shape, fine.shape))
        values = fine
    verts, faces, normals, _ = measure.marching_cubes(values, level, spacing=spacing)
    # marching cubes works in (z, y, x); the mesh is in (x, y, z) from the lattice's origin
    xyz = verts[:, ::-1] + np.asarray(lattice.origin)
    normals = normals[:, ::-1]
    colours = None
    if colour == "runge":
        pions = _pions(field)
        at = verts / np.array([hz, hy, hx])
        colours = runge_colours(np.stack([_trilinear(p, at) for p in pions]))
    return Mesh(xyz, faces.astype(np.int64), normals, colours, level, name), lattice


def _shade(mesh, base):
    """Face colours: the mean of the face's vertex colours (or ``base``), lit by one
    light from the viewer's upper left, both sides alike."""
    f = mesh.faces
    a, b, c = (mesh.vertices[f[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    light = _AMBIENT + (1 - _AMBIENT) * np.abs(n @ _LIGHT)
    rgb = mesh.colours[f].mean(axis=1) if mesh.colours is not None else np.broadcast_to(base, (len(f), 3))
    return np.clip(rgb * light[:, None], 0, 1)


def _frame(mesh):
    """The cube the mesh is shown in (lattice coordinates): centred on it, a tenth
    wider than its largest side."""
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    half = 0.55 * float((hi - lo).max()) or 1.0
    centre = (lo + hi) / 2
    return centre - half, centre + half


def isosurface(
    obj,
    density=None,
    level: float | None = None,
    colour: str | None = "runge",
    ax=None,
    *,
    lattice=None,
    field=None,
    refine: int = 1,
    title: str | None = None,
    alpha: float = 1.0,
    elev: float = 25.0,
    azim: float = -60.0,
):
    """An isosurface of a 3D density as a matplotlib Figure (PNG in a notebook).

    ``obj``: an ``fg.Simulation`` (``density`` names one of its densities or
    ``"energy"``; default ``"baryon"`` where the theory declares it, else the
    energy), an ``fg.Field`` (a one-component density such as
    ``sim.density("baryon")``, or the Skyrme field with ``density=`` the values), or
    a numpy array (nz, ny, nx) of the density (on ``lattice=``, default unit spacing
    from the origin). ``level``: the density's value on the surface, default half its
    maximum (:func:`default_level`); it must lie strictly inside the density's range.
    ``refine=k`` (1 to 8) triangulates the density's cubic spline on a grid k times
    finer than the lattice: a smoother surface, k^2 times the triangles.

    ``colour="runge"`` colours the surface by the pion direction
    (:func:`runge_colours`): the field's components phi1, phi2, phi3 of the Skyrme
    field (phi0 is the sigma field), or n1, n2, n3 of a unit 3-vector, interpolated
    linearly to the mesh's vertices; white where phi3 = +1, black where phi3 = -1,
    red, green and blue at the pion angles 0, 2 pi / 3, 4 pi / 3. ``colour=None``
    draws one plain colour. The axes carry lattice coordinates, framed on the
    surface. ``ax``: an existing 3D Axes to draw into.

    Refused with typed errors: an unknown density (``SpecError``), a level outside
    the density's range (``ParameterError``), a lattice that is not 3D
    (``LatticeError``), Runge colouring of a field that is not a unit 4- or 3-vector.
    """
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from .plotting import _ensure_figure_display

    mesh, lat = _mesh(obj, density, level, colour, lattice, field, refine)
    if ax is None:
        from matplotlib.figure import Figure

        _ensure_figure_display()
        fig = Figure(figsize=(6.0, 5.6), layout="constrained")
        ax = fig.add_subplot(1, 1, 1, projection="3d")
    else:
        fig = ax.figure
        if not hasattr(ax, "set_zlim"):
            raise ParameterError("ax must be a 3D Axes (add_subplot(projection='3d'))")
    faces = mesh.vertices[mesh.faces]
    shaded = _shade(mesh, np.array([0.85, 0.55, 0.25]))
    # edges in the faces' own colours: antialiased edges of "none" leave light seams
    coll = Poly3DCollection(faces, facecolors=shaded, edgecolors=shaded, linewidths=0.25, alpha=alpha)
    ax.add_collection3d(coll)
    lows, highs = _frame(mesh)
    ax.set_xlim(lows[0], highs[0])
    ax.set_ylim(lows[1], highs[1])
    ax.set_zlim(lows[2], highs[2])
    ax.set_box_aspect([1.0, 1.0, 1.0])
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    ax.view_init(elev=elev, azim=azim)
    ax.set_title(title or f"{mesh.density} density = {mesh.level:.3g}")
    return fig


# --- planes -------------------------------------------------------------------------


def slice(
    obj,
    axis: str = "z",
    index: int | None = None,
    *,
    at: float | None = None,
    density: str | None = None,
    component=None,
    ax=None,
    colorbar: bool = True,
    title: str | None = None,
):
    """A plane through a 3D simulation or field, as ``fg.plot`` draws it.

    ``axis``: the axis across the plane, "x", "y" or "z"; ``index``: the plane's site
    along it (default the middle one, n // 2), or ``at``: a coordinate (the nearest
    site's plane). ``density`` / ``component`` choose what is drawn as in
    ``fg.plot`` (default the energy density of a simulation, every component of a
    field). The image's axes are the other two in order (y and z across x, x and z
    across y, x and y across z), in lattice coordinates. Returns the Figure, or with
    ``ax=`` the image drawn into that Axes. A lattice that is not 3D is refused
    (``LatticeError``), so is an unknown axis or a plane outside the lattice
    (``ParameterError``)."""
    from .plotting import plot
    from .runtime.field import Field
    from .runtime.simulation import Simulation

    if not isinstance(obj, (Simulation, Field)):
        raise TypeError(f"fg.slice takes a Simulation or a Field, got {type(obj).__name__}")
    _need_3d(obj.lattice, "a slice")
    return plot(obj, density, component, ax, colorbar=colorbar, title=title, axis=axis, index=index, at=at)


# --- VTK ----------------------------------------------------------------------------


def _vtk_array(parent, name, values):
    """A DataArray, format "binary": base64 of a UInt64 byte count and the
    little-endian float64 values, x fastest (the order of a (nz, ny, nx) array)."""
    raw = np.ascontiguousarray(values, dtype="<f8").tobytes()
    payload = np.array([len(raw)], dtype="<u8").tobytes() + raw
    el = ET.SubElement(parent, "DataArray", type="Float64", Name=name, NumberOfComponents="1", format="binary")
    el.text = base64.b64encode(payload).decode("ascii")


def to_vtk(obj, path, densities=None) -> pathlib.Path:
    """Write a simulation or field as VTK ImageData (``.vti``, XML) for ParaView.

    Every field component and each density of ``densities`` (names; default the
    energy and every density the theory declares, for a Simulation) become point
    data arrays named as they are in fieldgo, in float64. The image's origin and
    spacing are the lattice's, so ParaView shows lattice coordinates; a plane is one
    layer thick along z and a line one along y and z. Returns the path written."""
    from .runtime.field import Field
    from .runtime.simulation import Simulation

    arrays: list[tuple[str, np.ndarray]] = []
    if isinstance(obj, Simulation):
        lattice = obj.lattice
        f = obj.field
        arrays += [(n, np.array(f.numpy()[k])) for k, n in enumerate(f.names)]
        names = ["energy", *_declared(obj)] if densities is None else list(densities)
        for name in names:
            if not isinstance(name, str):
                raise ParameterError(f"densities must be names, got {name!r}")
            arrays.append((name, _density_of_sim(obj, name)[0]))
    elif isinstance(obj, Field):
        if densities:
            raise SpecError("a Field has no densities: pass the Simulation to write densities")
        lattice = obj.lattice
        arrays += [(n, np.array(obj.numpy()[k])) for k, n in enumerate(obj.names)]
    else:
        raise TypeError(f"fg.to_vtk takes a Simulation or a Field, got {type(obj).__name__}")
    grid = tuple(lattice.grid) + (1,) * (3 - lattice.dims)
    origin = tuple(lattice.origin) + (0.0,) * (3 - lattice.dims)
    spacing = tuple(lattice.spacing) + (1.0,) * (3 - lattice.dims)
    extent = " ".join(f"0 {n - 1}" for n in grid)
    root = ET.Element("VTKFile", type="ImageData", version="1.0", byte_order="LittleEndian", header_type="UInt64")
    image = ET.SubElement(
        root,
        "ImageData",
        WholeExtent=extent,
        Origin=" ".join(repr(float(v)) for v in origin),
        Spacing=" ".join(repr(float(v)) for v in spacing),
        Direction="1 0 0 0 1 0 0 0 1",
    )
    piece = ET.SubElement(image, "Piece", Extent=extent)
    point = ET.SubElement(piece, "PointData", Scalars=arrays[0][0])
    for name, values in arrays:
        _vtk_array(point, name, values)
    ET.SubElement(piece, "CellData")
    path = pathlib.Path(os.fspath(path))
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


# --- the interactive view -----------------------------------------------------------


def _b64(a, dtype):
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


class View3D:
    """An interactive isosurface for Jupyter: ``_repr_html_`` is a self-contained
    WebGL scene (its renderer and the mesh inlined, nothing fetched), drag to rotate,
    wheel to zoom, double-click to reset; where WebGL is missing it draws with a 2D
    canvas. ``mesh`` is the :class:`Mesh` it shows; ``save(path)`` writes a
    standalone HTML page."""

    def __init__(self, mesh: Mesh, *, width: int = 640, height: int = 480, title: str | None = None):
        self.mesh = mesh
        self.width, self.height = int(width), int(height)
        self.title = title or f"{mesh.density} density = {mesh.level:.3g}"
        lo, hi = _frame(mesh)
        self.bounds = [[float(v) for v in lo], [float(v) for v in hi]]

    def _data(self) -> dict:
        m = self.mesh
        colours = m.colours if m.colours is not None else np.broadcast_to([0.85, 0.55, 0.25], m.vertices.shape)
        return {
            "positions": _b64(m.vertices, "<f4"),
            "normals": _b64(m.normals, "<f4"),
            "colours": _b64(np.round(np.asarray(colours) * 255), "u1"),
            "indices": _b64(m.faces, "<u4"),
            "bounds": self.bounds,
            "title": self.title,
        }

    def html(self) -> str:
        """The scene as an HTML fragment (a div, its canvas and the inline script)."""
        js = (pathlib.Path(__file__).with_name("_view3d.js")).read_text()
        vid = "fieldgo-view3d-" + uuid.uuid4().hex[:12]
        # "</" inside the script would end it early (a title with "</script>")
        data = json.dumps(self._data()).replace("</", "<\\/")
        return (
            f'<div id="{vid}" class="fieldgo-view3d" style="position:relative;width:{self.width}px;'
            f'height:{self.height}px;background:#ffffff;border:1px solid #ddd">'
            # shown until the script runs: a notebook opened from disk runs no script until trusted
            f'<p class="fieldgo-view3d-note" style="margin:1em;color:#666;font:13px sans-serif">'
            f"{html.escape(self.title)}: the interactive view draws when its script runs "
            f"(run the cell, or trust the notebook).</p>"
            f'<canvas width="{self.width}" height="{self.height}" style="position:absolute;left:0;top:0"></canvas>'
            f'<canvas width="{self.width}" height="{self.height}" style="position:absolute;left:0;top:0;'
            f'pointer-events:none"></canvas></div>'
            f"<script>{js}\nfieldgoView3d({json.dumps(vid)}, {data});</script>"
        )

    def _repr_html_(self) -> str:
        return self.html()

    def save(self, path) -> pathlib.Path:
        """Write the view as a standalone HTML page."""
        path = pathlib.Path(os.fspath(path))
        path.write_text(
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title></head>"
            f"<body>{self.html()}</body></html>"
        )
        return path


def view3d(
    obj,
    density=None,
    level: float | None = None,
    colour: str | None = "runge",
    *,
    lattice=None,
    field=None,
    refine: int = 1,
    width: int = 640,
    height: int = 480,
    title: str | None = None,
) -> View3D:
    """An interactive view of an isosurface for JupyterLab (and any browser): the
    arguments are :func:`isosurface`'s; the view shows itself as a cell's value
    (``View3D``). The page needs no network: the renderer is inlined."""
    mesh, _ = _mesh(obj, density, level, colour, lattice, field, refine)
    return View3D(mesh, width=width, height=height, title=title)
