"""`make audit`: pip-audit against the lock, with a summary that says what was checked and what was not.

    .venv/bin/python scripts/audit_lock.py --lock requirements.lock [--require-checked]

pip-audit asks one vulnerability service at a time about each pinned package. Each service (PyPI's JSON API, then
osv.dev) runs here as its own pip-audit process with a time limit, and this script reads its JSON report. A package
a service could not look up is listed by pip-audit as skipped, and a service that could not be reached at all
writes no report: pip-audit itself then still ends with "No known vulnerabilities found" for what it did not check,
or with a traceback. The summary counts the lock's packages against what the services really answered, so a
package is "checked" only when at least one service gave an answer for its version.

Where the package index is a mirror (as on this project's machines), PyPI's service finds no package ("Dependency
not found on PyPI") and osv.dev does not resolve: the summary then says plainly that nothing was verified.

Exit status: 1 when a service reports a vulnerability; 2 with --require-checked when some locked package was
checked by no service; 0 otherwise, including when nothing could be checked (the summary then says so in capitals).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVICES = ("pypi", "osv")
SERVICE_SECONDS = 240  # a whole pip-audit run against one service, at most
REQUEST_SECONDS = 10  # pip-audit's own socket time-out, per request
# pip-audit's reason when PyPI's JSON API (where it reads vulnerabilities) does not know a release.
NOT_ON_PYPI = "Dependency not found on PyPI and could not be audited"
MIRROR_HINT = (
    "(not one package found: the index answering for PyPI here likely serves packages but not PyPI's JSON API,"
    " as a mirror does)"
)
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;\\]+)")


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them (pip-audit and the lock may spell one name differently)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_packages(text: str) -> dict[str, str]:
    """The lock's `name==version` lines (hash and comment lines skipped), by canonical name."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _PINNED.match(line.strip())
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found


@dataclass(frozen=True)
class Vulnerability:
    package: str
    version: str
    id: str
    fix_versions: tuple[str, ...]


@dataclass
class ServiceReport:
    """What one service answered: the packages it checked, those it skipped (with pip-audit's reason), the
    vulnerabilities it found; or, when the run gave no report at all, why (`failure`)."""

    service: str
    checked: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    vulnerabilities: list[Vulnerability] = field(default_factory=list)
    failure: str | None = None


def _reason(entry: dict[str, Any]) -> str:
    """pip-audit's skip reason without its trailing ": name (version)", so equal reasons group together."""
    reason = str(entry.get("skip_reason") or "skipped, no reason given")
    return re.sub(r":\s*\S+ \([^)]*\)\s*$", "", reason)


def parse_report(service: str, report: dict[str, Any]) -> ServiceReport:
    """pip-audit's JSON (`-f json`): each dependency has either a `skip_reason` or a `version` and its `vulns`."""
    parsed = ServiceReport(service)
    for entry in report.get("dependencies", []):
        name = canonical(str(entry.get("name", "")))
        if "skip_reason" in entry or "version" not in entry:
            parsed.skipped[name] = _reason(entry)
            continue
        parsed.checked.add(name)
        for vuln in entry.get("vulns") or []:
            fixes = tuple(str(v) for v in vuln.get("fix_versions") or [])
            parsed.vulnerabilities.append(
                Vulnerability(name, str(entry["version"]), str(vuln.get("id")), fixes)
            )
    return parsed


