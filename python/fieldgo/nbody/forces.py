"""Softened direct-summation accelerations and potentials (G = 1), and the error bound
of their float32 sums."""

from __future__ import annotations

import numpy as np

from ..runtime.bridge import go, import_batch
from .inputs import backend_name, finite_number, masses_of, precision_name, record_batch, to_go, vectors


def unit_roundoff(precision: str = "float64") -> float:
    """u of a precision: 2^-53 (float64) or 2^-24 (float32)."""
    return 2.0**-24 if precision_name(precision) == "float32" else 2.0**-53


def error_bound_k(n: int) -> float:
    """k in ``|a_i - a_i_exact| <= k u sum_j |a_ij|`` for n bodies (per component)."""
    return go.NBodyErrorBoundK(int(n))


def accelerations(
    positions,
    masses,
    softening: float = 0.0,
    precision: str = "float64",
    backend: str = "auto",
    *,
    potentials: bool = False,
    threads: int = 0,
):
    """Gravitational accelerations (G = 1) of N bodies by direct summation.

    positions: (N, 3) float64/float32 numpy array, or Arrow (a table with x, y, z columns,
    or a fixed_size_list<3> array); masses: (N,) (or one number for all), finite and
    >= 0 (zero-mass bodies feel the others and pull on none). Returns an (N, 3) float64
    array, and the potentials (N,) too when ``potentials=True``. A body does not act on
    itself, so ``softening=0`` is fine unless two distinct bodies coincide.
    """
    prec = precision_name(precision)
    backend = backend_name(backend)
    x = vectors(positions, "positions")
    n = x.shape[0]
    m = masses_of(masses, n)
    eps = finite_number(softening, "softening")
    batch = record_batch({"x": x[:, 0], "y": x[:, 1], "z": x[:, 2], "m": m})
    out = import_batch(to_go(batch, go.NBodyAccelerations, eps, prec, int(threads), bool(potentials), backend))
    acc = np.column_stack([out.column(c).to_numpy() for c in ("ax", "ay", "az")]) if n else np.zeros((0, 3))
    if potentials:
        return acc, out.column("phi").to_numpy()
    return acc
