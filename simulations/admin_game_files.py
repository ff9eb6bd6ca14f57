"""Files the games admin hands a teacher for the games selected: their exports, and a class's outcomes per issue."""

from __future__ import annotations

import csv
import io
import json
import zipfile

from django.http import HttpResponse

from .models import Game, Vote
from .services.files.export import export_game

OUTCOME_COLUMNS = ("game", "player", "scenario", "version", "seat", "status", "issue", "proposal", "adopted",
                   "seat_ballot", "yes", "no", "finished_at")  # fmt: skip


def exports_zip(games: list[Game]) -> HttpResponse:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for game in games:
            archive.writestr(
                f"game-{game.pk}.json", json.dumps(export_game(game=game), indent=2, ensure_ascii=False)
            )
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="games.zip"'
    return response


def outcomes_csv(games: list[Game]) -> HttpResponse:
    """One row per game and voted issue (a game with no vote yet, or a kind without votes, has one row saying so):
    what was proposed, whether it was adopted, and how the student's seat voted."""
    votes: dict[int, list[Vote]] = {}
    for vote in Vote.objects.filter(game__in=games).order_by("game_id", "id"):
        votes.setdefault(vote.game_id, []).append(vote)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(OUTCOME_COLUMNS)
    for game in games:
        common = [game.pk, game.owner.get_username() if game.owner else "", game.scenario.slug,
                  game.scenario.version, game.human_role, game.phase]  # fmt: skip
        finished = game.finished_at.isoformat() if game.finished_at else ""
        if not votes.get(game.pk):
            writer.writerow([*common, "", "", "", "", "", "", finished])
        for vote in votes.get(game.pk, []):
            ballots = vote.ballots or {}
            yes = sum(1 for b in ballots.values() if b == "yes")
            writer.writerow([*common, vote.issue, vote.proposal, "yes" if vote.adopted else "no",
                             ballots.get(game.human_role, ""), yes, len(ballots) - yes, finished])  # fmt: skip
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="outcomes.csv"'
    return response
