"""Pieces shared by the magnetic superconductor theories (m in R^3, A in R^3)."""

from __future__ import annotations

import fieldgo as fg

MAGNET = ("m1", "m2", "m3")
GAUGE = ("a_x", "a_y", "a_z")


def magnetic_field(s):
    """B = curl A for A(x, y) independent of z: (d_y A_z, -d_x A_z, d_x A_y - d_y A_x)."""
    return fg.Vector([s.dy.a_z, -s.dx.a_z, fg.curl(s, "a_x", "a_y")])


def magnetisation(s):
    return s.phi[list(MAGNET)]


def gradient_m2(s):
    """|grad m|^2 = sum_i |d_i m|^2."""
    return fg.norm2(s.dx[list(MAGNET)]) + fg.norm2(s.dy[list(MAGNET)])


def skyrmion_density(s):
    """Topological density of m/|m|: m . (d_x m x d_y m) / (4 pi |m|^3)."""
    m = magnetisation(s)
    m_len = fg.sqrt(fg.norm2(m))
    return fg.dot(m, fg.cross(s.dx[list(MAGNET)], s.dy[list(MAGNET)])) / (4 * fg.pi * m_len**3)
