"""Pieces shared by the chiral magnet and the chiral liquid crystal: the
Dzyaloshinskii–Moriya-type term sum_ij D_ij e_j . (n x d_i n) of soliton_solver."""

from __future__ import annotations

import fieldgo as fg

from ..errors import SpecError
from ._magnetic import MAGNET

# D_ij (i: derivative direction, j: component of n x d_i n), soliton_solver's
# Dresselhaus (Bloch), Rashba (Neel), Heusler (anti-skyrmion) choices.
DMI = {
    "bloch": {(0, 0): -1.0, (1, 1): -1.0},
    "neel": {(1, 0): -1.0, (0, 1): 1.0},
    "heusler": {(0, 0): 1.0, (1, 1): -1.0},
}


def dmi_tensor(kind: str) -> dict:
    try:
        return DMI[kind]
    except KeyError:
        raise SpecError(f"unknown DMI {kind!r}: use one of {', '.join(DMI)}") from None


def dmi_energy(s, tensor: dict):
    """sum_ij D_ij (n x d_i n)_j for the unit vector n = (m1, m2, m3)."""
    n = s.phi[list(MAGNET)]
    d = (s.dx[list(MAGNET)], s.dy[list(MAGNET)])
    e = 0.0
    for (i, j), coef in tensor.items():
        e = e + coef * fg.cross(n, d[i])[j]
    return e
