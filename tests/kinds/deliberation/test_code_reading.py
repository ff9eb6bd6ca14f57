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
        'def is_adult(age: int) -> bool:\n    """Whether a customer may open an account.\n\n    >>> is_adult(30)\n'
        '    True\n    """\n    return age > 18\n',
        "return age > 18",
    ),
    "boundary-range": (
        'def average(values: list[float]) -> float:\n    """The mean.\n\n    >>> average([2.0, 4.0])\n    3.0\n'
        '    """\n    total = 0.0\n    for i in range(len(values) - 1):\n        total += values[i]\n'
        "    return total / len(values)\n",
        "for i in range(len(values) - 1):",
    ),
    "unused-result": (
        'def label(name: str) -> str:\n    """A label.\n\n    >>> label(" ana ")\n    \'ANA\'\n    """\n'
        "    name.strip()\n    return name.upper()\n",
        "name.strip()",
    ),
    "untested-function": (
        "def discount(price: float, rate: float) -> float:\n    return price * (1 - rate)\n",
        "def discount(price: float, rate: float) -> float:",
    ),
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
    assert reading.code == flaw.removesuffix("-comparison").removesuffix("-range")
    assert reading.quote == line and code.splitlines()[reading.line - 1].strip() == line


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
