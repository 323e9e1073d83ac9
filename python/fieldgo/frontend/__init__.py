"""The front end: a theory written in Python becomes C point source.

The stages, each a module: ``theory`` (``fg.Theory``, its declaration and spec),
``tracer`` with ``symbolic`` and ``algebra`` (the decorated functions run once on
stand-ins; ``fg.dot``, ``fg.where`` and the math functions), ``derive`` (SymPy's
partial derivatives and Euler–Lagrange gradient), ``gradcheck`` (a hand-written
gradient against the derived one), ``codegen`` (straight-line C99), ``diagnostics``
(mistakes pointed at the user's line), ``sourcecache`` (traced sources on disk),
``notation`` (the theory as LaTeX) and ``native`` (the point source alone, compiled
with the system C compiler and called on one site by ``Theory.at``).

The front end never loads the Go runtime: it imports neither ``fieldgo.runtime`` nor
the bridge, so a theory traces without them (tests/python/test_layers.py).
"""
