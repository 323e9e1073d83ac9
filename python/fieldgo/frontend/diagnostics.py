"""Point TraceErrors at the user's source: file, line and the construct used there.

Stand-ins call into this module when Python asks them for something a trace cannot
give (a bool, a float, a numpy array). We walk the stack to the user's frame (the
traced function's file first, else the first frame outside fieldgo), look up the
instruction it is executing (``co_positions``) in the AST of its source (linecache,
which also holds Jupyter cells), and name the construct: ``if``, ``while``, ``and``,
``math.sin(...)``. Static checks on a decorated function's AST (arity, mutation of
captured state) run at decoration time.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import linecache
import os
import sys
import textwrap
from typing import NoReturn

from ..errors import TraceError

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_THEORIES_DIR = os.path.join(_PKG_DIR, "theories")

# Functions being traced, innermost last: errors prefer frames in their files.
_active: list = []

# Method names that mutate the common containers.
_MUTATORS = {
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "popitem",
    "sort",
    "reverse",
}


@contextlib.contextmanager
def tracing(fn):
    _active.append(fn)
    try:
        yield
    finally:
        _active.pop()


def _is_internal(filename: str) -> bool:
    f = os.path.abspath(filename)
    if f.startswith(_THEORIES_DIR + os.sep):
        return False  # built-in theories are user code of the public API
    if f.startswith(_PKG_DIR + os.sep):
        return True
    return f"{os.sep}sympy{os.sep}" in f or f"{os.sep}numpy{os.sep}" in f


def user_frame():
    """The innermost frame in the traced function's file, else the first outside fieldgo."""
    target = None
    if _active:
        target = getattr(getattr(_active[-1], "__code__", None), "co_filename", None)
    f = sys._getframe(1)
    external = None
    while f is not None:
        name = f.f_code.co_filename
        if target is not None and name == target:
            return f
        if external is None and not _is_internal(name):
            external = f
        f = f.f_back
    return external


def _display_name(filename: str) -> str:
    return filename


def make_error(construct: str, filename: str | None, lineno: int | None) -> TraceError:
    if filename is None:
        err = TraceError(f"{construct} (source location unknown)")
    else:
        text = linecache.getline(filename, lineno).strip() if lineno else ""
        msg = f"{construct}\n  at {_display_name(filename)}:{lineno}"
        if text:
            msg += f"\n    {text}"
        err = TraceError(msg)
    err.filename = filename
    err.lineno = lineno
    err.construct = construct
    return err


def raise_trace_error(construct: str, frame=None) -> NoReturn:
    frame = frame or user_frame()
    if frame is None:
        raise make_error(construct, None, None)
    raise make_error(construct, frame.f_code.co_filename, frame.f_lineno)


# --- what is the user's frame doing? -------------------------------------------------


@functools.lru_cache(maxsize=64)
def _parse(source: str):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, {}
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return tree, parents


def _node_at(frame):
    """(node, parents) for the instruction the frame is executing, or (None, {})."""
    code = frame.f_code
    try:
        pos = list(code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):
        return None, {}
    lines = linecache.getlines(code.co_filename, frame.f_globals)
    if not lines or None in pos:
        return None, {}
    tree, parents = _parse("".join(lines))
    if tree is None:
        return None, {}
    line, end_line, col, end_col = pos
    best = None
    for node in ast.walk(tree):
        if (
            getattr(node, "lineno", None) == line
            and getattr(node, "end_lineno", None) == end_line
            and node.col_offset == col
            and node.end_col_offset == end_col
        ):
            best = node
            if isinstance(node, ast.expr):
                break
    return best, parents


def _bool_construct(node, parents) -> str | None:
    """Name the Python construct that asked a traced value for its truth."""
    # Some jumps carry the whole statement's position (`if v:` on a bare name).
    direct = {
        ast.If: "`if` statement on a traced value",
        ast.While: "`while` loop on a traced value",
        ast.IfExp: "conditional expression `x if cond else y` on a traced value",
        ast.Assert: "`assert` on a traced value",
        ast.BoolOp: "`and`/`or` on a traced value",
    }
    for kind, text in direct.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, ast.Call) and _call_name(node) in ("min", "max", "sorted", "bool"):
        name = _call_name(node)
        return f"builtin {name}() on traced values" + (f" (use fg.{name})" if name in ("min", "max") else "")
    child = node
    while child is not None:
        parent = parents.get(child)
        if isinstance(parent, ast.While) and child is parent.test:
            return "`while` loop on a traced value"
        if isinstance(parent, ast.If) and child is parent.test:
            return "`if` statement on a traced value"
        if isinstance(parent, ast.IfExp) and child is parent.test:
            return "conditional expression `x if cond else y` on a traced value"
        if isinstance(parent, ast.Assert):
            return "`assert` on a traced value"
        if isinstance(parent, ast.BoolOp):
            return "`and`/`or` on a traced value"
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return "`not` on a traced value"
        if isinstance(parent, ast.comprehension) and child in parent.ifs:
            return "comprehension filter on a traced value"
        if isinstance(child, ast.Compare) and len(child.ops) > 1:
            return "chained comparison on traced values"
        if isinstance(parent, ast.Call):
            name = _call_name(parent)
            if name == "bool":
                return "bool() of a traced value"
            if name in ("min", "max", "sorted", "abs"):
                return (
                    f"builtin {name}() on traced values (use fg.{name})"
                    if name != "sorted"
                    else "sorted() on traced values"
                )
        if isinstance(parent, (ast.stmt, type(None))):
            break
        child = parent
    return None


