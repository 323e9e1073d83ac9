"""Rectangular lattices."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import LatticeError
from .bridge import go

BOUNDARIES = ("fixed", "periodic", "free")


def _size(v, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise LatticeError(f"{name} must be an integer, got {v!r}")
    return int(v)


def _real(v, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise LatticeError(f"{name} must be a real number, got {v!r}")
    return float(v)


_AXES = "xyz"


def _dims_of(grid):
    """The sizes of grid as a tuple of 1, 2 or 3 integers."""
    try:
        sizes = tuple(grid)
    except TypeError:
        sizes = ()
    if not 1 <= len(sizes) <= 3:
        raise LatticeError(f"grid must be (nx,), (nx, ny) or (nx, ny, nz), got {grid!r}")
    return tuple(_size(v, "n" + _AXES[a]) for a, v in enumerate(sizes))


@dataclass(frozen=True)
class Lattice:
    """A grid of sites with one, two or three axes: ``grid=(nx,)``, ``(nx, ny)`` or
    ``(nx, ny, nz)``. Site (i, j, k) sits at ``(origin[0] + i*hx, origin[1] + j*hy,
    origin[2] + k*hz)``; x is fastest in memory, so a component is a numpy array
    shaped :attr:`shape`: ``(nz, ny, nx)``, ``(ny, nx)`` or ``(nx,)``.

    ``spacing`` is one number or one per axis; the default origin centres the grid
    on 0. ``boundary`` says what lies beyond the edges, one name for every axis or
    one per axis (``("fixed", "periodic", "periodic")``: a box fixed along x, periodic
    along y and z):

    * ``"fixed"`` (the default): the outer two layers of sites are held at the field
      you set and carry no energy; the energy sums over the other sites. The held
      layers are part of the problem: a skyrmion whose tail reaches them relaxes to
      an energy that depends on the starting field (docs/robustness.md).
    * ``"periodic"``: the axis wraps; a soliton interacts with its images across
      the box.
    * ``"free"`` (one for every axis, not set per axis): no site is held and the energy
      sums over every site, with derivatives at the edges taken from sites inside the
      box (first-order one-sided at the edge, second-order central one site in,
      fourth-order central inside): the natural (Neumann) boundary of the discrete
      energy, the choice of Skyrmions3D.jl and micromagnetics codes. A soliton well
      inside relaxes to the same energy from any starting field. Its gradient is the
      exact gradient of that energy (the ``"consistent"`` form, with the doubler
      penalty, which ``energy()`` includes), on the CPU and CUDA backends alike
      (``backend="auto"`` takes the GPU for it when one is usable).

    Lattices of one and three axes, and boundaries set per axis, run on the CPU
    backend with what a plane has there: both gradient forms, float32 storage, the free
    boundary, auxiliary fields, save/load/resume, sweeps and live views (docs/abi.md,
    Lattices, lists what they do not offer yet, each refused with a typed error).
    """

    nx: int
    ny: int
    hx: float
    hy: float
    origin: tuple
    boundary: str | tuple  # one name, or one per axis when they differ
    nz: int = 1
    hz: float = 0.0
    dims: int = 2

    def __init__(self, grid, spacing=0.1, *, origin=None, boundary="fixed"):
        if isinstance(grid, (tuple, list)) and len(grid) == 2:
            try:
                nx, ny = grid
            except (TypeError, ValueError):
                raise LatticeError(f"grid must be (nx, ny), got {grid!r}") from None
            sizes = (_size(nx, "nx"), _size(ny, "ny"))
        else:
            sizes = _dims_of(grid)
        d = len(sizes)
        if isinstance(spacing, (tuple, list)):
            if len(spacing) != d:
                names = ", ".join("h" + _AXES[a] for a in range(d))
                raise LatticeError(f"spacing must be a number or ({names}), got {spacing!r}")
            h = tuple(_real(s, "spacing") for s in spacing)
        else:
            h = (_real(spacing, "spacing"),) * d
        if origin is None:
            # Centred only when the spacing makes sense; Go reports bad spacing.
            o = tuple(-(n - 1) * hh / 2 if math.isfinite(hh) else 0.0 for n, hh in zip(sizes, h))
        else:
            try:
                o = tuple(_real(v, "origin") for v in origin)
            except (TypeError, ValueError):
                names = ", ".join("o" + _AXES[a] for a in range(d))
                raise LatticeError(f"origin must be ({names}), got {origin!r}") from None
            if len(o) != d:
                raise LatticeError(f"origin must have {d} coordinates for a {d}D grid, got {origin!r}")
        if isinstance(boundary, (tuple, list)):
            if len(boundary) != d or not all(isinstance(b, str) for b in boundary):
                raise LatticeError(f"boundary must be a name or one name per axis ({d}), got {boundary!r}")
            bounds = tuple(boundary)
            if len(set(bounds)) == 1:
                boundary = bounds[0]
            else:
                boundary = bounds
        elif not isinstance(boundary, str):
            raise LatticeError(f"boundary must be a string, got {boundary!r}")
        nx, hx, ox = sizes[0], h[0], o[0]
        ny, hy, oy = (sizes[1], h[1], o[1]) if d >= 2 else (1, h[0], 0.0)
        nz, hz = (sizes[2], h[2]) if d == 3 else (1, 0.0)
        planar = d == 2 and isinstance(boundary, str)
        if planar:
            go.CheckLattice(nx, ny, hx, hy, ox, oy, boundary)
        else:
            go.CheckLatticeJSON(self._nd_json(sizes, h, o, boundary))
        values = dict(nx=nx, ny=ny, hx=hx, hy=hy, origin=o, boundary=boundary, nz=nz, hz=hz, dims=d)
        for k, v in values.items():
            object.__setattr__(self, k, v)

    @staticmethod
    def _nd_json(sizes, h, o, boundary):
        import json

        bounds = [boundary] if isinstance(boundary, str) else list(boundary)
        return json.dumps(dict(n=list(sizes), h=list(h), origin=list(o), boundaries=bounds))

    @property
    def planar(self) -> bool:
        """Two axes and one boundary: the lattice every backend runs."""
        return self.dims == 2 and isinstance(self.boundary, str)

    @property
    def grid(self) -> tuple:
        """The sizes, ``(nx,)``, ``(nx, ny)`` or ``(nx, ny, nz)``."""
        return (self.nx, self.ny, self.nz)[: self.dims]

    @property
    def boundaries(self) -> tuple:
        """The boundary of each axis."""
        return (self.boundary,) * self.dims if isinstance(self.boundary, str) else tuple(self.boundary)

    @property
    def shape(self):
        """The numpy shape of one component: (nz, ny, nx), (ny, nx) or (nx,)."""
        return tuple(reversed(self.grid))

    @property
    def sites(self):
        return self.nx * self.ny * self.nz

    @property
    def spacing(self):
        return (self.hx, self.hy, self.hz)[: self.dims]

    @property
    def x(self):
        """Coordinates of the columns, shape (nx,)."""
        return self.origin[0] + self.hx * np.arange(self.nx)

    @property
    def y(self):
        """Coordinates of the rows, shape (ny,)."""
        oy = self.origin[1] if self.dims >= 2 else 0.0
        return oy + self.hy * np.arange(self.ny)

    @property
    def z(self):
        """Coordinates of the planes, shape (nz,)."""
        if self.dims < 3:
            return np.zeros(1)
        return self.origin[2] + self.hz * np.arange(self.nz)

    def meshgrid(self):
        """The coordinates of every site, one array per axis shaped like a component:
        (X, Y) on a 2D lattice, (X,) on a line, (X, Y, Z) in 3D."""
        if self.dims == 1:
            return (self.x.copy(),)
        if self.dims == 2:
            return np.meshgrid(self.x, self.y, indexing="xy")
        Z, Y, X = np.meshgrid(self.z, self.y, self.x, indexing="ij")
        return X, Y, Z

    @property
    def extent(self):
        """(xmin, xmax, ymin, ymax) of the sites, for imshow."""
        return (self.x[0], self.x[-1], self.y[0], self.y[-1])

    def _json(self):
        import json

        if not self.planar:
            return self._nd_json(self.grid, self.spacing, self.origin, self.boundary)
        return json.dumps(
            dict(nx=self.nx, ny=self.ny, hx=self.hx, hy=self.hy, origin=list(self.origin), boundary=self.boundary)
        )

    @classmethod
    def _from_info(cls, info):
        if "dims" in info:
            d = info["dims"]
            grid = (info["nx"], info["ny"], info["nz"])[:d]
            spacing = (info["hx"], info["hy"], info["hz"])[:d]
            bounds = info["boundaries"]
            return cls(grid, spacing, origin=tuple(info["origin"]), boundary=tuple(bounds))
        return cls(
            (info["nx"], info["ny"]), (info["hx"], info["hy"]), origin=tuple(info["origin"]), boundary=info["boundary"]
        )

    def __repr__(self):
        if not self.planar:
            sp = ", ".join(f"{v:g}" for v in self.spacing)
            org = ", ".join(f"{v:g}" for v in self.origin)
            return f"Lattice({self.grid}, spacing=({sp}), origin=({org}), boundary={self.boundary!r})"
        return (
            f"Lattice(({self.nx}, {self.ny}), spacing=({self.hx:g}, {self.hy:g}), "
            f"origin=({self.origin[0]:g}, {self.origin[1]:g}), boundary={self.boundary!r})"
        )
