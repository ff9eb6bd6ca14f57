"""The committee reads the code itself (pure: the standard library's `ast` only).

The tools (detect-secrets, bandit, ruff) miss what a reviewer sees by reading: an off-by-one in a mean, `age > 18`
where 18 should pass, a `strip()` whose result is thrown away, a function no test calls. `read_code` walks the
submission's syntax tree for the flaws a reviewer in each field would name and returns each with its line number
and the quoted line; checks.py maps them through the house rules (tool "code-reading") like any tool's report, so
they are findings the personas argue from, the machine's veto guard sees, and the report lists.

Flaw classes (the `code` of each reading):
- unsafe-eval: eval/exec/compile of a value that is not a literal.
- unsafe-deserialisation: pickle/marshal/shelve/dill loads, yaml.load without a safe loader.
- shell-call: os.system/os.popen, subprocess with shell=True.
- sql-from-strings: SQL text built with an f-string, `+`, `%` or `.format`.
- boundary: a strict comparison with a number other than 0, 1 and -1 that no test or doctest tries (is the bound
  itself in or out?), an index
  compared `<= len(...)`, `range(len(x) ± k)`, `x[len(x)]`, a division by `len(x) ± k`.
- unused-result: a statement that computes a value and drops it (`name.strip()`, `sorted(xs)`, `a == b`).
- untested-function: a public function (in a diff: one with added lines) that no `test_*` function and no
  doctest calls.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

TOOL = "code-reading"
MAX_QUOTE = 140

# How the sample scenario's house rules map each reading (a scenario without a `code-reading` rule for a code
# gets this mapping): (severity, category, compromise allowed).
DEFAULT_RULES: dict[str, tuple[str, str, bool]] = {
    "unsafe-eval": ("critical", "security", True),
    "unsafe-deserialisation": ("critical", "security", True),
    "shell-call": ("critical", "security", True),
    "sql-from-strings": ("critical", "security", True),
    "boundary": ("major", "correctness", False),
    "unused-result": ("major", "correctness", False),
    "untested-function": ("minor", "tests", False),
}


@dataclass(frozen=True)
class Reading:
    code: str  # one of DEFAULT_RULES' keys
    line: int
    detail: str  # what this reading saw, e.g. "`age > 18` leaves 18 itself out: is 18 meant to pass?"
    quote: str  # the source line, its runs of blanks made one (shortened past MAX_QUOTE characters)

    @property
    def message(self) -> str:
        return self.detail


def quote_line(code: str, line: int) -> str:
    lines = code.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    text = " ".join(lines[line - 1].split())
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"


_STRING = re.compile(r"""([rbfuRBFU]{0,2})(['"])(?:\\.|(?!\2).)*\2""")


def mask_line(text: str) -> str:
    """A line that holds a secret, with the secret masked: string literals emptied, else what follows `=`/`:`."""
    masked, count = _STRING.subn(lambda m: f"{m.group(1)}{m.group(2)}***{m.group(2)}", text)
    if count:
        return masked
    for sep in ("=", ":"):
        if sep in text:
            head = text.split(sep, 1)[0]
            return f"{head}{sep} ***"
    return "***"


def mask_secrets(code: str, secret_lines: Iterable[int]) -> str:
    """The code with every line that holds a secret masked (the only form a prompt or a quote may carry)."""
    hidden = set(secret_lines)
    if not hidden:
        return code
    lines = code.splitlines(keepends=True)
    for n in hidden:
        if 1 <= n <= len(lines):
            body = lines[n - 1]
            end = body[len(body.rstrip("\r\n")) :]
            lines[n - 1] = mask_line(body.rstrip("\r\n")) + end
    return "".join(lines)


# --- the readers ------------------------------------------------------------------------------------------


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _src(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every node the parser makes
        return "this expression"
    return text if len(text) <= 60 else text[:59] + "…"


def _is_len(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func) == "len" and len(node.args) == 1


def _len_shifted(node: ast.AST) -> bool:
    """`len(x) + k` or `len(x) - k` for a literal k."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and _is_len(node.left)
        and isinstance(node.right, ast.Constant)
        and isinstance(node.right.value, int)
    )


def _keyword_true(call: ast.Call, name: str) -> bool:
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )


_EVAL = {"eval", "exec", "compile", "builtins.eval", "builtins.exec"}
_DESERIALISE = {
    "pickle.loads", "pickle.load", "cPickle.loads", "cPickle.load", "_pickle.loads", "marshal.loads",
    "marshal.load", "shelve.open", "dill.loads", "dill.load", "jsonpickle.decode", "pandas.read_pickle",
    "pd.read_pickle",
}  # fmt: skip
_SHELL = {"os.system", "os.popen", "commands.getoutput", "commands.getstatusoutput"}
_SUBPROCESS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
               "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput"}  # fmt: skip
_SQL = re.compile(
    r"\b(?:select\b.+\bfrom|insert\s+into|update\b.+\bset|delete\s+from|drop\s+table|where\s+\w+\s*(?:=|<|>|like\b))",
    re.IGNORECASE | re.DOTALL,
)
_PURE_CALLS = {
    "sorted", "reversed", "len", "abs", "round", "min", "max", "sum", "map", "filter", "str", "int", "float",
    "bool", "list", "tuple", "set", "frozenset", "dict", "any", "all", "enumerate", "zip", "repr", "format",
}  # fmt: skip
_PURE_METHODS = {
    "strip", "lstrip", "rstrip", "lower", "upper", "replace", "split", "rsplit", "join", "format", "title",
    "capitalize", "casefold", "encode", "decode", "startswith", "endswith", "removeprefix", "removesuffix",
    "zfill", "center", "ljust", "rjust", "quantize", "normalize", "splitlines", "partition", "isoformat",
}  # fmt: skip


def _constant_text(node: ast.AST) -> str:
    """The literal text a string expression is built from (its constant parts)."""
    parts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return " ".join(parts)


def _built_string(node: ast.AST) -> bool:
    """An f-string with values, `"..." + x`, `"..." % x` or `"...".format(x)`."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return any(
            isinstance(side, ast.Constant | ast.JoinedStr | ast.BinOp) for side in (node.left, node.right)
        )
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
    )


class _Reader(ast.NodeVisitor):
    def __init__(self, tested_numbers: set[object]) -> None:
        self.found: list[tuple[str, int, str]] = []
        self.tested_numbers = tested_numbers  # numbers a test or doctest already tries

    def add(self, code: str, node: ast.AST, detail: str) -> None:
        self.found.append((code, getattr(node, "lineno", 1), detail))

    # unsafe evaluation, deserialisation, shell calls
    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        first = node.args[0] if node.args else None
        if name in _EVAL and first is not None and not isinstance(first, ast.Constant):
            self.add("unsafe-eval", node, f"`{_src(node)}` runs `{_src(first)}` as Python")
        elif name in _DESERIALISE or name.endswith((".pickle.loads", ".pickle.load")):
            self.add("unsafe-deserialisation", node, f"`{_src(node)}` can run code hidden in the data")
        elif (
            name in ("yaml.load", "yaml.load_all")
            and not any("Safe" in _dotted(k.value) for k in node.keywords if k.arg == "Loader")
            and not any("Safe" in _dotted(a) for a in node.args[1:])
        ):
            self.add(
                "unsafe-deserialisation", node, f"`{_src(node)}` without a safe loader builds any object"
            )
        elif name in _SHELL:
            self.add("shell-call", node, f"`{_src(node)}` hands its text to the shell")
        elif (name in _SUBPROCESS or name.startswith("subprocess.")) and _keyword_true(node, "shell"):
            self.add("shell-call", node, f"`{_src(node)}` with shell=True hands its text to the shell")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            self._sql(node)
        self.generic_visit(node)

    # SQL built from strings: the literal parts read as SQL and values are spliced in
    def _sql(self, node: ast.AST) -> None:
        if _built_string(node) and _SQL.search(_constant_text(node)):
            self.add(
                "sql-from-strings", node, f"`{_src(node)}` splices values into SQL text: use query parameters"
            )

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._sql(node)  # the parts of one string on one line make one finding (read_code keeps one per line)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._sql(node)
        if isinstance(node.op, ast.Div | ast.FloorDiv) and _len_shifted(node.right):
            self.add("boundary", node, f"`{_src(node)}` divides by `{_src(node.right)}`, not by the count")
        self.generic_visit(node)

    # boundaries
    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=False):
            bound = _bound(left, right) or _bound(right, left)
            if isinstance(op, ast.Gt | ast.Lt) and bound is not None and bound[1] not in self.tested_numbers:
                subject, number = bound
                self.add("boundary", node, f"`{_src(node)}` leaves {number} itself out: is {subject} = "
                                           f"{number} meant to pass? Test the value on the boundary")  # fmt: skip
            elif isinstance(op, ast.LtE) and _is_len(right) and not _is_len(left):
                self.add(
                    "boundary", node, f"`{_src(node)}` lets the index reach `{_src(right)}`, one past the end"
                )
            elif isinstance(op, ast.GtE) and _is_len(left) and not _is_len(right):
                self.add(
                    "boundary", node, f"`{_src(node)}` lets the index reach `{_src(left)}`, one past the end"
                )
            left = right
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        index = node.slice
        if _is_len(index) and isinstance(index, ast.Call) and ast.dump(index.args[0]) == ast.dump(node.value):
            self.add("boundary", node, f"`{_src(node)}` indexes one past the last item")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        it = node.iter
        if isinstance(it, ast.Call) and _dotted(it.func) == "range" and it.args:
            end = it.args[1] if len(it.args) > 1 else it.args[0]
            if _len_shifted(end):
                assert isinstance(end, ast.BinOp)
                gap = "misses the last item" if isinstance(end.op, ast.Sub) else "runs one past the end"
                self.add("boundary", it, f"`{_src(it)}` {gap}")
        self.generic_visit(node)

    # results thrown away
    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Compare):
            self.add(
                "unused-result", node, f"`{_src(value)}` is compared and the answer dropped (meant `=`?)"
            )
        elif isinstance(value, ast.BinOp | ast.BoolOp | ast.UnaryOp):
            self.add("unused-result", node, f"`{_src(value)}` is computed and dropped")
        elif isinstance(value, ast.Call):
            name = _dotted(value.func)
            method = value.func.attr if isinstance(value.func, ast.Attribute) else ""
            if name in _PURE_CALLS or method in _PURE_METHODS:
                self.add("unused-result", node, f"`{_src(value)}` returns a new value that is never used")
        self.generic_visit(node)


