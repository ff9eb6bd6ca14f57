"""A class session's results (issue #67): every game of the session side by side, each issue's outcome, the game's
verdict and model cost, and each student's aims met or not and their words that moved positions; and the CSV
downloads (a row per student per issue, a row per game per issue).

What a game came to is its kind's to say (`Kind.outcomes`: read from what the game recorded, never judged again);
this module only lays the session's games and students beside each other (services/people/class_sessions.py finds
them)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Sum

from simulations.kinds import Outcomes, SeatResult, get_kind
from simulations.models import ClassSession, Game, GameSeat, ModelCall, Vote

from .class_sessions import StudentRow, roster, student_games


@dataclass(frozen=True)
class StudentResult:
    """One student of a game for the results: their seat, its aims met or not, their words that moved positions."""

    name: str
    seat: str
    seat_name: str  # the seat in the scenario's words ("" for a kind without seats)
    result: SeatResult  # empty: the kind sets no aim, or the game is not over
    # The seat their review is read from by a reader who holds none (the teacher): "" for the owner's own view.
    review_seat: str = ""


@dataclass(frozen=True)
class GameResult:
    """One game of the session for the results page: who played it in which seat, each issue's vote (the option
    put to it, adopted or not), its verdict, its model cost, and each student's result."""

    game: Game
    students: list[tuple[str, str]]  # (name, seat)
    outcomes: dict[str, tuple[str, bool]]  # issue id -> (proposal, adopted)
    tokens: int
    cost_usd: float | None  # None: no call priced (the offline model, or an unpriced model)
    phase: str  # where it stands, in the kind's words
    verdict: str = ""  # the kind's one line ("" where it has none, or not yet)
    results: list[StudentResult] = field(default_factory=list)


@dataclass(frozen=True)
class ClassResults:
    issues: list[tuple[str, str]]  # (issue id, title), in the scenario's order
    games: list[GameResult]

    def adopted_share(self) -> list[tuple[str, str, int, int]]:
        """Per issue: (id, title, games that adopted it, games that voted on it)."""
        rows = []
        for issue, title in self.issues:
            voted = [g.outcomes[issue][1] for g in self.games if issue in g.outcomes]
            rows.append((issue, title, sum(voted), len(voted)))
        return rows


def game_outcomes(session: ClassSession, games: list[Game]) -> dict[int, Outcomes]:
    """What each game came to, in its kind's words (`Kind.outcomes`). The session's games are listed without their
    state (`session_games`): it is read here for all of them at once."""
    kind = get_kind(session.scenario.kind)
    loaded = Game.objects.select_related("scenario").in_bulk([g.pk for g in games])
    return {pk: kind.outcomes(game) for pk, game in loaded.items()}


def class_results(session: ClassSession) -> ClassResults:
    """Every game of the session side by side: its students and seats, each issue's outcome, its verdict, its model
    cost, each student's aims and moving words."""
    rows = roster(session)
    played: dict[int, Game] = {r.game.pk: r.game for r in rows if r.game is not None}
    by_game: dict[int, list[StudentRow]] = {}
    for row in rows:
        if row.game is not None:
            by_game.setdefault(row.game.pk, []).append(row)
    outcomes: dict[int, dict[str, tuple[str, bool]]] = {}
    for vote in Vote.objects.filter(game__in=list(played)).order_by("game", "id"):
        outcomes.setdefault(vote.game_id, {})[vote.issue] = (vote.proposal, vote.adopted)  # type: ignore[index]
    usage: dict[int, dict[str, Any]] = {
        row["game"]: dict(row)
        for row in ModelCall.objects.filter(game__in=list(played))
        .values("game")
        .annotate(tokens=Sum("prompt_tokens") + Sum("completion_tokens"), cost=Sum("cost_usd"))
    }
    issues = list(session.scenario.issues.order_by("position").values_list("issue_id", "title"))
    seat_names = dict(session.scenario.roles.values_list("role_id", "name"))
    label = get_kind(session.scenario.kind).pages.phase_label
    came_to = game_outcomes(session, list(played.values()))
    return ClassResults(
        issues=issues,
        games=[
            GameResult(
                game=game, students=[(r.name, r.seat) for r in by_game[pk]], outcomes=outcomes.get(pk, {}),
                tokens=int(usage.get(pk, {}).get("tokens") or 0), cost_usd=usage.get(pk, {}).get("cost"),
                phase=label(game.phase), verdict=came_to[pk].verdict,
                results=[
                    StudentResult(
                        name=r.name, seat=r.seat, seat_name=seat_names.get(r.seat, ""),
                        result=came_to[pk].seats.get(r.seat, SeatResult()),
                        review_seat="" if r.seat == game.human_role else r.seat,
                    )
                    for r in by_game[pk]
                ],
            )
            for pk, game in sorted(played.items())
        ],
    )  # fmt: skip


