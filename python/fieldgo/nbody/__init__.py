"""Direct-summation N-body gravity (G = 1) on all CPU cores, in Go.

    import fieldgo as fg
    pos, vel, m = fg.nbody.plummer(1024, seed=1)          # Hénon units: G = M = 1, E = -1/4
    acc = fg.nbody.accelerations(pos, m, softening=0.01)  # (N, 3)
    traj = fg.nbody.integrate(pos, vel, m, dt=1/128, steps=512, every=16, softening=0.01)
    # traj: a pyarrow Table with columns particle, t, x, y, z, vx, vy, vz

Accelerations are ``a_i = sum_{j != i} m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^{3/2}``
(eps the Plummer softening), potentials phi_i = -sum_{j != i} m_j / (r_ij^2 + eps^2)^{1/2}.
``precision="float32"`` computes the pairwise sums in float32: each component then
satisfies ``|a_i - a_i_exact| <= k u sum_j |a_ij|`` with u = 2^-24 and
k = ``error_bound_k(N)`` (= N + 19, a worst case; the measured error is ``~20 u sum_j |a_ij|``).

``integrate`` runs the kick-drift-kick leapfrog in Go. Every ``every`` steps (and at the
start and the end) it emits a record batch of all bodies; batches go to Python (a Table,
or one by one with ``stream=True``) and/or to an Arrow IPC file (``out=``), written by
a separate Go goroutine so the integration does not wait for the disk. Energies,
momentum and angular momentum per snapshot come as a separate table
(``return_energies=True``, ``energies_out=``) and, when streaming, in each batch's schema
metadata (step, time, kinetic, potential, energy).
"""

from __future__ import annotations

from .forces import accelerations, error_bound_k, unit_roundoff
from .leapfrog import integrate
from .plummer import plummer

__all__ = ["accelerations", "integrate", "plummer", "error_bound_k", "unit_roundoff"]
