"""Animations of time evolutions: ``fg.animate(run)`` draws a density or the field of
each snapshot of an :class:`fieldgo.Evolution` and writes the frames as a GIF or an MP4
(imageio: GIF through pillow, MP4 through the ffmpeg binary of imageio-ffmpeg; the
``anim`` extra), or returns an :class:`Animation` that a notebook shows inline.

    fg.animate(ev, density="energy", path="kink.mp4", fps=20)
    anim = fg.animate(fg.read_evolution("run.arrow"), density="charge")   # shown inline
    anim.save("run.gif")

Every frame shares one colour scale (one y range on a line): the range over all frames
from a first pass, or ``vmin``/``vmax``. Frames are drawn one at a time into one
figure and handed to the encoder as they are made, so a long run never holds more than
one figure (a GIF's encoder keeps its palette frames until the file is closed; an MP4's
streams them to ffmpeg). docs/animation.md describes the cost.
"""

from __future__ import annotations

import base64
import html
import os
import pathlib
import tempfile
import warnings

import numpy as np

from ._snapshots import source
from .errors import BackendError, ParameterError

__all__ = ["animate", "Animation"]

_FORMATS = {".gif": "gif", ".mp4": "mp4"}
_MACRO = 16  # frames are padded to a multiple of 16 pixels: H.264's macroblock (yuv420p)
_CACHE_BYTES = 64 * 2**20  # the first pass keeps the drawn values when they fit in this


def _format_of(path) -> str:
    ext = pathlib.Path(os.fspath(path)).suffix.lower()
    if ext not in _FORMATS:
        raise ParameterError(f"cannot write an animation to {os.fspath(path)!r}: the name must end in .gif or .mp4")
    return _FORMATS[ext]


def _imageio():
    try:
        import imageio
    except ImportError:
        raise BackendError("animations need imageio: pip install 'fieldgo[anim]'") from None
    return imageio


def _has_ffmpeg() -> bool:
    try:
        import imageio_ffmpeg

        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return False
    return True


class _GifWriter:
    def __init__(self, path, fps):
        import imageio.v3 as iio

        self.file = iio.imopen(os.fspath(path), "w", plugin="pillow", extension=".gif")
        self.duration = 1000.0 / fps

    def append(self, frame):
        # quantised to a palette image at once: a frame's W*H bytes wait for the close
        self.file.write(frame, is_batch=False, duration=self.duration, loop=0, bits=8)

    def close(self):
        self.file.close()


class _Mp4Writer:
    def __init__(self, path, fps):
        if not _has_ffmpeg():
            raise BackendError("MP4 animations need imageio-ffmpeg (an ffmpeg binary): pip install 'fieldgo[anim]'")
        imageio = _imageio()
        self.file = imageio.v2.get_writer(
            os.fspath(path),
            format="FFMPEG",
            mode="I",
            fps=fps,
            codec="libx264",
            pixelformat="yuv420p",
            macro_block_size=_MACRO,
            ffmpeg_log_level="error",
        )

    def append(self, frame):
        self.file.append_data(frame)

    def close(self):
        self.file.close()


def _writer(path, fmt, fps):
    _imageio()
    return _GifWriter(path, fps) if fmt == "gif" else _Mp4Writer(path, fps)


