"""The Skyrme model in 3D (fg.theories.skyrme) with its starting fields (fg.initial's
hedgehog, rational maps, product ansatz) and observables (fg.observables).

References, in Skyrme units E / (12 pi^2 B): the B = 1 Skyrmion 1.2315 (massless) and
1.4162 (mass 1); the rational map ansatz with its optimal profile 1.2081 (B = 2),
1.1844 (B = 3), 1.1365 (B = 4), with angular integrals I = 5.81, 13.58, 20.65
(Houghton, Manton and Sutcliffe 1998; Battye and Sutcliffe). The 1D profile equation
is solved by fg.initial.skyrme_profile; its profile put on 3D lattices of shrinking
spacing gives lattice energies converging to the 1D ones at fourth order.
"""

import numpy as np
import pytest

import fieldgo as fg

TWELVE_PI2 = 12 * np.pi**2
S3 = np.sqrt(3.0)
MAPS = {  # degree: (p, q, E / (12 pi^2 B), I)
    2: ([1, 0, 0], [1], 1.2081, 5.81),
    3: ([S3 * 1j, 0, -1], [1, 0, -S3 * 1j, 0], 1.1844, 13.58),
    4: ([1, 0, 2 * S3 * 1j, 0, 1], [1, 0, -2 * S3 * 1j, 0, 1], 1.1365, 20.65),
}


@pytest.fixture(scope="module")
def massless():
    return fg.theories.skyrme()


@pytest.fixture(scope="module")
def massive():
    return fg.theories.skyrme(mass=1.0)


def box(theory, half, h, **kw):
    """A cube [-half, half]^3 of spacing h, fixed boundary."""
    n = int(round(2 * half / h)) + 1
    return fg.Simulation(theory, grid=(n, n, n), spacing=h, **kw)


def radial(profile, r):
    """f and f' of a profile on radii r (f' by central differences)."""
    d = 1e-5
    lo = np.maximum(r - d, 0.0)
    return profile(r), (profile(r + d) - profile(lo)) / (r + d - lo)


def ansatz_energy(profile, degree, inertia, mass, weight=None):
    """4 pi int w(r) [r^2 f'^2 + 2B sin^2 f (1 + f'^2) + I sin^4 f / r^2 + 2 m^2 r^2 (1 - cos f)] dr,
    the rational map ansatz's energy, here by the trapezoid rule on a fine grid (the
    angular integral is exact for any radial weight w)."""
    r = np.linspace(1e-9, 60.0, 600_001)
    f, fp = radial(profile, r)
    s = np.sin(f)
    e = r**2 * fp**2 + 2 * degree * s**2 * (1 + fp**2) + inertia * s**4 / r**2 + 2 * mass**2 * r**2 * (1 - np.cos(f))
    if weight is not None:
        e = e * weight(r)
    return 4 * np.pi * np.trapezoid(e, r)


def window(r, r1=3.0, r2=5.0):
    """A smooth (C-infinity) step from 1 inside r1 to 0 outside r2: a weighted lattice
    sum then converges at the stencils' order, with no error from a box or a cut."""
    t = np.clip((r - r1) / (r2 - r1), 0.0, 1.0)

    def g(x):
        return np.where(x > 0, np.exp(-1 / np.where(x > 0, x, 1.0)), 0.0)

    return g(1 - t) / (g(1 - t) + g(t))


def windowed_lattice_energy(sim):
    X, Y, Z = sim.lattice.meshgrid()
    w = window(np.sqrt(X * X + Y * Y + Z * Z))
    return float((sim.density("energy").numpy()[0] * w).sum() * np.prod(sim.lattice.spacing))


# --- the 1D profile --------------------------------------------------------------------


@pytest.mark.parametrize(("mass", "reference"), [(0.0, 1.2315), (1.0, 1.4162)])
def test_hedgehog_profile_equation_gives_the_skyrmion_energies(mass, reference):
    p = fg.initial.skyrme_profile(mass=mass)
    assert p.energy / TWELVE_PI2 == pytest.approx(reference, abs=1e-4)
    assert p(np.array([0.0]))[0] == pytest.approx(np.pi, abs=1e-12)
    # the solver's energy is the ansatz integral of its own profile (cut at r = 60 here,
    # beyond which the massless tail f ~ 1/r^2 holds 4e-6 of it)
    assert ansatz_energy(p, 1, 1.0, mass) == pytest.approx(p.energy, rel=1e-5)