def _last_line(text: str) -> str:
    """The exception pip-audit died of: the last non-empty line of its stderr."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def run_service(command: Sequence[str], lock: Path, service: str, timeout: float) -> ServiceReport:
    """One pip-audit run: no dependency resolution and no pip (the lock pins everything), JSON to a file."""
    with tempfile.TemporaryDirectory(prefix="audit-") as tmp:
        output = Path(tmp) / "report.json"
        args = [*command, "--requirement", str(lock), "--vulnerability-service", service, "--no-deps"]
        args += ["--disable-pip", "--progress-spinner", "off", "--timeout", str(REQUEST_SECONDS)]
        args += ["--format", "json", "--output", str(output)]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return ServiceReport(service, failure=f"no answer within {timeout:g} s")
        try:
            report = json.loads(output.read_text())
        except (OSError, ValueError):
            # pip-audit exits 1 both for a vulnerability found (report written) and for a crash (none written).
            return ServiceReport(
                service, failure=f"pip-audit exited {done.returncode}: {_last_line(done.stderr)}"
            )
    return parse_report(service, report)


def _wrapped(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        text, width=110, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )


def _names(names: Iterable[str], indent: str = "      ") -> list[str]:
    return _wrapped(", ".join(sorted(names)), indent)


def _service_lines(report: ServiceReport, locked: dict[str, str]) -> list[str]:
    if report.failure is not None:
        return [
            f"  {report.service}: checked nothing, the service could not be used:",
            *_wrapped(report.failure, "    "),
        ]
    checked = report.checked & locked.keys()
    lines = [f"  {report.service}: checked {len(checked)} of {len(locked)}"]
    reasons: dict[str, list[str]] = {}
    for name in locked:
        if name not in checked:
            reasons.setdefault(report.skipped.get(name, "not in pip-audit's report"), []).append(name)
    for reason, names in sorted(reasons.items(), key=lambda item: -len(item[1])):
        lines.append(f"    not checked ({len(names)}): {reason}")
        lines += _names(names)
    if len(reasons.get(NOT_ON_PYPI, ())) == len(locked):
        lines += _wrapped(MIRROR_HINT, "    ")
    return lines


def _verdict(
    checked: set[str], unchecked: list[str], vulnerabilities: list[Vulnerability], total: int
) -> list[str]:
    if not checked:
        # Never "no known vulnerabilities" here: no service said anything about any package.
        return [f"NOTHING WAS VERIFIED: none of the {total} locked packages could be checked by any service."]
    count = len(vulnerabilities)
    found = (
        f"{count} known vulnerabilit{'y' if count == 1 else 'ies'}" if count else "No known vulnerabilities"
    )
    lines = [f"{found} among the {len(checked)} of {total} packages checked."]
    if unchecked:
        lines.append(f"NOT VERIFIED: {len(unchecked)} of {total}, checked by no service:")
        lines += _names(unchecked, indent="  ")
    return lines


def summarize(
    reports: Sequence[ServiceReport], locked: dict[str, str], *, require_checked: bool
) -> tuple[list[str], int]:
    """The summary's lines and the exit status (see the module's docstring)."""
    lines = [f"Audit of {len(locked)} locked packages, asking: {', '.join(r.service for r in reports)}"]
    for report in reports:
        lines += _service_lines(report, locked)
    checked = set().union(*(r.checked for r in reports)) & locked.keys()
    unchecked = sorted(locked.keys() - checked)
    vulnerabilities = sorted({v for r in reports for v in r.vulnerabilities}, key=lambda v: (v.package, v.id))
    for v in vulnerabilities:
        fix = ", ".join(v.fix_versions) or "none yet"
        lines.append(f"VULNERABLE: {v.package} {v.version}: {v.id} (fixed in: {fix})")
    lines += _verdict(checked, unchecked, vulnerabilities, len(locked))
    status = 1 if vulnerabilities else 2 if require_checked and unchecked else 0
    return lines, status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lock", type=Path, default=Path("requirements.lock"))
    parser.add_argument("--services", nargs="+", default=list(SERVICES), choices=SERVICES)
    parser.add_argument(
        "--timeout", type=float, default=SERVICE_SECONDS, help="seconds for each service's run"
    )
    parser.add_argument("--require-checked", action="store_true", help="exit 2 when a package went unchecked")
    parser.add_argument("--pip-audit", nargs="+", default=[sys.executable, "-m", "pip_audit"], metavar="ARG")
    args = parser.parse_args(argv)
    locked = locked_packages(args.lock.read_text())
    if not locked:
        print(f"{args.lock}: no pinned package found", file=sys.stderr)
        return 2
    reports = [run_service(args.pip_audit, args.lock, service, args.timeout) for service in args.services]
    lines, status = summarize(reports, locked, require_checked=args.require_checked)
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
