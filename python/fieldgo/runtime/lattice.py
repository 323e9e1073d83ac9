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


@dataclass(frozen=True)
class Lattice:
    """An nx × ny grid of sites, site (i, j) at ``(origin[0] + i*hx, origin[1] + j*hy)``.

    ``spacing`` is one number or ``(hx, hy)``; the default origin centres the grid
    on (0, 0). ``boundary`` says what lies beyond the edges:

    * ``"fixed"`` (the default): the outer two layers of sites are held at the field
      you set and carry no energy; the energy sums over the other sites. The held
      layers are part of the problem: a skyrmion whose tail reaches them relaxes to
      an energy that depends on the starting field (docs/robustness.md).
    * ``"periodic"``: both directions wrap (a torus); a soliton interacts with its
      images across the box.
    * ``"free"``: no site is held and the energy sums over every site, with
      derivatives at the edges taken from sites inside the box (first-order one-sided
      at the edge, second-order central one site in, fourth-order central inside):
      the natural (Neumann) boundary of the discrete energy, the choice of
      Skyrmions3D.jl and micromagnetics codes. A soliton well inside relaxes to the
      same energy from any starting field. Its gradient is the exact gradient of that
      energy (the ``"consistent"`` form, with the doubler penalty, which ``energy()``
      includes); CPU backend only: ``backend="auto"`` runs it on the CPU on a GPU
      machine too, and ``backend="cuda"`` is refused with a BackendError.
    """

    nx: int
    ny: int
    hx: float
    hy: float
    origin: tuple
    boundary: str

    def __init__(self, grid, spacing=0.1, *, origin=None, boundary="fixed"):
        try:
            nx, ny = grid
        except (TypeError, ValueError):
            raise LatticeError(f"grid must be (nx, ny), got {grid!r}") from None
        nx, ny = _size(nx, "nx"), _size(ny, "ny")
        if isinstance(spacing, (tuple, list)):
            if len(spacing) != 2:
                raise LatticeError(f"spacing must be a number or (hx, hy), got {spacing!r}")
            hx, hy = (_real(s, "spacing") for s in spacing)
        else:
            hx = hy = _real(spacing, "spacing")
        if origin is None:
            # Centred only when the spacing makes sense; Go reports bad spacing.
            ox = -(nx - 1) * hx / 2 if math.isfinite(hx) else 0.0
            oy = -(ny - 1) * hy / 2 if math.isfinite(hy) else 0.0
        else:
            try:
                ox, oy = (_real(o, "origin") for o in origin)
            except (TypeError, ValueError):
                raise LatticeError(f"origin must be (ox, oy), got {origin!r}") from None
        if not isinstance(boundary, str):
            raise LatticeError(f"boundary must be a string, got {boundary!r}")
        go.CheckLattice(nx, ny, hx, hy, ox, oy, boundary)
        for k, v in dict(nx=nx, ny=ny, hx=hx, hy=hy, origin=(ox, oy), boundary=boundary).items():
            object.__setattr__(self, k, v)

    @property
    def shape(self):
        """(ny, nx): the numpy shape of one component."""
        return (self.ny, self.nx)

    @property
    def sites(self):
        return self.nx * self.ny

    @property
    def spacing(self):
        return (self.hx, self.hy)

    @property
    def x(self):
        """Coordinates of the columns, shape (nx,)."""
        return self.origin[0] + self.hx * np.arange(self.nx)

    @property
    def y(self):
        """Coordinates of the rows, shape (ny,)."""
        return self.origin[1] + self.hy * np.arange(self.ny)

    def meshgrid(self):
        """(X, Y), each shaped (ny, nx) like a component."""
        return np.meshgrid(self.x, self.y, indexing="xy")

    @property
    def extent(self):
        """(xmin, xmax, ymin, ymax) of the sites, for imshow."""
        return (self.x[0], self.x[-1], self.y[0], self.y[-1])

    def _json(self):
        import json

        return json.dumps(
            dict(nx=self.nx, ny=self.ny, hx=self.hx, hy=self.hy, origin=list(self.origin), boundary=self.boundary)
        )

    @classmethod
    def _from_info(cls, info):
        return cls(
            (info["nx"], info["ny"]), (info["hx"], info["hy"]), origin=tuple(info["origin"]), boundary=info["boundary"]
        )

    def __repr__(self):
        return (
            f"Lattice(({self.nx}, {self.ny}), spacing=({self.hx:g}, {self.hy:g}), "
            f"origin=({self.origin[0]:g}, {self.origin[1]:g}), boundary={self.boundary!r})"
        )