# --- the hedgehog on 3D lattices -------------------------------------------------------


def test_massive_hedgehog_lattice_energy_converges_to_the_1d_energy_at_fourth_order(massive):
    """m = 1: the tail is exponential, so a box [-5, 5]^3 holds all but 5e-5 of the energy."""
    field = fg.initial.hedgehog(profile="optimal", mass=1.0)
    exact = field.profile.energy
    spacings = (0.25, 0.2, 1 / 6)
    errors = []
    for h in spacings:
        sim = box(massive, 5.0, h)
        sim.set_field(field)
        errors.append(sim.energy() - exact)
        assert sim.integral("baryon") == pytest.approx(1.0, abs=0.03)
    orders = [np.log(errors[k] / errors[k + 1]) / np.log(spacings[k] / spacings[k + 1]) for k in range(2)]
    assert all(3.3 < p < 4.7 for p in orders), (errors, orders)
    assert abs(errors[-1]) / exact < 5e-3
    assert sim.energy() / TWELVE_PI2 == pytest.approx(1.4162, rel=5e-3)


def test_massless_hedgehog_converges_at_fourth_order_inside_a_window(massless):
    """m = 0: the tail (f ~ 1/r^2) reaches any box, so the lattice sums the energy
    density under a smooth window and compares with the same window on the 1D profile."""
    field = fg.initial.hedgehog(profile="optimal")
    exact = ansatz_energy(field.profile, 1, 1.0, 0.0, window)
    errors = []
    for h in (0.3, 0.2):
        sim = box(massless, 6.0, h)
        sim.set_field(field)
        errors.append(windowed_lattice_energy(sim) - exact)
    assert 1.5**3.3 < errors[0] / errors[1] < 1.5**4.7, errors
    assert abs(errors[1]) / exact < 5e-3
    # the whole box: the lattice error and the tail beyond it, both below the continuum
    assert 0.98 < sim.energy() / field.profile.energy < 1.0
    assert sim.integral("baryon") == pytest.approx(1.0, abs=0.005)


def test_relaxation_lowers_the_energy_keeps_the_charge_and_stays_above_the_bound(massive):
    # h = 0.25: the lattice charge of this small Skyrmion is 0.985 at the start (0.97 at
    # h = 0.3, where the flow's shrinking core loses a further 0.02 of it)
    sim = box(massive, 4.5, 0.25)
    sim.set_field(fg.initial.hedgehog(size=0.8))
    before = sim.energy()
    hist = sim.minimize(tol=1e-4, max_steps=40, check_every=20)
    after = sim.energy()
    assert after < before and hist["energy"].to_numpy().min() < before
    assert sim.integral("baryon") == pytest.approx(1.0, abs=0.05)
    assert after / TWELVE_PI2 > 1.0  # Faddeev-Bogomolny: E >= 12 pi^2 |B|


def test_relaxed_b2_torus_extrapolates_to_1_179_and_is_bound(massless):
    """B = 2 relaxed from the map z^2 (the torus), massless, box 12, to max|grad| < 1e-3
    at h = 0.3 and 0.25: E / (12 pi^2 B) = 1.1640 and 1.1713, whose h^4 extrapolation
    is 1.1780 (Battye and Sutcliffe: 1.1791); below the B = 1 Skyrmion relaxed on the
    same lattice (ratio 0.963 and 0.961, the continuum's 1.1791 / 1.2315 = 0.957) and
    above the Faddeev-Bogomolny bound."""
    values, ratios = [], []
    for h, n in ((0.3, 41), (0.25, 49)):
        per_b = {}
        for degree, p in ((1, [1, 0]), (2, [1, 0, 0])):
            sim = fg.Simulation(massless, grid=(n, n, n), spacing=h, backend="cpu")
            sim.set_field(fg.initial.rational_map(p, [1], profile="optimal"))
            sim.minimize(tol=1e-3, max_steps=3000, progress=False)
            assert sim.last_status["converged"]
            assert fg.observables.baryon_number(sim) == pytest.approx(degree, abs=0.03 * degree)
            per_b[degree] = sim.energy() / (TWELVE_PI2 * degree)
        assert 1 < per_b[2] < per_b[1]
        values.append(per_b[2])
        ratios.append(per_b[2] / per_b[1])
    extrapolated = values[1] + (values[1] - values[0]) / ((0.3 / 0.25) ** 4 - 1)
    assert extrapolated == pytest.approx(1.1791, abs=3e-3)
    assert abs(ratios[1] - 0.9575) < abs(ratios[0] - 0.9575) < 0.01


