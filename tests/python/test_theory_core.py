"""Theory API: spec and point-source ABI, parameters (dynamic vs static), theory.at
validation, the compile cache and compiler errors, helpers, LaTeX."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo.frontend import native  # noqa: E402

HERE = Path(__file__).resolve()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    # A fresh cache per test, so compile counts do not depend on earlier runs.
    monkeypatch.setenv("FIELDGO_CACHE", str(tmp_path / "cache"))
    native._loaded.clear()


def polynomial_theory():
    th = fg.Theory("poly", fields=["u", "v"], params={"k": 2.0, "power": fg.Static(3)})

    @th.energy_density
    def energy(s, p):
        return 0.5 * fg.norm2(s.dx) + 0.5 * fg.norm2(s.dy) + p.k * s.phi.u**p.power + s.x * s.phi.v

    @th.density("u2")
    def u2(s, p):
        return s.phi["u"] ** 2 + s.dxx[0]

    return th


def test_spec_matches_the_abi():
    th = polynomial_theory()
    assert th.spec == {
        "name": "poly",
        "fields": ["u", "v"],
        "params": ["k"],
        "densities": ["u2"],
        "constraint": "",
        "gradient": "derived",
    }
    assert json.loads(th.spec_json()) == th.spec
    assert fg.theories.baby_skyrme().spec["constraint"] == "unit_vector"


def test_point_source_defines_the_abi_in_order():
    src = polynomial_theory().source
    order = [
        "#define FG_FUNC static inline",
        "#define FG_NCOMP   2",
        "#define FG_NPARAMS 1",
        "#define FG_NDENS   1",
        "} fg_site;",
        "typedef struct { double k; } fg_params;",
        "FG_FUNC double fg_energy(const fg_site* s, const fg_params* p)",
        "FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,",
        "FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out)",
        "FG_FUNC double fg_density_u2(const fg_site* s, const fg_params* p)",
        "FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p)",
    ]
    positions = [src.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert "#ifndef FG_FUNC" in src
    # static parameter folded, dynamic read from the struct
    assert "p->k" in src and "power" not in src.split("*/")[-1].replace("p->power", "")
    assert re.search(r"\bprintf\b|\bstatic double\b", src) is None  # no I/O, no globals


def test_no_dynamic_params_gives_the_placeholder_struct():
    th = fg.Theory("free", fields=["f"])
    th.energy_density(lambda s, p: 0.5 * s.dx.f**2)
    assert "typedef struct { double unused_; } fg_params;" in th.source
    assert "#define FG_NPARAMS 0" in th.source
    assert th.at(dx=[3.0]).energy == 4.5


def test_line_directives_point_at_the_user_function():
    th = polynomial_theory()
    def_line = next(i for i, t in enumerate(HERE.read_text().splitlines(), 1) if t.strip() == "def energy(s, p):")
    assert f'#line {def_line} "{HERE}"' in th.source
    # and back to the generated file's own numbering afterwards
    lines = th.source.splitlines()
    for i, text in enumerate(lines, 1):
        if text.startswith("#line") and "fieldgo_point.c" in text:
            assert int(text.split()[1]) == i + 1


def test_compiler_error_points_at_the_user_line():
    th = polynomial_theory()
    def_line = next(i for i, t in enumerate(HERE.read_text().splitlines(), 1) if t.strip() == "def energy(s, p):")
    broken = th.source.replace("return ", "return undeclared_thing + ", 1)
    with pytest.raises(fg.CompileError) as ei:
        native.load(broken)
    assert f"{HERE}:{def_line}" in str(ei.value)
    assert "undeclared_thing" in ei.value.log


def test_missing_compiler_is_a_backend_error(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/no-such-cc")
    with pytest.raises(fg.BackendError, match="no C compiler"):
        polynomial_theory().at(phi=[0.1, 0.2])


def test_dynamic_parameter_change_does_not_recompile_static_does():
    th = polynomial_theory()
    site = dict(phi=[0.5, 0.25], dx=[0.1, 0.2], dy=[0.3, 0.4], x=0.75)
    before = native.compile_count
    r1 = th.at(**site)
    assert native.compile_count == before + 1
    source = th.source
    r2 = th.at(**site, k=5.0)
    th.set_params(k=7.0)
    r3 = th.at(**site)
    assert native.compile_count == before + 1  # no recompilation
    assert th.source == source  # no regeneration
    assert r1.energy == pytest.approx(0.5 * 0.05 + 0.5 * 0.25 + 2.0 * 0.125 + 0.75 * 0.25)
    assert r2.energy - r1.energy == pytest.approx(3.0 * 0.125)
    assert r3.energy - r1.energy == pytest.approx(5.0 * 0.125)

    r4 = th.at(**site, power=2)  # static: new code, one compile
    assert native.compile_count == before + 2
    assert r4.energy == pytest.approx(r3.energy - 7.0 * 0.125 + 7.0 * 0.25)
    th.at(**site, power=2, k=1.0)
    assert native.compile_count == before + 2  # cached per static value
    th.set_params(power=4)
    assert th.source != source
    th.at(**site)
    assert native.compile_count == before + 3


def test_disk_cache_is_reused_across_processes_worth_of_state():
    th = polynomial_theory()
    th.at(phi=[0.1, 0.1])
    files = list(Path(native.cache_dir()).glob("*.so"))
    assert len(files) == 1 and not list(Path(native.cache_dir()).glob(".tmp-*"))
    native._loaded.clear()  # as if a new process
    before = native.compile_count
    th.at(phi=[0.2, 0.1])
    assert native.compile_count == before


def test_at_validates_its_inputs():
    th = polynomial_theory()
    with pytest.raises(fg.ShapeError):
        th.at(phi=[1.0, 2.0, 3.0])
    with pytest.raises(fg.ShapeError):
        th.at(dx=[[1.0, 2.0]])
    with pytest.raises(fg.ParameterError, match="finite"):
        th.at(phi=[1.0, 2.0], k=float("nan"))
    with pytest.raises(fg.ParameterError, match="unknown parameter 'kappa'"):
        th.at(phi=[1.0, 2.0], kappa=1.0)
    with pytest.raises(fg.ParameterError):
        th.set_params(nope=1.0)
    with pytest.raises(fg.ParameterError):
        fg.Theory("t", fields=["a"], params={"k": float("inf")})


def test_spec_errors():
    with pytest.raises(fg.SpecError):
        fg.Theory("t", fields=["a", "a"])
    with pytest.raises(fg.SpecError):
        fg.Theory("t", fields=["not valid"])
    with pytest.raises(fg.SpecError):
        fg.Theory("t", fields=["a"], params={"double": 1.0})
    th = fg.Theory("t", fields=["a"])
    with pytest.raises(fg.SpecError, match="energy_density"):
        _ = th.source
    with pytest.raises(fg.SpecError):
        th.density("bad-name")


def test_partials_and_gradient_of_a_coordinate_dependent_theory():
    """e = 1/2 |d u|^2 + x y u^2 / 2: explicit x, y dependence enters D_x, D_y."""
    th = fg.Theory("xy", fields=["u"], params={"c": 1.5})

    @th.energy_density
    def energy(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2) * (1 + p.c * s.x) + 0.5 * s.x * s.y * s.phi.u**2

    x, y, u, ux, uy, uxx, uyy = 0.3, -0.4, 0.7, 0.2, -0.5, 1.1, 0.9
    r = th.at(phi=[u], dx=[ux], dy=[uy], dxx=[uxx], dyy=[uyy], x=x, y=y)
    w = 1 + 1.5 * x
    assert r.de_dphi[0] == pytest.approx(x * y * u, rel=1e-14)
    assert r.de_ddx[0] == pytest.approx(w * ux, rel=1e-14)
    # D_x (w u_x) = 1.5 u_x + w u_xx ; D_y (w u_y) = w u_yy
    assert r.gradient[0] == pytest.approx(x * y * u - (1.5 * ux + w * uxx) - w * uyy, rel=1e-14)


def test_helpers_where_min_max_abs_atan2_and_math():
    th = fg.Theory("helpers", fields=["a", "b"], params={"k": 1.0})

    @th.energy_density
    def energy(s, p):
        a, b = s.phi.a, s.phi.b
        return (
            fg.where(a > b, a * a, b * b * p.k)
            + fg.max(a, b)
            - fg.min(a, 2.0)
            + fg.abs(a - b)
            + fg.atan2(b, a)
            + fg.sqrt(1 + a * a)
            + fg.exp(-b * b)
            + fg.log(2 + fg.sin(a))
            + fg.cos(b) * fg.tan(0.3 * a)
            + fg.pow(1 + a * a, 1.5)
            + (1 + b * b) ** 0.25
            + fg.norm(s.dx)
        )

    rng = np.random.default_rng(3)
    for _ in range(30):
        st = {k: rng.normal(size=2) for k in ("phi", "dx", "dy")}
        c, py = th.at(**st, k=1.7), th.evaluate(**st, k=1.7)
        assert c.energy == pytest.approx(py.energy, rel=1e-13)
        # the derivative of the ternary is the ternary of the derivatives
        a, b = st["phi"]
        eps = 1e-6
        num = (
            th.evaluate(phi=[a + eps, b], dx=st["dx"], k=1.7).energy
            - th.evaluate(phi=[a - eps, b], dx=st["dx"], k=1.7).energy
        ) / (2 * eps)
        assert c.de_dphi[0] == pytest.approx(num, rel=1e-6, abs=1e-6)


def test_complex_helpers_and_covariant_derivative():
    psi_re, psi_im, ax, ay, q = 0.3, -0.8, 0.25, -0.6, 1.7
    dpsi_x = complex(0.4, 0.9)
    site = dict(phi=[psi_re, psi_im, ax, ay], dx=[0.4, 0.9, 0.0, 0.0], dy=[0.0, 0.0, 0.0, 0.0])

    th = fg.Theory("cov", fields=["psi_re", "psi_im", "a_x", "a_y"], params={"q": q})

    @th.energy_density
    def energy(s, p):
        psi = fg.complex_field(s, "psi_re", "psi_im")
        d_x, d_y = fg.covariant(psi, (s.phi.a_x, s.phi.a_y), p.q)
        z = psi.value * psi.value.conj() + 2 - fg.complex(1.0, 1.0) / psi.value
        return fg.norm2(d_x) + abs(psi.value) + z.real + (psi.value**3).imag

    psi = complex(psi_re, psi_im)
    d_x = dpsi_x - 1j * q * ax * psi
    z = psi * psi.conjugate() + 2 - (1 + 1j) / psi
    want = abs(d_x) ** 2 + abs(psi) + z.real + (psi**3).imag
    assert th.at(**site).energy == pytest.approx(want, rel=1e-14)
    assert th.evaluate(**site).energy == pytest.approx(want, rel=1e-14)


def test_vectors_address_by_index_name_attribute_and_slice():
    th = fg.Theory("vec", fields=["m1", "m2", "m3", "w"])

    @th.energy_density
    def energy(s, p):
        m = s.phi[0:3]
        assert m.names == ("m1", "m2", "m3")
        sub = s.phi["m1", "w"]
        return fg.dot(m, s.phi[["m1", "m2", "m3"]]) + 10 * sub.w + 100 * s.phi[-1] + s.phi.m2

    r = th.at(phi=[1.0, 2.0, 3.0, 4.0])
    assert r.energy == 14.0 + 40.0 + 400.0 + 2.0


def test_latex_of_the_energy_density():
    tex = fg.theories.baby_skyrme().latex()
    assert r"\kappa^{2}" in tex and r"\partial_{x} \vec{n}" in tex and r"\mathrm{mass}^{2}" in tex
    assert fg.theories.baby_skyrme()._repr_latex_().startswith("$")


def test_symbolic_form_is_sympy():
    st = fg.theories.baby_skyrme().symbolic()
    assert isinstance(st.energy, sympy.Expr)
    assert st.gradient_kind == "derived" and len(st.gradient) == 3
    assert set(st.densities) == {"charge"}


def test_broken_potential_static_power_changes_code():
    th = fg.theories.baby_skyrme("broken", N=2)
    assert th.static_params == {"N": 2}
    src2 = th.source
    th.set_params(N=4)
    assert th.source != src2
    n = np.array([0.6, 0.0, 0.8])
    # V = (1 - n3) |1 - (n1 + i n2)^N|^2 with mass = 1; gradients zero
    assert th.at(phi=n).energy == pytest.approx(0.2 * (1 - 0.6**4) ** 2, rel=1e-14)
    assert th.at(phi=n, N=2).energy == pytest.approx(0.2 * (1 - 0.6**2) ** 2, rel=1e-14)


def test_powers_in_denominators_and_nested_min_compile_correctly():
    # Cases the tracer fuzzer (test_fuzz_tracer.py) exposes: x/y**2 must not print as
    # x/y*y, nor nested min/max as a C `true`.
    th = fg.Theory("rational", fields=["u", "v"])

    @th.energy_density
    def energy(s, p):
        a = s.phi.u
        return a / (1 + a * a) + fg.min(a, fg.min(a, s.phi.v)) + 1 / (2 + a) ** 3

    r = th.at(phi=[0.5, 0.2])
    assert r.energy == pytest.approx(0.5 / 1.25 + 0.2 + 1 / 2.5**3, rel=1e-14)
    want = (1 - 0.25) / 1.25**2 - 3 / 2.5**4
    assert r.de_dphi[0] == pytest.approx(want, rel=1e-14)
    assert r.de_dphi[1] == pytest.approx(1.0, rel=1e-14)  # d min(u, v)/dv where v < u
