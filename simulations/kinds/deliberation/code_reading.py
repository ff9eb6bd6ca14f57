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
- boundary: a threshold whose docstring, name or tests put the bound on the other side, a loop or sum that
  misses an item, a mean divided by `len(x) - 1` (reading_boundaries.py).
- unused-result: a value computed and thrown away, a local name never read (reading_uses.py).
- untested-function: where the submission shows tests or is a diff, a public (in a diff: changed) function no
  test calls or names (reading_uses.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .reading_ast import Found, dotted, index_suite, src
from .reading_boundaries import read_boundaries
from .reading_uses import read_untested, read_uses

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
    """The security reader: calls that run, unpickle or shell out what they are given, and SQL built of text."""

    def __init__(self) -> None:
        self.found: list[Found] = []

    def add(self, code: str, node: ast.AST, detail: str) -> None:
        self.found.append((code, getattr(node, "lineno", 1), detail))

    # unsafe evaluation, deserialisation, shell calls
    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func)
        first = node.args[0] if node.args else None
        if name in _EVAL and first is not None and not isinstance(first, ast.Constant):
            self.add("unsafe-eval", node, f"`{src(node)}` runs `{src(first)}` as Python")
        elif name in _DESERIALISE or name.endswith((".pickle.loads", ".pickle.load")):
            self.add("unsafe-deserialisation", node, f"`{src(node)}` can run code hidden in the data")
        elif (
            name in ("yaml.load", "yaml.load_all")
            and not any("Safe" in dotted(k.value) for k in node.keywords if k.arg == "Loader")
            and not any("Safe" in dotted(a) for a in node.args[1:])
        ):
            self.add("unsafe-deserialisation", node, f"`{src(node)}` without a safe loader builds any object")
        elif name in _SHELL:
            self.add("shell-call", node, f"`{src(node)}` hands its text to the shell")
        elif (name in _SUBPROCESS or name.startswith("subprocess.")) and _keyword_true(node, "shell"):
            self.add("shell-call", node, f"`{src(node)}` with shell=True hands its text to the shell")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            self._sql(node)
        self.generic_visit(node)

    # SQL built from strings: the literal parts read as SQL and values are spliced in
    def _sql(self, node: ast.AST) -> None:
        if _built_string(node) and _SQL.search(_constant_text(node)):
            self.add(
                "sql-from-strings", node, f"`{src(node)}` splices values into SQL text: use query parameters"
            )

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._sql(node)  # the parts of one string on one line make one finding (read_code keeps one per line)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._sql(node)
        self.generic_visit(node)


# --- entry point ------------------------------------------------------------------------------------------


def read_code(code: str, *, changed: frozenset[int] | None = None) -> list[Reading]:
    """What a reviewer reading `code` would name, one Reading per flaw and line (none if it does not parse).
    `changed`: for a diff, the added lines; only flaws on them (and functions touching them) count."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    suite = index_suite(tree)
    reader = _Reader()
    reader.visit(tree)
    found = (
        reader.found
        + read_boundaries(tree, code, suite)
        + read_uses(tree)
        + read_untested(tree, suite, changed)
    )
    seen: set[tuple[str, int]] = set()
    out: list[Reading] = []
    for kind, line, detail in sorted(found, key=lambda f: (f[1], f[0])):
        outside = changed is not None and line not in changed and kind != "untested-function"
        if (kind, line) in seen or outside:
            continue
        seen.add((kind, line))
        out.append(Reading(code=kind, line=line, detail=detail, quote=quote_line(code, line)))
    return out
