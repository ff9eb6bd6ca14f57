"""Static checks with real tools on submitted code; their findings are the personas' "verification results".

Not pure: each tool runs in a child process with a time limit (detect-secrets as a library inside a small child
script, bandit and ruff through their module entry points), so a tool that hangs cannot hang the deliberation.
No tool touches the network. Input is pasted code, a file's text or a unified diff; a diff is applied to nothing:
the new file's text is rebuilt from its hunks (gaps left blank so line numbers hold) and only added lines count.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from . import code_reading
from .scenario import DeliberationScenario
from .state import Finding, Severity, Submission

Source = Literal["sample", "paste", "file", "diff"]


class CheckError(ValueError):
    """The input cannot be reviewed (binary, oversized, not a diff...); the message says why. Nothing is stored."""


class ToolFailure(CheckError):
    """A tool timed out or failed; the message names the tool."""


@dataclass(frozen=True)
class RawFinding:
    tool: str
    code: str
    message: str
    line: int
    tool_severity: str | None = None


@dataclass
class CheckReport:
    filename: str
    code: str  # the text that was checked
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)

    def submission(self, *, source: Source, label: str) -> Submission:
        return Submission(
            version=1, source=source, label=label, code=self.code, findings=list(self.findings),
            notes=list(self.notes),
        )  # fmt: skip


# --- input ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedInput:
    filename: str
    text: str
    added_lines: frozenset[int] | None  # for a diff: the new file's added line numbers; None: every line


def decode_input(data: str | bytes, *, max_bytes: int) -> str:
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    if len(raw) > max_bytes:
        raise CheckError(f"The submission is {len(raw):,} bytes; the limit is {max_bytes:,} bytes.")
    if b"\x00" in raw:
        raise CheckError("The submission looks binary (it contains NUL bytes); submit source text.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckError(f"The submission is not UTF-8 text (byte {exc.start} cannot be decoded).") from None
    if not text.strip():
        raise CheckError("The submission is empty: there is nothing to review.")
    return text


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_unified_diff(text: str) -> PreparedInput:
    """Rebuild the new file of a one-file unified diff: its lines by number, and which of them were added."""
    lines = text.splitlines()
    # A file header is a "--- old" line followed by "+++ new" (an added line "++ x" also starts with "+++ ").
    paths = [
        ln[4:].split("\t")[0].strip()
        for prev, ln in zip(["", *lines], lines, strict=False)
        if ln.startswith("+++ ") and prev.startswith("--- ")
    ]
    if not paths or not any(_HUNK.match(ln) for ln in lines):
        raise CheckError("This is not a unified diff: it needs a '+++ file' line and at least one '@@' hunk.")
    if len(paths) > 1:
        raise CheckError(f"One file per review: this diff touches {len(paths)} files ({', '.join(paths)}).")
    if paths[0] == "/dev/null":
        raise CheckError("The diff deletes the file: there is no new code to review.")
    filename = PurePosixPath(paths[0].removeprefix("b/")).name or "submission.py"
    new: dict[int, str] = {}
    added: set[int] = set()
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            i += 1
            continue
        old_left = int(m.group(1) or 1)
        number, new_left = int(m.group(2)), int(m.group(3) or 1)
        hunk_line = i + 1
        i += 1
        while old_left > 0 or new_left > 0:
            if i >= len(lines) or _HUNK.match(lines[i]):
                raise CheckError(f"The hunk at line {hunk_line} of the diff is cut short.")
            ln = lines[i]
            i += 1
            if ln.startswith("\\"):
                continue  # "\ No newline at end of file"
            tag, body = (ln[:1], ln[1:]) if ln else (" ", "")
            if tag == "+":
                new[number], number, new_left = body, number + 1, new_left - 1
                added.add(number - 1)
            elif tag == "-":
                old_left -= 1
            elif tag == " ":
                new[number], number, new_left, old_left = body, number + 1, new_left - 1, old_left - 1
            else:
                raise CheckError(f"Line {i} of the diff is neither context, '+' nor '-': {ln[:40]!r}.")
            if new_left < 0 or old_left < 0:
                raise CheckError(
                    f"The hunk at line {hunk_line} of the diff has more lines than its header says."
                )
    last = max(new, default=0)
    rebuilt = "\n".join(new.get(n, "") for n in range(1, last + 1)) + "\n"
    return PreparedInput(filename=filename, text=rebuilt, added_lines=frozenset(added))


def prepare_input(data: str | bytes, *, source: Source, filename: str, max_bytes: int) -> PreparedInput:
    text = decode_input(data, max_bytes=max_bytes)
    if source == "diff":
        return parse_unified_diff(text)
    return PreparedInput(
        filename=PurePosixPath(filename).name or "submission.py", text=text, added_lines=None
    )


# --- tools ------------------------------------------------------------------------------------------------

# Runs inside the child: detect-secrets' own scanner on a temporary copy named like the submission (its filters
# read the file name). Only the secret's type and line leave the child, never the secret itself.
_SECRETS_SCRIPT = """
import json, os, sys, tempfile
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings
name, text = sys.argv[1], sys.stdin.read()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    with default_settings():
        found = SecretsCollection()
        found.scan_file(path)
        report = [{"type": s.type, "line": s.line_number} for _, s in found]
