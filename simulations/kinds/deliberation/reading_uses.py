"""Results thrown away and functions no test touches, read as a reviewer reads them (pure: `ast` only).

Dropped results: a statement that computes a value and keeps none of it. A call counts only when it cannot be
doing its work by side effect: a builtin that only returns (`sorted(xs)`, `map(f, xs)`), a method only strings
have (`name.strip()`), or a method strings share with other types (`replace`, `split`, `join`, `format`...) on
a value the code shows to be a string (`pathlib.Path.replace` renames a file: it is not named). A local name
assigned and never read is a result thrown away too; when the code goes on with the value it came from
(`cleaned = name.strip()` then `return name`), the reviewer says so.

Untested functions: named only where the submission shows its tests (a `test_` function or a doctest) or is a
diff, so a snippet pasted without tests is judged on its code, not on the absence of a test suite. A function is
tested when a test calls it or names it (`test_express_fee_rounds` names `express_fee`); in a diff, only
functions with added lines count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .reading_ast import Found, SuiteIndex, dotted, src

_PURE_CALLS = {
    "sorted", "reversed", "len", "abs", "round", "min", "max", "sum", "map", "filter", "any", "all",
    "enumerate", "zip", "repr", "unicodedata.normalize", "os.path.join", "os.path.basename", "os.path.dirname",
    "copy.copy", "copy.deepcopy", "dataclasses.replace",
}  # fmt: skip
_STRING_ONLY = {
    "strip", "lstrip", "rstrip", "lower", "upper", "casefold", "capitalize", "title", "swapcase", "zfill",
    "center", "ljust", "rjust", "removeprefix", "removesuffix", "startswith", "endswith", "splitlines",
    "partition", "rpartition", "expandtabs", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower",
    "quantize", "isoformat", "strftime",
}  # fmt: skip
_STRING_TOO = {
    "replace",
    "split",
    "rsplit",
    "join",
    "format",
    "encode",
    "decode",
    "translate",
    "count",
    "find",
}
_TEXT_TYPES = {"str", "bytes", "Optional[str]", "str | None"}


def _text_names(fn: ast.AST) -> set[str]:
    """Names the code shows to be strings: annotated `str`, or bound to a literal, an f-string or a string's
    method."""
    names: set[str] = set()
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if arg.annotation is not None and src(arg.annotation) in _TEXT_TYPES:
                names.add(arg.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if src(node.annotation) in _TEXT_TYPES:
                names.add(node.target.id)
        elif (
            isinstance(node, ast.Assign)
            and all(isinstance(t, ast.Name) for t in node.targets)
            and _is_text(node.value, names)
        ):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _is_text(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | bytes)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Call):
        if dotted(node.func) in ("str", "repr", "input"):
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STRING_ONLY | {
            "replace",
            "join",
            "format",
        }:
            return _is_text(node.func.value, names)
    return False


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _own_statements(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside its nested functions (each function is read once, as its own scope)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))


def _dropped(stmt: ast.Expr, text: set[str]) -> str | None:
    value = stmt.value
    if isinstance(value, ast.Compare):
        return f"`{src(value)}` compares and throws the answer away (was `=` meant?)"
    if isinstance(value, ast.BinOp | ast.UnaryOp):
        return f"`{src(value)}` is computed and thrown away"
    if not isinstance(value, ast.Call):
        return None
    name = dotted(value.func)
    if name in ("sorted", "reversed") and value.args:
        seq = src(value.args[0])
        fix = f"{seq}.sort()" if name == "sorted" else f"{seq}.reverse()"
        return (f"`{src(value)}` makes a new, {name} copy and leaves `{seq}` as it was; nothing keeps the copy "
                f"(`{fix}` works in place)")  # fmt: skip
    if name in _PURE_CALLS:
        return f"`{src(value)}` only returns a new value, and nothing keeps it"
    if not isinstance(value.func, ast.Attribute):
        return None
    method, receiver = value.func.attr, value.func.value
    if method in _STRING_ONLY or (method in _STRING_TOO and _is_text(receiver, text)):
        what = src(receiver)
        return (f"`{src(value)}` returns a new string and leaves `{what}` as it was; nothing keeps the result "
                f"(strings never change in place: `{what} = {src(value)}`)")  # fmt: skip
    return None


def _never_read(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Found]:
    """Local names assigned in `fn` and never read anywhere in it (nested functions included)."""
    nodes = list(ast.walk(fn))
    if any(isinstance(n, ast.Call) and dotted(n.func) in ("locals", "vars", "eval", "exec") for n in nodes):
        return
    shared = {name for n in nodes if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names}
    loads: dict[str, list[int]] = {}
    for n in nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n.lineno)
    first: dict[str, ast.Assign | ast.AnnAssign] = {}
    for n in _own_statements(fn):
        targets = (
            n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        )
        if not isinstance(n, ast.Assign | ast.AnnAssign) or n.value is None:
            continue
        for t in targets:
            fresh = isinstance(t, ast.Name) and (t.id not in first or n.lineno < first[t.id].lineno)
            if fresh and isinstance(t, ast.Name) and not t.id.startswith("_") and t.id not in shared:
                first[t.id] = n
    for name, stmt in first.items():
        if name in loads:
            continue
        assert stmt.value is not None
        detail = f"`{name}` is assigned `{src(stmt.value)}` and never read"
        sources = [
            n.id for n in ast.walk(stmt.value)
            if isinstance(n, ast.Name) and any(line > stmt.lineno for line in loads.get(n.id, []))
        ]  # fmt: skip
        if sources:
            detail += f": the code goes on with `{sources[0]}` itself, so this result is lost"
        yield ("unused-result", stmt.lineno, detail)


def read_uses(tree: ast.Module) -> list[Found]:
    found: list[Found] = []
    for scope in _scopes(tree):
        text = _text_names(scope)
        for node in _own_statements(scope):
            if isinstance(node, ast.Expr) and (detail := _dropped(node, text)) is not None:
                found.append(("unused-result", node.lineno, detail))
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            found.extend(_never_read(scope))
    return found


# --- tests for changed functions --------------------------------------------------------------------------


def _public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith(("_", "Test")):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


def read_untested(tree: ast.Module, suite: SuiteIndex, changed: frozenset[int] | None) -> list[Found]:
    if changed is None and not suite.present:
        return []  # no tests in sight: nothing says which of them are missing
    out: list[Found] = []
    for fn in _public_functions(tree):
        if fn.name.startswith(("_", "test")) or suite.mentions(fn.name):
            continue
        span = set(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1))
        if changed is not None and not span & changed:
            continue
        if changed is not None:
            detail = f"`{fn.name}` changes in this diff and no test in it calls or names `{fn.name}`"
        else:
            detail = f"the file has tests, but none calls or names `{fn.name}`"
        out.append(("untested-function", fn.lineno, detail + ": add one that pins its edge cases"))
    return out
