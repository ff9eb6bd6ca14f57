"""The class's results (issue #67): beside each game's outcomes, each student's aims met or not, the words of theirs
that moved positions, a committee's verdict; each student's review a click away; the CSV's aim columns; the
anonymised page for students without names; refusals. Whole games, played headless by bots and the offline model,
and every expectation read back from what the game recorded (its votes, transcript, stance changes, state)."""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import Seat, get_kind, kind_of
from simulations.kinds.negotiation import outcomes
from simulations.kinds.negotiation.bots import BySeat, make_policy
from simulations.kinds.negotiation.debrief import debrief_facts
from simulations.kinds.negotiation.games import scenario_of, state_of
from simulations.kinds.negotiation.headless import student
from simulations.kinds.negotiation.machine import STAND_IN_MARK
from simulations.models import ClassSession, Event, Game, GameSeat, ScenarioVersion, TranscriptEntry, Vote
from simulations.services.content.scenarios import load_scenarios, parsed_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.people import class_sessions
from simulations.services.people.class_results import class_results, results_by_game_csv, results_csv
from simulations.services.play import drive
from simulations.services.play.headless import play_to_end
from tests.helpers import logged_in, mercury_version

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _session(
    version: ScenarioVersion, students: list[str], teacher: str = "teacher", **fields: object
) -> tuple[ClassSession, Client]:
    """A session of one group of `students`, all joined (not started), and its teacher's client."""
    user, room = logged_in(teacher, staff=True)
    session = class_sessions.open_session(
        teacher=user, version=version, title="Results", max_students=len(students),
        students_per_group=max(1, len(students)), **fields,  # type: ignore[arg-type]
    )  # fmt: skip
    for name in students:
        class_sessions.join(user=User.objects.create_user(name), code=session.code)
    return session, room


def _mercury_group() -> tuple[ClassSession, Client, Game]:
    """ada (the game's owner) and bo share one Mercury game, each in a seat drawn from the seed, played to the end by
    advocates of their seats' briefs; the teacher's client."""
    session, room = _session(mercury_version(), ["ada", "bo"])
    (game,) = class_sessions.start(session, seed=4)
    session.refresh_from_db()
    seats = list(GameSeat.objects.filter(game=game).values_list("role", flat=True))
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    play_to_end(game, bot=student(game, BySeat([make_policy("advocate", seat) for seat in seats])))
    return session, room, Game.objects.select_related("scenario").get(pk=game.pk)


def _said(game: Game, seat: str) -> dict[int, str]:
    """The seat's own committed messages and speeches by transcript seq, on one line each (a stand-in's left out)."""
    rows = TranscriptEntry.objects.filter(game=game, speaker=seat, kind__in=["message", "speech"])
    return {
        seq: " ".join(t.split())
        for seq, t in rows.values_list("seq", "text")
        if not t.startswith(STAND_IN_MARK)
    }


def test_each_students_aims_and_moving_words_come_from_the_games_votes_and_their_own_words() -> None:
    session, room, game = _mercury_group()
    names = dict(session.scenario.roles.values_list("role_id", "name"))
    votes = {v.issue: v for v in Vote.objects.filter(game=game)}
    changes = [c for e in Event.objects.filter(game=game) for c in e.stance_changes]
    (found,) = class_results(session).games
    assert found.verdict == f"{sum(v.adopted for v in votes.values())} of {len(votes)} proposals adopted"
    held = dict(GameSeat.objects.filter(game=game).values_list("student__username", "role"))
    assert {(s.name, s.seat, s.seat_name) for s in found.results} == {
        (n, r, names[r]) for n, r in held.items()
    }
    moved_any = False
    for one in found.results:
        assert {a.issue for a in one.result.aims} == set(votes)  # an aim on every issue voted
        for aim in one.result.aims:  # met exactly when the game adopted the option the student aimed at
            vote = votes[aim.issue]
            assert aim.met == (
                "met" if vote.proposal == aim.words.split(" ", 1)[0] and vote.adopted else "not met"
            )
        said = _said(game, one.seat)
        for words in one.result.moved:
            # The student's own words, from a message that caused a recorded stance change of each seat named.
            by = {seq for seq, line in said.items() if words.words.removesuffix(" …") in line}
            assert by, words
            moved = {names[c["role"]] for c in changes if c["cause_seq"] in by and c["issue"] == words.issue}
            assert moved and all(seat in words.moved for seat in moved), (words, moved)
            moved_any = True
    assert moved_any, "no student's words moved a position in this game: choose another seed"

    page = html.unescape(room.get(f"/classes/{session.pk}/results/").content.decode())
    for one in found.results:
        assert one.name in page
        for words in one.result.moved:
            assert f"<q>{words.words}</q>" in page and words.moved in page
    for badge, met in (("aim met", "met"), ("aim not met", "not met"), ("aims partly met", "partly")):
        assert (f">{badge}<" in page) == (met in [s.result.met for s in found.results])
    # Each student's review a click away, read from their own seat (the other student's through `?seat=`): it
    # names their delegation and counts the aims met that the results count.
    for one in found.results:
        link = f"/games/{game.pk}/review/" + ("" if one.seat == game.human_role else f"?seat={one.seat}")
        assert f'href="{link}"' in page
        review = html.unescape(room.get(link).content.decode())
        met_here, issues = sum(a.met == "met" for a in one.result.aims), len(one.result.aims)
        assert (
            f"<strong>{one.seat_name}</strong>'s aim was adopted on <strong>{met_here} of {issues}" in review
        )

    rows = list(csv.DictReader(io.StringIO(results_csv(session))))
    by_student = {s.name: s.result for s in found.results}
    assert len(rows) == 2 * len(votes)  # a row per student per issue
    for row in rows:
        result = by_student[row["student"]]
        aim = next(a for a in result.aims if a.issue == row["issue"])
        assert (row["aim"], row["aim_met"]) == (aim.words, aim.met)
        quoted = [f"“{w.words}”" for w in result.moved if w.issue == row["issue"]]
        assert all(q in row["moved_by"] for q in quoted) and bool(quoted) == bool(row["moved_by"])
    by_game = list(csv.DictReader(io.StringIO(results_by_game_csv(session))))
    assert {r["verdict"] for r in by_game} == {found.verdict}


