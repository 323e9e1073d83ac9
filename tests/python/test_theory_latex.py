"""How a theory reads in Jupyter: the energy and densities keep the vector and complex
operations the theory was written with (fieldgo.frontend.notation), a derived gradient is collected
by second derivative, a long sum continues on further lines, and none of this touches the
generated code."""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo.frontend import notation  # noqa: E402
from fieldgo.jupyter import display as D  # noqa: E402


def rows(doc):
    """The rows of the aligned block of a theory_latex document."""
    body = doc.split(r"\begin{aligned}", 1)[1].split(r"\end{aligned}", 1)[0]
    return [r.strip() for r in body.split(" \\\\\n")]


def block(doc, lhs):
    """The row starting with ``lhs &= `` and its ``&\\quad`` continuation rows."""
    out = []
    for r in rows(doc):
        if out and r.startswith(r"&\quad"):
            out.append(r)
        elif out:
            break
        elif r.startswith(lhs + " &= "):
            out.append(r)
    assert out, f"no row for {lhs}"
    return out


def balanced(tex):
    body = tex.replace(r"\{", "").replace(r"\}", "")
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, tex
    assert depth == 0, tex
    assert body.count(r"\left") == body.count(r"\right"), tex


def variants():
    out = {name: make for name, make in fg.theories.ALL.items()}
    for pot in fg.theories.BABY_SKYRME_POTENTIALS:
        out[f"baby_skyrme[{pot}]"] = lambda pot=pot: fg.theories.baby_skyrme(pot, N=3)
    out["chiral_magnet[neel, no demag]"] = lambda: fg.theories.chiral_magnet("neel", demag=False)
    out["chiral_magnet[heusler]"] = lambda: fg.theories.chiral_magnet("heusler")
    out["liquid_crystal[splay-bend, no depol]"] = lambda: fg.theories.liquid_crystal("splay-bend", depol=False)
    return out


# --- grouping -------------------------------------------------------------------------------


def test_baby_skyrme_reads_as_written():
    t = fg.theories.baby_skyrme()
    e = t.latex()
    assert e == (
        r"\tfrac{1}{2} \left|\partial_{x} \vec{n}\right|^{2}"
        r" + \tfrac{1}{2} \left|\partial_{y} \vec{n}\right|^{2}"
        r" + \tfrac{\kappa^{2}}{2} \left|\partial_{x} \vec{n} \times \partial_{y} \vec{n}\right|^{2}"
        r" + \mathrm{mass}^{2} \left(1 - n_{3}\right)"
    )
    doc = D.theory_latex(t)
    energy = " ".join(block(doc, "e"))
    assert not re.search(r"\\partial_\{[xy]\} n_", energy), "component products in the energy"
    assert energy.count("n_{") == 1  # n_3 of the potential only
    assert r"(n_{1}, n_{2}, n_{3}),\quad \left|\vec{n}\right| = 1" in doc
    charge = " ".join(block(doc, r"\rho_{\text{charge}}"))
    assert charge.endswith(
        r"\tfrac{1}{4 \pi} \vec{n} \cdot"
        r" \left(\partial_{x} \vec{n} \times \partial_{y} \vec{n}\right)"
    )


def test_complex_fields_and_covariant_derivatives_read_as_written():
    doc = D.theory_latex(fg.theories.abelian_higgs())
    energy = " ".join(block(doc, "e"))
    for want in (
        r"\tfrac{1}{2} \left|\left(\partial_{x} - i q a_{x}\right) \psi\right|^{2}",
        r"\tfrac{1}{2} \left(\partial_{x} a_{y} - \partial_{y} a_{x}\right)^{2}",
        r"\tfrac{\mathrm{lam}}{8} \left(u^{2} - \left|\psi\right|^{2}\right)^{2}",
    ):
        assert want in energy, want
    assert r"\psi_{re}" not in energy
    current = " ".join(block(doc, r"\rho_{\text{current\_x}}"))
    assert r"\operatorname{Im}\left(\overline{\psi} \left(\partial_{x} - i q a_{x}\right) \psi\right)" in current


