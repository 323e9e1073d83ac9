"""Baby Skyrme: the derived continuum gradient equals soliton_solver's hand-derived one.

``soliton_solver_gradient`` below transcribes soliton_solver 1.1.3's
``theories/baby_skyrme/kernels.py::do_gradient_step_point`` into numpy (before its
projection onto the tangent space, which fieldgo's engine does separately), with
d2f/dxdy = d2f/dydx. Comparisons are relative to the gradient vector's size at each
state: |a - b| <= tol * max(1, max_a |b_a|).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402

N_STATES = 1000
BROKEN_N = 3


def soliton_solver_gradient(n, dx, dy, dxx, dyy, dxy, kappa, mass, potential, N=1):
    kappa2, mpi2 = kappa * kappa, mass * mass
    m1, m2, m3 = n[:, 0], n[:, 1], n[:, 2]
    F0, F1 = dx, dy
    S00, S11, S01, S10 = dxx, dyy, dxy, dxy

    def rowsum(a):
        return a.sum(axis=1, keepdims=True)

    sum_F0_sq, sum_F1_sq = rowsum(F0 * F0), rowsum(F1 * F1)
    sum_all_sq = sum_F0_sq + sum_F1_sq
    g = np.zeros_like(n)
    g -= S00 + S11
    g -= kappa2 * S00 * sum_all_sq
    g += kappa2 * S00 * sum_F0_sq
    sumA = rowsum(S01 * F1 - S11 * F0)
    dot01 = rowsum(F0 * F1)
    g -= kappa2 * (F0 * sumA - S01 * dot01)
    g -= kappa2 * S11 * sum_all_sq
    g += kappa2 * S11 * sum_F1_sq
    sumB = rowsum(S10 * F0 - S00 * F1)
    g -= kappa2 * (F1 * sumB - S10 * dot01)

    g0, g1, g2 = g[:, 0], g[:, 1], g[:, 2]
    if potential == "standard":
        g2 -= mpi2
    elif potential == "holomorphic":
        t = 1.0 - m3
        g2 -= 4.0 * mpi2 * t * t * t
    elif potential == "easy plane":
        g0 += mpi2 * m1
    elif potential == "dihedral-2":
        g0 -= mpi2 * (1.0 - m3 * m3) * m1
        g2 -= mpi2 * (1.0 - m1 * m1) * m3
    elif potential == "aloof":
        t = 1.0 - m3
        t3 = t * t * t
        g2 -= mpi2 * (0.5 * (1.0 + t3) + 1.5 * t3)
    elif potential == "dihedral-3":
        g0 += 48.0 * mpi2 * (m2 * m2 - m1 * m1) * (1.0 - m3)
        g1 += 96.0 * mpi2 * m1 * m2 * (1.0 - m3)
        g2 -= 16.0 * mpi2 * (-(m1 * m1 * m1) + 3.0 * m1 * (m2 * m2) + (1.0 - 3.0 * m3) * (1.0 - 3.0 * m3))
    elif potential == "broken":
        r2 = m1 * m1 + m2 * m2
        theta = np.arctan2(m2, m1)
        rN2 = r2 ** (0.5 * N)
        rN = r2 ** (1.0 * N)
        c, s = np.cos(N * theta), np.sin(N * theta)
        norm1mzN = 1.0 - 2.0 * c * rN2 + rN
        denom = np.sqrt(norm1mzN)
        pref = 2.0 * mpi2 * N * np.sqrt(norm1mzN) * (r2 ** (-1.0 + 0.5 * N)) * (-1.0 + m3) / denom
        g0 += pref * (s * m2 + m1 * (c - rN2))
        g1 += (-pref) * (s * m1 + m2 * (-c + rN2))
        g2 -= mpi2 * norm1mzN
    elif potential == "double vacua":
        g2 -= 2.0 * mpi2 * m3
    else:
        raise AssertionError(potential)
    return g


def random_states(rng, count):
    n = rng.normal(size=(count, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)  # states on the target sphere
    return dict(
        phi=n,
        dx=rng.normal(size=(count, 3)),
        dy=rng.normal(size=(count, 3)),
        dxx=rng.normal(size=(count, 3)),
        dyy=rng.normal(size=(count, 3)),
        dxy=rng.normal(size=(count, 3)),
    )


def worst_relative(got, want):
    scale = np.maximum(1.0, np.abs(want).max(axis=1, keepdims=True))
    return float((np.abs(got - want) / scale).max())


@pytest.mark.parametrize("potential", fg.theories.BABY_SKYRME_POTENTIALS)
def test_derived_gradient_equals_soliton_solver(potential):
    rng = np.random.default_rng(2024)
    kappa, mass = 0.7, 1.3
    theory = fg.theories.baby_skyrme(potential, N=BROKEN_N)
    st = random_states(rng, N_STATES)
    want = soliton_solver_gradient(
        st["phi"], st["dx"], st["dy"], st["dxx"], st["dyy"], st["dxy"], kappa, mass, potential, N=BROKEN_N
    )
    got = np.array(
        [theory.at(**{k: v[i] for k, v in st.items()}, kappa=kappa, mass=mass).gradient for i in range(N_STATES)]
    )
    assert worst_relative(got, want) <= 1e-12


def hand_written_theory():
    """The standard-potential model with a soliton_solver-style hand-written gradient."""
    theory = fg.Theory(
        "baby_skyrme_hand", fields=["n1", "n2", "n3"], params={"kappa": 1.0, "mass": 1.0}, constraint=fg.UnitVector()
    )

    @theory.energy_density
    def energy(s, p):
        return (
            0.5 * (fg.norm2(s.dx) + fg.norm2(s.dy))
            + 0.5 * p.kappa**2 * fg.norm2(fg.cross(s.dx, s.dy))
            + p.mass**2 * (1 - s.phi.n3)
        )

    @theory.gradient
    def gradient(s, p, out):
        kappa2 = p.kappa * p.kappa
        mpi2 = p.mass * p.mass
        F0, F1 = s.dx, s.dy
        S00, S11, S01 = s.dxx, s.dyy, s.dxy
        sum_F0_sq = F0[0] * F0[0] + F0[1] * F0[1] + F0[2] * F0[2]
        sum_F1_sq = F1[0] * F1[0] + F1[1] * F1[1] + F1[2] * F1[2]
        sum_all_sq = sum_F0_sq + sum_F1_sq
        dot01 = F0[0] * F1[0] + F0[1] * F1[1] + F0[2] * F1[2]
        sumA = 0.0
        sumB = 0.0
        for a in range(3):
            sumA += S01[a] * F1[a] - S11[a] * F0[a]
            sumB += S01[a] * F0[a] - S00[a] * F1[a]
        for a in range(3):
            g = -(S00[a] + S11[a])
            g -= kappa2 * S00[a] * sum_all_sq
            g += kappa2 * S00[a] * sum_F0_sq
            g -= kappa2 * (F0[a] * sumA - S01[a] * dot01)
            g -= kappa2 * S11[a] * sum_all_sq
            g += kappa2 * S11[a] * sum_F1_sq
            g -= kappa2 * (F1[a] * sumB - S01[a] * dot01)
            out[a] = g
        out["n3"] -= mpi2

    return theory


def test_hand_written_gradient_gives_the_same_numbers():
    rng = np.random.default_rng(7)
    hand = hand_written_theory()
    derived = fg.theories.baby_skyrme("standard")
    assert hand.spec["gradient"] == "hand" and derived.spec["gradient"] == "derived"
    st = random_states(rng, N_STATES)
    params = dict(kappa=1.1, mass=0.8)
    got_hand, got_derived, got_python = [], [], []
    for i in range(N_STATES):
        site = {k: v[i] for k, v in st.items()}
        got_hand.append(hand.at(**site, **params).gradient)
        got_derived.append(derived.at(**site, **params).gradient)
        if i < 50:
            got_python.append(hand.evaluate(**site, **params).gradient)
    got_hand, got_derived = np.array(got_hand), np.array(got_derived)
    assert worst_relative(got_hand, got_derived) <= 1e-12
    # the hand gradient's C also matches the hand gradient run as Python on floats
    assert worst_relative(got_hand[:50], np.array(got_python)) <= 1e-13
    want = soliton_solver_gradient(st["phi"], st["dx"], st["dy"], st["dxx"], st["dyy"], st["dxy"], 1.1, 0.8, "standard")
    assert worst_relative(got_hand, want) <= 1e-12


def test_a_wrong_hand_gradient_is_detected():
    """The comparison can fail: dropping the Skyrme term's mixed part changes the numbers."""
    rng = np.random.default_rng(8)
    theory = fg.theories.baby_skyrme("standard")
    st = random_states(rng, 50)
    want = soliton_solver_gradient(
        st["phi"], st["dx"], st["dy"], st["dxx"], 0 * st["dyy"], st["dxy"], 1.0, 1.0, "standard"
    )
    got = np.array([theory.at(**{k: v[i] for k, v in st.items()}).gradient for i in range(50)])
    assert worst_relative(got, want) > 1e-3


def test_charge_density_normalisation():
    """n . (d_x n x d_y n) / (4 pi): for the hedgehog-like frame e1, e2, e3 it is 1/(4 pi)."""
    r = fg.theories.baby_skyrme().at(phi=[0, 0, 1], dx=[1, 0, 0], dy=[0, 1, 0])
    assert r.densities["charge"] == pytest.approx(1 / (4 * np.pi), rel=1e-15)
