"""The Jupyter extension: formatters give valid HTML, LaTeX and PNG for each object
kind; the %fieldgo magic's commands; progress defaults."""

import html.parser
import io
import os
import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import fieldgo as fg  # noqa: E402
from fieldgo.jupyter import display as D  # noqa: E402
from fieldgo.jupyter import magics, progress  # noqa: E402

IPython = pytest.importorskip("IPython")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base", "wbr", "source"}


class StrictHTML(html.parser.HTMLParser):
    """Fails on an end tag that does not close the innermost open element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(doc):
    p = StrictHTML()
    p.feed(doc)
    p.close()
    assert not p.errors, p.errors
    assert not p.stack, f"unclosed: {p.stack}"
    return p


def check_latex(doc):
    assert doc.strip(), "empty LaTeX"
    body = doc.replace(r"\{", "").replace(r"\}", "")
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a } closes nothing"
    assert depth == 0, "unbalanced braces"
    assert body.count(r"\left") == body.count(r"\right")
    assert re.findall(r"\\begin\{(\w+)\}", body) == re.findall(r"\\end\{(\w+)\}", body)[::-1]
    assert doc.count("$$") % 2 == 0


def check_png(data):
    assert isinstance(data, bytes) and data.startswith(PNG_MAGIC)
    from PIL import Image

    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.width > 100 and img.height > 100
    arr = np.asarray(img)
    assert arr.std() > 1, "a blank picture"


def check_png_mpl(data):
    import matplotlib.image

    arr = matplotlib.image.imread(io.BytesIO(data), format="png")
    assert arr.ndim == 3 and arr.shape[0] > 100


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "fieldgo")
    yield ip
    ip.run_line_magic("unload_ext", "fieldgo")


@pytest.fixture(scope="module")
def sim():
    theory = fg.theories.baby_skyrme()
    s = fg.Simulation(theory, grid=(48, 48), spacing=0.4, boundary="fixed")
    s.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    s.minimize(tol=1e-4, max_steps=300, check_every=5, progress=False)
    yield s
    s.close()


def formatted(shell, obj):
    data, _ = shell.display_formatter.format(obj)
    return data


def test_theory_latex_through_the_shell(shell):
    theory = fg.theories.baby_skyrme()
    data = formatted(shell, theory)
    doc = data["text/latex"]
    check_latex(doc)
    assert r"\kappa" in doc and r"\left|\partial_{x} \vec{n}\right|^{2}" in doc and r"\mathrm{mass}" in doc
    assert r"\rho_{\text{charge}}" in doc and r"\tfrac{1}{4 \pi}" in doc
    assert "0.0795" not in doc, "1/(4 pi) shown as a float"


def test_theory_display_with_gradient():
    theory = fg.theories.abelian_higgs()
    plain = str(theory.display())
    full = theory.display(gradient=True)._repr_latex_()
    check_latex(plain)
    check_latex(full)
    assert r"\frac{\delta E}{\delta \psi_{re}}" in full and r"\frac{\delta E}{\delta" not in plain
    assert r"\partial_{x}^{2}" in full  # the derived gradient has second derivatives
    assert theory.latex()  # the plain form stays available


def test_energy_line_renders_with_mathtext():
    """The energy's LaTeX is well-formed enough for matplotlib's own TeX parser
    (which raises on unbalanced groups or unknown commands; it lacks only \\tfrac,
    which MathJax and LaTeX have)."""
    import matplotlib.mathtext

    parser = matplotlib.mathtext.MathTextParser("path")
    for theory in (fg.theories.baby_skyrme(), fg.theories.abelian_higgs()):
        energy = D.energy_latex(theory).replace(r"\tfrac", r"\frac")
        width, height, depth, *_ = parser.parse("$" + energy + "$", dpi=72)
        assert width > 10 * height > 0


def test_hand_gradient_is_labelled():
    t = fg.Theory("toy", fields=["u"], params={"a": 2.0})

    @t.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + p.a * s.phi.u**4

    @t.gradient
    def g(s, p, out):
        out[0] = -s.dxx.u + 4 * p.a * s.phi.u**3

    doc = t.display(gradient=True)._repr_latex_()
    check_latex(doc)
    assert "hand-written" in doc and r"\partial_{x}^{2} u" in doc and "a = 2" in doc


def test_simulation_card_is_valid_html(shell, sim):
    data = formatted(shell, sim)
    p = parse_html(data["text/html"])
    text = "".join(p.text)
    classes = [a.get("class", "") for _, a in p.tags]
    assert "fieldgo-card" in classes
    for want in ("48 × 48", "fixed", "cpu", "energy", "∫ charge", "kappa = 1", "gradient", "kernels", "step"):
        assert want in text, want
    assert f"{sim.energy():.10g}" in text
    assert f"{sim.integral('charge'):.10g}" in text
    assert "text/plain" in data


def test_simulation_card_escapes_and_closed(shell):
    t = fg.Theory("x<b>", fields=["u"], params={})

    @t.energy_density
    def e(s, p):
        return 0.5 * s.dx.u**2 + 0.5 * s.dy.u**2

    s = fg.Simulation(t, grid=(16, 16), spacing=0.5)
    doc = formatted(shell, s)["text/html"]
    parse_html(doc)
    assert "x&lt;b&gt;" in doc
    assert "not set" in doc and "set_field" in doc  # no field: no energy of zeros
    s.close()
    parse_html(formatted(shell, s)["text/html"])


def test_field_png(shell, sim):
    data = formatted(shell, sim.field)
    check_png(data["image/png"])
    check_png_mpl(data["image/png"])
    assert "text/plain" in data
    density = sim.density("charge")
    check_png(formatted(shell, density)["image/png"])


def test_history_png_only_for_histories(shell, sim):
    hist = sim.history
    data = formatted(shell, hist)
    check_png(data["image/png"])
    other = pa.table({"a": [1, 2, 3]})
    assert "image/png" not in formatted(shell, other)
    assert "image/png" not in formatted(shell, hist.slice(0, 0))


def test_unload_removes_formatters(shell, sim):
    shell.run_line_magic("unload_ext", "fieldgo")
    try:
        assert "text/html" not in formatted(shell, sim)
        assert "image/png" not in formatted(shell, sim.field)
        # a Theory still shows as LaTeX: that is its own _repr_latex_
        assert "text/latex" in formatted(shell, fg.theories.baby_skyrme())
    finally:
        shell.run_line_magic("load_ext", "fieldgo")
    assert "text/html" in formatted(shell, sim)


# --- the %fieldgo magic --------------------------------------------------------------------


def test_magic_devices(shell):
    rep = shell.run_line_magic("fieldgo", "devices")
    parse_html(rep._repr_html_())
    rows = {r[0]: r for r in rep.rows}
    assert rows["cpu"][1] == "yes" and "cores" in rows["cpu"][2]
    assert any(k.startswith("cuda") for k in rows)
    probe = magics.cuda_probe()
    assert isinstance(probe["available"], bool) and probe["detail"]
    assert "cpu" in str(rep)


FILL_CACHE = """
import fieldgo as fg
theory = fg.Theory("cache_probe", fields=["u"], params={"a": 1.5})

