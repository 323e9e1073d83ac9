"""Write notebooks/08_soliton_dynamics.ipynb (two Baby Skyrmions boosted head-on that
scatter at 90 degrees, filmed and tracked; the model's Lorentz-invariant kinetic term:
docs/dynamics.md, docs/animation.md) from the cell sources below, in the format of
tools/make_notebooks.py: no outputs, stable ids.

Run: .venv/bin/python tools/make_notebooks.py [--check]
"""

from notebook_cells import code, md

DYNAMICS = [
    md("""
# Soliton dynamics: two Baby Skyrmions scatter at 90°

`sim.evolve` moves a field in time by the Euler–Lagrange equation of its Lagrangian
(docs/dynamics.md). This notebook relaxes one Baby Skyrmion, boosts two copies towards
each other, films the collision and tracks the solitons: in the attractive channel they
merge into the charge-2 ring and leave at right angles to the line they came in on.
"""),
    code("""
%load_ext fieldgo
import numpy as np
import matplotlib.pyplot as plt
import fieldgo as fg
"""),
    md("""
The static soliton: `fg.theories.baby_skyrme` ($\\kappa = m = 1$, potential $1 - n_3$)
relaxed from the charge-1 ansatz. Its profile angle $f(r)$ ($n_3 = \\cos f$) is read off
the lattice at every distance of a site from the centre, so that the soliton can be
placed anywhere, isorotated by an angle $\\alpha$ about $n_3$.
"""),
    code("""
H = 0.25
one = fg.Simulation(fg.theories.baby_skyrme(), grid=(49, 49), spacing=H, origin=(-6, -6))
one.set_field(fg.initial.skyrmion(charge=1))
one.minimize(tol=1e-6, progress=False)
E1 = one.energy()
X, Y = one.lattice.meshgrid()
r = np.round(np.hypot(X, Y).ravel(), 12)
f = np.arccos(np.clip(one.field.numpy()[2].ravel(), -1, 1))
radii, k = np.unique(r, return_inverse=True)
profile = np.bincount(k, weights=f) / np.bincount(k)


def soliton(alpha=0.0):
    def n(x, y):
        a = np.interp(np.hypot(x, y), radii, profile, right=0.0)
        phase = -np.arctan2(y, x) + np.pi / 2 + alpha
        return np.sin(a) * np.cos(phase), np.sin(a) * np.sin(phase), np.cos(a)
    return n


print(f"E1 = {E1:.5f}, charge {one.integral('charge'):.5f}")
"""),
    md("""
Two solitons: `fg.initial.boost` Lorentz-boosts each static solution into a field and a
velocity, one from $x = -4$ moving right at $v = 0.3$, one from $x = 4$ moving left,
isorotated by $\\pi$ (the attractive channel). Far apart the pair is the sum of their
stereographic coordinates $W = (n_1 + i n_2)/(1 + n_3)$, and each velocity is negligible
where the other soliton sits.
"""),
    code("""
def to_w(n):
    d = 1 + np.asarray(n[2])
    return np.where(d > 1e-10, (n[0] + 1j * n[1]) / np.where(d > 1e-10, d, 1.0), 1e10)


def from_w(w):
    a = np.abs(w) ** 2
    return 2 * w.real / (1 + a), 2 * w.imag / (1 + a), (1 - a) / (1 + a)


left = fg.initial.boost(soliton(0.0), 0.3, "x", centre=-4.0)
right = fg.initial.boost(soliton(np.pi), -0.3, "x", centre=4.0)
sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(81, 81), spacing=H, origin=(-10, -10),
                    gradient="consistent")
sim.set_field(lambda x, y: from_w(to_w(left.field(x, y)) + to_w(right.field(x, y))))
sim.set_velocity(lambda x, y: tuple(np.asarray(p) + np.asarray(q)
                                    for p, q in zip(left.velocity(x, y), right.velocity(x, y))))
sim
"""),
    md("""
Evolve to $t = 24$ with RK4 at $dt = 0.02$, a snapshot every half time unit. The
history records the kinetic and potential energies, their sum (conserved: the
consistent gradient form makes the lattice energy the conserved one, so its drift is
RK4's alone), the momentum and the charge.
"""),
    code("""
ev = sim.evolve(24.0, dt=0.02, record_every=25, progress=False)
h = ev.history
energy = h.column("energy").to_numpy()
print(f"energy {energy[0]:.6f} -> {energy[-1]:.6f} (drift {np.abs(energy / energy[0] - 1).max():.1e}), "
      f"charge {h.column('charge').to_numpy().min():.4f} .. {h.column('charge').to_numpy().max():.4f}")
"""),
    md("The collision as a film of the energy density (`fg.animate`, shown inline as a GIF):"),
    code("""
fg.animate(ev, "energy", fps=8)
"""),
    md("""
`fg.track` follows the lumps of the energy density from snapshot to snapshot: the two
solitons come in along $x$, merge into the ring at $t \\approx 10$ and leave along $y$.
"""),
    code("""
track = fg.track(ev, "energy")
rows = track.to_pylist()
fig, ax = plt.subplots(figsize=(5, 5))
for i in sorted({r["id"] for r in rows}):
    pts = np.array([[r["x"], r["y"]] for r in rows if r["id"] == i])
    ax.plot(pts[:, 0], pts[:, 1], "o-", ms=3, label=f"lump {i}")
ax.set(xlim=(-10, 10), ylim=(-10, 10), aspect="equal", xlabel="x", ylabel="y",
       title="energy lumps, t = 0 .. 24")
ax.legend()
plt.show()
"""),
    md("""
## The Lorentz-invariant kinetic term

`fg.theories.baby_skyrme()` evolves with the kinetic term $\\tfrac12|\\dot n|^2$; the
model's Lorentz-invariant Lagrangian also has the Skyrme term's time derivatives,
$K = \\tfrac12|\\dot n|^2 + \\tfrac{\\kappa^2}{2}(|\\dot n\\times\\partial_x n|^2 +
|\\dot n\\times\\partial_y n|^2)$, which `relativistic=True` declares
(`@theory.kinetic_density`, solved for the acceleration site by site). With it a boosted
soliton is an exact travelling solution with energy $\\gamma E_1$; without it, it is not.
"""),
    code("""
v = 0.5
gamma = 1 / np.sqrt(1 - v * v)
boosted = fg.initial.boost(soliton(), v, "x")
for relativistic in (False, True):
    s = fg.Simulation(fg.theories.baby_skyrme(relativistic=relativistic), grid=(81, 65), spacing=H,
                      origin=(-10, -8))
    s.set_field(boosted.field)
    s.set_velocity(boosted.velocity)
    e = s.evolve(0.02, dt=0.02, progress=False).history.column("energy").to_numpy()[0]
    ratio = e / (gamma * E1)
    print(f"relativistic={relativistic}: E / (gamma E1) = {ratio:.5f}")
"""),
    md("## Checks"),
    code("""
assert np.abs(energy / energy[0] - 1).max() < 1e-6  # RK4's drift through the collision
out = np.array([[r["x"], r["y"]] for r in rows if abs(r["t"] - 22.0) < 1e-9])
assert len(out) == 2, out
dx, dy = np.abs(out[0] - out[1])
assert dy > 5 and np.degrees(np.arctan2(dy, dx)) > 85, out  # they leave along y
assert abs(ratio - 1) < 1e-3  # the relativistic run (the last in the loop): gamma E1
print(f"outgoing angle {np.degrees(np.arctan2(dy, dx)):.1f} degrees, E / (gamma E1) = {ratio:.5f}")
"""),
]

NOTEBOOKS = {"08_soliton_dynamics.ipynb": DYNAMICS}
