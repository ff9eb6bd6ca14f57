"""Small helpers the code readers share (pure: the standard library's `ast` only).

A reading is `(code, line, detail)`; code_reading.py turns readings into quoted findings. The helpers here name
things as a reviewer would write them: a dotted call name, an expression's source, a function's tests."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

Found = tuple[str, int, str]  # (reading code, line, what a reviewer says about it)


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def src(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every node the parser makes
        return "this expression"
    return text if len(text) <= 60 else text[:59] + "…"


def is_len(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func) == "len" and len(node.args) == 1


def len_of(node: ast.AST) -> ast.AST | None:
    """`x` when `node` is `len(x)`."""
    return node.args[0] if isinstance(node, ast.Call) and is_len(node) else None


def len_shift(node: ast.AST) -> tuple[ast.AST, int] | None:
    """(`x`, k) when `node` is `len(x) + k` or `len(x) - k` (k signed, non-zero) for a literal k."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and (inner := len_of(node.left)) is not None
        and isinstance(node.right, ast.Constant)
        and type(node.right.value) is int
        and node.right.value != 0
    ):
        return inner, node.right.value if isinstance(node.op, ast.Add) else -node.right.value
    return None


def same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function and method, nested ones included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


# --- what the submission's own tests say ------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """A test or doctest calls `function` with `args` (literals) and expects `result` (a literal), when known."""

    function: str
    args: tuple[object, ...]
    result: object = None
    known: bool = False  # whether `result` was stated (a doctest's output, an assert)


@dataclass
class SuiteIndex:
    """The submission's tests: the names they call or mention, the names of the test functions, and the calls they
    make with literal arguments and a stated result."""

    present: bool = False  # any test function or doctest at all
    named: set[str] = field(default_factory=set)
    test_names: list[str] = field(default_factory=list)
    expectations: list[Expectation] = field(default_factory=list)

    def mentions(self, function: str) -> bool:
        """Whether a test calls or names `function` (`test_average_of_two` names `average`)."""
        if function in self.named:
            return True
        pattern = re.compile(rf"(?:^|_){re.escape(function.lower())}(?:_|$)")
        return any(pattern.search(name.lower().removeprefix("test")) for name in self.test_names)


def _literal(node: ast.AST) -> tuple[bool, object]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _call_expectation(call: ast.AST, result: tuple[bool, object]) -> Expectation | None:
    if not isinstance(call, ast.Call) or not dotted(call.func) or call.keywords:
        return None
    args = [_literal(a) for a in call.args]
    if not all(ok for ok, _ in args):
        return None
    name = dotted(call.func).rsplit(".", 1)[-1]
    return Expectation(name, tuple(v for _, v in args), result[1], result[0])


def _assert_expectation(test: ast.Assert) -> Expectation | None:
    """`assert f(18)`, `assert not f(18)`, `assert f(18) == x` / `is x`."""
    expr = test.test
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _call_expectation(expr.operand, (True, False))
    if isinstance(expr, ast.Call):
        return _call_expectation(expr, (True, True))
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], ast.Eq | ast.Is):
        return _call_expectation(expr.left, _literal(expr.comparators[0]))
    return None


def _doctest_expectations(doc: str) -> Iterator[tuple[set[str], Expectation | None]]:
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        text = line.strip()
        if not text.startswith(">>>"):
            continue
        source = text[3:].split("# doctest")[0].strip()
        try:
            expr = ast.parse(source, mode="eval").body
        except SyntaxError:
            yield set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source)), None
            continue
        names = {
            dotted(n).rsplit(".", 1)[-1] for n in ast.walk(expr) if isinstance(n, ast.Name | ast.Attribute)
        }
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        output: tuple[bool, object] = (False, None)
        if following and not following.startswith((">>>", "...")):
            try:
                output = _literal(ast.parse(following, mode="eval").body)
            except SyntaxError:
                output = (False, None)
        yield names, _call_expectation(expr, output)


def index_suite(tree: ast.Module) -> SuiteIndex:
    index = SuiteIndex()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            index.present = True
            index.test_names.append(node.name)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name):
                    index.named.add(inner.id)
                elif isinstance(inner, ast.Attribute):
                    index.named.add(inner.attr)
                elif isinstance(inner, ast.Assert) and (seen := _assert_expectation(inner)) is not None:
                    index.expectations.append(seen)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for names, seen in _doctest_expectations(ast.get_docstring(node, clean=False) or ""):
                index.present = True
                index.named |= names
                if seen is not None:
                    index.expectations.append(seen)
    return index
