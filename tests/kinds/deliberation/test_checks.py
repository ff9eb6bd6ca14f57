"""The checks run the real tools (detect-secrets, bandit, ruff) and map their reports by the house rules."""

from __future__ import annotations

import pytest

from simulations.kinds.deliberation import checks
from simulations.kinds.deliberation.checks import CheckError, ToolFailure, run_checks
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import Severity, Submission


def codes(sub: Submission) -> set[tuple[str, str]]:
    return {(f.tool, f.code) for f in sub.findings}


def test_planted_secret_is_critical_and_never_repeated(checked: dict[str, Submission]) -> None:
    sub = checked["secret"]
    assert ("detect-secrets", "Secret Keyword") in codes(sub) and ("bandit", "B105") in codes(sub)
    assert all(f.severity == Severity.CRITICAL and not f.compromise_allowed for f in sub.findings)
    assert {f.line for f in sub.findings} == {3}
    assert not any("fake-" in f.message for f in sub.findings)  # bandit quotes the value: it is redacted
    assert checked["secret-amended"].findings == []


def test_style_sample_has_only_minor_ruff_findings(checked: dict[str, Submission]) -> None:
    sub = checked["style"]
    assert {("ruff", "E711"), ("ruff", "E741"), ("ruff", "E731")} <= codes(sub)
    assert {f.severity for f in sub.findings} == {Severity.MINOR} and {f.category for f in sub.findings} == {
        "style"
    }


def test_deadlock_sample_has_a_compromisable_critical_flaw(checked: dict[str, Submission]) -> None:
    (critical,) = checked["deadlock"].critical_findings
    assert (critical.tool, critical.code, critical.line, critical.compromise_allowed) == (
        "bandit",
        "B602",
        9,
        True,
    )


def test_clean_sample_has_no_findings(checked: dict[str, Submission]) -> None:
    assert checked["clean"].findings == [] and checked["clean"].notes == []


DIFF = """\
diff --git a/app/settings.py b/app/settings.py
--- a/app/settings.py
+++ b/app/settings.py
@@ -1,3 +1,4 @@
 import os
-API_SECRET = os.environ["API_SECRET"]
+API_SECRET = "fake-secret-4e8a1f9c2b7d6035e1a8c4f2"
+import json
 DEBUG = False
"""


def test_a_diff_is_rebuilt_and_only_added_lines_count(scenario: DeliberationScenario) -> None:
    report = run_checks(scenario, data=DIFF, source="diff", filename="ignored.py")
    assert report.filename == "settings.py"
    assert report.code.splitlines()[:3] == [
        "import os",
        'API_SECRET = "fake-secret-4e8a1f9c2b7d6035e1a8c4f2"',
        "import json",
    ]
    found = {(f.tool, f.code, f.line) for f in report.findings}
    assert ("detect-secrets", "Secret Keyword", 2) in found
    assert ("ruff", "E402", 3) in found  # module import not at top, on an added line
    assert all(f.line in (2, 3) for f in report.findings)  # "import os" (context) is never reported
    assert any("added lines" in note for note in report.notes)


@pytest.mark.parametrize(
    ("data", "source", "message"),
    [
        (b"\x89PNG\x00\x00binary", "file", "looks binary"),
        (b"x = 1\n" * 40_000, "file", "the limit is 200,000 bytes"),
        (b"\xff\xfe not utf8", "paste", "not UTF-8"),
        ("   \n", "paste", "empty"),
        ("just some text", "diff", "not a unified diff"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n", "diff", "cut short"),
        (
            "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n+a\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n+b\n",
            "diff",
            "2 files",
        ),
        ("--- a/x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", "diff", "deletes the file"),
    ],
)
def test_bad_input_gets_a_clear_error(
    scenario: DeliberationScenario, data: str | bytes, source: str, message: str
) -> None:
    with pytest.raises(CheckError, match=message):
        run_checks(scenario, data=data, source=source, filename="x.py")  # type: ignore[arg-type]


def test_unparsable_python_still_gets_the_secrets_scan(scenario: DeliberationScenario) -> None:
    report = run_checks(
        scenario,
        data='def f(:\n    token = "fake-8c1d4e7f9a2b3c5d6e7f8a9b"\n',
        source="paste",
        filename="x.py",
    )
    assert report.tools == ["detect-secrets"]
    assert "Not parsable Python (line 1" in report.notes[0]


def test_a_tool_that_overruns_its_time_is_stopped(scenario: DeliberationScenario) -> None:
    prepared = checks.prepare_input("x = 1\n", source="paste", filename="x.py", max_bytes=1000)
    with pytest.raises(ToolFailure, match="bandit took longer than 0.001 s"):
        checks.scan_bandit(prepared, timeout=0.001)


def test_an_added_line_starting_with_plus_plus_is_not_a_file_header() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,1 +1,2 @@\n x = 1\n+++x\n"
    prepared = checks.parse_unified_diff(diff)
    assert (prepared.filename, prepared.text, prepared.added_lines) == (
        "m.py",
        "x = 1\n++x\n",
        frozenset({2}),
    )
