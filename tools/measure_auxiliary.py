"""Converged energies and charges of soliton_solver's example set-ups for the theories
with an auxiliary field (docs/auxiliary.md).

    .venv/bin/python tools/measure_auxiliary.py [case ...]   # cases: see CASES

Each case relaxes soliton_solver's example lattice (its examples/*_gl.py: 320 x 320,
fixed boundary, its parameters) from its initial ansatz at the centre with the CPU
backend, to max |dE/dphi| < 1e-6, and prints one Markdown table row.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import fieldgo as fg


def magnet_ansatz(kind, max_r):
    """soliton_solver's create_skyrmion_kernel for one skyrmion (skyrmion_number 1):
    m3 = cos f, f = pi exp(-(2 r / max_r)^2) for r <= max_r, 0 beyond."""

    def f(X, Y):
        r, th = np.hypot(X, Y), np.arctan2(Y, X)
        fr = np.where(r > max_r, 0.0, np.pi * np.exp(-((2 * r / max_r) ** 2)))
        s = np.sin(fr)
        m12 = {
            "bloch": (-s * np.sin(th), s * np.cos(th)),
            "neel": (s * np.cos(th), s * np.sin(th)),
            "anti": (-s * np.sin(th), -s * np.cos(th)),
        }[kind]
        return m12[0], m12[1], np.cos(fr), 0 * X

    return f


def vortex(X, Y):
    r, t = np.hypot(X, Y), np.arctan2(Y, X)
    f = np.tanh(r)
    a = (1 - 1 / np.cosh(r)) / np.maximum(r, 1e-12)
    return -a * np.sin(t), a * np.cos(t), f * np.cos(t), f * np.sin(t), 0 * X


CASES = {
    # examples/chiral_magnet_gl.py: Heusler DMI, anti-skyrmion, demag, box 10
    "magnet_demag": (
        lambda: fg.theories.chiral_magnet(dmi="heusler", demag=True),
        10.0,
        magnet_ansatz("anti", 1.0),
        ("skyrmion_number", "magnetic_charge", "demag_energy"),
    ),
    "magnet_nodemag": (
        lambda: fg.theories.chiral_magnet(dmi="heusler", demag=False),
        10.0,
        magnet_ansatz("anti", 1.0),
        ("skyrmion_number", "magnetic_charge"),
    ),
    # examples/liquid_crystal_gl.py: splay-bend, Neel skyrmion, depolarisation, box 10
    "lc_depol": (
        lambda: fg.theories.liquid_crystal(deformation="splay-bend", depol=True),
        10.0,
        magnet_ansatz("neel", 1.0),
        ("skyrmion_number", "electric_charge", "electrostatic_energy"),
    ),
    "lc_nodepol": (
        lambda: fg.theories.liquid_crystal(deformation="splay-bend", depol=False),
        10.0,
        magnet_ansatz("neel", 1.0),
        ("skyrmion_number", "electric_charge"),
    ),
    # examples/anyon_gl.py: q = 1, Lambda = 0.5, u1 = 1, kappa = 0.5, box 50
    "anyon": (
        lambda: fg.theories.chern_simons_higgs(q=1.0, lam=0.5, kappa=0.5, u=1.0),
        50.0,
        vortex,
        ("vortex_number", "noether_charge", "electric_charge", "physical_energy"),
    ),
}


def run(name, n=320, arrest="power", tol=1e-6, max_steps=60000):
    factory, box, init, dens = CASES[name]
    th = factory()
    sim = fg.Simulation(th, grid=(n, n), spacing=box / (n - 1), boundary="fixed", backend="cpu")
    sim.set_field(init)
    t0 = time.time()
    hist = sim.minimize(tol=tol, max_steps=max_steps, arrest=arrest).to_pydict()
    wall = time.time() - t0
    vals = ", ".join(f"{d} {sim.integral(d):.8f}" for d in dens)
    row = (
        f"| {name} | {n}^2, box {box:g} | {arrest} | {hist['step'][-1]} | {wall:.0f} s | "
        f"{hist['max_grad'][-1]:.2e} | {sim.energy():.9f} | {vals} |"
    )
    print(row, flush=True)
    sim.close()


if __name__ == "__main__":
    args = sys.argv[1:] or list(CASES)
    for a in args:
        name, _, arrest = a.partition(":")
        run(name, arrest=arrest or "power")
