"""SymPy, imported on first use.

Tracing needs SymPy; running a theory whose point source is already cached does not,
and importing SymPy is a third of ``import fieldgo``. Modules write
``from ._lazy import sympy`` and use it as the module.
"""

import importlib
import types


class _LazyModule(types.ModuleType):
    def __getattr__(self, attr):
        module = importlib.import_module(self.__name__)
        return getattr(module, attr)


sympy = _LazyModule("sympy")
