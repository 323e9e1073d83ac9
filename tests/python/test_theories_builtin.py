"""Every built-in theory: generated C partials = SymPy's derivatives, and generated C =
the Python functions run on plain floats.

Tolerances are relative to a scale that cannot vanish through cancellation:
``scale = max(1, |ref|, sum of |terms|)`` where the terms are the top-level summands of
the reference expression evaluated at the state (rounding error is proportional to
them, not to their possibly cancelling sum).
"""

import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402

THEORIES = {
    **{
        f"baby_skyrme[{pot}]": (lambda pot=pot: fg.theories.baby_skyrme(pot, N=3))
        for pot in fg.theories.BABY_SKYRME_POTENTIALS
    },
    **{name: f for name, f in fg.theories.ALL.items() if name != "baby_skyrme"},
    "skyrme[sextic]": lambda: fg.theories.skyrme(mass=1.0, c6=0.5),
    "anisotropic_gl_3d": lambda: fg.theories.anisotropic_gl_3d(gamma_x=1.5, gamma_y=0.8, gamma_z=0.25),
}
STATES = 25


Z_SLOTS = ("dz", "dzz", "dxz", "dyz")


def three_d(theory):
    return "\n#define FG_DIM     3" in theory.source


def random_state(theory, rng):
    n = len(theory.fields)
    slots = ("phi", "dx", "dy", "dxx", "dyy", "dxy") + (Z_SLOTS if three_d(theory) else ())
    state = {k: rng.normal(size=n) for k in slots}
    state["x"], state["y"] = rng.uniform(-2, 2, size=2)
    if three_d(theory):
        state["z"] = rng.uniform(-2, 2)
    params = {k: v * rng.uniform(0.8, 1.2) for k, v in theory.params.items() if k in theory.dynamic_params}
    return state, params


def substitutions(theory, sym, state, params):
    subs = {}
    for slot in ("phi", "dx", "dy", "dxx", "dyy", "dxy"):
        for a, s in enumerate(sym.slot[slot]):
            subs[s] = float(state[slot][a])
    for slot in Z_SLOTS:
        for a, s in enumerate(sym.zslot[slot]):
            subs[s] = float(state.get(slot, np.zeros(len(theory.fields)))[a])
    subs[sym.x], subs[sym.y], subs[sym.z] = float(state["x"]), float(state["y"]), float(state.get("z", 0.0))
    for k, s in sym.params.items():
        subs[s] = float(params[k])
    return subs


class Reference:
    """Evaluate SymPy expressions in 40-digit mpmath, with their term-magnitude scale."""

    def __init__(self, symbols, exprs):
        self.symbols = list(symbols)
        self.fns = []
        for e in exprs:
            terms = list(e.args) if isinstance(e, sympy.Add) else [e]
            self.fns.append(
                (sympy.lambdify(self.symbols, e, "mpmath"), [sympy.lambdify(self.symbols, t, "mpmath") for t in terms])
            )

    def __call__(self, subs):
        args = [mpmath.mpf(subs[s]) for s in self.symbols]
        out = []
        with mpmath.workdps(40):
            for f, terms in self.fns:
                value = float(f(*args))
                scale = max(1.0, abs(value), float(sum(abs(t(*args)) for t in terms)))
                out.append((value, scale))
        return out


@pytest.fixture(scope="module", params=sorted(THEORIES))
def theory(request):
    return THEORIES[request.param]()


def test_partials_equal_sympy_derivatives(theory):
    """fg_partials (CSE'd C) against an independent sympy.diff of the traced energy."""
    st = theory.symbolic()
    sym = st.symbols
    variables = [*sym.phi, *sym.dx, *sym.dy] + ([*sym.dz] if three_d(theory) else [])
    exprs = [sympy.diff(st.energy, v) for v in variables]
    all_symbols = sorted(set().union(*(e.free_symbols for e in exprs), st.energy.free_symbols), key=str)
    ref = Reference(all_symbols, exprs)
    rng = np.random.default_rng(1234)
    worst = 0.0
    for _ in range(STATES):
        state, params = random_state(theory, rng)
        got = theory.at(**state, **params)
        values = np.concatenate([got.de_dphi, got.de_ddx, got.de_ddy] + ([got.de_ddz] if three_d(theory) else []))
        for v, (r, scale) in zip(values, ref(substitutions(theory, sym, state, params))):
            worst = max(worst, abs(v - r) / scale)
    assert worst <= 1e-13, worst


