"""Where the values on one line come from (pure: `ast` only): what a reviewer checks before answering "this call is
safe here". A value that is a parameter is chosen by whoever calls the function; a module constant or a literal is
fixed by the code; a check on the value before the line (`shlex.quote(x)`, `if x not in ALLOWED`, `int(x)`,
`re.fullmatch(..., x)`) narrows what can reach it. The offline personas answer a person's argument from these
facts rather than from the argument's tone."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .reading_ast import dotted

_CHECKS = {"shlex.quote", "int", "float", "re.fullmatch", "re.match", "ipaddress.ip_address", "uuid.UUID"}


@dataclass(frozen=True)
class ValueSource:
    name: str
    kind: str  # "parameter" | "constant" | "computed"
    function: str  # the enclosing function ("" at module level)
    checked_on: int | None = None  # the line of a check on it before the line read, if any
    via: str = ""  # for a local computed from a parameter: that parameter


def _assigned(fn: ast.AST, name: str, before: int) -> ast.AST | None:
    """The value last bound to `name` before line `before` (one `name = value`)."""
    bound = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Assign)
        and node.lineno < before
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return max(bound, key=lambda node: node.lineno).value if bound else None


def _enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    around = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(around, key=lambda node: node.lineno) if around else None  # the innermost starts last


def _check_line(fn: ast.AST, name: str, before: int) -> int | None:
    for node in ast.walk(fn):
        if getattr(node, "lineno", before) >= before:
            continue
        mentions = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
        if isinstance(node, ast.Call) and dotted(node.func) in _CHECKS and mentions:
            return node.lineno
        if isinstance(node, ast.If | ast.Assert) and mentions:
            test = node.test
            if any(isinstance(n, ast.Compare) for n in ast.walk(test)):
                return node.lineno
    return None


def value_sources(code: str, line: int) -> list[ValueSource]:
    """The names whose values reach the calls on `line`, in order of appearance ([] if the code does not
    parse or nothing is called there)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    fn = _enclosing(tree, line)
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} if fn else set()
    constants = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    modules = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    names: list[str] = []
    for node in ast.walk(fn or tree):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for n in ast.walk(arg):
                    if isinstance(n, ast.Name) and n.id not in names and n.id not in modules:
                        names.append(n.id)
    out = []
    for name in names:
        kind = "parameter" if name in params else "constant" if name in constants else "computed"
        checked = _check_line(fn, name, line) if fn is not None else None
        via = ""
        value = _assigned(fn, name, line) if fn is not None and kind == "computed" else None
        if value is not None:
            if isinstance(value, ast.Call) and dotted(value.func) in _CHECKS:
                checked = getattr(value, "lineno", None)
            inputs = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in params]
            if inputs:
                kind, via = "parameter", inputs[0]
        out.append(ValueSource(name, kind, fn.name if fn else "", checked, via))
    return out
