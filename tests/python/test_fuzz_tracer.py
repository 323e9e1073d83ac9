"""Fuzzing the tracer: random expressions built from fieldgo's helpers are traced to
C and compiled, and must agree with the same Python run on plain floats.

Each example is a fresh theory, so each costs one C compilation; CI runs a short
campaign (FIELDGO_FUZZ_EXAMPLES, default 30). docs/robustness.md records a long one.
"""

import math
import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fieldgo as fg  # noqa: E402

EXAMPLES = int(os.environ.get("FIELDGO_FUZZ_EXAMPLES", "30"))
FIELDS = ["u", "v", "w"]

leaves = st.one_of(
    st.tuples(st.just("phi"), st.integers(0, 2)),
    st.tuples(st.just("dx"), st.integers(0, 2)),
    st.tuples(st.just("dy"), st.integers(0, 2)),
    st.tuples(st.just("coord"), st.sampled_from(["x", "y"])),
    st.tuples(st.just("param"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("const"), st.floats(-3, 3, allow_nan=False).map(lambda c: round(c, 3))),
)

UNARY = ["neg", "sin", "cos", "exp_sin", "sqrt1p", "log1p", "abs", "square", "cube", "tanh_like"]
BINARY = ["add", "sub", "mul", "div1p", "atan2", "min", "max", "where", "pow_int"]


def trees(depth=4):
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(st.sampled_from(UNARY), sub),
            st.tuples(st.sampled_from(BINARY), sub, sub),
        ),
        max_leaves=12,
    )


def build(t, s, p):
    """Evaluate tree t with fieldgo's helpers: traced stand-ins or plain floats alike."""
    kind = t[0]
    if kind in ("phi", "dx", "dy"):
        return getattr(s, kind)[t[1]]
    if kind == "coord":
        return getattr(s, t[1])
    if kind == "param":
        return getattr(p, t[1])
    if kind == "const":
        return t[1]
    a = build(t[1], s, p)
    if kind == "neg":
        return -a
    if kind == "sin":
        return fg.sin(a)
    if kind == "cos":
        return fg.cos(a)
    if kind == "exp_sin":
        return fg.exp(fg.sin(a))
    if kind == "sqrt1p":
        return fg.sqrt(1 + a * a)
    if kind == "log1p":
        return fg.log(1 + a * a)
    if kind == "abs":
        return fg.abs(a)
    if kind == "square":
        return a**2
    if kind == "cube":
        return a**3
    if kind == "tanh_like":
        return a / fg.sqrt(1 + a * a)
    b = build(t[2], s, p)
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "div1p":
        return a / (1 + b * b)
    if kind == "atan2":
        return fg.atan2(a, 2 + fg.sin(b))
    if kind == "min":
        return fg.min(a, b)
    if kind == "max":
        return fg.max(a, b)
    if kind == "where":
        return fg.where(a > b, a * b, a - b)
    if kind == "pow_int":
        return fg.pow(1 + a * a, 2) + b
    raise AssertionError(kind)


def magnitude(t, s, p):
    """A scale for the rounding error of t: the same tree with every value replaced
    by its absolute value and subtraction by addition bounds |intermediate| sums."""
    return max(1.0, abs(build(t, s, p)))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(), seed=st.integers(0, 2**32 - 1))
def test_traced_c_equals_plain_python(tree, seed, tmp_path_factory):
    os.environ["FIELDGO_CACHE"] = str(tmp_path_factory.getbasetemp() / "fuzzcache")
    th = fg.Theory("fuzz", fields=FIELDS, params={"a": 0.7, "b": -1.3})

    @th.energy_density
    def energy(s, p):
        return build(tree, s, p)

    rng = np.random.default_rng(seed)
    state = {k: rng.uniform(-2, 2, 3) for k in ("phi", "dx", "dy")}
    x, y = rng.uniform(-5, 5, 2)
    params = {"a": float(rng.uniform(-2, 2)), "b": float(rng.uniform(-2, 2))}
    c = th.at(**state, x=x, y=y, **params)
    py = th.evaluate(**state, x=x, y=y, **params)
    scale = max(1.0, abs(py.energy))
    # the generated C and Python's floats follow the same operations up to
    # reassociation by common-subexpression elimination: agree to ~1e3 ulps
    assert math.isfinite(c.energy)
    assert abs(c.energy - py.energy) <= 1e-12 * scale * 10, (tree, c.energy, py.energy)
    # the symbolic partials agree with central differences of the plain Python
    h = 1e-6
    for slot, grad in (("phi", c.de_dphi), ("dx", c.de_ddx), ("dy", c.de_ddy)):
        for a in range(3):
            up = {k: v.copy() for k, v in state.items()}
            dn = {k: v.copy() for k, v in state.items()}
            up[slot][a] += h
            dn[slot][a] -= h
            eu = th.evaluate(**up, x=x, y=y, **params).energy
            ed = th.evaluate(**dn, x=x, y=y, **params).energy
            fd = (eu - ed) / (2 * h)
            # min/max/abs/where have kinks; skip a component whose difference
            # straddles one (the one-sided slopes disagree)
            e0 = py.energy
            left, right = (e0 - ed) / h, (eu - e0) / h
            if abs(left - right) > 1e-3 * max(1.0, abs(fd)):
                continue
            assert abs(grad[a] - fd) <= 1e-5 * max(1.0, abs(fd), scale), (tree, slot, a, grad[a], fd)
