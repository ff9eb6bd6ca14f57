"""The committee reads the code (issue #68): a submission with only one flaw of each class the reader knows is not
APPROVED and a persona's words quote the line; clean code is still APPROVED. Played as whole deliberations on
submissions checked by the real tools plus the reading (checks.run_checks), argued by the offline personas."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from simulations.kinds.deliberation import checks, code_reading, machine, prompts, report
from simulations.kinds.deliberation.machine import Event, Opinion, Step
from simulations.kinds.deliberation.offline import Move
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import DeliberationState, Stance, Submission, Verdict

from . import engine_loop

# flaw class -> (code with only that flaw, the line a reviewer must quote). Every function has a doctest, so
# "no test calls it" is not a second flaw (except in its own case).
FLAWED: dict[str, tuple[str, str]] = {
    "unsafe-eval": (
        'def total(expression: str) -> int:\n    """Sum an expression.\n\n    >>> total("1 + 2")\n    3\n    """\n'
        "    return eval(expression)\n",
        "return eval(expression)",
    ),
    "unsafe-deserialisation": (
        'import pickle\n\n\ndef restore(blob: bytes) -> object:\n    """A cached object.\n\n'
        '    >>> restore(pickle.dumps(1))\n    1\n    """\n    return pickle.loads(blob)\n',
        "return pickle.loads(blob)",
    ),
    "shell-call": (
        'import os\n\n\ndef archive(folder: str) -> int:\n    """Tar a folder.\n\n'
        '    >>> archive("/tmp/none")  # doctest: +SKIP\n    """\n    return os.system("tar czf out.tgz " + folder)\n',
        'return os.system("tar czf out.tgz " + folder)',
    ),
    "sql-from-strings": (
        'import sqlite3\n\n\ndef orders(db: sqlite3.Connection, customer: str) -> list:\n    """A customer\'s orders.'
        '\n\n    >>> orders(sqlite3.connect(":memory:"), "ana")  # doctest: +SKIP\n    """\n'
        '    query = f"SELECT id FROM orders WHERE customer = {customer}"\n    return db.execute(query).fetchall()\n',
        'query = f"SELECT id FROM orders WHERE customer = {customer}"',
    ),
    "boundary-comparison": (
        'def may_open_account(age: int) -> bool:\n    """Customers 18 and over may open an account.\n\n'
        '    >>> may_open_account(30)\n    True\n    """\n    return age > 18\n',
        "return age > 18",
    ),
    "boundary-range": (
        'def average(values: list[float]) -> float:\n    """The mean.\n\n    >>> average([2.0, 4.0])\n    3.0\n'
        '    """\n    total = 0.0\n    for i in range(len(values) - 1):\n        total += values[i]\n'
        "    return total / len(values)\n",
        "for i in range(len(values) - 1):",
    ),
    "boundary-mean": (
        'def average(values: list[float]) -> float:\n    """The mean.\n\n    >>> average([3.0])\n    3.0\n'
        '    """\n    return sum(values) / (len(values) - 1)\n',
        "return sum(values) / (len(values) - 1)",
    ),
    "boundary-slice": (
        'def total(amounts: list[int]) -> int:\n    """Every amount, added.\n\n    >>> total([])\n    0\n'
        '    """\n    return sum(amounts[:-1])\n',
        "return sum(amounts[:-1])",
    ),
    "unused-result": (
        'def label(name: str) -> str:\n    """A label.\n\n    >>> label(" ana ")\n    \'ANA\'\n    """\n'
        "    name.strip()\n    return name.upper()\n",
        "name.strip()",
    ),
    "unused-result-sorted": (
        'def first(names: list[str]) -> str:\n    """The first name in order.\n\n    >>> first(["b", "a"])\n'
        '    \'a\'\n    """\n    sorted(names)\n    return names[0]\n',
        "sorted(names)",
    ),
    "unused-result-name": (
        'def label(name: str) -> str:\n    """A label.\n\n    >>> label(" ana ")\n    \'ANA\'\n    """\n'
        "    cleaned = name.strip()\n    return name.upper()\n",
        "cleaned = name.strip()",
    ),
    "untested-function": (
        'def discount(price: float, rate: float) -> float:\n    """The price after a discount.\n\n'
        '    >>> discount(100.0, 0.25)\n    75.0\n    """\n    return price * (1 - rate)\n\n\n'
        "def surcharge(price: float) -> float:\n    return price * 1.5\n",
        "def surcharge(price: float) -> float:",
    ),
}
# The same shapes written right (or for a reason the code states): a reviewer names none of them.
NOT_FLAWED: dict[str, str] = {
    "inclusive bound": 'def may_open_account(age: int) -> bool:\n    """18 and over."""\n    return age >= 18\n',
    "refusing below the bound": "def check(age: int) -> None:\n    if age < 18:\n        raise ValueError('minor')\n",
    "a strict bound the docstring asks for": 'def busy(n: int) -> bool:\n    """More than 10 open orders."""\n'
    "    return n > 10\n",
    "a number with nothing said about it": "def retry(n: int) -> bool:\n    return n > 3\n",
    "a bound a test pins": 'def is_adult(age: int) -> bool:\n    """Adult?\n\n    >>> is_adult(18)\n    False\n'
    '    """\n    return age > 18\n',
    "a loop over every index": "def total(xs: list[int]) -> int:\n    t = 0\n    for i in range(len(xs)):\n"
    "        t += xs[i]\n    return t\n",
    "a loop over neighbours": "def rising(xs: list[int]) -> bool:\n    for i in range(len(xs) - 1):\n"
    "        if xs[i] > xs[i + 1]:\n            return False\n    return True\n",
    "differences from the second item": "def steps(xs: list[int]) -> list[int]:\n"
    "    return [xs[i] - xs[i - 1] for i in range(1, len(xs))]\n",
    "a sample variance's n - 1": "def variance(xs: list[float]) -> float:\n    m = sum(xs) / len(xs)\n"
    "    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)\n",
    "a string's last character cut": "def chomp(line: str) -> str:\n    return line[:-1]\n",
    "pairs of neighbours": "def gaps(xs: list[int]) -> list[int]:\n"
    "    return [b - a for a, b in zip(xs[:-1], xs[1:])]\n",
    "a stripped value kept": "def label(name: str) -> str:\n    x = name.strip()\n    return x.upper()\n",
    "a list sorted in place": "def top(xs: list[int]) -> int:\n    xs.sort()\n    return xs[0]\n",
    "a file renamed": "def move(p, q):\n    p.replace(q)\n",
    "a test named for the function": "def fee(x: int) -> int:\n    return x\n\n\ndef test_fee_is_the_amount():\n"
    "    pass\n",
    "a snippet with no tests at all": "def fee(x: int) -> int:\n    return x\n",
    "a loop that stops at its cap": 'def first(xs: list[int]) -> list[int]:\n    """Up to 10 of them."""\n'
    "    out = []\n    for x in xs:\n        out.append(x)\n        if len(out) >= 10:\n            break\n"
    "    return out\n",
}
CLEAN = (
    'def discount(price: float, rate: float) -> float:\n    """The price after a discount.\n\n'
    '    >>> discount(100.0, 0.25)\n    75.0\n    """\n    if not 0 <= rate <= 1:\n'
    '        raise ValueError("rate must be between 0 and 1")\n    return price * (1 - rate)\n'
)