@theory.energy_density
def e(s, p):
    return 0.5 * s.dx.u ** 2 + p.a * s.phi.u ** 2

if WITH_POINT:
    theory.at(phi=[0.3])
s = fg.Simulation(theory, grid=(16, 16), spacing=0.5)
s.set_field(lambda x, y: 0 * x)
assert s.energy() >= 0
"""


def fill_cache(root, with_point=True):
    """Compile into the cache at root in a fresh process (Go reads $FIELDGO_CACHE from
    the environment it started with, so this process cannot redirect it)."""
    import subprocess

    env = dict(os.environ, FIELDGO_CACHE=str(root))
    subprocess.run(
        [sys.executable, "-c", FILL_CACHE.replace("WITH_POINT", str(with_point))],
        env=env,
        check=True,
        cwd=str(root),
        timeout=300,
    )


def test_magic_kernels_and_cache(shell, tmp_path, monkeypatch):
    monkeypatch.setenv("FIELDGO_CACHE", str(tmp_path))
    empty = shell.run_line_magic("fieldgo", "kernels")
    assert empty.rows == [] and "no compiled kernels" in str(empty)
    fill_cache(tmp_path)
    rep = shell.run_line_magic("fieldgo", "kernels")
    parse_html(rep._repr_html_())
    kinds = {r[0] for r in rep.rows}
    assert {"point", "cpu"} <= kinds, rep.rows
    assert all(r[3].endswith("B") and r[4].startswith("20") for r in rep.rows)
    cache = shell.run_line_magic("fieldgo", "cache")
    parse_html(cache._repr_html_())
    counts = {r[0]: r[2] for r in cache.rows}
    assert counts["point"] >= 1 and counts["cpu"] >= 1
    cleared = shell.run_line_magic("fieldgo", "cache clear")
    assert cleared.rows[0][0] >= 2
    assert shell.run_line_magic("fieldgo", "kernels").rows == []
    assert not [n for n in os.listdir(tmp_path) if n.endswith((".so", ".sha256"))]
    # the cache refills on demand
    fill_cache(tmp_path, with_point=False)
    assert {r[0] for r in shell.run_line_magic("fieldgo", "kernels").rows} == {"cpu"}


def test_magic_unknown_command(shell):
    with pytest.raises(fg.ParameterError, match="usage"):
        magics.fieldgo_magic("gpus please")


# --- progress ------------------------------------------------------------------------


def test_progress_off_outside_a_kernel(sim, capsys, monkeypatch):
    monkeypatch.delenv("FIELDGO_PROGRESS", raising=False)
    assert not progress.in_notebook()
    sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    sim.minimize(tol=1e-3, max_steps=50)
    assert "minimize" not in capsys.readouterr().err


def test_progress_bar_when_asked(sim, capsys):
    sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    sim.minimize(tol=1e-3, max_steps=400, progress=True)
    err = capsys.readouterr().err
    assert "minimize" in err and "energy=" in err and "max_grad=" in err and "step/s" in err


def test_live_outside_a_kernel_warns(sim):
    with pytest.warns(UserWarning, match="Jupyter"):
        sim.minimize(tol=1e-3, max_steps=10, live=True)
    with pytest.raises(fg.ParameterError):
        sim.minimize(tol=1e-3, max_steps=10, live="often")


def test_notebook_bar_of_a_finished_run_is_full_in_the_widget_and_its_text(monkeypatch):
    """A run that converges at step 381 of max_steps=20000 ends as a full bar: the
    widget's maximum follows the total, and the text/plain a saved notebook keeps
    (the last publication of the widget) says 381/381, not 0/20000."""
    pytest.importorskip("ipywidgets")
    from tqdm.notebook import tqdm as notebook_tqdm

    published = []

    class Handle:
        def update(self, obj):
            published.append(repr(obj))

    def display(obj, display_id=False):
        published.append(repr(obj))
        return Handle()

    monkeypatch.setattr(progress, "_tqdm_class", lambda: notebook_tqdm)
    monkeypatch.setattr(IPython.display, "display", display)
    m = progress.Monitor(None, 20000, progress=True)
    for step in (100, 250, 381):
        m.update(dict(step=step, energy=32.3, max_grad=1e-3, done=step == 381, converged=step == 381))
    m.close()
    widget = m.bar.container.children[1]
    assert (widget.value, widget.max) == (381, 381)
    assert "0/20000" in published[0]
    assert "381/381" in published[-1] and "100%" in published[-1]


def test_notebook_bar_of_an_interrupted_run_stays_partial(monkeypatch):
    pytest.importorskip("ipywidgets")
    from tqdm.notebook import tqdm as notebook_tqdm

    monkeypatch.setattr(progress, "_tqdm_class", lambda: notebook_tqdm)
    monkeypatch.setattr(IPython.display, "display", lambda obj, display_id=False: None)
    m = progress.Monitor(None, 20000, progress=True)
    m.update(dict(step=381, energy=32.3, max_grad=1e-3, done=False))
    m.close(interrupted=True)
    assert m.bar.container.children[1].max == 20000
