"""Write notebooks/07_skyrmions_3d.ipynb (the B = 4 Skyrmion relaxed from the cubic
rational map and shown with Runge colouring: docs/skyrme.md, docs/visualisation.md)
from the cell sources below, in the format of tools/make_notebooks.py: no outputs,
stable ids.

Run: .venv/bin/python tools/make_notebooks.py [--check]

``NOTEBOOKS`` maps the file name to its cells; tools/make_notebooks.py takes it in.
"""

from notebook_cells import code, md

SKYRMIONS_3D = [
    md("""
# A B = 4 Skyrmion in 3D, seen with Runge colouring

The Skyrme model (`fg.theories.skyrme`, docs/skyrme.md) is a unit 4-vector
$\\phi = (\\phi_0, \\phi_1, \\phi_2, \\phi_3)$: $\\phi_0$ the sigma field, $\\phi_1, \\phi_2, \\phi_3$
the pions. Its baryon number $B$ is topological, and its energy is bounded below by
$12\\pi^2|B|$. This notebook starts from the rational map of the cube, relaxes it on a
3D lattice, and shows the result as an isosurface of the baryon density coloured by the
direction of the pion field.
"""),
    code("""
%load_ext fieldgo
import numpy as np
import fieldgo as fg
"""),
    md("""
The cubic B = 4 map $R(z) = p(z)/q(z)$ with $p = z^4 + 2\\sqrt3 i z^2 + 1$ and
$q = z^4 - 2\\sqrt3 i z^2 + 1$ (Houghton, Manton and Sutcliffe), with the radial
profile that minimises the ansatz's energy, on a $40^3$ lattice of spacing 0.2 with
pion mass 1.
"""),
    code("""
s3 = np.sqrt(3)
theory = fg.theories.skyrme(mass=1.0)
sim = fg.Simulation(theory, grid=(40, 40, 40), spacing=0.2, boundary="fixed")
sim.set_field(fg.initial.rational_map([1, 0, 2 * s3 * 1j, 0, 1], [1, 0, -2 * s3 * 1j, 0, 1],
                                      profile="optimal", mass=1.0))
E_start, B_start = sim.energy(), fg.observables.baryon_number(sim)
print(f"rational map: B = {B_start:.4f}, E / (12 pi^2 B) = {E_start / (12 * np.pi**2 * B_start):.4f}")
"""),
    md("""
Relax with arrested Newton flow to max |grad| < 1e-3 (the energy then agrees with a
run to 1e-4 in six digits). `live=` redraws a picture while it runs: on a 3D lattice
one plane, here the energy density across the middle of the z axis.
"""),
    code("""
hist = sim.minimize(tol=1e-3, max_steps=3000, check_every=20, live={"every": 40, "density": "energy"})
B = fg.observables.baryon_number(sim)
E = sim.energy()
print(f"relaxed in {sim.last_status['step']} steps: B = {B:.4f}, E / (12 pi^2 B) = {E / (12 * np.pi**2 * B):.4f}")
fg.observables.energy_terms(sim)
"""),
    md("""
The isosurface of the baryon density at half its maximum, in Runge colouring: the
pion direction $\\pi/|\\pi|$ at each point of the surface is a colour, white where
$\\pi_3 = +1$, black where $\\pi_3 = -1$, and red, green, blue at the angles $0$,
$2\\pi/3$, $4\\pi/3$ of $(\\pi_1, \\pi_2)$. The cube's corners alternate white and
black; opposite faces share a colour: red across $z$, green across $x$, blue across $y$.
`refine=2` triangulates the density's cubic spline on a grid twice as fine as the
lattice, for a smoother surface.
"""),
    code("""
fg.isosurface(sim, refine=2)
"""),
    md("The same surface to turn with the mouse (drag to rotate, wheel to zoom, double-click to reset):"),
    code("""
view = fg.view3d(sim, refine=2)
view
"""),
    md("Planes through any axis, and the whole field as VTK image data for ParaView:"),
    code("""
fg.slice(sim, axis="x", density="baryon")
"""),
    code("""
path = fg.to_vtk(sim, "b4_cube.vti")
print(path, f"{path.stat().st_size / 1e6:.1f} MB")
"""),
    md("## Checks"),
    code("""
assert abs(B - 4) < 0.05, B  # the degree, to the lattice's accuracy
assert sim.last_status["converged"], sim.last_status
assert E < E_start, (E, E_start)  # the flow lowered the rational map's energy
assert E / (12 * np.pi**2 * B) > 1, E  # and stays above the Faddeev-Bogomolny bound
mesh = view.mesh
assert mesh.colours is not None and len(mesh.faces) > 5000
white = (mesh.colours.min(axis=1) > 0.9).sum()
black = (mesh.colours.max(axis=1) < 0.1).sum()
assert white > 0 and black > 0, (white, black)  # corners where pi3 = +1 and -1
print(f"B = {B:.4f}, E / (12 pi^2 B) = {E / (12 * np.pi**2 * B):.4f}, {len(mesh.faces)} triangles")
"""),
]

NOTEBOOKS = {"07_skyrmions_3d.ipynb": SKYRMIONS_3D}
