"""`manage.py deliberate`: watch a sample, review a file, take a seat (refusals are re-asked, nothing lost).

The command plays on the platform: each run is a stored game, advanced by the shared driver."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.models import Event, Game

# Committed as it goes (no test transaction): the driver's lease heartbeat writes from a thread of its own.
pytestmark = pytest.mark.django_db(transaction=True)


def deliberate(*args: str, stdin: str = "", monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    if monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command("deliberate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_watch_the_style_sample(tmp_path: Path) -> None:
    target = tmp_path / "review-report.md"
    out, err = deliberate("--sample", "style", "--out", str(target))
    assert "- **Verdict**: REQUEST_CHANGES" in out and target.read_text(encoding="utf-8") == out
    assert "[round 1 DEBATE] Security Lead (Sam):" in err  # the live log
    game = Game.objects.get()  # stored and played by the driver: resumable, exportable, reviewable
    assert game.phase == "CONCLUSION" and game.scenario.slug == "code-review"
    seqs = list(Event.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1)) and game.finished_at is not None


def test_a_file_with_a_secret_amended_by_the_proposer_is_approved(
    tmp_path: Path, scenario: DeliberationScenario
) -> None:
    secret = scenario.sample("secret")
    assert secret.amended is not None
    (tmp_path / "deploy.py").write_text(secret.code, encoding="utf-8")
    (tmp_path / "fixed.py").write_text(secret.amended, encoding="utf-8")
    out, err = deliberate("--file", str(tmp_path / "deploy.py"), "--amend", str(tmp_path / "fixed.py"))
    events = list(Event.objects.filter(game=Game.objects.get()).values_list("name", flat=True))
    assert events.index("VETO_EXERCISED") < events.index("AMENDED_CODE_SUBMITTED")  # vetoed, then amended
    assert "- **Verdict**: APPROVED" in out and "[round 2 " in err


def test_bad_input_is_a_clear_command_error(tmp_path: Path) -> None:
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(CommandError, match="looks binary"):
        deliberate("--file", str(binary))
    with pytest.raises(CommandError, match="No sample 'nope'"):
        deliberate("--sample", "nope")


def test_taking_the_security_seat_with_a_refused_answer_first(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = "\n".join([
        "MAYBE", "0.9", "?", "",  # not a stance: refused, asked again
        "SYNTHESIS", "0.9", "The code is clean.", "",
    ]) + "\n"  # fmt: skip
    out, err = deliberate("--sample", "clean", "--seat", "security", stdin=answers, monkeypatch=monkeypatch)
    assert err.count("Refused:") == 1 and "- **Verdict**: APPROVED" in out
    assert '**Security Lead (Sam)**: "SYNTHESIS (confidence 0.90): The code is clean."' in out