@pytest.fixture(scope="module")
def submissions(scenario: DeliberationScenario) -> dict[str, Submission]:
    """Each flawed submission and the clean one, checked once by the real tools and the reading."""

    def check(code: str) -> Submission:
        report = checks.run_checks(scenario, data=code, source="paste", filename="change.py")
        return report.submission(source="paste", label="change")

    cases = {**{k: code for k, (code, _) in FLAWED.items()}, "clean": CLEAN}
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(cases, pool.map(check, cases.values()), strict=True))
    return done


def play(
    sc: DeliberationScenario,
    sub: Submission,
    *,
    human_seat: str | None = None,
    human: engine_loop.HumanPolicy | None = None,
    seed: int = 5,
) -> DeliberationState:
    st = machine.new_deliberation(sc, seed=seed, submission=sub, human_seat=human_seat)
    return engine_loop.play(sc, st, human=human)


@pytest.mark.parametrize("flaw", sorted(FLAWED))
def test_the_reader_finds_each_flaw_with_its_line_quoted(flaw: str) -> None:
    code, line = FLAWED[flaw]
    (reading,) = code_reading.read_code(code)
    expected = (
        "boundary" if flaw.startswith("boundary") else flaw.removesuffix("-sorted").removesuffix("-name")
    )
    assert reading.code == expected
    assert reading.quote == line and code.splitlines()[reading.line - 1].strip() == line


@pytest.mark.parametrize("case", sorted(NOT_FLAWED))
def test_the_same_shapes_written_right_are_not_named(case: str) -> None:
    assert code_reading.read_code(NOT_FLAWED[case]) == []