def _bound(subject: ast.AST, number: ast.AST) -> tuple[str, object] | None:
    """(the subject, the number) when `number` is a literal other than 0 and 1 and `subject` is a named value."""
    if not (isinstance(number, ast.Constant) and isinstance(number.value, int | float)):
        return None
    if isinstance(number.value, bool) or number.value in (0, 1, -1):
        return None
    if isinstance(subject, ast.Name | ast.Attribute):
        return _src(subject), number.value
    return None


def _reader_findings(tree: ast.Module) -> list[tuple[str, int, str]]:
    reader = _Reader(_tested_numbers(tree))
    reader.visit(tree)
    return reader.found


# --- tests for changed functions --------------------------------------------------------------------------


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


def _tested_names(tree: ast.Module) -> set[str]:
    """Names called from a test function (`test_*`) or a doctest (`>>>` lines in any docstring)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name):
                    names.add(inner.id)
                elif isinstance(inner, ast.Attribute):
                    names.add(inner.attr)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False) or ""
            for line in doc.splitlines():
                if line.strip().startswith((">>>", "...")):
                    names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line))
    return names


def _tested_numbers(tree: ast.Module) -> set[object]:
    """The numbers a test function or a doctest uses: a boundary they try is a boundary already checked."""
    numbers: set[object] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            numbers.update(
                n.value
                for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, int | float)
            )
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for line in (ast.get_docstring(node, clean=False) or "").splitlines():
                if line.strip().startswith((">>>", "...")):
                    for token in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", line):
                        numbers.add(float(token) if "." in token else int(token))
    return numbers


def _untested(tree: ast.Module, changed: frozenset[int] | None) -> list[tuple[str, int, str]]:
    tested = _tested_names(tree)
    out: list[tuple[str, int, str]] = []
    for fn in _functions(tree):
        if fn.name.startswith("_") or fn.name.startswith("test") or fn.name in tested:
            continue
        span = set(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1))
        if changed is not None and not span & changed:
            continue
        out.append(("untested-function", fn.lineno,
                    f"`{fn.name}` is called by no test function and no doctest: add a test of its edge cases"))  # fmt: skip
    return out


# --- entry point ------------------------------------------------------------------------------------------


def read_code(code: str, *, changed: frozenset[int] | None = None) -> list[Reading]:
    """What a reviewer reading `code` would name, one Reading per flaw and line (none if it does not parse).
    `changed`: for a diff, the added lines; only flaws on them (and functions touching them) count."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found = _reader_findings(tree) + _untested(tree, changed)
    seen: set[tuple[str, int]] = set()
    out: list[Reading] = []
    for kind, line, detail in sorted(found, key=lambda f: (f[1], f[0])):
        outside = changed is not None and line not in changed and kind != "untested-function"
        if (kind, line) in seen or outside:
            continue
        seen.add((kind, line))
        out.append(Reading(code=kind, line=line, detail=detail, quote=quote_line(code, line)))
    return out