# --- rational maps ---------------------------------------------------------------------


@pytest.mark.parametrize("degree", sorted(MAPS))
def test_rational_map_ansatz_energy_and_charge(massless, degree):
    p, q, reference, inertia = MAPS[degree]
    field = fg.initial.rational_map(p, q, profile="optimal")
    assert field.degree == degree
    assert field.inertia == pytest.approx(inertia, abs=0.01)
    assert field.profile.energy / (TWELVE_PI2 * degree) == pytest.approx(reference, abs=1e-4)
    sim = box(massless, 6.0, 0.2)
    sim.set_field(field)
    assert sim.integral("baryon") == pytest.approx(degree, abs=0.01 * degree)
    windowed = ansatz_energy(field.profile, degree, field.inertia, 0.0, window)
    assert windowed_lattice_energy(sim) == pytest.approx(windowed, rel=6e-3)
    assert sim.energy() / (TWELVE_PI2 * degree) == pytest.approx(reference, rel=1e-2)


def test_profile_equation_for_larger_maps_and_with_the_pion_mass():
    """B = 7 (dodecahedral) and B = 8 (D6d, a = 0.14): 1.107 and 1.118 with I = 60.87 and
    85.63 (Houghton, Manton and Sutcliffe); Newton needs continuation from the hedgehog
    there, and in the mass for B >= 2 at m = 1."""
    b7 = fg.initial.rational_map([1, 0, -7, 0, 0, -7, 0, -1], [1, 0, 7, 0, 0, -7, 0, 1], profile="optimal")
    assert b7.inertia == pytest.approx(60.87, abs=0.01)
    assert b7.profile.energy / (TWELVE_PI2 * 7) == pytest.approx(1.107, abs=5e-4)
    b8 = fg.initial.rational_map([1, 0, 0, 0, 0, 0, -0.14], [0.14, 0, 0, 0, 0, 0, 1, 0, 0], profile="optimal")
    assert b8.inertia == pytest.approx(85.63, abs=0.05)
    assert b8.profile.energy / (TWELVE_PI2 * 8) == pytest.approx(1.118, abs=5e-4)
    massless, massive = (fg.initial.rational_map([1, 0, 0], [1], profile="optimal", mass=m).profile for m in (0, 1))
    assert massive.energy > massless.energy
    assert ansatz_energy(massive, 2, massive.inertia, 1.0) == pytest.approx(massive.energy, rel=1e-6)


def test_rational_map_takes_numpy_polynomials_and_callables():
    coeffs = fg.initial.rational_map(MAPS[3][0], MAPS[3][1])
    poly = fg.initial.rational_map(np.poly1d(MAPS[3][0]), np.polynomial.Polynomial(MAPS[3][1][::-1]))
    funcs = fg.initial.rational_map(lambda z: S3 * 1j * z**2 - 1, lambda z: z**3 - S3 * 1j * z)
    assert poly.degree == funcs.degree == 3
    lat = fg.Lattice((15, 14, 13), 0.4)
    a = coeffs.on(lat)
    np.testing.assert_allclose(poly.on(lat), a, atol=1e-13)
    np.testing.assert_allclose(funcs.on(lat), a, atol=1e-6)  # z = inf approximated by a large z
    assert funcs.inertia == pytest.approx(coeffs.inertia, rel=1e-6)