def test_sub_vectors_cross_components_and_max():
    doc = D.theory_latex(fg.theories.chiral_magnet())
    energy = " ".join(block(doc, "e"))
    assert r"\tfrac{1}{2} \left|\partial_{x} \vec{m}\right|^{2}" in energy
    assert r"- \left(\vec{m} \times \partial_{x} \vec{m}\right)_{1}" in energy
    assert r"(m_{1}, m_{2}, m_{3}, \psi),\quad \left|\vec{m}\right| = 1" in doc  # psi is auxiliary
    sky = " ".join(block(doc, r"\rho_{\text{skyrmion\_number}}"))
    assert r"\left|\vec{m}\right|^{3}" in sky
    gl = D.theory_latex(fg.theories.anisotropic_gl())
    assert r"\max\left(0, " in gl and r"\begin{cases}" not in gl
    assert " ".join(block(gl, "e")).endswith("+ e_{0}") and block(gl, "e_{0}")


@pytest.mark.parametrize("name", list(variants()))
def test_every_builtin_theory_shows_what_it_computes(name):
    """Each shown form equals the expanded one the code is generated from (a shown form
    that did not would be replaced by the expanded one: here none is), the LaTeX is
    balanced, and every row parses with matplotlib's mathtext."""
    import matplotlib.mathtext

    theory = variants()[name]()
    st = theory.symbolic()
    shown = notation.show(theory, st)
    assert shown.notation.agrees(shown.energy, st.energy)
    assert shown.energy is not st.energy, "the energy fell back to components"
    for k, d in shown.densities.items():
        assert shown.notation.agrees(d, st.densities[k]), k
    doc = D.theory_latex(theory, gradient=True)
    balanced(doc)
    parser = matplotlib.mathtext.MathTextParser("path")
    for row in rows(doc):
        rhs = row.split("&", 1)[1].lstrip("=").strip()
        parser.parse("$" + rhs.replace(r"\tfrac", r"\frac") + "$", dpi=72)


def test_user_theories_scalar_and_unnamed_vector():
    t = fg.Theory("toy", fields=["u", "v"], params={"m": 1.0})

    @t.energy_density
    def e(s, p):
        return 0.5 * fg.norm2(s.dx) + 0.5 * s.dy.u**2 + 0.5 * s.dy.v**2 + p.m * s.phi.u * s.phi.v

    tex = t.latex()
    assert r"\tfrac{1}{2} \left|\partial_{x} \vec{\phi}\right|^{2}" in tex
    assert r"\tfrac{1}{2} \left(\partial_{y} u\right)^{2}" in tex and "m u v" in tex

    four = fg.Theory("four", fields=["n1", "n2", "n3", "n4"])

    @four.energy_density
    def e4(s, p):  # \vec{n} is all four: a part of them stays in components
        return fg.norm2(s.dx) + fg.norm2(s.dy[0:3])

    assert four.latex() == (
        r"\left|\partial_{x} \vec{n}\right|^{2} + \left(\partial_{y} n_{1}\right)^{2}"
        r" + \left(\partial_{y} n_{2}\right)^{2} + \left(\partial_{y} n_{3}\right)^{2}"
    )

    one = fg.Theory("phi4", fields=["u"], params={"lam": 1.0})

    @one.energy_density
    def e1(s, p):
        return 0.5 * fg.norm2(s.dx) + p.lam / 4 * (s.phi.u**2 - 1) ** 2

    assert one.latex() == (
        r"\tfrac{1}{2} \left(\partial_{x} u\right)^{2}"
        r" + \tfrac{\mathrm{lam}}{4} \left(u^{2} - 1\right)^{2}"
    )


def test_a_shown_form_that_disagrees_falls_back_to_components(monkeypatch):
    monkeypatch.setattr(notation.Notation, "agrees", lambda self, shown, expanded: False)
    e = fg.theories.baby_skyrme().latex()
    assert r"\vec{n}" not in e and r"\left(\partial_{x} n_{1}\right)^{2}" in e


def test_a_display_trace_that_fails_falls_back(monkeypatch):
    def broken(self, result, how, *args):
        raise RuntimeError("display trace bug")

    monkeypatch.setattr(notation.Notation, "annotate", broken)
    doc = D.theory_latex(fg.theories.baby_skyrme(), gradient=True)
    balanced(doc)
    assert r"\left(\partial_{x} n_{1}\right)^{2}" in doc


# --- the generated code does not change -------------------------------------------------------


def test_showing_leaves_the_code_and_later_traces_alone():
    t = fg.theories.baby_skyrme()
    source = t._build({})[1]
    energy = t.symbolic().energy
    D.theory_latex(t, gradient=True)
    t.latex()
    t._generated.clear()
    assert t._build({})[1] == source
    assert t.symbolic().energy == energy
    assert not t.symbolic().energy.atoms(notation.VecNorm2, notation.Cross, notation.Abs2)
    # a theory traced after a display is traced in components
    u = fg.theories.abelian_higgs()
    assert not u.symbolic().energy.atoms(notation.Abs2, notation.Covariant)