def _call_name(call) -> str:
    try:
        return ast.unparse(call.func)
    except Exception:  # pragma: no cover - unparse never fails on parsed trees
        return "?"


def raise_bool_error(comparison: bool):
    frame = user_frame()
    what = None
    if frame is not None:
        node, parents = _node_at(frame)
        if node is not None:
            what = _bool_construct(node, parents)
    what = what or "truth value of a traced value"
    if comparison:
        hint = "a comparison of traced values is not a Python bool; use fg.where(cond, a, b)"
    else:
        hint = "its value is only known when the kernel runs; use fg.where(cond, a, b)"
    raise_trace_error(f"{what}: {hint}", frame)


def raise_conversion_error(kind: str):
    """float()/int()/math.f()/range() on a traced value."""
    frame = user_frame()
    what = f"{kind}() of a traced value"
    if frame is not None:
        node, _ = _node_at(frame)
        if isinstance(node, ast.Call):
            name = _call_name(node)
            short = name.rsplit(".", 1)[-1]
            if name in ("float", "int", "complex", "round"):
                what = f"{name}() of a traced value (its value is only known when the kernel runs)"
            elif name in ("range",):
                what = "range() over a traced value (loop bounds must be static)"
            else:
                from . import symbolic

                alt = f"; use fg.{short}" if hasattr(symbolic, short) else ""
                what = f"unknown function {name}() applied to a traced value{alt}"
        elif isinstance(node, ast.Subscript):
            what = "a traced value used as an index (indices must be static)"
    raise_trace_error(what, frame)


# --- static checks at decoration time ------------------------------------------------


def _function_ast(fn):
    """(FunctionDef node, line offset) of fn's source, or (None, 0)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None, 0
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None, 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node, start - 1
    return None, 0


def def_line(fn) -> tuple[str | None, int | None]:
    """The file and the `def` line of fn (not its first decorator)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None, None
    node, offset = _function_ast(fn)
    if node is not None:
        return code.co_filename, node.lineno + offset
    return code.co_filename, code.co_firstlineno


def check_arity(fn, role: str, argnames: tuple[str, ...]):
    """A decorated function must take exactly len(argnames) positional arguments."""
    if not callable(fn):
        raise TraceError(f"@theory.{role} decorates a function, got {type(fn).__name__}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    extra_kw = [p for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    n = len(argnames)
    if len(required) > n or len(positional) < n or extra_kw:
        filename, line = def_line(fn)
        raise make_error(
            f"wrong arity: @theory.{role} expects a function of ({', '.join(argnames)}), "
            f"but {getattr(fn, '__name__', 'it')}{sig} takes {len(positional)} positional "
            "parameter(s)",
            filename,
            line,
        )


def check_no_captured_mutation(fn):
    """Refuse traced functions that write to state they did not create.

    A traced function runs once, at trace time; writes to globals, closures or their
    contents would happen once in Python and never in the kernel.
    """
    node, offset = _function_ast(fn)
    code = getattr(fn, "__code__", None)
    if node is None or code is None:
        return
    local = set(code.co_varnames) | set(code.co_cellvars)
    filename = code.co_filename

    def fail(sub, what):
        raise make_error(f"mutating captured state: {what}", filename, sub.lineno + offset)

    def base_name(target):
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        return target.id if isinstance(target, ast.Name) else None

    body = node.body if isinstance(node.body, list) else [node.body]
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Global):
                fail(sub, f"`global {', '.join(sub.names)}`")
            if isinstance(sub, ast.Nonlocal):
                fail(sub, f"`nonlocal {', '.join(sub.names)}`")
            targets = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
                targets = [sub.target]
            elif isinstance(sub, ast.Delete):
                targets = sub.targets
            for t in targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)):
                    name = base_name(t)
                    if name is not None and name not in local:
                        fail(sub, f"assignment to {ast.unparse(t)} (a name from outside the function)")
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _MUTATORS:
                name = base_name(sub.func.value)
                if name is not None and name not in local:
                    fail(sub, f"{ast.unparse(sub.func)}() on {name!r} from outside the function")