def test_hedgehog_and_maps_agree_with_the_general_rational_map_to_rounding(massive):
    # The hedgehog takes n = x / r without evaluating R(z) = z, polynomial maps take the
    # hemisphere forms of p and q, callables p(z) / q(z): all three describe one field.
    place = dict(rotation=(0.9, 0.1, -0.3, 0.2), isorotation=(0.4, -0.5, 0.1, 0.7))
    on_axis = fg.Lattice((17, 15, 13), 0.45, origin=(-8 * 0.45, -7 * 0.45, -6 * 0.45))  # the origin is a site
    fast = fg.initial.hedgehog(on_axis, **place)
    general = fg.initial.rational_map([2, 0], [2], lattice=on_axis, **place)  # 2z / 2: not the hedgehog's (z, 1)
    np.testing.assert_allclose(fast, general, rtol=0, atol=1e-13)
    off_axis = fg.Lattice((16, 14, 12), 0.4)  # no site on the z axis, where a callable sees z = inf as a large z
    np.testing.assert_allclose(
        fg.initial.hedgehog(off_axis, **place),
        fg.initial.rational_map(lambda z: z, lattice=off_axis, **place),
        rtol=0,
        atol=1e-13,
    )
    p, q = MAPS[4][0], MAPS[4][1]
    np.testing.assert_allclose(
        fg.initial.rational_map(p, q, lattice=off_axis, **place),
        fg.initial.rational_map(lambda z: np.polyval(p, z), lambda z: np.polyval(q, z), lattice=off_axis, **place),
        rtol=0,
        atol=1e-13,
    )
    # set_field, .on() and the callable on the full coordinate arrays give one field
    sim = fg.Simulation(massive, grid=(17, 15, 13), spacing=0.45, origin=on_axis.origin, backend="cpu")
    pair = fg.initial.product_ansatz(
        fg.initial.hedgehog(centre=(-1.0, 0.0, 0.0), profile="optimal", mass=1.0, **place),
        fg.initial.rational_map(p, q, centre=(1.0, 0.5, 0.0)),
    )
    for config in (fg.initial.hedgehog(**place), pair):
        sim.set_field(config)
        np.testing.assert_allclose(sim.field.numpy(), config.on(sim), rtol=0, atol=1e-15)
        np.testing.assert_allclose(config.on(sim), np.array(config(*on_axis.meshgrid())), rtol=0, atol=0)


# --- placement and the product ansatz --------------------------------------------------


def test_hedgehog_is_symmetric_under_rotation_with_isorotation_and_rotations_take_quaternions():
    lat = fg.Lattice((13, 12, 11), 0.35)
    axis = np.array([1.0, 2.0, 2.0]) / 3
    angle = 0.7
    quaternion = (np.cos(angle / 2), *(np.sin(angle / 2) * axis))
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    matrix = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K  # Rodrigues
    plain = fg.initial.hedgehog(lat)
    rotated = fg.initial.hedgehog(lat, rotation=quaternion)
    np.testing.assert_allclose(fg.initial.hedgehog(lat, rotation=matrix), rotated, atol=1e-14)
    assert np.abs(rotated - plain).max() > 0.1
    both = fg.initial.hedgehog(lat, rotation=matrix, isorotation=quaternion)
    np.testing.assert_allclose(both, plain, atol=1e-13)  # a hedgehog: rotation = isorotation


def test_product_ansatz_adds_baryon_numbers_and_multiplies_quaternions(massive):
    left = fg.initial.hedgehog(centre=(-1.6, 0.0, 0.0), size=0.8)
    right = fg.initial.hedgehog(centre=(1.6, 0.0, 0.0), size=0.8, isorotation=(0.0, 0.0, 0.0, 1.0))
    pair = fg.initial.product_ansatz(left, right)
    sim = box(massive, 5.0, 0.25)
    sim.set_field(pair)
    assert sim.integral("baryon") == pytest.approx(2.0, abs=0.05)
    a = sim.field.numpy()
    np.testing.assert_allclose(np.sum(a * a, axis=0), 1.0, atol=1e-14)
    arrays = fg.initial.product_ansatz(left.on(sim), right.on(sim))
    np.testing.assert_allclose(arrays, a, atol=1e-14)
    # a Skyrmion times its antiSkyrmion (the inverse: U^dagger) is the vacuum
    inverse = fg.initial.product_ansatz(left.on(sim) * np.array([1, -1, -1, -1])[:, None, None, None], left.on(sim))
    np.testing.assert_allclose(inverse[0], 1.0, atol=1e-14)
    assert fg.observables.centre_of_mass(sim, "baryon") == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


