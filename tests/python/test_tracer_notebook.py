"""TraceErrors point at the notebook cell line when the traced function lives in a cell.

The notebook is built with nbformat and run by nbclient on the `python3` kernel of
the interpreter running the tests (ipykernel installed in the same environment).
"""

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")

SETUP = f"""\
import sys, json
sys.path.insert(0, {PYTHON_DIR!r})
import fieldgo as fg
"""

# The `if` on a traced value is on line 5 of this cell, the wrong arity on line 12.
CELL = """\
theory = fg.Theory("nb", fields=["a", "b"], params={"k": 1.0})
@theory.energy_density
def energy(s, p):
    v = s.phi.a * p.k
    if v > 0:
        return v
    return s.phi.b
report = {}
try:
    theory.source
except fg.TraceError as err:
    report["if"] = [str(err), err.filename, err.lineno]
try:
    @theory.density("d")
    def d(s):
        return s.phi.a
except fg.TraceError as err:
    report["arity"] = [str(err), err.filename, err.lineno]
print(json.dumps(report))
"""


def test_trace_error_names_the_notebook_cell_line():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3")
    client.execute()
    outputs = [o for o in nb.cells[1].outputs if o.get("name") == "stdout"]
    report = json.loads("".join(o["text"] for o in outputs).strip().splitlines()[-1])

    msg, filename, lineno = report["if"]
    assert lineno == 5
    assert "`if` statement on a traced value" in msg
    assert f"{filename}:5" in msg
    assert "if v > 0:" in msg  # the cell's own text, from linecache
    assert "ipykernel" in filename or filename.startswith("<ipython-input")

    msg, filename2, lineno = report["arity"]
    assert lineno == 15  # the `def d(s):` line
    assert filename2 == filename  # same cell, same linecache entry
    assert "wrong arity" in msg and f":{15}" in msg