def test_generated_c_equals_python_on_floats(theory):
    """theory.at (C) against theory.evaluate (the user's Python run on floats)."""
    st = theory.symbolic()
    sym = st.symbols
    exprs = [st.energy, *st.densities.values()]
    all_symbols = sorted(set().union(*(e.free_symbols for e in exprs)) | {sym.x}, key=str)
    ref = Reference(all_symbols, exprs)
    rng = np.random.default_rng(99)
    worst = 0.0
    for _ in range(STATES):
        state, params = random_state(theory, rng)
        c = theory.at(**state, **params)
        py = theory.evaluate(**state, **params)
        scales = [s for _, s in ref(substitutions(theory, sym, state, params))]
        pairs = [(c.energy, py.energy)] + [(c.densities[k], py.densities[k]) for k in st.densities]
        assert set(c.densities) == set(py.densities) == set(theory.spec["densities"])
        for (a, b), scale in zip(pairs, scales):
            worst = max(worst, abs(a - b) / scale)
    assert worst <= 1e-13, worst


def test_builtin_theories_follow_the_spec(theory):
    spec = theory.spec
    assert spec["fields"] == theory.fields
    assert spec["gradient"] == "derived"
    assert set(spec["params"]) == set(theory.dynamic_params)
    assert spec["constraint"] in ("", "unit_vector")
    assert f"#define FG_NCOMP   {len(theory.fields)}" in theory.source
    for name in spec["densities"]:
        assert f"fg_density_{name}(" in theory.source


def test_builtin_docstrings_give_the_energy_functional():
    for name, factory in fg.theories.ALL.items():
        doc = factory.__doc__ or ""
        assert "e =" in doc, name


def test_abelian_higgs_vortex_number_density_is_q_b_over_2pi():
    th = fg.theories.abelian_higgs()
    state = dict(phi=[0.3, -0.2, 0.1, 0.4], dx=[0.0, 0.0, 0.5, 1.25], dy=[0.0, 0.0, -0.75, 0.1])
    r = th.at(**state, q=2.0)
    b = 1.25 - (-0.75)
    assert r.densities["flux"] == pytest.approx(b, rel=1e-15)
    assert r.densities["vortex_number"] == pytest.approx(2.0 * b / (2 * np.pi), rel=1e-15)


def test_abelian_higgs_supercurrent_is_minus_de_da():
    """J_i = q Im(conj(psi) D_i psi) equals -de/dA_i of the energy (B-independent part)."""
    th = fg.theories.abelian_higgs()
    rng = np.random.default_rng(5)
    for _ in range(20):
        state = {k: rng.normal(size=4) for k in ("phi", "dx", "dy")}
        r = th.at(**state, q=1.3)
        assert r.densities["current_x"] == pytest.approx(-r.de_dphi[2], rel=1e-12, abs=1e-13)
        assert r.densities["current_y"] == pytest.approx(-r.de_dphi[3], rel=1e-12, abs=1e-13)


def test_abelian_higgs_vacuum_has_zero_energy():
    th = fg.theories.abelian_higgs()
    r = th.at(phi=[np.cos(0.7), np.sin(0.7), 0.0, 0.0])
    assert r.energy == pytest.approx(0.0, abs=1e-15)
    assert np.allclose(r.gradient, 0.0, atol=1e-15)


def test_unknown_baby_skyrme_potential_is_a_spec_error():
    with pytest.raises(fg.SpecError, match="unknown Baby Skyrme potential"):
        fg.theories.baby_skyrme("quartic")
