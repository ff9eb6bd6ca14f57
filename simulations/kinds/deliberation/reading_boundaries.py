"""Boundary conditions, read as a reviewer reads them (pure: the standard library's `ast` and `tokenize`).

A strict or loose comparison with a number is only wrong against what the code says it means, so a comparison is
named only on evidence of which side the bound itself belongs to:
- the function's docstring or comments ("18 and over", "at least 18", "under 18", "no more than 10"...);
- the bound's name (`MIN_AGE` is allowed itself; so is a `MAX_AMOUNT` compared with an amount, not a count);
- an age: it counts from the birthday, so a person of 18 is "18 and over";
- the submission's own tests: a test or doctest that calls the function with the bound and states the result the
  comparison does not give is a failing test; one that states the result it gives pins the choice (not named).
Only a comparison that admits or refuses a value is judged by the words: a loop's stopping test (`while n < 10`,
`if len(out) >= 10: break`) is right or wrong by when the count grows, which the words do not say.
Loops and sums that skip an item are named from their shape: `range(len(x) - 1)` or `range(1, len(x))` that
index `x[i]` with no neighbour (`x[i + 1]`, `x[i - 1]`), a mean divided by `len(x) - 1` (a variance's `n - 1` is
Bessel's correction, not a slip), `x[:-1]` summed or looped over, `x[len(x)]`, an index compared `<= len(x)`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence

from .reading_ast import Found, SuiteIndex, dotted, is_len, len_of, len_shift, same, src

# Which side of the comparison the bound itself belongs to: "upper" when the bound goes with the values above it
# (`>=` and its complement `<` are right), "lower" when it goes with the values below (`>` and `<=`).
_UPPER, _LOWER = "upper", "lower"
_N = r"(?<![\d.]){n}(?![\d.])"
_UNIT = r"(?:\s*(?:years?|yrs?|days?|items?|points?|%|percent)(?:\s+old)?)?"
_PHRASES: dict[str, list[str]] = {
    _UPPER: [
        _N + _UNIT + r"\s*(?:and|or)\s+(?:over|above|older|up|upwards|more|greater|higher|later|after)\b",
        _N + r"\s*\+",
        r"\b(?:at\s+least|no\s+less\s+than|no\s+fewer\s+than|not\s+less\s+than|not\s+under|not\s+below|"
        r"a\s+minimum\s+of|minimum(?:\s+of)?|min\.?|from)\s+" + _N,
        r"\b(?:under|below|less\s+than|fewer\s+than|younger\s+than)\s+" + _N,
    ],
    _LOWER: [
        _N + _UNIT + r"\s*(?:and|or)\s+(?:under|below|less|fewer|younger|lower|earlier|before)\b",
        r"\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|no\s+greater\s+than|not\s+over|not\s+above|"
        r"not\s+exceeding|up\s+to|a\s+maximum\s+of|maximum(?:\s+of)?|max\.?)\s+" + _N,
        r"\b(?:over|above|more\s+than|greater\s+than|older\s+than|exceeds?|exceeding|beyond)\s+" + _N,
    ],
}
_RIGHT_OPS = {_UPPER: (ast.GtE, ast.Lt), _LOWER: (ast.Gt, ast.LtE)}
_SWAP: dict[type[ast.cmpop], ast.cmpop] = {
    ast.Gt: ast.GtE(),
    ast.GtE: ast.Gt(),
    ast.Lt: ast.LtE(),
    ast.LtE: ast.Lt(),
}
_MIRROR: dict[type[ast.cmpop], ast.cmpop] = {
    ast.Gt: ast.Lt(),
    ast.Lt: ast.Gt(),
    ast.GtE: ast.LtE(),
    ast.LtE: ast.GtE(),
}
_AT_BOUND = {
    ast.Gt: False,
    ast.Lt: False,
    ast.GtE: True,
    ast.LtE: True,
}  # the comparison's value at the bound


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _said_side(text: str, value: float) -> tuple[str, str] | None:
    """(side, the words that say it) when `text` places `value` on one side, and only one."""
    number = re.escape(_number_text(value))
    hits = {
        side: m.group(0)
        for side, patterns in _PHRASES.items()
        for pattern in patterns
        if (m := re.search(pattern.format(n=number), text, re.IGNORECASE))
    }
    if len(hits) != 1:
        return None
    ((side, words),) = hits.items()
    return side, " ".join(words.split())


def _comments(code: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


class _Scope:
    """A function (or the module) with the words that say what it means."""

    def __init__(self, node: ast.AST, code_comments: dict[int, str]) -> None:
        self.node = node
        self.name = getattr(node, "name", "")
        doc = (
            ast.get_docstring(node)
            if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef | ast.Module)
            else None
        )
        first, last = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or 10**9
        said = [doc or ""] + [text for line, text in code_comments.items() if first <= line <= last]
        self.words = "\n".join(said)
        self.params = (
            [a.arg for a in node.args.posonlyargs + node.args.args]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            else []
        )


def _numeric(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value) if isinstance(node.value, float) else int(node.value)  # type: ignore[arg-type]
    return None


def _constants(tree: ast.Module) -> dict[str, float]:
    """Module-level names bound once to a number: `MIN_AGE = 18`."""
    out: dict[str, float] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(target, ast.Name)
            and value is not None
        ):
            number = _numeric(value)
            if number is not None:
                out[target.id] = number
    return out


def _number(node: ast.AST, constants: dict[str, float]) -> tuple[float, str] | None:
    """(value, how the code names it) for a numeric literal or a module constant bound to one."""
    if (value := _numeric(node)) is not None:
        return value, _number_text(value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and (value := _numeric(node.operand)):
        return -value, _number_text(-value)
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id], node.id
    return None


def _last_word(node: ast.AST) -> str:
    name = dotted(node).rsplit(".", 1)[-1]
    return name.lower().rsplit("_", 1)[-1]


class BoundaryReader(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, code: str, suite: SuiteIndex) -> None:
        self.found: list[Found] = []
        self.suite = suite
        self.comments = _comments(code)
        self.constants = _constants(tree)
        self.scopes: list[_Scope] = [_Scope(tree, self.comments)]
        self.module_doc = ast.get_docstring(tree) or ""
        self.parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def add(self, node: ast.AST, detail: str) -> None:
        self.found.append(("boundary", getattr(node, "lineno", 1), detail))

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scopes.append(_Scope(node, self.comments))
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    # --- comparisons with a threshold -------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1 and type(node.ops[0]) in _SWAP:
            self._threshold(node)
            self._index_past_end(node)
        self.generic_visit(node)

    def _threshold(self, node: ast.Compare) -> None:
        op, left, right = node.ops[0], node.left, node.comparators[0]
        bound = _number(right, self.constants)
        subject = left
        if bound is None and (bound := _number(left, self.constants)) is not None:
            op, subject = _MIRROR[type(op)], right  # read `18 < age` as `age > 18`
        if bound is None or _number(subject, self.constants) is not None:
            return
        value, named = bound
        scope = self.scopes[-1]
        verdict = self._tested(node, scope, subject, value)
        if verdict == "pinned":
            return
        if verdict is not None:
            self.add(node, verdict)
            return
        if not self._decides(node):
            return  # a loop's stopping test: when the count grows decides which side is right, not the words
        reason = self._evidence(scope, subject, value, named)
        if reason is None:
            return
        side, why = reason
        if isinstance(op, _RIGHT_OPS[side]):
            return
        fixed = ast.Compare(left=node.left, ops=[_SWAP[type(node.ops[0])]], comparators=node.comparators)
        where = "above" if side == _UPPER else "below"
        self.add(node, f"`{src(node)}` puts {named} itself on the wrong side of the line: {why}, so {named} "
                       f"belongs with the values {where} it. Write `{ast.unparse(fixed)}` and test {named} itself")  # fmt: skip

    def _decides(self, node: ast.AST) -> bool:
        """Whether the comparison admits or refuses a value (returned, asserted, guarding a branch that does
        something), rather than ending a loop (`while n < 10`, `if len(out) >= 10: break`)."""
        child, parent = node, self.parents.get(node)
        while isinstance(parent, ast.BoolOp | ast.UnaryOp):
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.While) and parent.test is child:
            return False
        if isinstance(parent, ast.If) and parent.test is child:
            return not all(isinstance(stmt, ast.Break | ast.Continue | ast.Pass) for stmt in parent.body)
        return True

    def _evidence(self, scope: _Scope, subject: ast.AST, value: float, named: str) -> tuple[str, str] | None:
        said = _said_side(scope.words, value) or _said_side(self.module_doc, value)
        if said is not None:
            side, words = said
            whose = f"`{scope.name}`'s docstring" if scope.name else "the module"
            return side, f'{whose} says "{words}"'
        lowered = named.lower()
        if named in self.constants and re.search(r"(?:^|_)(?:min|minimum)(?:_|$)", lowered):
            return _UPPER, "a minimum is itself allowed"
        if (
            named in self.constants
            and re.search(r"(?:^|_)(?:max|maximum)(?:_|$)", lowered)
            and not is_len(subject)
        ):
            return _LOWER, "a maximum is itself allowed"
        if _last_word(subject) == "age" and float(value).is_integer() and 12 <= value <= 100:
            return (
                _UPPER,
                f"an age counts from the birthday (someone who turns {named} today is {named} and over)",
            )
        return None

    def _tested(self, node: ast.Compare, scope: _Scope, subject: ast.AST, value: float) -> str | None:
        """What the submission's tests say of the function at the bound: "pinned" when a test calls it with the
        bound (a stated choice), a failing test's description when the result it states is not what the
        comparison gives, None when no test tries the bound."""
        if not scope.name or not isinstance(subject, ast.Name) or subject.id not in scope.params:
            return None
        position = scope.params.index(subject.id)
        if scope.params[:1] in (["self"], ["cls"]):
            position -= 1
        tries = [
            e for e in self.suite.expectations
            if e.function == scope.name and len(e.args) > position >= 0 and e.args[position] == value
        ]  # fmt: skip
        if not tries:
            return None
        given = self._returned(node, scope)
        for e in tries:
            if given is not None and e.known and isinstance(e.result, bool) and e.result != given:
                call = f"{scope.name}({', '.join(repr(a) for a in e.args)})"
                return (f"a test expects `{call}` to be {e.result}, but `{src(node)}` is {given} at "
                        f"{_number_text(value)}: the bound is on the wrong side")  # fmt: skip
        return "pinned"

    @staticmethod
    def _returned(node: ast.Compare, scope: _Scope) -> bool | None:
        """The function's result at the bound when it returns the comparison itself (or its negation)."""
        for ret in ast.walk(scope.node):
            if not isinstance(ret, ast.Return) or ret.value is None:
                continue
            if ret.value is node:
                return _AT_BOUND[type(node.ops[0])]
            if (
                isinstance(ret.value, ast.UnaryOp)
                and isinstance(ret.value.op, ast.Not)
                and ret.value.operand is node
            ):
                return not _AT_BOUND[type(node.ops[0])]
        return None

    def _index_past_end(self, node: ast.Compare) -> None:
        """`i <= len(x)` (or `len(x) >= i`) where the code indexes `x[i]`: the last index is `len(x) - 1`."""
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, ast.GtE):
            left, right = right, left
        elif not isinstance(op, ast.LtE):
            return
        seq = len_of(right)
        if seq is None or not isinstance(left, ast.Name):
            return
        indexed = _indexes([self.scopes[-1].node], left.id).get(ast.dump(seq), set())
        if 0 in indexed:
            self.add(node, f"`{src(node)}` lets `{left.id}` reach `{src(right)}`, one past the last index of "
                           f"`{src(seq)}`")  # fmt: skip

    # --- loops and sums that miss an item ---------------------------------------------------------------

    def visit_For(self, node: ast.For) -> None:
        self._range(node.iter, node.target, node.body)
        self._sliced(node.iter, node.iter)
        self.generic_visit(node)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        for gen in node.generators:
            self._range(gen.iter, gen.target, [node])
            self._sliced(gen.iter, gen.iter)
        self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def _range(self, it: ast.AST, target: ast.AST, body: Sequence[ast.AST]) -> None:
        if not (isinstance(it, ast.Call) and dotted(it.func) == "range" and 1 <= len(it.args) <= 2):
            return
        if not isinstance(target, ast.Name):
            return
        start = it.args[0] if len(it.args) == 2 else None
        end = it.args[-1]
        indexes = _indexes(body, target.id)
        if (shifted := len_shift(end)) is not None and (start is None or _is_zero(start)):
            seq, k = shifted
            offsets = indexes.get(ast.dump(seq), set())
            if 0 not in offsets:
                return  # the loop does not read `seq[i]`: its index means something else
            if k < 0 and not any(o > 0 for o in offsets):
                self.add(it, f"`{src(it)}` stops {_count(-k)} short: the loop never reads the last "
                             f"{_items(-k)} of `{src(seq)}`; `range(len({src(seq)}))` reads them all")  # fmt: skip
            elif k > 0:
                self.add(
                    it, f"`{src(it)}` runs past the end: `{src(seq)}[{target.id}]` fails on its last turn"
                )
        elif start is not None and (counted := len_of(end)) is not None and isinstance(start, ast.Constant):
            first = start.value
            offsets = indexes.get(ast.dump(counted), set())
            if type(first) is int and first > 0 and 0 in offsets and not any(o < 0 for o in offsets):
                self.add(it, f"`{src(it)}` starts at {first}: the loop never reads the first "
                             f"{_items(first)} of `{src(counted)}`")  # fmt: skip

    def _sliced(self, it: ast.AST, where: ast.AST) -> None:
        seq = _drop_last(it)
        if seq is not None and not _looks_textual(seq, self.scopes[-1]):
            self.add(it, f"`{src(where)}` leaves out the last of `{src(seq)}`: `[:-1]` stops before it")

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func).rsplit(".", 1)[-1]
        if (
            name in {"sum", "min", "max", "len", "sorted", "mean", "fmean", "median", "any", "all"}
            and node.args
        ):
            self._sliced(node.args[0], node)
        self.generic_visit(node)

    # --- divisions by one too many or too few -----------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Div | ast.FloorDiv) and (shifted := len_shift(node.right)) is not None:
            seq, k = shifted
            scope = self.scopes[-1]
            about = f"{scope.name} {scope.words}".lower()
            spread = re.search(r"varian|std|stdev|deviation|bessel|sample|unbiased", about)
            squares = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) for n in ast.walk(node.left))
            uses_seq = any(same(n, seq) for n in ast.walk(node.left))
            if not spread and not squares and (uses_seq or re.search(r"\b(?:mean|average|avg)", about)):
                example = ""
                if isinstance(node.left, ast.Call) and dotted(node.left.func) == "sum" and 2 + k > 0:
                    example = f": the mean of [2, 4] comes out {6 / (2 + k):g}, not 3"
                fewer = "fewer" if k < 0 else "more"
                self.add(node, f"`{src(node)}` divides by {_count(abs(k))} {fewer} than there are "
                               f"{src(seq)}{example}")  # fmt: skip
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if (inner := len_of(node.slice)) is not None and same(inner, node.value):
            self.add(
                node, f"`{src(node)}` reads one past the last item (the last is `[len(...) - 1]`, or `[-1]`)"
            )
        self.generic_visit(node)


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _count(k: int) -> str:
    return "one" if k == 1 else str(k)