def test_a_test_that_expects_the_other_side_of_the_bound_is_named() -> None:
    code = "def is_adult(age):\n    return age > 18\n\n\ndef test_eighteen_is_adult():\n    assert is_adult(18)\n"
    (reading,) = code_reading.read_code(code)
    assert (reading.code, reading.line, reading.quote) == ("boundary", 2, "return age > 18")
    assert "a test expects `is_adult(18)` to be True" in reading.detail


def test_a_bound_named_for_a_minimum_is_itself_allowed() -> None:
    code = "MIN_LENGTH = 12\n\n\ndef strong(password: str) -> bool:\n    return len(password) > MIN_LENGTH\n"
    (reading,) = code_reading.read_code(code)
    assert reading.line == 5 and "Write `len(password) >= MIN_LENGTH`" in reading.detail
    assert code_reading.read_code(code.replace(">", ">=")) == []


@pytest.mark.parametrize(
    ("flaw", "seat"),
    [(f, "maintainer") for f in FLAWED if f.startswith(("boundary", "unused"))]
    + [(f, "security") for f in ("unsafe-eval", "unsafe-deserialisation", "shell-call", "sql-from-strings")]
    + [("untested-function", "ops_km"), ("untested-function", "maintainer")],
)
def test_the_member_whose_field_it_is_raises_it_and_others_do_not_claim_it(
    scenario: DeliberationScenario, submissions: dict[str, Submission], flaw: str, seat: str
) -> None:
    code, line = FLAWED[flaw]
    st = play(scenario, submissions[flaw])
    ballots = st.rounds[0].ballots
    raised = ballots[seat]
    assert raised.stance != Stance.ABSTAIN and f"`{line}`" in raised.text
    number = [text.strip() for text in code.splitlines()].index(line) + 1
    assert any(item.startswith(f"line {number}:") for item in raised.fix_items), raised.fix_items
    for other, ballot in ballots.items():
        field = set(scenario.persona(other).expertise)
        if not field & {f.category for f in submissions[flaw].findings} and other != "business":
            assert ballot.stance == Stance.ABSTAIN, (other, ballot.text)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_issues_example_is_no_longer_approved(
    scenario: DeliberationScenario, checked: dict[str, Submission], seed: int
) -> None:
    """Issue #68: a file with an off-by-one in `average()` and `age > 18` was APPROVED 4/4."""
    sub = checked["boundary"]
    assert {(f.code, f.quote) for f in sub.findings} == {
        ("boundary", "return sum(values) / (len(values) - 1)"),
        ("boundary", "return age > 18"),
    }
    st = play(scenario, sub, seed=seed)
    assert st.verdict == Verdict.REQUEST_CHANGES
    words = st.rounds[0].ballots["maintainer"].text
    assert "`return sum(values) / (len(values) - 1)`" in words and "`return age > 18`" in words
    assert any("age >= 18" in item for item in st.fix_items)


@pytest.mark.parametrize("flaw", sorted(FLAWED))
def test_a_submission_with_only_that_flaw_is_not_approved_and_a_member_quotes_the_line(
    scenario: DeliberationScenario, submissions: dict[str, Submission], flaw: str
) -> None:
    code, line = FLAWED[flaw]
    sub = submissions[flaw]
    # the finding quotes the line (a tool's, where bandit already names it: the reading does not repeat it)
    (found,) = [f for f in sub.findings if f.quote == line]
    assert all(f.quote == line for f in sub.findings if f.severity != "minor"), sub.findings
    st = play(scenario, sub)
    assert st.verdict is not None and st.verdict != Verdict.APPROVED
    words = [b.text for r in st.rounds for b in r.ballots.values()]
    assert any(f"`{line}`" in w for w in words), words  # a persona's words quote the line
    assert any(f"line {found.line}" in i for i in st.fix_items)


