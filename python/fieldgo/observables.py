"""Observables of a relaxed field, computed in numpy on the simulation's field and
densities: charges, centres, radii, the energy term by term and moments of inertia.

Each takes a :class:`fieldgo.Simulation`. Sums run over the sites that carry energy
(on a fixed boundary the outer two layers are held and left out, as in
``sim.energy()``), each weighted by the cell volume, so ``baryon_number(sim)`` is
``sim.integral("baryon")``.
"""

from __future__ import annotations

import numpy as np

from .errors import LatticeError, ParameterError, SpecError

__all__ = [
    "baryon_number",
    "energy_terms",
    "virial",
    "centre_of_mass",
    "rms_radius",
    "inertia_tensors",
    "hopf_charge",
]

# Derrick's scaling x -> lambda x multiplies a term with n derivatives by lambda^(n - 3).
_DERRICK_POWERS = {"e0": -3, "e2": -1, "e4": 1, "e6": 3}


def _densities(sim):
    return list(sim.theory.spec.get("densities", []))


def _need(sim, name, what):
    if name != "energy" and name not in _densities(sim):
        raise SpecError(
            f"{what} needs the density {name!r}, which theory {sim.theory.name!r} does not declare "
            f"(its densities: {', '.join(_densities(sim)) or 'none'})"
        )


def _interior(lattice):
    """The sites that carry energy: 1 inside, 0 on the two held layers of a fixed axis."""
    mask = np.ones(lattice.shape)
    for axis, bound in enumerate(reversed(lattice.boundaries)):  # numpy axes run z, y, x
        if bound == "fixed":
            index = [slice(None)] * mask.ndim
            for edge in (0, 1, -1, -2):
                index[axis] = edge
                mask[tuple(index)] = 0.0
    return mask


def _cell(lattice):
    return float(np.prod(lattice.spacing))


def _weights(sim, density):
    lat = sim.lattice
    return sim.density(density).numpy()[0] * _interior(lat) * _cell(lat)


def baryon_number(sim) -> float:
    """The integral of the theory's ``baryon`` density (fg.theories.skyrme)."""
    _need(sim, "baryon", "baryon_number")
    return sim.integral("baryon")


def energy_terms(sim) -> dict:
    """The energy term by term: the integral of each declared density among ``e0``
    (potential), ``e2``, ``e4`` and ``e6`` (two, four and six derivatives), and
    ``"total"``, ``sim.energy()``."""
    terms = {name: sim.integral(name) for name in _DERRICK_POWERS if name in _densities(sim)}
    if not terms:
        raise SpecError(
            f"theory {sim.theory.name!r} declares none of the energy terms e0, e2, e4, e6 "
            f"(its densities: {', '.join(_densities(sim)) or 'none'})"
        )
    terms["total"] = sim.energy()
    return terms


def virial(sim) -> float:
    """Derrick's virial: d E(lambda x) / d lambda at lambda = 1, with the sign that
    reads E2 - E4 + 3 E0 - 3 E6 for the Skyrme model. It vanishes at a
    solution in infinite space; on a lattice it is the discretisation's error (and
    the boundary's), so ``virial(sim) / E`` measures how converged a solution is."""
    terms = energy_terms(sim)
    return -sum(power * terms[name] for name, power in _DERRICK_POWERS.items() if name in terms)


def centre_of_mass(sim, density: str = "energy") -> np.ndarray:
    """The centre of ``density`` (default the energy): sum x rho / sum rho, one
    coordinate per lattice axis."""
    _need(sim, density, "centre_of_mass")
    w = _weights(sim, density)
    total = w.sum()
    if total == 0:
        raise ParameterError(f"the density {density!r} integrates to zero: it has no centre")
    return np.array([float((c * w).sum() / total) for c in sim.lattice.meshgrid()])


def rms_radius(sim, density: str = "energy", centre=None) -> float:
    """sqrt(sum ``|x - c|^2`` rho / sum rho): the root-mean-square radius of
    ``density`` (default the energy; ``"baryon"`` gives the baryon radius of the
    Skyrme literature) about ``centre`` (default the density's own centre)."""
    _need(sim, density, "rms_radius")
    c = centre_of_mass(sim, density) if centre is None else np.asarray(centre, dtype=np.float64)
    coords = sim.lattice.meshgrid()
    if c.shape != (len(coords),):
        raise ParameterError(f"centre must have {len(coords)} coordinates, got {centre!r}")
    w = _weights(sim, density)
    r2 = sum((x - cx) ** 2 for x, cx in zip(coords, c))
    return float(np.sqrt((r2 * w).sum() / w.sum()))


def _gradient(a, lattice):
    """Fourth-order central differences along x, y, z of arrays (..., nz, ny, nx),
    the engine's interior stencil (rolled values on the held layers are masked out)."""
    out = []
    for axis, h in zip((-1, -2, -3), lattice.spacing):
        d = (8 * (np.roll(a, -1, axis) - np.roll(a, 1, axis)) - (np.roll(a, -2, axis) - np.roll(a, 2, axis))) / (12 * h)
        out.append(d)
    return out


def _kinetic(za, zb, grads):
    """2 (za . zb + sum_i [(za . zb) |d_i phi|^2 - (za . d_i phi)(zb . d_i phi)]): the
    Skyrme model's kinetic energy density of two field velocities (4-vectors)."""
    dot = np.sum(za * zb, axis=0)
    total = dot.copy()
    for g in grads:
        total += dot * np.sum(g * g, axis=0) - np.sum(za * g, axis=0) * np.sum(zb * g, axis=0)
    return 2 * total