# --- observables -----------------------------------------------------------------------


def test_energy_terms_sum_to_the_energy_and_obey_derrick(massive):
    field = fg.initial.hedgehog(profile="optimal", mass=1.0)
    sim = box(massive, 5.0, 0.2)
    sim.set_field(field)
    terms = fg.observables.energy_terms(sim)
    assert set(terms) == {"e0", "e2", "e4", "total"}  # no sextic term unless asked for
    assert terms["e2"] + terms["e4"] + terms["e0"] == pytest.approx(terms["total"], rel=1e-12)
    # at the solution E2 - E4 + 3 E0 = 0, to the lattice's accuracy
    assert abs(fg.observables.virial(sim)) < 1e-2 * terms["total"]
    # a Skyrmion dilated by 1.2: E2 and E0 grow, E4 shrinks, the virial is far from 0
    sim.set_field(fg.initial.hedgehog(profile=lambda r: field.profile(r / 1.2)))
    assert fg.observables.virial(sim) > 0.1 * terms["total"]
    with pytest.raises(fg.ParameterError, match="c6"):
        sim.set_params(c6=0.5)


def test_sextic_term_is_c6_pi4_b0_squared_and_enters_the_virial_with_minus_3():
    theory = fg.theories.skyrme(mass=1.0, sextic=True)
    assert theory.params == {"mass": 1.0, "c6": 0.0}
    sim = box(theory, 5.0, 0.25)
    sim.set_field(fg.initial.hedgehog(profile="optimal", mass=1.0))
    plain = fg.observables.energy_terms(sim)
    assert plain["e6"] == 0.0
    sim.set_params(c6=0.5)
    b0 = sim.density("baryon").numpy()[0][2:-2, 2:-2, 2:-2]
    assert sim.integral("e6") == pytest.approx(0.5 * np.pi**4 * np.sum(b0 * b0) * 0.25**3, rel=1e-12)
    terms = fg.observables.energy_terms(sim)
    assert sum(terms[k] for k in ("e0", "e2", "e4", "e6")) == pytest.approx(terms["total"], rel=1e-12)
    assert terms["total"] == pytest.approx(plain["total"] + terms["e6"], rel=1e-12)
    derrick = terms["e2"] - terms["e4"] + 3 * terms["e0"] - 3 * terms["e6"]
    assert fg.observables.virial(sim) == pytest.approx(derrick, rel=1e-12)
    assert fg.observables.baryon_number(sim) == sim.integral("baryon")
    with pytest.raises(fg.ParameterError, match="sextic"):
        fg.theories.skyrme(c6=1.0, sextic=False)


def test_centre_radius_and_moments_of_inertia_of_the_hedgehog(massive):
    field = fg.initial.hedgehog(profile="optimal", mass=1.0, centre=(0.3, -0.2, 0.1))
    sim = box(massive, 5.0, 0.2)
    sim.set_field(field)
    for density in ("energy", "baryon"):
        assert fg.observables.centre_of_mass(sim, density) == pytest.approx([0.3, -0.2, 0.1], abs=1e-4)
    r = np.linspace(1e-9, 40.0, 400_001)
    f, fp = radial(field.profile, r)
    s2 = np.sin(f) ** 2
    # B0 = -sin^2 f f' / (2 pi^2 r^2), so <r^2> = int r^2 B0 d^3x = -(2/pi) int r^2 sin^2 f f' dr
    baryon_r2 = np.trapezoid(r**2 * (-2 / np.pi) * s2 * fp, r)
    assert fg.observables.rms_radius(sim, "baryon") == pytest.approx(np.sqrt(baryon_r2), rel=5e-3)
    Lam = 16 * np.pi / 3 * np.trapezoid(r**2 * s2 * (1 + fp**2 + s2 / r**2), r)
    U, V, W = fg.observables.inertia_tensors(sim)
    for tensor, sign in ((U, 1), (V, 1), (W, -1)):
        np.testing.assert_allclose(tensor, sign * Lam * np.eye(3), rtol=0, atol=1e-2 * Lam)