def test_clean_code_with_its_doctest_is_still_approved(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    sub = submissions["clean"]
    assert sub.findings == []
    st = play(scenario, sub)
    assert (st.verdict, st.fix_items) == (Verdict.APPROVED, [])
    assert all(b.stance == Stance.SYNTHESIS for b in st.rounds[0].ballots.values())


def test_security_flaws_read_in_the_code_are_vetoed_by_the_security_lead(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    for flaw in ("unsafe-eval", "unsafe-deserialisation", "shell-call", "sql-from-strings"):
        st = play(scenario, submissions[flaw])
        assert st.rounds[0].ballots["security"].stance == Stance.VETO, flaw


def test_a_flaw_only_in_a_diffs_old_lines_is_not_read() -> None:
    code = "def f(age):\n    return age > 18\n\n\ndef g(age):\n    return age > 21\n"
    read = code_reading.read_code(code, changed=frozenset({6}))
    assert [(r.code, r.line) for r in read] == [("untested-function", 5), ("boundary", 6)]


def test_an_abstention_outside_ones_field_says_what_it_would_need(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    st = play(scenario, submissions["unsafe-eval"])
    abstained = [b for b in st.rounds[0].ballots.values() if b.stance == Stance.ABSTAIN]
    assert abstained
    for ballot in abstained:
        assert "would need" in ballot.text and "line 7" in ballot.text
        assert ballot.declared == Stance.ABSTAIN  # its badge ("Abstains") agrees with its words


def test_the_cost_of_delay_follows_the_scenarios_figures_and_the_findings(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    def offers(sc: DeliberationScenario) -> list[str]:
        outcomes: list[machine.Outcome] = []
        st = machine.new_deliberation(sc, seed=2, submission=submissions["shell-call"])
        engine_loop.play(sc, st, on_outcome=outcomes.append)
        return [o.payload["text"] for o in outcomes if o.event == Event.COMPROMISE_OFFERED]

    texts = offers(scenario)
    assert len(texts) >= 2
    figures = {tuple(re.findall(r"€([\d,]+)", t)) for t in texts}
    per_day = scenario.delivery.cost_per_day
    days = scenario.delivery.fix_days[submissions["shell-call"].critical_findings[0].severity]
    assert figures == {(f"{per_day:,}", f"{round(per_day * days):,}")}  # the same every round: no fixed step
    dearer = scenario.model_copy(
        update={"delivery": scenario.delivery.model_copy(update={"cost_per_day": 9000})}
    )
    assert all("€9,000" in t for t in offers(dearer))


def test_the_members_answer_a_persons_argument_on_its_merits(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    def maintainer(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        return Move(Event.OPINION_GIVEN, Opinion(seat="maintainer", stance=Stance.SYNTHESIS, confidence=0.9,
                                                 text="Line 2 is only the docstring; merge it."))  # fmt: skip

    st = play(scenario, submissions["unsafe-eval"], human_seat="maintainer", human=maintainer)
    later = st.rounds[0].ballots["business"].text
    assert "points at line 2" in later and "neither the tools nor my reading" in later
    if len(st.rounds) > 1:
        assert "points at line 2" in st.rounds[1].ballots["ops_km"].text

    def pointed(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        return Move(Event.OPINION_GIVEN, Opinion(seat="maintainer", stance=Stance.SYNTHESIS, confidence=0.9,
                                                 text="I am fine with line 7."))  # fmt: skip

    st = play(scenario, submissions["unsafe-eval"], human_seat="maintainer", human=pointed)
    assert "points at line 7, and rightly" in st.rounds[0].ballots["business"].text


def test_a_real_model_gets_the_code_with_secrets_masked_and_the_quoted_findings(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = machine.new_deliberation(scenario, seed=1, submission=checked["secret"])
    user = prompts.build_messages(scenario, st, "security")[1]["content"]
    secret = scenario.sample("secret").code.split('"')[1]
    assert secret not in user and 'AWS_SECRET = "***"' in user
    assert "def auth_header()" in user  # the rest of the code is there as written
    assert 'Secret Keyword line 3 `AWS_SECRET = "***"`' in user


def test_masking_a_line_without_quotes_keeps_its_name() -> None:
    assert code_reading.mask_line("token: abc123") == "token: ***"
    assert code_reading.mask_line("KEY = b'xyz'") == "KEY = b'***'"


def test_a_boundary_a_doctest_tries_is_already_checked() -> None:
    tried = 'def is_adult(age: int) -> bool:\n    """Adult?\n\n    >>> is_adult(18)\n    False\n    """\n    return age > 18\n'
    assert code_reading.read_code(tried) == []


def test_a_scenario_without_reading_rules_maps_the_reading_itself(scenario: DeliberationScenario) -> None:
    old = scenario.model_copy(
        update={"house_rules": [r for r in scenario.house_rules if r.tool != "code-reading"]}
    )
    raw = checks.RawFinding(code_reading.TOOL, "unsafe-eval", "`eval(x)` runs `x` as Python", 3)
    finding = checks.classify(old, raw)
    assert (finding.severity, finding.category, finding.compromise_allowed) == ("critical", "security", True)


def test_the_report_quotes_each_findings_line(
    scenario: DeliberationScenario, submissions: dict[str, Submission], checked: dict[str, Submission]
) -> None:
    st = machine.new_deliberation(scenario, seed=1, submission=submissions["boundary-comparison"])
    table = "\n".join(report.render_findings(st))
    assert "the line reads: return age &gt; 18" in table
    secret = scenario.sample("secret").code.split('"')[1]
    table = "\n".join(
        report.render_findings(machine.new_deliberation(scenario, seed=1, submission=checked["secret"]))
    )
    assert 'the line reads: AWS\\_SECRET = "\\*\\*\\*"' in table  # the secret's line, masked
    assert secret not in table


DIFF = '''\
--- a/fees.py
+++ b/fees.py
@@ -1,7 +1,11 @@
 def base_fee(amount: float) -> float:
     """The base fee.

     >>> base_fee(100.0)
     1.0
     """
     return amount / 100
+
+
+def express_fee(amount: float) -> float:
+    return amount / 50
'''


def test_a_diff_that_changes_a_function_no_test_calls_is_not_approved(scenario: DeliberationScenario) -> None:
    report = checks.run_checks(scenario, data=DIFF, source="diff", filename="fees.diff")
    sub = report.submission(source="diff", label="fees")
    (finding,) = sub.findings
    assert (finding.code, finding.line, finding.quote) == (
        "untested-function",
        10,
        "def express_fee(amount: float) -> float:",
    )  # base_fee has a doctest and express_fee none; only the added lines count
    st = play(scenario, sub)
    assert st.verdict == Verdict.REQUEST_CHANGES
    assert any("`def express_fee(amount: float) -> float:`" in b.text for b in st.rounds[0].ballots.values())


def test_an_abstainer_defers_to_the_member_whose_field_it_is(
    scenario: DeliberationScenario, submissions: dict[str, Submission]
) -> None:
    st = play(scenario, submissions["unsafe-eval"])
    ballots = st.rounds[0].ballots
    assert ballots["security"].stance == Stance.VETO
    # the maintainer speaks after the security lead: it says what that reading was instead of guessing
    assert ballots["maintainer"].text.startswith("The Security Lead has read it and vetoes")
    assert not ballots["ops_km"].text.startswith(
        "The Security Lead"
    )  # it spoke first, with nothing to defer to


def _arguing(text: str, seat: str = "security") -> engine_loop.HumanPolicy:
    def policy(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        return Move(
            Event.OPINION_GIVEN, Opinion(seat=seat, stance=Stance.SYNTHESIS, confidence=0.9, text=text)
        )

    return policy


def test_a_person_who_argues_a_shell_call_is_safe_is_answered_from_the_code(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    """Issue #68: a student in the security seat who argues that `shell=True` is safe here got no answer."""
    claim = "shell=True is safe here: the deploy target comes from our own config."
    st = play(scenario, checked["deadlock"], human_seat="security", human=_arguing(claim))
    answer = st.rounds[0].ballots["maintainer"].text
    assert "The Security Lead holds that line 9 is safe" in answer
    assert "takes `target` straight from whoever calls `deploy`, and nothing checks it" in answer
    assert "without shell=True" in answer and "I defer" not in answer

    guarded = (
        "import subprocess\n\nHOSTS = ('staging', 'prod')\n\n\ndef deploy(target: str) -> None:\n"
        '    """Copy the build.\n\n    >>> deploy("nowhere")  # doctest: +SKIP\n    """\n'
        "    if target not in HOSTS:\n        raise ValueError(target)\n"
        '    subprocess.run("rsync -a build/ " + target, shell=True, check=True)\n'
    )
    sub = checks.run_checks(scenario, data=guarded, source="paste", filename="deploy.py").submission(
        source="paste", label="deploy"
    )
    st = play(scenario, sub, human_seat="security", human=_arguing(claim))
    answer = st.rounds[0].ballots["maintainer"].text
    assert "The Security Lead has a point: `target` is checked on line 11 before it reaches line 13" in answer


def test_a_person_who_defends_a_boundary_is_answered_with_the_reading(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = play(
        scenario, checked["boundary"], human_seat="security", human=_arguing("Leave age > 18 as it is.")
    )
    answer = st.rounds[0].ballots["maintainer"].text
    assert answer.startswith("The Security Lead would keep line 16 as written, but that does not answer")
    assert '"18 and over"' in answer and st.verdict == Verdict.REQUEST_CHANGES
