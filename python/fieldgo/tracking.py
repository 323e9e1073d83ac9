"""Soliton tracking: ``fg.track(run)`` finds the lumps of a density in each snapshot of
an evolution (or in one simulation or field) and follows them from frame to frame.

A lump is a connected region of sites where ``|density| > threshold`` (sites joined
through their faces; on a periodic axis the regions touching the two ends are joined
across the wrap). Its centre is the mean site position weighted by
``(|density| - threshold)**2`` over the region: the weight and its slope vanish where a
site enters or leaves the region, so the centre moves smoothly as the lump crosses
sites. Lumps
are followed by nearest centres: between consecutive frames the pairs (old lump, new
lump) are taken closest first (periodic axes by the nearest image), each lump in at
most one pair, none farther apart than ``max_distance``; a new lump that pairs with none
gets a new id, and an old one that pairs with none is gone for good (its id is not
reused). docs/animation.md has the rules and their limits.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ._snapshots import _check_threshold, source
from .errors import ParameterError

__all__ = ["track", "lumps"]

_AXES = ("x", "y", "z")
_DEFAULT_FRACTION = 0.1


def _label(mask, lattice):
    """Labels of the connected regions of ``mask`` (shape ``lattice.shape``), joined
    across periodic axes: (labels, count), labels 1..count."""
    from scipy import ndimage

    structure = ndimage.generate_binary_structure(mask.ndim, 1)
    labels, n = ndimage.label(mask, structure=structure)
    if n == 0:
        return labels, 0
    parent = np.arange(n + 1)

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in enumerate(lattice.boundaries):
        if b != "periodic":
            continue
        ax = mask.ndim - 1 - a
        first, last = np.take(labels, 0, axis=ax), np.take(labels, -1, axis=ax)
        both = (first > 0) & (last > 0)
        for p, q in set(zip(first[both].tolist(), last[both].tolist())):
            rp, rq = find(p), find(q)
            if rp != rq:
                parent[max(rp, rq)] = min(rp, rq)
    roots = np.array([find(a) for a in range(n + 1)])
    uniq, dense = np.unique(roots, return_inverse=True)  # root 0 (background) stays 0
    return dense[labels], len(uniq) - 1


def _centre_index(i, w, n, periodic):
    """The weighted mean of site indices ``i`` along an axis of ``n`` sites; on a
    periodic axis the lump is cut at its widest gap (a lump around the whole axis:
    the circular mean), and the result is in [-1/2, n - 1/2)."""
    if periodic:
        u = np.unique(i)
        if len(u) == n:  # a band around the axis: its circular mean
            ang = 2 * np.pi * i / n
            c = math.atan2(float(np.sum(w * np.sin(ang))), float(np.sum(w * np.cos(ang)))) * n / (2 * np.pi)
        else:
            gaps = np.diff(np.concatenate([u, [u[0] + n]]))
            start = u[(int(np.argmax(gaps)) + 1) % len(u)]
            c = float(np.sum(w * np.where(i >= start, i, i + n)) / np.sum(w))
        return (c + 0.5) % n - 0.5
    return float(np.sum(w * i) / np.sum(w))


def lumps(values, lattice, threshold) -> list[dict]:
    """The lumps of ``values`` (shaped ``lattice.shape``) above ``threshold`` in
    absolute value: [{"x", ("y", "z"), "weight", "sites", "peak"}], ordered by position
    (x, then y, then z). ``weight`` is the integral of the signed values over the
    lump's sites (cell times their sum: a charge, an energy), ``peak`` the largest
    absolute value."""
    a = np.abs(values)
    labels, n = _label(a > threshold, lattice)
    if n == 0:
        return []
    cell = float(np.prod(lattice.spacing))
    idx = np.flatnonzero(labels)
    lab = labels.ravel()[idx]
    order = np.argsort(lab, kind="stable")
    idx, lab = idx[order], lab[order]
    bounds = np.searchsorted(lab, np.arange(1, n + 2))
    site = np.unravel_index(idx, labels.shape)  # (k, j, i) as the array is (nz, ny, nx)
    flat_v, flat_a = values.ravel()[idx], a.ravel()[idx]
    out = []
    for j in range(n):
        s = slice(bounds[j], bounds[j + 1])
        w = (flat_a[s] - threshold) ** 2
        row: dict = {}
        for ax in range(lattice.dims):
            i = site[lattice.dims - 1 - ax][s].astype(np.float64)
            c = _centre_index(i, w, lattice.grid[ax], lattice.boundaries[ax] == "periodic")
            row[_AXES[ax]] = lattice.origin[ax] + lattice.spacing[ax] * c
        row["weight"] = cell * float(np.sum(flat_v[s]))
        row["sites"] = int(s.stop - s.start)
        row["peak"] = float(np.max(flat_a[s]))
        out.append(row)
    out.sort(key=lambda r: tuple(r[_AXES[ax]] for ax in range(lattice.dims)))
    return out


def _distances(old, new, lattice):
    """|old_p - new_q| for every pair, by the nearest image along periodic axes."""
    d2 = np.zeros((len(old), len(new)))
    for ax in range(lattice.dims):
        a = np.array([o[_AXES[ax]] for o in old])[:, None]
        b = np.array([r[_AXES[ax]] for r in new])[None, :]
        diff = b - a
        if lattice.boundaries[ax] == "periodic":
            period = lattice.grid[ax] * lattice.spacing[ax]
            diff = diff - period * np.round(diff / period)
        d2 += diff**2
    return np.sqrt(d2)


def _match(old, new, lattice, max_distance):
    """Pairs (old index, new index), closest first, none beyond max_distance."""
    if not old or not new:
        return []
    d = _distances(old, new, lattice)
    order = np.argsort(d, axis=None, kind="stable")
    used_old, used_new, pairs = set(), set(), []
    for flat in order:
        p, q = divmod(int(flat), len(new))
        if max_distance is not None and d[p, q] > max_distance:
            break
        if p in used_old or q in used_new:
            continue
        used_old.add(p)
        used_new.add(q)
        pairs.append((p, q))
    return pairs


def track(
    run,
    density: str | None = "energy",
    component=None,
    *,
    threshold: float | None = None,
    max_distance: float | None = None,
    every: int = 1,
    theory=None,
) -> pa.Table:
    """The lumps of a density in each snapshot, followed from frame to frame.

    ``run``: an :class:`fieldgo.Evolution` (its snapshots, read one at a time from a
    file), or one ``fg.Simulation`` (its field, ``t = sim.time``) or ``fg.Field``
    (``t = 0``). ``density``: "energy" or a declared density of the theory, computed
    for each snapshot; or ``density=None, component=`` one component of the field.
    ``threshold``: the level of ``|density|`` above which sites belong to a lump
    (default a tenth of the largest ``|density|`` of the first frame, kept for all).
    ``max_distance``: the farthest a lump may move between two frames and keep its id
    (default no limit). ``every``: every k-th snapshot. ``theory``: as for
    ``fg.animate``.

    Returns a pyarrow Table, one row per lump per frame: ``frame`` (the snapshot's
    index), ``t``, ``id`` (0, 1, ... in the order lumps first appear; in the first
    frame by position), ``x`` (``y``, ``z`` as the lattice has axes: the weighted centre,
    on a periodic axis within the box), ``weight`` (the integral of the density over
    the lump: its energy, or its charge for a charge density), ``sites`` and ``peak``
    (the largest ``|density|``). The schema metadata holds the density and threshold.

    Refused with typed errors: an evolution without snapshots, an unknown density
    (``SpecError``) or component, a threshold that is not a positive finite number."""
    if threshold is not None:
        threshold = _check_threshold("threshold", threshold)
    if max_distance is not None:
        max_distance = _check_threshold("max_distance", max_distance)
    src = source(run, density, component, theory, what="fg.track", every=every, need_one=True)
    lat = src.lattice
    cols: dict[str, list] = {c: [] for c in ("frame", "t", "id", *_AXES[: lat.dims], "weight", "sites", "peak")}
    previous: list[dict] = []
    next_id = 0
    try:
        for k, t, (values,) in src:
            if threshold is None:
                top = float(np.max(np.abs(values))) if values.size else 0.0
                if not (math.isfinite(top) and top > 0):
                    raise ParameterError(
                        f"fg.track: the first frame's {src.panels[0][0]} is {top:g} everywhere: give threshold="
                    )
                threshold = _DEFAULT_FRACTION * top
            found = lumps(values, lat, threshold)
            ids = [-1] * len(found)
            for p, q in _match(previous, found, lat, max_distance):
                ids[q] = previous[p]["id"]
            for q in range(len(found)):
                if ids[q] < 0:
                    ids[q], next_id = next_id, next_id + 1
                found[q]["id"] = ids[q]
                cols["frame"].append(k)
                cols["t"].append(t)
                for c in cols:
                    if c not in ("frame", "t"):
                        cols[c].append(found[q][c])
            previous = found
    finally:
        src.close()
    types = {"frame": pa.int64(), "id": pa.int64(), "sites": pa.int64()}
    table = pa.table({c: pa.array(v, type=types.get(c, pa.float64())) for c, v in cols.items()})
    what = src.density if src.density is not None else src.fields[src.components[0]]
    return table.replace_schema_metadata({"density": str(what), "threshold": repr(float(threshold or 0.0))})