def test_students_read_the_results_without_names_and_another_class_is_refused() -> None:
    session, room, game = _mercury_group()
    found = {s.name: s for s in class_results(session).games[0].results}
    assert {w.private for w in found["ada"].result.moved} == {True, False}, (
        "choose a seed where ada's words moved"
    )
    bo = Client()
    bo.force_login(User.objects.get(username="bo"))
    url = f"/classes/{session.pk}/class-results/"
    assert bo.get(url).status_code == 404  # not shared yet
    ClassSession.objects.filter(pk=session.pk).update(results_shared=True)
    page = html.unescape(bo.get(url).content.decode())
    table = page[page.index("<table") : page.index("</table>")]
    assert not any(re.search(rf"\b{name}\b", table) for name in found)  # no names, not even his
    assert table.count("<strong>You</strong>") == 1 and table.count("<strong>A student</strong>") == 1
    for name, one in found.items():
        for words in one.result.moved:
            # His own words are quoted, and others' said in public; others' said in private talks are not.
            assert (f"<q>{words.words}</q>" in table) == (name == "bo" or not words.private), words
            assert words.moved in table
    assert "Words said in private" in table
    assert f'href="/games/{game.pk}/review/">your review' in table and "?seat=" not in table

    other, _ = _session(
        session.scenario, ["dee"], teacher="mr-okafor"
    )  # another class: its student, its teacher
    for user in (User.objects.get(username="dee"), other.teacher):
        client = Client()
        client.force_login(user)
        for path in ("class-results/", "results/", "results.csv", "results-by-game.csv"):
            assert client.get(f"/classes/{session.pk}/{path}").status_code == 404, (user, path)
        assert client.get(f"/games/{game.pk}/review/?seat={found['bo'].seat}").status_code == 404
    assert room.get(f"/classes/{session.pk}/results/").status_code == 200


def test_a_committees_verdict_with_its_vote_and_each_students_review_from_their_seat() -> None:
    ((version, _),) = load_scenarios(path=SCENARIOS / "deliberation")
    session, room = _session(version, ["ada", "bo"], seats=["security", "maintainer"])
    (game,) = class_sessions.start(session, seed=3)
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    game = play_to_end(game, bot=kind_of(game).headless.bot(game, Seat(role=None, human=None)))
    state = Game.objects.get(pk=game.pk).state
    assert state["verdict"] is not None
    number, quorum = next((r["number"], r["quorum"]) for r in reversed(state["rounds"]) if r["quorum"])
    (found,) = class_results(session).games
    words = {"APPROVED": "Approved", "REQUEST_CHANGES": "Changes requested", "INCONCLUSIVE": "Inconclusive"}
    assert found.verdict.startswith(words[state["verdict"]])
    assert f"{quorum['synthesis']} of {quorum['members']} members for the change" in found.verdict
    assert found.verdict.endswith(f"in round {number}")
    assert len(found.results) == 2 and all(not s.result.aims and not s.result.moved for s in found.results)
    page = html.unescape(room.get(f"/classes/{session.pk}/results/").content.decode())
    assert '<th scope="row">Verdict</th>' in page and found.verdict in page
    rows = list(csv.DictReader(io.StringIO(results_csv(session))))
    assert sorted((r["student"], r["aim"], r["aim_met"], r["moved_by"]) for r in rows) == [
        ("ada", "", "", ""), ("bo", "", "", "")]  # fmt: skip

    # Each student's review from their own seat: bo's (not the game's owner) through `?seat=`, for the teacher.
    labels = {s.seat: s.seat_name for s in found.results}
    spoke = {e.actor for e in game.events.all()}
    assert {"security", "maintainer"} <= spoke, "a student's seat never spoke: choose another seed"
    assert (
        f'href="/games/{game.pk}/review/"' in page
        and f'href="/games/{game.pk}/review/?seat=maintainer"' in page
    )
    as_bo = html.unescape(room.get(f"/games/{game.pk}/review/?seat=maintainer").content.decode())
    as_ada = html.unescape(room.get(f"/games/{game.pk}/review/").content.decode())
    for view, you, other in ((as_bo, "maintainer", "security"), (as_ada, "security", "maintainer")):
        assert re.search(rf"{re.escape(labels[you])}</strong> <span class=\"flag\">you</span>", view)
        assert not re.search(rf"{re.escape(labels[other])}</strong> <span class=\"flag\">you</span>", view)
    # A student holding a seat reads it from their own, whatever seat they ask for.
    ada = Client()
    ada.force_login(User.objects.get(username="ada"))
    asked = html.unescape(ada.get(f"/games/{game.pk}/review/?seat=maintainer").content.decode())
    assert re.search(rf"{re.escape(labels['security'])}</strong> <span class=\"flag\">you</span>", asked)
    assert GameSeat.objects.filter(game=game).count() == 2