# --- bad input ---------------------------------------------------------------------------


def test_bad_input_is_refused_by_name(massless):
    with pytest.raises(fg.ParameterError, match="profile must be a callable"):
        fg.initial.hedgehog(profile=1.5)
    with pytest.raises(fg.ShapeError, match="one finite angle per radius"):
        fg.initial.hedgehog(profile=lambda r: np.pi)
    with pytest.raises(fg.ShapeError, match="3x3 matrix or a quaternion"):
        fg.initial.hedgehog(rotation=np.eye(2))
    with pytest.raises(fg.ParameterError, match="determinant"):
        fg.initial.hedgehog(isorotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(fg.ParameterError, match=r"centre must be \(x, y, z\)"):
        fg.initial.hedgehog(centre=(0.0, 0.0))
    with pytest.raises(fg.ParameterError, match="does not match"):
        fg.initial.rational_map([1, 0, 0], [1], degree=3)
    with pytest.raises(fg.ParameterError, match="share the root"):
        fg.initial.rational_map([1, -1], [1, 0, -1])  # (z - 1) / ((z - 1)(z + 1))
    with pytest.raises(fg.ParameterError, match="constant map"):
        fg.initial.rational_map([2], [3])
    with pytest.raises(fg.ParameterError, match="zero polynomial"):
        fg.initial.rational_map([0, 0], [1])
    with pytest.raises(fg.ParameterError, match="highest power first"):
        fg.initial.rational_map([0, 0, 1], [1])  # z^2 written lowest power first
    with pytest.raises(fg.ShapeError, match="1D sequence"):
        fg.initial.rational_map([[1, 0], [0, 1]], [1])
    with pytest.raises(fg.ParameterError, match="degree must be a positive integer"):
        fg.initial.skyrme_profile(degree=0)
    with pytest.raises(fg.ParameterError, match="at least one"):
        fg.initial.product_ansatz()
    with pytest.raises(fg.ParameterError, match="not one"):
        fg.initial.product_ansatz(fg.initial.hedgehog(), fg.initial.skyrmion())
    with pytest.raises(fg.ShapeError, match="factor 1"):
        fg.initial.product_ansatz(np.ones((4, 3, 3, 3)), np.ones((4, 3, 3, 2)))
    plane = fg.Simulation(fg.theories.baby_skyrme(), grid=(16, 16), spacing=0.2)
    with pytest.raises(fg.ShapeError, match="in 3 dimensions"):
        plane.set_field(fg.initial.hedgehog())
    with pytest.raises(fg.SpecError, match="baryon"):
        plane.set_field(fg.initial.skyrmion())
        fg.observables.baryon_number(plane)
    sim = fg.Simulation(massless, grid=(8, 8, 8), spacing=0.5)
    with pytest.raises(fg.ShapeError, match="planar"):
        sim.set_field(fg.initial.skyrmion())


def test_an_estimated_dt_follows_a_field_that_stiffens():
    """A hedgehog's core shrinks as it relaxes under the pion mass, and the field grows
    stiffer than the start's estimate allows (at 40^3, h = 0.2, the start's dt diverged
    at step 216): a flow with an estimated dt estimates again at check steps 100, 200,
    400, ... and shortens dt, so the default relaxes the Skyrmion."""
    n, box = 32, 6.2
    sim = fg.Simulation(fg.theories.skyrme(mass=1.0), grid=(n, n, n), spacing=box / (n - 1), backend="cpu")
    sim.set_field(fg.initial.hedgehog(mass=1.0))
    sim.minimize(tol=1e-300, max_steps=1)
    dt0 = sim.describe()["flow"]["dt"]
    sim.minimize(tol=1e-4, max_steps=3000)
    flow = sim.describe()["flow"]
    assert flow["dt_cuts"] >= 1 and flow["dt"] < dt0
    assert sim.history["max_grad"][-1].as_py() < 1e-4
    assert abs(fg.observables.baryon_number(sim) - 1) < 0.02
    assert 1.39 < sim.energy() / (12 * np.pi**2) < 1.42  # 1.4162 in the continuum, less in this small box
