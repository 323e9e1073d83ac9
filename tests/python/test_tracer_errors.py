"""Unsupported Python in traced functions raises TraceError at the user's line.

Each case marks its offending line with a `# <-- name` comment; the test checks that
the TraceError names the construct and this file at exactly that line.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo import TraceError  # noqa: E402

HERE = Path(__file__).resolve()


def line_of(marker: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), start=1):
        if text.rstrip().endswith("# <-- " + marker):
            return i
    raise AssertionError(f"marker {marker!r} not found")


def new_theory():
    return fg.Theory("t", fields=["n1", "n2", "n3"], params={"kappa": 1.0, "N": fg.Static(2)})


def trace_energy(fn):
    th = new_theory()
    th.energy_density(fn)
    return th.source


def check(exc_info, marker, *words):
    err = exc_info.value
    msg = str(err)
    assert f"{HERE}:{line_of(marker)}" in msg, msg
    assert err.lineno == line_of(marker)
    for w in words:
        assert w in msg, msg


def test_if_on_traced_comparison():
    def e(s, p):
        if s.phi[0] > 0:  # <-- if
            return s.phi[0]
        return s.phi[1]

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "if", "`if` statement", "comparison", "fg.where")


def test_if_on_traced_value_truthiness():
    def e(s, p):
        v = s.phi.n1 * p.kappa
        if v:  # <-- if-truthy
            return v
        return 0.0

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "if-truthy", "`if` statement")


def test_while_loop_on_traced_value():
    def e(s, p):
        v = s.phi[0]
        while v < 10:  # <-- while
            v = v * 2
        return v

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "while", "`while` loop")


def test_numpy_ufunc_on_traced_value():
    def e(s, p):
        return np.sin(s.phi[0])  # <-- np.sin

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "np.sin", "numpy function np.sin", "fg.sin")


def test_numpy_array_function_on_vectors():
    def e(s, p):
        return np.dot(s.dx, s.dy)  # <-- np.dot

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "np.dot", "numpy function np.dot")


def test_unknown_function_math_sin():
    def e(s, p):
        return math.sin(s.phi[0])  # <-- math.sin

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "math.sin", "unknown function math.sin()", "fg.sin")


def test_float_of_traced_value():
    def e(s, p):
        return float(s.phi[0]) * 2  # <-- float

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "float", "float() of a traced value")


def test_int_of_traced_value_as_loop_bound():
    def e(s, p):
        total = 0.0
        for k in range(s.phi[0]):  # <-- range
            total = total + k
        return total

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "range", "range() over a traced value")


def test_iteration_over_traced_scalar():
    def e(s, p):
        total = 0.0
        for v in s.phi.n2:  # <-- iterate
            total = total + v
        return total

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "iterate", "iteration over a traced scalar")


def test_assigning_attribute_on_site():
    def e(s, p):
        s.energy = 1.0  # <-- site-attr
        return s.phi[0]

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "site-attr", "assigning attribute s.energy")


def test_assigning_parameter():
    def e(s, p):
        p.kappa = 2.0  # <-- param-attr
        return s.phi[0]

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "param-attr", "assigning attribute p.kappa")


def test_assigning_site_component():
    def e(s, p):
        s.phi[0] = 1.0  # <-- site-item
        return s.phi[0]

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "site-item", "read-only")


def test_unknown_parameter_name():
    def e(s, p):
        return s.phi[0] * p.lam  # <-- unknown-param

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "unknown-param", "unknown parameter name 'lam'", "kappa")


def test_unknown_component_name():
    def e(s, p):
        return s.phi.n7  # <-- unknown-comp

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "unknown-comp", "unknown component name 'n7'", "n1, n2, n3")


def test_unknown_component_key():
    def e(s, p):
        return s.dx["m1"]  # <-- unknown-key

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "unknown-key", "unknown component name 'm1'")


def test_component_index_out_of_range():
    def e(s, p):
        return s.phi[3]  # <-- out-of-range

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "out-of-range", "component index 3 out of range")


def test_returning_a_vector():
    def e(s, p):
        v = s.phi * 2.0
        return v  # <-- return-vector

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "return-vector", "must return a real scalar", "Vector")


def test_missing_return():
    def e(s, p):
        s.phi[0] * 2.0  # <-- no-return

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    # the implicit `return None` is reported on the function's last line
    check(ei, "no-return", "None")


def test_wrong_arity_at_decoration():
    th = new_theory()
    with pytest.raises(TraceError) as ei:

        @th.energy_density
        def e(s, p, extra):  # <-- arity
            return s.phi[0]

    check(ei, "arity", "wrong arity", "(s, p)")


def test_wrong_arity_of_gradient():
    th = new_theory()
    with pytest.raises(TraceError) as ei:

        @th.gradient
        def g(s, p):  # <-- arity-gradient
            pass

    check(ei, "arity-gradient", "wrong arity", "(s, p, out)")


CAPTURED = []


def test_mutating_captured_list():
    th = new_theory()
    with pytest.raises(TraceError) as ei:

        @th.energy_density
        def e(s, p):
            CAPTURED.append(s.phi[0])  # <-- captured-append
            return s.phi[0]

    check(ei, "captured-append", "mutating captured state", "CAPTURED.append")
    assert CAPTURED == []


def test_mutating_captured_dict_item():
    cache = {}
    th = new_theory()
    with pytest.raises(TraceError) as ei:

        @th.density("d")
        def d(s, p):
            cache["x"] = s.phi[0]  # <-- captured-item
            return s.phi[0]

    check(ei, "captured-item", "mutating captured state")
    assert cache == {}


def test_global_statement():
    th = new_theory()
    with pytest.raises(TraceError) as ei:

        @th.energy_density
        def e(s, p):
            global CAPTURED  # <-- global
            return s.phi[0]

    check(ei, "global", "mutating captured state", "global CAPTURED")


def test_and_or_on_traced_values():
    def e(s, p):
        return (s.phi[0] > 0) and s.phi[1]  # <-- and

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "and", "`and`/`or`")


def test_conditional_expression():
    def e(s, p):
        return s.phi[0] if s.phi[1] > 0 else s.phi[2]  # <-- ifexp

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "ifexp", "conditional expression")


def test_second_derivative_in_energy_density():
    def e(s, p):
        return s.phi[0] * s.dxx[0]  # <-- second-derivative

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "second-derivative", "second derivative s.dxx")


def test_builtin_max_on_traced_values():
    def e(s, p):
        return max(s.phi[0], s.phi[1])  # <-- builtin-max

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "builtin-max", "fg.max")


def test_error_inside_a_helper_points_at_the_helper_line():
    def helper(v):
        return math.exp(v)  # <-- helper

    def e(s, p):
        return helper(s.phi[0])

    with pytest.raises(TraceError) as ei:
        trace_energy(e)
    check(ei, "helper", "math.exp")


def test_static_values_branch_and_loop_freely():
    """The contrast case: Python control flow over static values unrolls at trace time."""
    th = new_theory()

    @th.energy_density
    def e(s, p):
        total = 0.0
        for a in range(len(s.phi)):
            if a % 2 == 0:
                total = total + s.phi[a] ** p.N
        return total

    sym = th.symbolic()
    x0, x2 = sym.symbols.phi[0], sym.symbols.phi[2]
    assert sym.energy == x0**2 + x2**2