# --- collected gradients --------------------------------------------------------------------------


def test_gradient_is_collected_by_second_derivative():
    doc = D.theory_latex(fg.theories.baby_skyrme(), gradient=True)
    g1 = " ".join(block(doc, r"\frac{\delta E}{\delta n_{1}}"))
    assert g1.startswith(
        r"\frac{\delta E}{\delta n_{1}} &= - \left(1 + \kappa^{2}"
        r" \left(\left(\partial_{y} n_{2}\right)^{2} + \left(\partial_{y} n_{3}\right)^{2}\right)\right)"
        r" \partial_{x}^{2} n_{1}"
    )
    for a in (1, 2, 3):  # each second derivative of each component once
        for d in (r"\partial_{x}^{2}", r"\partial_{y}^{2}", r"\partial_{x}\partial_{y}"):
            assert g1.count(f"{d} n_{{{a}}}") == 1, (d, a)
    assert g1.count(r"\kappa") <= 12  # the expanded form repeats kappa^2 in 20 products

    higgs = D.theory_latex(fg.theories.abelian_higgs(), gradient=True)
    g = " ".join(block(higgs, r"\frac{\delta E}{\delta \psi_{re}}"))
    assert g.startswith(r"\frac{\delta E}{\delta \psi_{re}} &= - \nabla^{2} \psi_{re} + q \left(")
    assert r"- \tfrac{\mathrm{lam}}{2} \psi_{re} \left(u^{2} - \psi_{re}^{2} - \psi_{im}^{2}\right)" in g


def test_hand_written_gradient_reads_as_written():
    t = fg.Theory("sigma", fields=["n1", "n2", "n3"], params={"k": 1.0}, constraint=fg.UnitVector())

    @t.energy_density
    def e(s, p):
        return 0.5 * fg.norm2(s.dx) + 0.5 * fg.norm2(s.dy) + p.k * (1 - s.phi.n3)

    @t.gradient
    def g(s, p, out):
        lap = s.dxx + s.dyy
        for a in range(3):
            out[a] = -lap[a]
        out[2] = out[2] - p.k

    doc = D.theory_latex(t, gradient=True)
    assert r"\text{gradient (hand-written)}" in doc
    assert block(doc, r"\frac{\delta E}{\delta n_{3}}")[0].endswith(
        r"- \partial_{x}^{2} n_{3} - \partial_{y}^{2} n_{3} - k"
    )


# --- long sums over lines -------------------------------------------------------------------------


def test_a_long_energy_continues_on_further_lines():
    t = fg.Theory("long", fields=["u"], params={f"c{k}": 1.0 for k in range(24)})

    @t.energy_density
    def e(s, p):
        out = 0.5 * s.dx.u**2
        for k in range(24):
            out = out + p[f"c{k}"] * s.phi.u ** (k + 2)
        return out

    doc = D.theory_latex(t)
    energy = block(doc, "e")
    assert len(energy) >= 3
    assert energy[0].startswith(r"e &= \tfrac{1}{2} \left(\partial_{x} u\right)^{2}")
    assert all(r.startswith(r"&\quad + ") for r in energy[1:])
    for r in energy:  # every line within the budget, no term cut
        assert D._width(r) <= D.LINE_WIDTH + 10, r
    joined = " ".join(energy)
    for k in range(24):
        assert f"c_{{{k}}} u^{{{k + 2}}}" in joined, k
    balanced(doc)


def test_equation_rows():
    terms = [("+", "a" * 30), ("-", "b" * 30), ("+", "c" * 30), ("-", "d" * 30)]
    assert D._equation("e", terms, width=70) == [
        "e &= " + "a" * 30 + " - " + "b" * 30,
        r"&\quad + " + "c" * 30 + " - " + "d" * 30,
    ]
    assert D._equation("e", [("-", "x")]) == ["e &= - x"]
    assert D._equation("e", []) == ["e &= 0"]
    # a term wider than a line gets a line of its own
    assert D._equation("e", [("+", "y"), ("+", "z" * 200), ("+", "w")], width=70) == [
        "e &= y",
        r"&\quad + " + "z" * 200,
        r"&\quad + w",
    ]
