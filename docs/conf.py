"""Sphinx configuration of fieldgo's documentation site (`make docs`).

The source folder is docs/ itself, so the Markdown pages stay where GitHub shows them;
index.md, api/ and project/ exist for the site only. The notebooks are read through
the docs/notebooks link to ../notebooks and executed on the CPU at build time (they
are stored without outputs). Nothing is loaded from the network when a page is viewed:
MathJax comes from the sphinx-mathjax-offline package into _static/mathjax, and
the widget scripts myst-nb would take from a CDN are switched off.
"""

from __future__ import annotations

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))  # the package the build documents and runs
# The notebooks' kernels import fieldgo from this checkout, as the notebook tests do.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH", "")) if p)

project = "fieldgo"
author = "The fieldgo authors"
copyright = "The fieldgo authors"
release = version = "0.1.0"

extensions = [
    "myst_nb",  # Markdown (myst-parser) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax copied into _static, not taken from a CDN
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
    "performance/*.jsonl",
]

# --- MyST and notebooks -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_in_temp = True  # files a notebook writes land in a temporary folder
nb_ipywidgets_js = {}  # no require.js or widget manager from a CDN
# A page cannot run a widget: a progress bar shows its text form, the bar as it ended.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_merge_streams = True

# --- API reference --------------------------------------------------------------------
autosummary_generate = False  # the pages in api/ are written by hand
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"undoc-members": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True

# --- HTML -----------------------------------------------------------------------------
html_theme = "furo"
html_title = "fieldgo"
html_static_path: list[str] = []
html_show_sourcelink = False
html_last_updated_fmt = None


def setup(app):
    # MathJax on every page, not only on pages with equations: the sidebar shows
    # notebook titles with math on all of them.
    app.set_html_assets_policy("always")