def _items(k: int) -> str:
    return "item" if k == 1 else f"{k} items"


def _indexes(body: Sequence[ast.AST], var: str) -> dict[str, set[int]]:
    """For each sequence indexed by `var` in `body`: the offsets used (`x[i]` 0, `x[i + 1]` 1, `x[i - 1]` -1)."""
    out: dict[str, set[int]] = {}
    for stmt in body:
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Subscript):
                continue
            index, offset = n.slice, None
            if isinstance(index, ast.Name) and index.id == var:
                offset = 0
            elif (
                isinstance(index, ast.BinOp)
                and isinstance(index.op, ast.Add | ast.Sub)
                and isinstance(index.left, ast.Name)
                and index.left.id == var
                and isinstance(index.right, ast.Constant)
                and type(index.right.value) is int
            ):
                offset = index.right.value if isinstance(index.op, ast.Add) else -index.right.value
            if offset is not None:
                out.setdefault(ast.dump(n.value), set()).add(offset)
    return out


def _drop_last(node: ast.AST) -> ast.AST | None:
    """`x` when `node` is `x[:-1]`."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
        return None
    s = node.slice
    upper = s.upper
    minus_one = (
        isinstance(upper, ast.UnaryOp)
        and isinstance(upper.op, ast.USub)
        and isinstance(upper.operand, ast.Constant)
        and upper.operand.value == 1
    ) or (isinstance(upper, ast.Constant) and upper.value == -1)
    return node.value if s.lower is None and s.step is None and minus_one else None


def _looks_textual(seq: ast.AST, scope: _Scope) -> bool:
    """A string's `[:-1]` drops a newline or a trailing separator: that is a choice, not a missed item."""
    if isinstance(seq, ast.Constant | ast.JoinedStr):
        return True
    name = dotted(seq)
    if isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
        for arg in scope.node.args.args + scope.node.args.kwonlyargs:
            if arg.arg == name and arg.annotation is not None and src(arg.annotation) in ("str", "bytes"):
                return True
    return bool(re.search(r"(?:^|_)(?:line|text|path|name|word|s|string|url)$", name.lower()))


def read_boundaries(tree: ast.Module, code: str, suite: SuiteIndex) -> list[Found]:
    reader = BoundaryReader(tree, code, suite)
    reader.visit(tree)
    return reader.found