print(json.dumps(report))
"""


def _run_tool(tool: str, argv: list[str], text: str, *, timeout: float, ok_codes: tuple[int, ...]) -> Any:
    try:
        # Run in an empty folder: no project configuration (pyproject, .bandit) changes the rules, and nothing
        # in the current folder can shadow the tool's module (`python -m` puts the folder first on the path).
        with tempfile.TemporaryDirectory(prefix="mercury-check-") as folder:
            done = subprocess.run(
                argv, input=text, capture_output=True, text=True, timeout=timeout, check=False, cwd=folder
            )
    except subprocess.TimeoutExpired:
        raise ToolFailure(f"{tool} took longer than {timeout:g} s and was stopped.") from None
    if done.returncode not in ok_codes:
        raise ToolFailure(f"{tool} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise ToolFailure(f"{tool} did not return its JSON report: {done.stdout.strip()[:200]!r}") from None


def scan_secrets(prepared: PreparedInput, *, timeout: float) -> list[RawFinding]:
    argv = [sys.executable, "-c", _SECRETS_SCRIPT, prepared.filename]
    report = _run_tool("detect-secrets", argv, prepared.text, timeout=timeout, ok_codes=(0,))
    return [
        RawFinding(
            "detect-secrets", str(s["type"]), f"possible hard-coded secret ({s['type']})", int(s["line"])
        )
        for s in report
    ]


def scan_bandit(prepared: PreparedInput, *, timeout: float) -> list[RawFinding]:
    argv = [sys.executable, "-m", "bandit", "--format", "json", "--quiet", "-"]
    report = _run_tool("bandit", argv, prepared.text, timeout=timeout, ok_codes=(0, 1))
    if report.get("errors"):
        raise ToolFailure(f"bandit could not read the code: {report['errors'][0].get('reason', 'unknown')}")
    return [
        RawFinding("bandit", r["test_id"], r["issue_text"], int(r["line_number"]), r["issue_severity"])
        for r in report.get("results", [])
    ]


def scan_ruff(prepared: PreparedInput, *, select: list[str], timeout: float) -> list[RawFinding]:
    argv = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--output-format", "json",
            "--select", ",".join(select), "--stdin-filename", prepared.filename, "-"]  # fmt: skip
    if prepared.added_lines is not None:
        # Rebuilt from hunks: names defined outside them look undefined and the blank gaps break spacing rules.
        argv[-1:-1] = ["--ignore", "F821,E301,E302,E303,E305,W391"]
    report = _run_tool("ruff", argv, prepared.text, timeout=timeout, ok_codes=(0, 1))
    return [RawFinding("ruff", str(r["code"]), r["message"], int(r["location"]["row"])) for r in report]


# --- mapping and entry point ------------------------------------------------------------------------------


_QUOTED = re.compile(r"(['\"]).*?\1")


def classify(scenario: DeliberationScenario, raw: RawFinding) -> Finding:
    rule = scenario.rule_for(raw.tool, raw.code, raw.tool_severity)
    if rule is not None and rule.category == "secret":
        # Bandit quotes the password it found; a secret must not travel on into prompts, logs and reports.
        raw = RawFinding(
            raw.tool, raw.code, _QUOTED.sub("'<redacted>'", raw.message), raw.line, raw.tool_severity
        )
    if rule is None and raw.tool == code_reading.TOOL and raw.code in code_reading.DEFAULT_RULES:
        # A scenario written before the committee read code has no rule for it: the reading's own mapping.
        severity, category, compromise = code_reading.DEFAULT_RULES[raw.code]
        return Finding(tool=raw.tool, code=raw.code, message=raw.message, line=raw.line,
                       severity=Severity(severity), category=category, rule=f"reading:{raw.code}",
                       compromise_allowed=compromise)  # fmt: skip
    if rule is None:
        return Finding(tool=raw.tool, code=raw.code, message=raw.message, line=raw.line,
                       severity=Severity.MINOR, category="unclassified", rule="unclassified")  # fmt: skip
    return Finding(
        tool=raw.tool, code=raw.code, message=raw.message, line=raw.line, severity=rule.severity,
        category=rule.category, rule=rule.id, compromise_allowed=rule.compromise_allowed,
    )  # fmt: skip


_ORDER = {Severity.CRITICAL: 0, Severity.MAJOR: 1, Severity.MINOR: 2}


def run_checks(
    scenario: DeliberationScenario, *, data: str | bytes, source: Source, filename: str
) -> CheckReport:
    """Check a submission with every tool; raises CheckError on bad input or a tool's failure."""
    limits = scenario.checks
    prepared = prepare_input(data, source=source, filename=filename, max_bytes=limits.max_bytes)
    jobs: dict[str, Callable[[], list[RawFinding]]] = {
        "detect-secrets": lambda: scan_secrets(prepared, timeout=limits.timeout_seconds)
    }
    report = CheckReport(filename=prepared.filename, code=prepared.text)
    python_problem = _python_problem(prepared)
    if python_problem:
        report.notes.append(f"{python_problem}: only the secrets scan ran.")
    else:
        jobs["bandit"] = lambda: scan_bandit(prepared, timeout=limits.timeout_seconds)
        jobs["ruff"] = lambda: scan_ruff(
            prepared, select=list(limits.ruff_select), timeout=limits.timeout_seconds
        )
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {tool: pool.submit(job) for tool, job in jobs.items()}
        raw = [finding for tool in jobs for finding in futures[tool].result()]
    if prepared.added_lines is not None:
        raw = [r for r in raw if r.line in prepared.added_lines]
        report.notes.append(
            f"Diff: {len(prepared.added_lines)} added lines checked in the rebuilt {prepared.filename}."
        )
    report.tools = list(jobs)
    findings = [classify(scenario, r) for r in raw]
    if not python_problem:
        report.tools.append(code_reading.TOOL)
        read = code_reading.read_code(prepared.text, changed=prepared.added_lines)
        findings = _merge(findings, [classify(scenario, reading_finding(r)) for r in read])
    secret_lines = {f.line for f in findings if f.category == "secret"}
    masked = code_reading.mask_secrets(prepared.text, secret_lines)
    findings = [f.model_copy(update={"quote": code_reading.quote_line(masked, f.line)}) for f in findings]
    report.findings = sorted(findings, key=lambda f: (_ORDER[f.severity], f.line))
    return report


