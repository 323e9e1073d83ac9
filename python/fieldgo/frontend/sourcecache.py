"""A disk cache of traced point sources, so that a theory already traced on this
machine runs without SymPy.

The key is a fingerprint of everything the generated C can depend on: the theory's
declaration (name, fields, parameters, constraint, auxiliary fields, static values),
the code of every decorated function — its bytecode, constants and names, the values
of the closure cells and globals it reads, recursively through the plain functions it
calls — and the source of fieldgo's own front end. Anything the fingerprint cannot
see (an object of unknown type, a module that is not the standard library's, numpy's
or fieldgo's) makes the theory uncacheable: it is traced every time, as before.
Entries are ``source/<key>.c`` under the one cache root, keyed and written like every
other cache (python/fieldgo/cache.py).
"""

from __future__ import annotations

import builtins
import hashlib
import pathlib
import sys
import types

from .. import cache

_SAFE_MODULES = ("math", "cmath", "numpy", "fieldgo")
_front_end_digest = None


def _front_end() -> str:
    """A digest of the front end's own source: a fix to the code generator must never
    be hidden by a cached source."""
    global _front_end_digest
    if _front_end_digest is None:
        h = hashlib.sha256()
        for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):  # every module of fieldgo.frontend
            h.update(path.name.encode() + b"\0" + path.read_bytes())
        _front_end_digest = h.hexdigest()
    return _front_end_digest


class _Uncacheable(Exception):
    pass


def _fp(obj, seen: set, depth: int = 0) -> str:
    if depth > 40:
        raise _Uncacheable("too deep")
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = [_fp(x, seen, depth + 1) for x in obj]
        if isinstance(obj, (set, frozenset)):
            items.sort()
        return f"{type(obj).__name__}({','.join(items)})"
    if isinstance(obj, dict):
        return (
            "dict("
            + ",".join(sorted(f"{_fp(k, seen, depth + 1)}:{_fp(v, seen, depth + 1)}" for k, v in obj.items()))
            + ")"
        )
    if isinstance(obj, types.ModuleType):
        root = obj.__name__.split(".")[0]
        if root in _SAFE_MODULES or root in sys.stdlib_module_names:
            return f"module:{obj.__name__}:{getattr(obj, '__version__', '')}"
        raise _Uncacheable(f"module {obj.__name__}")
    if isinstance(obj, types.BuiltinFunctionType):
        return f"builtin:{getattr(obj, '__module__', '')}.{obj.__qualname__}"
    if isinstance(obj, types.FunctionType):
        if (
            obj.__module__
            and obj.__module__.split(".")[0] == "fieldgo"
            and not obj.__module__.startswith("fieldgo.theories")
        ):
            return f"fieldgo:{obj.__module__}.{obj.__qualname__}"  # covered by the front-end digest
        if id(obj) in seen:
            return f"recursive:{obj.__qualname__}"
        seen.add(id(obj))
        code = obj.__code__
        parts = [_code(code)]
        for cell in obj.__closure__ or ():
            try:
                parts.append(_fp(cell.cell_contents, seen, depth + 1))
            except ValueError:  # an empty cell
                parts.append("empty-cell")
        parts.append(_fp(obj.__defaults__, seen, depth + 1))
        for name in _names(code):
            if name in obj.__globals__:
                parts.append(f"{name}={_fp(obj.__globals__[name], seen, depth + 1)}")
            elif not hasattr(builtins, name):
                parts.append(f"{name}=?")
        return "function(" + ";".join(parts) + ")"
    if isinstance(obj, type) and obj.__module__.split(".")[0] in ("fieldgo", "builtins"):
        return f"class:{obj.__module__}.{obj.__qualname__}"
    # fieldgo's own value objects (fg.Static, fg.UnitVector) say what they are
    mod = type(obj).__module__.split(".")[0]
    if mod == "fieldgo" and hasattr(obj, "__slots__") or type(obj).__name__ == "UnitVector":
        return f"{type(obj).__qualname__}:{_fp(getattr(obj, 'value', None), seen, depth + 1)}"
    raise _Uncacheable(type(obj).__name__)


def _names(code: types.CodeType):
    yield from code.co_names
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _names(c)


def _code(code: types.CodeType) -> str:
    consts = []
    for c in code.co_consts:
        consts.append(_code(c) if isinstance(c, types.CodeType) else repr(c))
    return f"code:{code.co_code.hex()}:{'|'.join(consts)}:{','.join(code.co_names)}:{code.co_argcount}"


def key(declaration, functions) -> str | None:
    """The cache key for a theory, or None when it cannot be fingerprinted."""
    try:
        seen: set = set()
        parts = [_front_end(), sys.version, _fp(declaration, seen)]
        parts += [_fp(fn, seen) for fn in functions]
    except _Uncacheable:
        return None
    return cache.key("source", *parts)


def _dir() -> pathlib.Path:
    return pathlib.Path(cache.directory("source"))


def load(k: str) -> str | None:
    try:
        return (_dir() / f"{k}.c").read_text()
    except OSError:
        return None


def store(k: str, source: str) -> None:
    """Write atomically (cache.write_atomic): concurrent writers are safe."""
    d = _dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        cache.write_atomic(d / f"{k}.c", source)
    except OSError:
        pass  # a read-only cache only costs the next run a trace