def test_a_practice_conversations_goal_met_or_not_and_the_messages_that_reached_a_step() -> None:
    found_versions = {v.slug: v for v, _ in load_scenarios(path=SCENARIOS / "roleplay")}
    version = found_versions["cafe-barista"]
    session, room = _session(version, ["ada"])
    class_sessions.start(session)
    kind = get_kind(version.kind)
    role, options = kind.admin.rehearsal(parsed_scenario(version))
    game = create_game(
        scenario_version=version, seed=2, owner=User.objects.get(username="ada"), options=options
    )
    game = play_to_end(game, bot=kind.headless.bot(game, Seat(role=role, human=None)))
    state = Game.objects.get(pk=game.pk).state
    (found,) = class_results(session).games
    (one,) = found.results
    (aim,) = one.result.aims
    assert aim.met == ("met" if "SUCCESS" in state["visited"] else "not met")
    assert found.verdict.startswith("Goal reached" if aim.met == "met" else "Goal not reached")
    mine = [" ".join(m["text"].split()) for m in state["messages"] if m["role"] == "student"]
    assert one.result.moved and all(
        any(w.words.removesuffix(" …") in m for m in mine) for w in one.result.moved
    )
    page = html.unescape(room.get(f"/classes/{session.pk}/results/").content.decode())
    assert aim.words in page and all(f"<q>{w.words}</q>" in page for w in one.result.moved)


def test_words_a_stand_in_said_for_a_student_are_not_counted_as_theirs() -> None:
    """A move the seat's AI stand-in made (marked so in the append-only transcript, `outcomes.outcomes` reads the
    marks) never counts as the student's words; the aims, the game's, stay."""
    session, _, game = _mercury_group()
    (found,) = class_results(session).games
    one = next(s for s in found.results if s.result.moved and s.seat == game.human_role)
    words = one.result.moved[0]
    seqs = {seq for seq, line in _said(game, one.seat).items() if words.words.removesuffix(" …") in line}
    assert seqs
    scenario, state = scenario_of(game), state_of(game)
    facts = debrief_facts(game, scenario, state)
    assert outcomes._seat_result(scenario, facts, set()) == one.result
    stood_in = outcomes._seat_result(scenario, facts, seqs)  # as if a stand-in had said those words
    assert stood_in.moved == tuple(w for w in one.result.moved if w.words != words.words)
    assert stood_in.aims == one.result.aims


def test_a_group_games_debrief_streams_to_its_first_student_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The debrief is written from the first student's seat (their talks, their influence): as it streams, its frames
    carry that seat alone as their audience, which the game's socket keeps from the group's other students
    (`GameConsumer`, as for a private talk: tests/web/test_group_streams.py)."""
    frames: list[dict[str, object]] = []
    monkeypatch.setattr(drive, "notify_stream", lambda game_id, **frame: frames.append(frame))
    session, _ = _session(mercury_version(), ["ada", "bo"])
    (game,) = class_sessions.start(session, seed=4)
    seats = list(GameSeat.objects.filter(game=game).values_list("role", flat=True))
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    bot = student(game, BySeat([make_policy("passive", seat) for seat in seats]))
    play_to_end(game, bot=bot, stream=True)
    debrief = [f for f in frames if f.get("speaker") == "The debrief"]
    assert debrief and {f["audience"] for f in debrief} == {(game.human_role,)}
    assert len(seats) == 2 and game.human_role in seats
