"""Plummer spheres: initial conditions in Hénon units."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ParameterError
from ..runtime.bridge import go, import_batch


def plummer(n: int, seed: int = 0, *, exact: bool = True):
    """A Plummer sphere of n equal-mass bodies in Hénon units (G = M = 1, E = -1/4),
    sampled as Aarseth, Hénon & Wielen (1974), centre of mass at rest at the origin.
    With ``exact`` it is rescaled so that this sample has K = 1/4 and (unsoftened)
    W = -1/2 exactly; this costs one O(n^2) potential evaluation. Returns
    ``(positions (n, 3), velocities (n, 3), masses (n,))``; the same seed gives the
    same bodies."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ParameterError(f"n must be an integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    b = import_batch(go.NBodyPlummer(int(n), int(seed) & 0x7FFFFFFFFFFFFFFF, bool(exact)))
    col = {c: b.column(c).to_numpy() for c in b.schema.names}
    pos = np.column_stack([col["x"], col["y"], col["z"]])
    vel = np.column_stack([col["vx"], col["vy"], col["vz"]])
    return pos, vel, col["m"].copy()