def reading_finding(reading: code_reading.Reading) -> RawFinding:
    return RawFinding(code_reading.TOOL, reading.code, reading.message, reading.line)


def _merge(tools: list[Finding], readings: list[Finding]) -> list[Finding]:
    """The tools' findings and the committee's reading; where both name the same line in the same category the
    more severe one stays (the tool's on a tie), so one flaw is not argued twice."""
    out = list(tools)
    for r in readings:
        same = next((t for t in out if t.line == r.line and t.category == r.category), None)
        if same is None:
            out.append(r)
        elif _ORDER[r.severity] < _ORDER[same.severity]:
            out[out.index(same)] = r
    return out


def _python_problem(prepared: PreparedInput) -> str | None:
    if not prepared.filename.endswith(".py"):
        return f"{prepared.filename} is not a Python file"
    try:
        ast.parse(prepared.text)
    except SyntaxError as exc:
        return f"Not parsable Python (line {exc.lineno}: {exc.msg})"
    return None


def check_sample(scenario: DeliberationScenario, sample_id: str, *, amended: bool = False) -> Submission:
    sample = scenario.sample(sample_id)
    code = sample.amended if amended else sample.code
    if code is None:
        raise CheckError(f"Sample {sample_id!r} has no amended version.")
    report = run_checks(scenario, data=code, source="sample", filename=sample.filename)
    label = f"{sample.label} (amended)" if amended else sample.label
    return report.submission(source="sample", label=label)
