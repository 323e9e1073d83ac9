"""End to end: a real JupyterLab server, the quickstart opened in headless Chromium
(Debian's chromium, driven by Playwright), all cells run, and the rendered page holds
the figures and the simulation card; and fg.view3d's interactive isosurface drawn in
a notebook's output and turned with the mouse."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("FIELDGO_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "fieldgo-e2e"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (pip install -e .[test])")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (.ci/run does)")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "01_quickstart.ipynb", work)
    # every cell in the DOM (no virtual scrolling), so the checks below see all outputs
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "python"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={work}",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True",
        ],
        cwd=str(work),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise AssertionError(
                        "jupyter lab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:]
                    ) from None
                time.sleep(0.3)
        yield base, work
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_quickstart_in_jupyterlab(lab):
    sync_api = pytest.importorskip("playwright.sync_api")
    base, work = lab
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/01_quickstart.ipynb?token={TOKEN}", timeout=60_000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            # the kernel is up when the toolbar's indicator says idle
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            import json

            ncode = sum(
                c["cell_type"] == "code" for c in json.loads((work / "01_quickstart.ipynb").read_text())["cells"]
            )
            page.wait_for_function(f"() => document.querySelectorAll('.jp-CodeCell').length >= {ncode}", timeout=60_000)

            def dismiss_dialogs():
                # A fresh JupyterLab may open a modal dialog (kernel choice, build or
                # news prompts) that swallows clicks: accept the kernel choice, dismiss
                # anything else, and say what it was.
                dialogs = page.locator(".jp-Dialog")
                while dialogs.count():
                    text = dialogs.first.text_content() or ""
                    print("JupyterLab dialog:", " ".join(text.split())[:300])
                    accept = dialogs.first.locator(".jp-Dialog-button.jp-mod-accept")
                    if "kernel" in text.lower() and accept.count():
                        accept.first.click()
                    else:
                        page.keyboard.press("Escape")
                    page.wait_for_timeout(300)

            def run_all():
                dismiss_dialogs()
                page.locator(".jp-Notebook .jp-Cell").first.click()
                page.get_by_role("menuitem", name="Run", exact=True).click()
                page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()

            def output_text():
                return page.evaluate(
                    "() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))"
                    ".map(e => e.textContent).join('\\n')"
                )

            run_all()
            started = time.monotonic()
            deadline = started + 150
            while (
                "Q = " not in output_text()
                or not page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count()
            ):
                dismiss_dialogs()
                text = output_text()
                assert "Traceback" not in text, text[-3000:]
                prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
                if time.monotonic() - started > 15 and all(t.strip() in ("[ ]:", "") for t in prompts):
                    run_all()  # the click landed before the notebook took focus
                    started = time.monotonic()
                assert time.monotonic() < deadline, f"cells did not finish: {prompts}"
                time.sleep(0.5)

            text = output_text()
            assert "Traceback" not in text and "Error" not in text.replace("max_grad", ""), text[-2000:]
            # the simulation card, rendered as HTML
            cards = page.locator(".jp-OutputArea-output .fieldgo-card")
            assert cards.count() >= 2, "no simulation card"
            card = cards.first.text_content()
            assert "96 × 96" in card and "backend" in card and "∫ charge" in card
            # figures: fg.plot, the field, the history (PNG images)
            images = page.locator(".jp-OutputArea-output img")
            assert images.count() >= 4, f"{images.count()} images"
            widths = [images.nth(k).evaluate("e => e.naturalWidth") for k in range(images.count())]
            assert all(w > 100 for w in widths), widths
            # the theory's LaTeX was typeset (MathJax)
            assert page.locator(".jp-OutputArea-output mjx-container, .jp-OutputArea-output .MathJax").count() >= 1
            # the last cell's checks printed their summary
            assert "Q = " in text and "steps" in text
            page.screenshot(path=str(work / "quickstart.png"), full_page=True)
        finally:
            browser.close()


VIEW3D_CELLS = [
    "import fieldgo as fg",
    "sim = fg.Simulation(fg.theories.skyrme(mass=1.0), grid=(24, 24, 24), spacing=0.3)\n"
    "sim.set_field(fg.initial.hedgehog(profile='optimal', mass=1.0))\n"
    "fg.view3d(sim, width=480, height=400)",
    "print('view3d' + ' shown')",
]


def test_view3d_in_jupyterlab(lab, tmp_path):
    """The view's inline script runs in JupyterLab's output (a trusted output of the
    running kernel), draws the Skyrmion with WebGL, and a drag redraws it turned."""
    sync_api = pytest.importorskip("playwright.sync_api")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("skimage", reason="fg.view3d needs scikit-image (pip install -e .[test])")
    import numpy as np
    from PIL import Image

    base, work = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in VIEW3D_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, work / "view3d.ipynb")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(f"{base}/lab/tree/view3d.ipynb?token={TOKEN}", timeout=60_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            page.wait_for_function(
                f"() => document.querySelectorAll('.jp-CodeCell').length >= {len(VIEW3D_CELLS)}", timeout=60_000
            )
            deadline = time.monotonic() + 120
            view = page.locator(".jp-OutputArea-output .fieldgo-view3d")
            while not view.count() or not view.first.get_attribute("data-frames"):
                if (
                    "view3d shown" not in _outputs(page)
                    and page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count()
                ):
                    _dismiss_dialogs(page)
                    page.locator(".jp-Notebook .jp-Cell").first.click()
                    page.get_by_role("menuitem", name="Run", exact=True).click()
                    page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
                text = _outputs(page)
                assert "Traceback" not in text, text[-3000:]
                assert time.monotonic() < deadline, f"no view drawn; outputs: {text[-2000:]}"
                time.sleep(1.0)
            view = view.first
            view.scroll_into_view_if_needed()
            assert view.get_attribute("data-renderer") in ("webgl2", "webgl", "canvas2d")
            view.screenshot(path=str(tmp_path / "view3d.png"))
            box = view.bounding_box()
            page.mouse.move(box["x"] + 240, box["y"] + 200)
            page.mouse.down()
            page.mouse.move(box["x"] + 340, box["y"] + 150, steps=5)
            page.mouse.up()
            page.wait_for_function(
                "() => +document.querySelector('.jp-OutputArea-output .fieldgo-view3d').dataset.frames > 1"
            )
            view.screenshot(path=str(tmp_path / "view3d-turned.png"))
        finally:
            browser.close()
    before, after = (
        np.asarray(Image.open(tmp_path / f"{n}.png").convert("RGB")).astype(int) for n in ("view3d", "view3d-turned")
    )
    ink = np.abs(before - 255).sum(axis=2) > 60
    assert 0.02 < ink.mean() < 0.6, f"{ink.mean():.3f} of the view is drawn"
    assert ((before.max(axis=2) - before.min(axis=2)) > 120).sum() > 500, "no Runge colours on the surface"
    assert np.abs(after - before).sum(axis=2).astype(bool).mean() > 0.01, "dragging did not turn the view"


def _outputs(page):
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-OutputArea-output')).map(e => e.textContent).join('\\n')"
    )


def _dismiss_dialogs(page):
    dialogs = page.locator(".jp-Dialog")
    while dialogs.count():
        accept = dialogs.first.locator(".jp-Dialog-button.jp-mod-accept")
        if "kernel" in (dialogs.first.text_content() or "").lower() and accept.count():
            accept.first.click()
        else:
            page.keyboard.press("Escape")
        page.wait_for_timeout(300)
