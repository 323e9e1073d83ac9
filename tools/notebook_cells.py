"""Cell constructors shared by the notebook generators (tools/make_*notebook*.py)."""

from nbformat.v4 import new_code_cell, new_markdown_cell


def md(text):
    return new_markdown_cell(text.strip("\n"))


def code(text):
    return new_code_cell(text.strip("\n"))
