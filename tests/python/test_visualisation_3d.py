"""Pictures of 3D fields (fieldgo/visualisation.py): isosurfaces against an analytic
sphere, Runge colours at the poles and the equator, planes against numpy indexing, the
VTK file read back bit for bit, the interactive view's HTML and its rendering in a
real browser, the live view of a 3D flow, and the refusals of bad input."""

import base64
import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import fieldgo as fg

pytest.importorskip("skimage", reason="isosurfaces need scikit-image (pip install -e .[test])")

CHROMIUM = os.environ.get("FIELDGO_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def skyrme():
    return fg.theories.skyrme(mass=1.0)


@pytest.fixture(scope="module")
def hedgehog(skyrme):
    """B = 1 on 24^3 (h = 0.3, box [-3.45, 3.45]^3), off centre so that planes differ."""
    sim = fg.Simulation(skyrme, grid=(24, 22, 20), spacing=(0.3, 0.32, 0.34), boundary="fixed")
    sim.set_field(fg.initial.hedgehog(profile="optimal", mass=1.0, centre=(0.3, -0.2, 0.1)))
    return sim


def sphere_lattice(n=28, h=0.25):
    lat = fg.Lattice((n, n, n), h)
    X, Y, Z = lat.meshgrid()
    return lat, X, Y, Z


# --- isosurfaces ------------------------------------------------------------------------


def test_isosurface_of_a_radial_density_is_the_sphere_of_its_level():
    """rho = exp(-r^2 / 2) at level exp(-R^2 / 2) is the sphere of radius R: the mesh
    is closed (every edge in two faces, Euler characteristic 2), its vertices lie on
    the sphere, and its area and enclosed volume are 4 pi R^2 and 4/3 pi R^3."""
    lat, X, Y, Z = sphere_lattice()
    R = 2.0
    rho = np.exp(-(X * X + Y * Y + Z * Z) / 2)
    mesh = fg.isosurface_mesh(rho, level=np.exp(-(R**2) / 2), colour=None, lattice=lat)
    r = np.linalg.norm(mesh.vertices, axis=1)
    assert np.abs(r - R).max() < 0.02 * R
    assert mesh.area() == pytest.approx(4 * np.pi * R**2, rel=0.01)
    assert mesh.volume() == pytest.approx(4 / 3 * np.pi * R**3, rel=0.01)
    edges = np.sort(np.concatenate([mesh.faces[:, [0, 1]], mesh.faces[:, [1, 2]], mesh.faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2), "the surface has a boundary"
    V, E, F = len(mesh.vertices), len(counts), len(mesh.faces)
    assert V - E + F == 2
    # normals point down the density: outwards
    assert np.all(np.einsum("ij,ij->i", mesh.normals, mesh.vertices) > 0)
    # the density's spline on a finer grid: the same sphere, closer
    fine = fg.isosurface_mesh(rho, level=np.exp(-(R**2) / 2), colour=None, lattice=lat, refine=2)
    assert len(fine.faces) > 3 * len(mesh.faces)
    assert fine.area() == pytest.approx(4 * np.pi * R**2, rel=0.01)
    assert abs(fine.volume() - 4 / 3 * np.pi * R**3) < 0.5 * abs(mesh.volume() - 4 / 3 * np.pi * R**3)
    assert np.abs(np.linalg.norm(fine.vertices, axis=1) - R).max() < 0.5 * np.abs(r - R).max()


def test_isosurface_is_placed_in_lattice_coordinates():
    """An off-centre blob on a lattice with its own origin and spacings per axis: the
    mesh's centre is the blob's centre in lattice coordinates (x, y, z order)."""
    lat = fg.Lattice((30, 26, 22), (0.2, 0.25, 0.3), origin=(1.0, -2.0, 0.5))
    X, Y, Z = lat.meshgrid()
    c = np.array([3.9, 1.2, 3.6])
    rho = np.exp(-((X - c[0]) ** 2 + (Y - c[1]) ** 2 + (Z - c[2]) ** 2))
    mesh = fg.isosurface_mesh(rho, level=np.exp(-1.0), colour=None, lattice=lat)
    np.testing.assert_allclose(mesh.vertices.mean(axis=0), c, atol=0.02)
    np.testing.assert_allclose(np.linalg.norm(mesh.vertices - c, axis=1), 1.0, atol=0.03)


def test_isosurface_figure_of_a_skyrmion(hedgehog):
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    fig = fg.isosurface(hedgehog)
    (ax,) = fig.axes
    (coll,) = [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    mesh = fg.isosurface_mesh(hedgehog)
    assert len(coll.get_facecolor()) == len(mesh.faces)
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()) == ("x", "y", "z")
    b = hedgehog.density("baryon").numpy()[0]
    assert mesh.level == pytest.approx(0.5 * b.max())
    assert f"{mesh.level:.3g}" in ax.get_title() and "baryon" in ax.get_title()
    # the frame holds the surface, centred on it
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    for (a, b), low, high in zip((ax.get_xlim(), ax.get_ylim(), ax.get_zlim()), lo, hi):
        assert a < low and high < b
    png = fg.plotting.figure_png(fig, dpi=50)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # the energy density and a level of one's own; a Field of a density draws alike
    e = fg.isosurface_mesh(hedgehog, density="energy", level=2.0)
    assert e.density == "energy" and e.level == 2.0
    from_field = fg.isosurface_mesh(hedgehog.density("baryon"), colour=None)
    np.testing.assert_array_equal(from_field.vertices, mesh.vertices)
    # the Skyrme field as a Field, its density given: the same surface in the same colours
    for density in (hedgehog.density("baryon"), hedgehog.density("baryon").numpy()[0]):
        coloured = fg.isosurface_mesh(hedgehog.field, density=density)
        np.testing.assert_array_equal(coloured.vertices, mesh.vertices)
        np.testing.assert_array_equal(coloured.colours, mesh.colours)
    with pytest.raises(fg.SpecError, match="a Field has no density 'baryon'"):
        fg.isosurface_mesh(hedgehog.field, density="baryon")


# --- Runge colours ----------------------------------------------------------------------


def test_runge_colours_poles_white_and_black_equator_red_green_blue():
    t = 2 * np.pi / 3
    pions = np.array(
        [
            [0, 0, 1],  # pi3 = +1: white
            [0, 0, -1],  # pi3 = -1: black
            [1, 0, 0],  # angle 0: red
            [np.cos(t), np.sin(t), 0],  # 2 pi / 3: green
            [np.cos(2 * t), np.sin(2 * t), 0],  # 4 pi / 3: blue
            [0, 0, 5.0],  # the direction counts, not the length
            [-2.0, 0, 0],  # angle pi: cyan, opposite red
        ]
    ).T
    want = [[1, 1, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 1]]
    np.testing.assert_allclose(fg.runge_colours(pions), want, atol=1e-12)
    # halfway up, between the equator's red and white: pink, lightness 3/4
    up = fg.runge_colours(np.array([np.cos(np.pi / 6), 0, np.sin(np.pi / 6)]))
    np.testing.assert_allclose(up, [1, 0.5, 0.5], atol=1e-12)
    with pytest.raises(fg.ShapeError, match="shape"):
        fg.runge_colours(np.zeros((4, 10)))


def test_mesh_colours_are_the_pion_direction_at_the_vertices():
    """A hedgehog's pion direction is x / r: on a sphere each vertex has the colour of
    its own direction (the field interpolated linearly to the vertex)."""
    lat, X, Y, Z = sphere_lattice()
    r = np.sqrt(X * X + Y * Y + Z * Z) + 1e-12
    field = np.stack([np.cos(r), X / r, Y / r, Z / r])  # phi0 and the pions (any lengths)
    rho = np.exp(-(r**2) / 2)
    mesh = fg.isosurface_mesh(rho, level=np.exp(-2.0), lattice=lat, field=field)
    want = fg.runge_colours((mesh.vertices / np.linalg.norm(mesh.vertices, axis=1)[:, None]).T)
    assert np.abs(mesh.colours - want).max() < 0.05
    # a unit 3-vector colours by its own three components
    mesh3 = fg.isosurface_mesh(rho, level=np.exp(-2.0), lattice=lat, field=field[1:])
    np.testing.assert_array_equal(mesh3.colours, mesh.colours)


def test_hopfion_energy_isosurface_in_runge_colours():
    """A theory without a baryon density draws its energy density; a unit 3-vector
    (n1, n2, n3) is coloured by itself, every hue somewhere on the hopfion's surface."""
    sim = fg.Simulation(fg.theories.faddeev_skyrme(), grid=(24, 24, 24), spacing=0.3)
    sim.set_field(fg.initial.hopfion(1, 1))
    mesh = fg.isosurface_mesh(sim)
    assert mesh.density == "energy"
    assert mesh.level == pytest.approx(0.5 * sim.density("energy").numpy()[0].max())
    n = sim.field.numpy()
    X, Y, Z = sim.lattice.meshgrid()
    # the colour at each vertex is the field's own direction there (nearest site, coarse check)
    k = np.argmin(np.abs(sim.lattice.z[None, :] - mesh.vertices[:, 2:3]), axis=1)
    j = np.argmin(np.abs(sim.lattice.y[None, :] - mesh.vertices[:, 1:2]), axis=1)
    i = np.argmin(np.abs(sim.lattice.x[None, :] - mesh.vertices[:, 0:1]), axis=1)
    near = fg.runge_colours(n[:, k, j, i])
    assert np.median(np.abs(mesh.colours - near).max(axis=1)) < 0.25
    hue = np.arctan2(n[1, k, j, i], n[0, k, j, i])
    assert np.histogram(hue, bins=6, range=(-np.pi, np.pi))[0].min() > 0  # every hue on the surface


# --- planes -----------------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "index"), [("x", 3), ("y", 17), ("z", None), ("z", -1)])
def test_slice_draws_the_plane_numpy_indexing_picks(hedgehog, axis, index):
    phi = hedgehog.field.numpy()
    energy = hedgehog.density("energy").numpy()[0]
    lat = hedgehog.lattice
    pick = {"x": lambda a, k: a[..., k], "y": lambda a, k: a[..., k, :], "z": lambda a, k: a[..., k, :, :]}[axis]
    n = {"x": lat.nx, "y": lat.ny, "z": lat.nz}[axis]
    k = n // 2 if index is None else index % n
    fig = fg.slice(hedgehog, axis=axis, index=index)
    image = fig.axes[0].images[0]
    np.testing.assert_array_equal(image.get_array(), pick(energy, k))
    coord = {"x": lat.x, "y": lat.y, "z": lat.z}[axis][k]
    assert f"{axis} = {coord:.3g}" in fig.axes[0].get_title()
    across = [a for a in "xyz" if a != axis]
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == tuple(across)
    coords = {"x": lat.x, "y": lat.y, "z": lat.z}
    assert image.get_extent() == [
        coords[across[0]][0],
        coords[across[0]][-1],
        coords[across[1]][0],
        coords[across[1]][-1],
    ]
    comp = fg.slice(hedgehog, axis=axis, index=index, component="phi3").axes[0].images[0]
    np.testing.assert_array_equal(comp.get_array(), pick(phi[3], k))
    every = fg.slice(hedgehog.field, axis=axis, index=index)
    assert len(every.axes) == 2 * 4  # four components, each with its colorbar
    # fg.plot takes the same plane
    np.testing.assert_array_equal(
        fg.plot(hedgehog, axis=axis, index=index).axes[0].images[0].get_array(), pick(energy, k)
    )


def test_slice_at_a_coordinate_takes_the_nearest_plane(hedgehog):
    lat = hedgehog.lattice
    at = lat.y[5] + 0.4 * lat.hy
    image = fg.slice(hedgehog, axis="y", at=at, density="baryon").axes[0].images[0]
    np.testing.assert_array_equal(image.get_array(), hedgehog.density("baryon").numpy()[0][:, 5, :])
    # into an Axes of one's own: the image comes back
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    drawn = fg.slice(hedgehog, axis="y", at=at, component="phi0", ax=ax, colorbar=False)
    assert drawn is ax.images[0] and ax.get_xlabel() == "x" and ax.get_ylabel() == "z"
    np.testing.assert_array_equal(drawn.get_array(), hedgehog.field.numpy()[0][:, 5, :])


# --- VTK --------------------------------------------------------------------------------


def read_vti(path):
    """The ImageData's attributes and point arrays, decoded with numpy."""
    root = ET.parse(path).getroot()
    assert root.get("type") == "ImageData" and root.get("byte_order") == "LittleEndian"
    assert root.get("header_type") == "UInt64"
    image = root.find("ImageData")
    arrays = {}
    for el in image.find("Piece").find("PointData").findall("DataArray"):
        assert el.get("type") == "Float64" and el.get("format") == "binary"
        raw = base64.b64decode(el.text)
        (nbytes,) = np.frombuffer(raw[:8], dtype="<u8")
        assert nbytes == len(raw) - 8
        arrays[el.get("Name")] = np.frombuffer(raw[8:], dtype="<f8")
    return image.attrib, arrays


def test_vtk_image_data_round_trip_is_exact(hedgehog, tmp_path):
    path = fg.to_vtk(hedgehog, tmp_path / "b1.vti")
    attrs, arrays = read_vti(path)
    lat = hedgehog.lattice
    assert attrs["WholeExtent"] == f"0 {lat.nx - 1} 0 {lat.ny - 1} 0 {lat.nz - 1}"
    np.testing.assert_array_equal([float(v) for v in attrs["Origin"].split()], lat.origin)
    np.testing.assert_array_equal([float(v) for v in attrs["Spacing"].split()], lat.spacing)
    assert list(arrays) == ["phi0", "phi1", "phi2", "phi3", "energy", "baryon", "e2", "e4", "e0"]
    phi = hedgehog.field.numpy()
    for k in range(4):
        np.testing.assert_array_equal(arrays[f"phi{k}"].reshape(lat.shape), phi[k])  # x fastest
    for name in ("energy", "baryon"):
        np.testing.assert_array_equal(arrays[name].reshape(lat.shape), hedgehog.density(name).numpy()[0])
    # chosen densities only; a Field writes its components
    _, some = read_vti(fg.to_vtk(hedgehog, tmp_path / "some.vti", densities=("baryon",)))
    assert list(some) == ["phi0", "phi1", "phi2", "phi3", "baryon"]
    _, comps = read_vti(fg.to_vtk(hedgehog.field, tmp_path / "field.vti"))
    assert list(comps) == ["phi0", "phi1", "phi2", "phi3"]


def test_vtk_of_a_plane_is_one_layer_thick(tmp_path):
    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(12, 10), spacing=0.3)
    sim.set_field(fg.initial.skyrmion(charge=1))
    attrs, arrays = read_vti(fg.to_vtk(sim, tmp_path / "plane.vti", densities=()))
    assert attrs["WholeExtent"] == "0 11 0 9 0 0"
    np.testing.assert_array_equal(arrays["n3"].reshape(10, 12), sim.field.numpy()[2])


# --- the interactive view ---------------------------------------------------------------


def decode(data, key, dtype, width):
    return np.frombuffer(base64.b64decode(data[key]), dtype=dtype).reshape(-1, width)


def test_view3d_html_is_self_contained_and_carries_the_mesh(hedgehog, tmp_path):
    view = fg.view3d(hedgehog)
    html = view._repr_html_()
    assert "<script" in html and "fieldgoView3d(" in html
    assert not re.search(r"""src\s*=\s*["']?https?:""", html), "the view must not fetch anything"
    data = json.loads(re.search(r"fieldgoView3d\(\"[^\"]+\", (\{.*\})\);</script>", html, re.S).group(1))
    np.testing.assert_array_equal(decode(data, "positions", "<f4", 3), view.mesh.vertices.astype(np.float32))
    np.testing.assert_array_equal(decode(data, "indices", "<u4", 3), view.mesh.faces)
    np.testing.assert_array_equal(decode(data, "colours", "u1", 3), np.round(view.mesh.colours * 255))
    ids = re.findall(r'id="(fieldgo-view3d-[0-9a-f]+)"', html + fg.view3d(hedgehog)._repr_html_())
    assert len(set(ids)) == 2, "two views in one page need their own ids"
    page = view.save(tmp_path / "view.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    # a title cannot end the script early
    odd = fg.view3d(hedgehog, title="B = 1 </script><b>").html()
    assert odd.count("</script>") == 1 and "&lt;/script&gt;" in odd


def browser_pixels(page_path, tmp_path, flags=()):
    """Open the page in headless Chromium; the view's data attributes, a screenshot of
    it as an RGB array, and one after a drag."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (.ci/run does)")
    from PIL import Image

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *flags]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        try:
            page = browser.new_page(viewport={"width": 700, "height": 560})
            page.goto(page_path.as_uri())
            view = page.locator(".fieldgo-view3d")
            page.wait_for_function("() => document.querySelector('.fieldgo-view3d').dataset.frames", timeout=30_000)
            first = view.evaluate("e => ({...e.dataset})")
            assert not page.locator(".fieldgo-view3d-note").is_visible(), "the note stays over the drawn view"
            view.screenshot(path=str(tmp_path / "before.png"))
            box = view.bounding_box()
            page.mouse.move(box["x"] + 300, box["y"] + 240)
            page.mouse.down()
            page.mouse.move(box["x"] + 420, box["y"] + 200, steps=5)
            page.mouse.up()
            page.wait_for_function("() => +document.querySelector('.fieldgo-view3d').dataset.frames > 1")
            view.screenshot(path=str(tmp_path / "after.png"))
            after = view.evaluate("e => ({...e.dataset})")
        finally:
            browser.close()
    load = [np.asarray(Image.open(tmp_path / f"{n}.png").convert("RGB")).astype(int) for n in ("before", "after")]
    return first, after, load[0], load[1]


# Headless Chromium has no GPU: its WebGL is SwiftShader's, which newer versions offer only
# when asked (the page is our own, so its "unsafe" warning does not apply).
@pytest.mark.parametrize(
    ("flags", "renderer"), [(("--enable-unsafe-swiftshader",), "webgl"), (("--disable-webgl",), "canvas2d")]
)
def test_view3d_renders_in_a_real_browser(hedgehog, tmp_path, flags, renderer):
    """The page drawn by Chromium: the surface covers part of the view in saturated
    (Runge) colours, and dragging rotates it (a new frame, other pixels). WebGL where
    the browser has it (SwiftShader in a headless one), else the 2D canvas."""
    path = fg.view3d(hedgehog, width=600, height=480).save(tmp_path / "view.html")
    first, after, before, rotated = browser_pixels(path, tmp_path, flags)
    assert first["renderer"].startswith(renderer), first
    assert int(after["frames"]) > 1
    ink = np.abs(before - 255).sum(axis=2) > 60
    assert 0.02 < ink.mean() < 0.6, f"{ink.mean():.3f} of the view is drawn"
    saturated = (before.max(axis=2) - before.min(axis=2)) > 120
    assert saturated.sum() > 500, "no Runge colours on the surface"
    assert np.abs(rotated - before).sum(axis=2).astype(bool).mean() > 0.01, "dragging did not rotate the view"


# --- the live view ----------------------------------------------------------------------


def test_live_view_of_a_3d_flow_draws_the_chosen_plane(hedgehog, skyrme, monkeypatch):
    import IPython.display

    from fieldgo import plotting
    from fieldgo.jupyter import progress

    sim = fg.Simulation(skyrme, grid=hedgehog.lattice.grid, spacing=hedgehog.lattice.spacing)
    sim.set_field(hedgehog.field.numpy())
    figures, shown = [], []
    real_png = plotting.figure_png
    monkeypatch.setattr(plotting, "figure_png", lambda fig, dpi=100: figures.append(fig) or real_png(fig, dpi))

    class Handle:
        def update(self, obj):
            shown.append(obj)

    def display(obj, display_id=False):
        shown.append(obj)
        return Handle()

    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", display)
    sim.minimize(
        max_steps=20, check_every=5, progress=False, live={"every": 5, "axis": "x", "index": 7, "density": "energy"}
    )
    assert len(figures) >= 2 and all(isinstance(s, IPython.display.Image) for s in shown)
    last = figures[-1].axes[0]
    np.testing.assert_array_equal(last.images[0].get_array(), sim.density("energy").numpy()[0][..., 7])
    assert f"x = {sim.lattice.x[7]:.3g}" in last.get_title()
    # the default live view of a 3D field: every component's middle plane along z
    figures.clear()
    sim.minimize(max_steps=10, check_every=5, progress=False, live=5)
    assert len(figures[-1].axes) == 2 * 4
    np.testing.assert_array_equal(figures[-1].axes[0].images[0].get_array(), sim.field.numpy()[0, sim.lattice.nz // 2])
    with pytest.raises(fg.ParameterError, match="unknown: colour"):
        sim.minimize(max_steps=5, live={"every": 5, "colour": "runge"})
    with pytest.raises(fg.ParameterError, match="axis must be"):
        sim.minimize(max_steps=5, live={"axis": "w"})


# --- bad input --------------------------------------------------------------------------


def test_bad_input_is_refused_naming_the_problem(hedgehog, tmp_path):
    with pytest.raises(fg.SpecError, match="unknown density 'charge'.*baryon"):
        fg.isosurface(hedgehog, density="charge")
    b = hedgehog.density("baryon").numpy()[0]
    with pytest.raises(fg.ParameterError, match=r"level=5 is outside the baryon density's range"):
        fg.isosurface_mesh(hedgehog, level=5.0)
    with pytest.raises(fg.ParameterError, match="outside"):
        fg.isosurface_mesh(hedgehog, level=float(b.min()))
    with pytest.raises(fg.ParameterError, match="colour must be 'runge' or None"):
        fg.isosurface_mesh(hedgehog, colour="rainbow")
    with pytest.raises(fg.ParameterError, match="refine must be an integer from 1 to 8, got 0.5"):
        fg.isosurface_mesh(hedgehog, refine=0.5)
    plane = fg.Simulation(fg.theories.baby_skyrme(), grid=(12, 10), spacing=0.3)
    plane.set_field(fg.initial.skyrmion(charge=1))
    with pytest.raises(fg.LatticeError, match=r"isosurface needs a 3D lattice, got grid=\(12, 10\)"):
        fg.isosurface(plane, density="charge")
    with pytest.raises(fg.LatticeError, match="3D lattice"):
        fg.view3d(plane, density="charge")
    with pytest.raises(fg.LatticeError, match="slice needs a 3D lattice"):
        fg.slice(plane)
    with pytest.raises(fg.LatticeError, match="choose a plane of a 3D lattice"):
        fg.plot(plane, axis="x")
    with pytest.raises(fg.ParameterError, match="axis must be 'x', 'y' or 'z', got 'w'"):
        fg.slice(hedgehog, axis="w")
    with pytest.raises(fg.ParameterError, match=r"index=24 is outside the lattice along x \(0 to 23\)"):
        fg.slice(hedgehog, axis="x", index=24)
    with pytest.raises(fg.ParameterError, match="at=9 is outside the lattice along z"):
        fg.slice(hedgehog, at=9.0)
    with pytest.raises(fg.ParameterError, match="not both"):
        fg.slice(hedgehog, index=2, at=0.0)
    with pytest.raises(fg.SpecError, match="needs the field"):
        fg.isosurface_mesh(b, lattice=hedgehog.lattice)
    with pytest.raises(fg.SpecError, match="unit 4-vector.*got 2 components"):
        fg.isosurface_mesh(b, lattice=hedgehog.lattice, field=np.zeros((2, *b.shape)))
    with pytest.raises(fg.ShapeError, match="3D array"):
        fg.isosurface_mesh(np.zeros((4, 4)))
    with pytest.raises(fg.SpecError, match="unknown density 'charge'"):
        fg.to_vtk(hedgehog, tmp_path / "x.vti", densities=("charge",))
