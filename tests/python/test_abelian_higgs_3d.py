"""The abelian Higgs model in 3D: vortex lines at critical coupling, tension pi per
unit length (fg.theories.abelian_higgs_3d, CPU)."""

import math

import numpy as np

import fieldgo as fg

N, NZ, H = 32, 6, 0.4  # a 12.4 x 12.4 cross-section, periodic along z


def line(shift=None):
    """A winding-1 vortex line along z (fg.initial.vortex_line); shift(z) moves its
    centre along x."""
    if shift is None:
        return fg.initial.vortex_line("z")
    v = fg.initial.vortex()

    def f(x, y, z):
        c = v(x - shift(z), y)
        return [c[0], c[1], c[2], c[3], 0 * x]

    return f


def relaxed_3d(initial):
    sim = fg.Simulation(
        fg.theories.abelian_higgs_3d(), grid=(N, N, NZ), spacing=H, boundary=("fixed", "fixed", "periodic")
    )
    sim.set_field(initial)
    sim.minimize(tol=1e-7, max_steps=50_000)
    return sim


def test_a_straight_line_has_the_planar_vortex_energy_per_length():
    sim = relaxed_3d(line())
    tension = sim.energy() / (NZ * H)
    planar = fg.Simulation(fg.theories.abelian_higgs(), grid=(N, N), spacing=H)
    planar.set_field(fg.initial.vortex())
    planar.minimize(tol=1e-7, max_steps=50_000)
    # the same stencils in x and y, nothing along z: the planar energy per unit length
    assert math.isclose(tension, planar.energy(), rel_tol=1e-9)
    assert abs(tension - math.pi) < 2e-3 * math.pi  # the BPS tension, to this lattice's accuracy
    # the planar vortex's flux through every plane z = const (one quantum less what the
    # fixed boundary's two outer layers hold)
    assert abs(sim.integral("vortex_number_z") / (NZ * H) - planar.integral("vortex_number")) < 1e-9
    assert abs(planar.integral("vortex_number") - 1) < 5e-3
    assert abs(sim.integral("flux_x")) < 1e-9 and abs(sim.integral("flux_y")) < 1e-9
    field = sim.field.numpy()
    assert np.abs(field[4]).max() < 1e-9  # a_z stays zero for a line along z


def test_a_wiggly_line_straightens_under_its_tension():
    """The fixed boundary holds the wiggly line's far field, so the relaxed energy stays
    above the straight line's; the core straightens and the bending energy goes."""
    wiggle = line(lambda z: 0.8 * np.sin(2 * np.pi * z / (NZ * H)))
    start = fg.Simulation(
        fg.theories.abelian_higgs_3d(), grid=(N, N, NZ), spacing=H, boundary=("fixed", "fixed", "periodic")
    )
    start.set_field(wiggle)
    sim = relaxed_3d(wiggle)
    tension, before = sim.energy() / (NZ * H), start.energy() / (NZ * H)
    straight = relaxed_3d(line()).energy() / (NZ * H)
    assert straight < tension < before
    assert tension - straight < 0.5 * (before - straight)  # most of the bending energy is gone
    # the core's x centre (of 1 - |psi|^2) the same in every plane once straight

    def centres(sim):
        f = sim.field.numpy()
        w = 1 - (f[0] ** 2 + f[1] ** 2)  # (nz, ny, nx)
        x = np.arange(N) * H
        return (w * x).sum(axis=(1, 2)) / w.sum(axis=(1, 2))

    spread = np.ptp(centres(sim))
    assert spread < 0.1 * np.ptp(centres(start))
