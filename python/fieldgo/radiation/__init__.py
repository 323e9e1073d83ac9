"""Retarded-time Liénard–Wiechert fields of particles on cubic-spline worldlines.

Give particle trajectories as an Arrow table (pyarrow, polars, anything with
``__arrow_c_stream__``) with columns ``particle, tau, t, x, y, z, ut, ux, uy, uz``
(proper time tau, 4-position and 4-velocity ``u = d(t, x, y, z)/dtau``, so that
``c^2 ut^2 - |u_s|^2 = c^2``) and schema metadata ``units``, ``c``, ``charge`` and
``mass``; :func:`trajectory_table` builds one from numpy arrays and
:func:`from_lab_time` from lab-time samples with 3-velocities.

:func:`fields` returns a :class:`Cube`: E, B, phi and A (Gaussian units with the
table's c) at every observer and observation time, summed over particles, computed
in Go on C memory and seen by numpy and pyarrow without a copy::

    import fieldgo as fg
    tab = fg.radiation.from_lab_time(t, x, y, z, vx, vy, vz, charge=1.0)
    cube = fg.radiation.fields(tab, observers, times)   # Newton, 2 corrections
    cube.numpy().shape        # (observers, samples, 10)
    cube["Ex"]                # (observers, samples) view
    f, p = fg.radiation.spectrum(cube, "Ex")
"""

from __future__ import annotations

from .cube import COMPONENTS, Cube, DeviceCube
from .retarded import fields
from .spectra import harmonic_map, harmonic_powers, spectrum
from .trajectories import STATE, from_lab_time, trajectory_table, validate

__all__ = [
    "fields",
    "trajectory_table",
    "from_lab_time",
    "validate",
    "Cube",
    "DeviceCube",
    "spectrum",
    "harmonic_powers",
    "harmonic_map",
    "COMPONENTS",
]