class _Drawer:
    """One figure, drawn once and updated frame by frame (images' data, lines' y, the
    title's time), rendered by Agg into RGB frames padded to a multiple of 16 pixels."""

    def __init__(self, src, plane, scales, *, dpi, figsize, title):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from .plotting import Plane, take_plane

        self.lattice, self.plane, self.title = src.lattice, plane, title
        n = len(src.panels)
        w, h = figsize if figsize is not None else ((4.4 * n, 3.8) if src.lattice.dims > 1 else (5.5 * n, 3.4))
        self.fig = Figure(figsize=(w, h), dpi=dpi, layout="constrained")
        self.canvas = FigureCanvasAgg(self.fig)
        self.dpi = dpi
        self.artists = []
        lat = src.lattice
        for k, ((label, _name), (cmap, lo, hi)) in enumerate(zip(src.panels, scales)):
            ax = self.fig.add_subplot(1, n, k + 1)
            if plane is not None:
                label = f"{label} ({plane.axis} = {plane.at:.3g})"
            ax.set_title(label)
            if lat.dims == 1:
                (line,) = ax.plot(lat.x, np.zeros(lat.nx), color="C0")
                pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
                ax.set_ylim(lo - pad, hi + pad)
                ax.set_xlim(lat.x[0], lat.x[-1])
                ax.set_xlabel("x")
                self.artists.append(line)
            else:
                p = plane if plane is not None else Plane("z", 0, 0.0, lat.extent, "x", "y")
                blank = np.zeros(lat.shape) if plane is None else take_plane(np.zeros(lat.shape), plane)
                im = ax.imshow(
                    blank,
                    origin="lower",
                    extent=p.extent,
                    cmap=cmap,
                    vmin=lo,
                    vmax=hi,
                    interpolation="nearest",
                    aspect="equal",
                )
                ax.set_xlabel(p.xlabel)
                ax.set_ylabel(p.ylabel)
                self.fig.colorbar(im, ax=ax, shrink=0.9)
                self.artists.append(im)
        self.suptitle = self.fig.suptitle(" ")
        self._frozen = False

    def frame(self, t, values) -> np.ndarray:
        for artist, v in zip(self.artists, values):
            if self.lattice.dims == 1:
                artist.set_ydata(v)
            else:
                artist.set_data(v)
        self.suptitle.set_text(f"{self.title}: t = {t:.4g}" if self.title else f"t = {t:.4g}")
        self.canvas.draw()
        if not self._frozen:
            # the layout of the first frame for all: a title's width must not move the axes
            self.fig.set_layout_engine("none")
            self._frozen = True
        rgb = np.asarray(self.canvas.buffer_rgba())[..., :3]
        h, w = rgb.shape[:2]
        H, W = -(-h // _MACRO) * _MACRO, -(-w // _MACRO) * _MACRO
        out = np.full((H, W, 3), 255, dtype=np.uint8)
        out[:h, :w] = rgb
        return out


class Animation:
    """Frames of an evolution, drawn when they are written: ``save(path)`` writes a GIF
    or an MP4 (by the name's ending); in Jupyter the animation shows inline
    (``_repr_html_``: an embedded base64 MP4 ``<video>``, or a GIF ``<img>``).

    ``frames``: the number of frames; ``times``: their times; ``size``: (width, height)
    in pixels; ``scales``: each panel's (colour map, vmin, vmax), shared by every frame;
    ``path``: the file ``fg.animate(path=...)`` wrote, or None."""

    def __init__(self, src, plane, scales, cache, *, fps, dpi, figsize, title, embed):
        self._src, self._plane, self._cache = src, plane, cache
        self.scales = list(scales)
        self.fps, self.dpi, self.figsize, self.title = fps, dpi, figsize, title
        self.embed = embed
        self.times = src.times
        self.frames = len(self.times)
        self.size: tuple[int, int] | None = None
        self.path: pathlib.Path | None = None
        self._bytes: dict[str, bytes] = {}

    def _values(self):
        if self._cache is not None:
            yield from zip(self.times, self._cache)
            return
        from .plotting import take_plane

        for _k, t, values in self._src:
            yield t, [v if self._plane is None else take_plane(v, self._plane) for v in values]

    def save(self, path) -> pathlib.Path:
        """Write the animation to ``path`` (.gif or .mp4); returns the path."""
        fmt = _format_of(path)
        path = pathlib.Path(os.fspath(path))
        if fmt in self._bytes:
            path.write_bytes(self._bytes[fmt])
            return path
        drawer = _Drawer(self._src, self._plane, self.scales, dpi=self.dpi, figsize=self.figsize, title=self.title)
        with warnings.catch_warnings():
            # imageio-ffmpeg starts ffmpeg with a preexec_fn, so Python forks through the
            # at-fork hooks; the child runs ffmpeg at once and never fieldgo
            warnings.filterwarnings("ignore", r"fork\(\) after fieldgo", RuntimeWarning)
            writer = _writer(path, fmt, self.fps)
            try:
                for t, values in self._values():
                    frame = drawer.frame(t, values)
                    self.size = (frame.shape[1], frame.shape[0])
                    writer.append(frame)
            finally:
                writer.close()
                self._src.close()
        return path

    def to_bytes(self, fmt: str = "gif") -> bytes:
        """The encoded animation, "gif" or "mp4" (kept: a second call encodes nothing)."""
        if fmt not in ("gif", "mp4"):
            raise ParameterError(f"format must be 'gif' or 'mp4', got {fmt!r}")
        if fmt not in self._bytes:
            if self.path is not None and _format_of(self.path) == fmt:
                self._bytes[fmt] = self.path.read_bytes()
            else:
                with tempfile.TemporaryDirectory() as d:
                    f = pathlib.Path(d) / f"animation.{fmt}"
                    self.save(f)
                    self._bytes[fmt] = f.read_bytes()
        return self._bytes[fmt]

    def _embed_format(self) -> str:
        if self.embed is not None:
            return self.embed
        if self.path is not None:
            return _format_of(self.path)
        return "mp4" if _has_ffmpeg() else "gif"

    def _repr_html_(self) -> str:
        fmt = self._embed_format()
        data = base64.b64encode(self.to_bytes(fmt)).decode("ascii")
        label = html.escape(f"{self.frames} frames, t = {self.times[0]:.4g} .. {self.times[-1]:.4g}")
        if fmt == "mp4":
            return (
                f'<video controls autoplay loop muted playsinline title="{label}">'
                f'<source type="video/mp4" src="data:video/mp4;base64,{data}"></video>'
            )
        return f'<img alt="{label}" src="data:image/gif;base64,{data}"/>'

    def __repr__(self):
        where = f", written to {os.fspath(self.path)!r}" if self.path is not None else ""
        return (
            f"<Animation: {self.frames} frames at {self.fps:g} fps, "
            f"t = {self.times[0]:.4g} .. {self.times[-1]:.4g}{where}>"
        )


def _check_number(name, v, *, positive=True):
    import math
    import numbers

    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ParameterError(f"{name} must be a finite number, got {v!r}")
    if positive and not v > 0:
        raise ParameterError(f"{name} must be positive, got {v!r}")
    return float(v)


def animate(
    run,
    density: str | None = "energy",
    component=None,
    path=None,
    *,
    fps: float = 10,
    axis: str | None = None,
    index: int | None = None,
    at: float | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    dpi: int = 100,
    figsize=None,
    every: int = 1,
    theory=None,
    title: str | None = None,
    embed: str | None = None,
) -> Animation:
    """An animation of an evolution's snapshots, one frame each, time in the title.

    ``run``: an :class:`fieldgo.Evolution` (``sim.evolve(...)`` or
    ``fg.read_evolution(path)``, whose snapshots are read one at a time).
    ``density``: a density of the theory ("energy", or a declared one) computed for each
    snapshot; None draws the field's components (all side by side, or ``component=``
    one, by name or index). A line is drawn as a curve against x, a plane as an image
    on lattice coordinates, a 3D lattice by one plane: across ``axis`` ("x", "y" or "z",
    default z) at site ``index`` (default the middle one) or nearest the coordinate
    ``at``, as in ``fg.plot``. ``every``: every k-th snapshot.

    Colours (a line's y range) are the same for every frame: the range over all frames,
    found by a first pass, diverging and symmetric about zero for a signed quantity as
    ``fg.plot`` chooses (``colormap_for``), or set by ``vmin``/``vmax``. Giving both
    skips the first pass. ``theory``: the fg.Theory (or a Simulation of it) for an
    evolution that does not know its own (one read from a file written before
    evolutions kept their theory).

    ``path`` ending in .gif or .mp4: the file is written now (``fps`` frames a second,
    ``dpi`` and ``figsize`` (inches) set the frame's size, padded to a multiple of 16
    pixels). The :class:`Animation` is returned either way; without a path nothing is
    encoded until it is shown (``embed``: "mp4" or "gif"; default MP4 when
    imageio-ffmpeg is installed) or saved.

    Refused with typed errors: an evolution without snapshots, an unknown density or
    component (``SpecError``/``ParameterError``), a path with another ending, a
    non-positive fps; missing imageio or imageio-ffmpeg raise ``BackendError`` naming
    the ``anim`` extra."""
    from .plotting import _section, colormap_for

    fps = _check_number("fps", fps)
    vmin, vmax = _check_number("vmin", vmin, positive=False), _check_number("vmax", vmax, positive=False)
    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ParameterError(f"vmin must be below vmax, got vmin={vmin:g}, vmax={vmax:g}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 1000:
        raise ParameterError(f"dpi must be an integer from 10 to 1000, got {dpi!r}")
    if embed not in (None, "gif", "mp4"):
        raise ParameterError(f"embed must be 'gif', 'mp4' or None, got {embed!r}")
    fmt = _format_of(path) if path is not None else None
    from .runtime.evolution import Evolution

    if not isinstance(run, Evolution):
        raise ParameterError(f"fg.animate takes an fg.Evolution (sim.evolve's result), got {type(run).__name__}")
    src = source(run, density, component, theory, what="fg.animate", every=every)
    _, plane = _section([], src.lattice, axis, index, at)
    from .plotting import take_plane

    cache: list | None = None
    if vmin is not None and vmax is not None:
        scales = [(colormap_for(np.array([vmin, vmax]), name)[0], vmin, vmax) for _label, name in src.panels]
    else:
        lo = [np.inf] * len(src.panels)
        hi = [-np.inf] * len(src.panels)
        cache, kept = [], 0
        for _k, _t, values in src:
            drawn = [v if plane is None else take_plane(v, plane) for v in values]
            for p, v in enumerate(drawn):
                finite = v[np.isfinite(v)]
                if finite.size:
                    lo[p], hi[p] = min(lo[p], float(finite.min())), max(hi[p], float(finite.max()))
            if cache is not None:
                kept += sum(v.nbytes for v in drawn)
                if kept <= _CACHE_BYTES:
                    cache.append(drawn)
                else:  # too large to keep: the frames are computed again as they are drawn
                    cache = None
        scales = []
        for p, (_label, name) in enumerate(src.panels):
            a, b = (lo[p], hi[p]) if np.isfinite(lo[p]) else (0.0, 1.0)
            cmap, c_lo, c_hi = colormap_for(np.array([a, b]), name)
            c_lo = a if c_lo is None else c_lo
            c_hi = b if c_hi is None else c_hi
            if c_lo == c_hi:  # a constant: a range about it
                c_lo, c_hi = c_lo - 0.5 * max(abs(c_lo), 1.0), c_hi + 0.5 * max(abs(c_hi), 1.0)
            scales.append((cmap, c_lo if vmin is None else vmin, c_hi if vmax is None else vmax))
    anim = Animation(
        src,
        plane,
        scales,
        cache,
        fps=fps,
        dpi=dpi,
        figsize=figsize,
        title=title,
        embed=embed,
    )
    if fmt is not None:
        anim.path = anim.save(path)
    return anim