def inertia_tensors(sim, centre=None):
    """The isospin, spin and mixed moments of inertia (U, V, W), 3x3 arrays, of a
    Skyrme field (fg.theories.skyrme; the sextic term's part is not included).

    A field moving by phi_dot = sum_a (omega_a zeta_a + Omega_a xi_a) has kinetic energy
    ``T = omega U omega / 2 + omega W Omega + Omega V Omega / 2`` with
    ``T = int |phi_dot|^2 + sum_i |phi_dot ^ d_i phi|^2`` (the static energy's two- and
    four-derivative terms with one derivative in time), where zeta_a = (0, e_a x pi)
    isorotates the pions pi = (phi1, phi2, phi3) about axis a and
    xi_a = -(e_a x (x - c)) . grad phi rotates the field in space about ``centre`` c
    (default the energy's centre). For the hedgehog, U = V = -W = Lambda 1 with
    Lambda = (16 pi / 3) int r^2 sin^2 f (1 + f'^2 + sin^2 f / r^2) dr."""
    lat = sim.lattice
    if lat.dims != 3:
        raise LatticeError(f"inertia_tensors needs a 3D lattice, got grid={lat.grid}")
    if len(sim.theory.fields) != 4 or (sim.theory.spec.get("constraint") != "unit_vector"):
        raise SpecError(f"inertia_tensors needs a Skyrme field (a unit 4-vector), not theory {sim.theory.name!r}")
    phi = sim.field.numpy()
    grads = _gradient(phi, lat)
    c = centre_of_mass(sim) if centre is None else np.asarray(centre, dtype=np.float64)
    if c.shape != (3,):
        raise ParameterError(f"centre must be (x, y, z), got {centre!r}")
    rel = [x - cx for x, cx in zip(lat.meshgrid(), c)]
    pions = phi[1:]
    zero = np.zeros_like(phi[0])
    iso, spin = [], []
    for a in range(3):
        e = np.eye(3)[a]
        cross = _cross_const(e, pions)
        iso.append(np.stack([zero, *cross]))
        ex = _cross_const(e, rel)  # e_a x (x - c)
        spin.append(-sum(ex[i] * grads[i] for i in range(3)))
    w = _interior(lat) * _cell(lat)
    U, V, W = (np.empty((3, 3)) for _ in range(3))
    for a in range(3):
        for b in range(3):
            U[a, b] = (_kinetic(iso[a], iso[b], grads) * w).sum()
            V[a, b] = (_kinetic(spin[a], spin[b], grads) * w).sum()
            W[a, b] = (_kinetic(iso[a], spin[b], grads) * w).sum()
    return U, V, W


def _cross_const(e, v):
    """e x v for a constant 3-vector e and a field v = (v1, v2, v3)."""
    return (e[1] * v[2] - e[2] * v[1], e[2] * v[0] - e[0] * v[2], e[0] * v[1] - e[1] * v[0])


def hopf_charge(sim) -> float:
    """The Hopf charge of a unit 3-vector field in 3D (fg.theories.faddeev_skyrme):
    Q = 1/(16 pi^2) int A . B d^3x with B_i = eps_ijk F_jk / 2, F_ij = n . (d_i n x d_j n),
    and curl A = B, solved in Fourier space in the Coulomb gauge (A = i k x B / k^2) on
    the lattice zero-padded to twice its size, so that the potential's periodic images
    stay far. Derivatives are the engine's fourth-order stencils; the held layers of a
    fixed boundary are left out. ``fg.initial.hopfion(a, b)`` has Q = a b."""
    lat = sim.lattice
    if lat.dims != 3:
        raise LatticeError(f"hopf_charge needs a 3D lattice, got grid={lat.grid}")
    if len(sim.theory.fields) != 3 or sim.theory.spec.get("constraint") != "unit_vector":
        raise SpecError(f"hopf_charge needs a unit 3-vector field, not theory {sim.theory.name!r}")
    n = sim.field.numpy()
    dx, dy, dz = _gradient(n, lat)
    mask = _interior(lat)

    def area(u, v):  # n . (u x v)
        return np.sum(n * np.stack(_cross_field(u, v)), axis=0) * mask

    B = np.stack([area(dy, dz), area(dz, dx), area(dx, dy)])
    shape = tuple(2 * s for s in lat.shape)
    Bk = np.fft.fftn(B, s=shape, axes=(1, 2, 3))
    hz, hy, hx = reversed(lat.spacing)
    kz, ky, kx = np.meshgrid(*(2 * np.pi * np.fft.fftfreq(m, d=h) for m, h in zip(shape, (hz, hy, hx))), indexing="ij")
    k = (kx, ky, kz)
    k2 = kx * kx + ky * ky + kz * kz
    k2[0, 0, 0] = 1.0  # the mean of B: no potential
    Ak = 1j * np.stack(_cross_field(k, Bk)) / k2
    Ak[:, 0, 0, 0] = 0.0
    A = np.fft.ifftn(Ak, axes=(1, 2, 3)).real[:, : lat.shape[0], : lat.shape[1], : lat.shape[2]]
    # The sign makes W = Z1 / Z0 (fg.initial.hopfion(1, 1)) charge +1.
    return -float(np.sum(A * B) * _cell(lat) / (16 * np.pi**2))


def _cross_field(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