def seats_of(session: ClassSession, user_id: int | None) -> set[tuple[int, str]]:
    """(game id, seat) of every seat `user_id` plays in the session's games: a group's seat, or their own game's."""
    games = list(student_games(session, user_id))
    held = set(GameSeat.objects.filter(game__in=games, student=user_id).values_list("game_id", "role"))
    return held | {
        (g.pk, g.human_role) for g in games if g.owner_id == user_id and g.pk not in {h[0] for h in held}
    }


def results_by_game_csv(session: ClassSession) -> str:
    """One row per game per vote: its students and seats, where it stands, its verdict, the option put to the vote,
    adopted or not, the game's model use."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["game_id", "students", "phase", "issue", "proposal", "adopted", "tokens", "cost_usd", "verdict"]
    )
    for result in class_results(session).games:
        players = "; ".join(f"{inert_cell(name)} ({seat})" for name, seat in result.students)
        common = [result.game.pk, players, result.phase]
        usage = [result.tokens, "" if result.cost_usd is None else f"{result.cost_usd:.4f}", result.verdict]
        for issue, (proposal, adopted) in result.outcomes.items():
            writer.writerow([*common, issue, proposal, "yes" if adopted else "no", *usage])
        if not result.outcomes:
            writer.writerow([*common, "", "", "", *usage])
    return out.getvalue()


def results_csv(session: ClassSession) -> str:
    """One row per student per vote their game took (a negotiation's issues: the option put to the vote, adopted or
    not, the student's own ballot, their aim on it, met or not, and their words that moved positions on it), or one
    row per student for a game without votes: where it ended or stands, their aims and moving words."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "joined_at", "game_id", "seat", "phase", "finished", "issue", "proposal", "adopted",
                     "own_ballot", "updated_at", "aim", "aim_met", "moved_by"])  # fmt: skip
    rows = roster(session)
    votes: dict[int, list[Vote]] = {}
    for vote in Vote.objects.filter(game__in=[r.game for r in rows if r.game]).order_by("game", "issue"):
        votes.setdefault(vote.game_id, []).append(vote)  # type: ignore[arg-type]
    came_to = game_outcomes(session, [r.game for r in rows if r.game])
    for row in rows:
        played = row.game
        common = [inert_cell(row.name), row.joined_at, played.pk if played else "",
                  row.seat, row.phase, "yes" if played and played.finished_at else "no"]  # fmt: skip
        seat = came_to[played.pk].seats.get(row.seat, SeatResult()) if played else SeatResult()
        taken = votes.get(played.pk, []) if played else []
        for vote in taken:
            ballot = vote.ballots.get(row.seat, "") if isinstance(vote.ballots, dict) else ""
            writer.writerow([*common, vote.issue, vote.proposal, "yes" if vote.adopted else "no", ballot,
                             row.updated_at, *_aim_cells(seat, vote.issue)])  # fmt: skip
        if not taken:
            writer.writerow([*common, "", "", "", "", row.updated_at, *_aim_cells(seat, None)])
    return out.getvalue()


def _aim_cells(seat: SeatResult, issue: str | None) -> list[str]:
    """aim, aim_met, moved_by: on one issue, or (None) the seat's whole result."""
    aims = [a for a in seat.aims if issue is None or a.issue == issue]
    moved = [w for w in seat.moved if issue is None or w.issue == issue]
    met = SeatResult(aims=tuple(aims)).met
    words = " | ".join(f"“{w.words}”: {w.moved}" for w in moved)
    return [inert_cell("; ".join(a.words for a in aims)), met or "", inert_cell(words)]


def inert_cell(text: str) -> str:
    """A spreadsheet never reads a student's name or words as a formula (they may begin with + - = or @)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
