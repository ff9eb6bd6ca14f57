"""How the delegations talk, in figures: plays offline games and measures them (`talk_quality.py`, issue #66).

    .venv/bin/python manage.py talk_quality                  # 9 seats x passive and advocate, seed 1: 18 games
    .venv/bin/python manage.py talk_quality --seed 8 --examples 5
    .venv/bin/python manage.py talk_quality --games 12 13    # games already played, measured as they are

New games are played as `manage.py play` plays them (the student bots of bots.py, the headless loop), always
with the built-in offline model whatever the settings say, and stay in the database like `play`'s (their ids are
printed).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.kinds.negotiation import talk_quality
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game, TranscriptEntry
from simulations.services.content.model_choice import OFFLINE
from simulations.services.content.scenarios import latest_version
from simulations.services.ledger.turns import create_game, games_with_scenario

BOTS = ("passive", "advocate")


class Command(BaseCommand):
    help = (
        "Play offline negotiation games (every seat x passive and advocate bots) and print how the delegations "
        "talk: template sentences, exact repeats, self-contradictions, concessions withdrawn, proposal sets."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", default="mercury")
        parser.add_argument("--seed", type=int, default=1, help="the seed of every game played (default 1)")
        parser.add_argument("--bots", default=",".join(BOTS), help="student bots, comma-separated")
        parser.add_argument("--roles", default="", help="seats, comma-separated (default: every seat)")
        parser.add_argument("--games", type=int, nargs="*", default=None, help="measure these games instead")
        parser.add_argument("--examples", type=int, default=0, help="list this many shapes and findings")
        parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        games = self._existing(options["games"]) if options["games"] is not None else self._played(options)
        figures = [self._measure(game, label) for game, label in games]
        if options["json"]:
            t = talk_quality.totals(figures)
            self.stdout.write(
                json.dumps(
                    {
                        "games": [
                            {
                                "label": f.label,
                                "sentences": f.sentences,
                                "template": f.template,
                                "repeats": f.repeats,
                                "contradictions": [x.describe() for x in f.contradictions],
                                "withdrawals": [x.describe() for x in f.withdrawals],
                                "proposals": dict(f.proposals),
                                "adopted": list(f.adopted),
                                "followed": dict(f.followed),
                                "concessions": f.concessions,
                                "unreasoned_concessions": f.unreasoned,
                            }  # fmt: skip
                            for f in figures
                        ],
                        "totals": {
                            **vars(t),
                            "template_share": t.template_share,
                            "repeat_share": t.repeat_share,
                        },
                    }
                )
            )
            return
        self.stdout.write(talk_quality.report(figures, examples=options["examples"]))

    def _existing(self, ids: list[int]) -> list[tuple[Game, str]]:
        found = {g.pk: g for g in games_with_scenario().filter(pk__in=ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise CommandError(f"No game {', '.join(map(str, missing))}.")
        if not ids:
            raise CommandError("--games needs at least one game id.")
        return [(found[i], f"game {i} {found[i].state.get('human_role')}") for i in ids]

    def _played(self, options: dict[str, Any]) -> list[tuple[Game, str]]:
        version = latest_version(slug=options["scenario"])
        if version is None:
            raise CommandError(
                f"Scenario {options['scenario']!r} is not loaded: run "
                f"`python manage.py load_scenario scenarios/{options['scenario']}` first."
            )
        if version.kind != "negotiation":
            raise CommandError(f"{options['scenario']!r} is not a negotiation.")
        roles = [r for r in options["roles"].split(",") if r] or scenario_of_version(version).role_ids
        bots = [b for b in options["bots"].split(",") if b]
        out = []
        for role in roles:
            for bot in bots:
                try:
                    policy = make_policy(bot, role)
                except ValueError as exc:
                    raise CommandError(str(exc)) from exc
                game = create_game(scenario_version=version, seed=options["seed"], model=OFFLINE)
                game = play_game(game_id=game.pk, policy=policy)
                self.stderr.write(f"game {game.pk}: {role} {bot}, seed {options['seed']}: {game.phase}")
                out.append((game, f"{role} {bot} #{game.pk}"))
        return out

    def _measure(self, game: Game, label: str) -> talk_quality.GameFigures:
        scenario = scenario_of_version(game.scenario)
        entries = (
            TranscriptEntry.objects.filter(game=game)
            .order_by("seq")
            .values("seq", "speaker", "kind", "text", "issue")
        )
        state = game.state
        students = [state.get("human_role"), *state.get("co_players", [])]
        return talk_quality.measure(
            scenario,
            talk_quality.lines_of(entries, state),
            label=label,
            students=[s for s in students if s],
            proposals=talk_quality.proposals_of(state),
            adopted=talk_quality.adopted_of(state),
            followed=talk_quality.followed_of(state),
        )
