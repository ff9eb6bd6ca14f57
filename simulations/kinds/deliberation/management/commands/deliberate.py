from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.engine.errors import MachineError, ScenarioError
from simulations.kinds.deliberation import amendments, checks, machine
from simulations.kinds.deliberation.games import scenario_of, state_of
from simulations.kinds.deliberation.headless import play_headless
from simulations.kinds.deliberation.machine import (
    Actor,
    AmendmentDeclined,
    CompromiseDeclined,
    CompromiseOffer,
    Event,
    Opinion,
    Step,
)
from simulations.kinds.deliberation.offline import AmendedCode, Move, decide
from simulations.kinds.deliberation.report import render_report
from simulations.kinds.deliberation.scenario import SCENARIO_ROOT, DeliberationScenario
from simulations.kinds.deliberation.state import DeliberationState, Stance
from simulations.models import Game, TranscriptEntry
from simulations.services.content.scenarios import load_scenario, parsed_scenario
from simulations.services.ledger.turns import create_game


class Command(BaseCommand):
    help = (
        "Run a code-review deliberation (seed 004) on the platform (stored as a game, played by the shared "
        "driver) and print review-report.md. Watch it, take a seat (--seat, answers read from stdin) or act "
        "as proposer (--amend FILE)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument(
            "--sample", help="a sample submission of the scenario (clean, secret, style, deadlock)"
        )
        what.add_argument("--file", type=Path, help="review a Python file")
        what.add_argument("--diff", type=Path, help="review the new side of a one-file unified diff")
        what.add_argument("--paste", action="store_true", help="review code read from stdin")
        parser.add_argument("--scenario", type=Path, default=SCENARIO_ROOT / "code-review.yaml")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--seat", help="take this persona's seat: you are asked on stdin when it is your turn"
        )
        parser.add_argument("--amend", type=Path, help="as proposer: the amended file to submit after a veto")
        parser.add_argument("--out", type=Path, help="also write the report to this file")
        parser.add_argument("--quiet", action="store_true", help="print the report only, not the live log")

    def handle(self, *args: Any, **options: Any) -> None:
        try:  # stored like `load_scenario` stores it: the same file is the same version
            version, _ = load_scenario(folder=options["scenario"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        if version.kind != "deliberation":
            raise CommandError(f"{options['scenario']} is a {version.kind} scenario, not a deliberation.")
        scenario: DeliberationScenario = parsed_scenario(version)
        if options["sample"] and options["sample"] not in {s.id for s in scenario.samples}:
            ids = ", ".join(s.id for s in scenario.samples)
            raise CommandError(f"No sample {options['sample']!r}; the scenario has: {ids}.")
        amended = self._amended(options, scenario)
        seat = options["seat"] or (scenario.proposer if options["amend"] else None)
        try:
            start = self._start(options) | {"seat": seat}
            game = create_game(scenario_version=version, seed=options["seed"], options=start)
        except (checks.CheckError, ValueError, OSError) as exc:
            raise CommandError(str(exc)) from exc

        shown = 0

        def show(g: Game, _: str) -> None:
            nonlocal shown
            if options["quiet"]:
                return
            for e in TranscriptEntry.objects.filter(game=g, seq__gt=shown).order_by("seq"):
                who = scenario.persona(e.speaker).label
                self.stderr.write(f"[round {e.round} {e.phase}] {who}: {e.text}")
                shown = e.seq

        def offline_seat(sc: DeliberationScenario, state: DeliberationState, step: Step) -> Move:
            return decide(sc, state, step, amended=amended)

        show(game, "")
        try:
            game = play_headless(
                game, decide=self._ask if options["seat"] else offline_seat, on_progress=show
            )
        except (MachineError, checks.CheckError) as exc:
            raise CommandError(f"Deliberation {game.pk} stopped: {exc}") from exc
        report = render_report(scenario_of(game), state_of(game))
        if options["out"]:
            options["out"].write_text(report, encoding="utf-8")
        self.stdout.write(report)

    def _start(self, options: dict[str, Any]) -> dict[str, Any]:
        """The kind's start options: a sample, or the code to check (the platform runs the tools on it)."""
        if options["sample"]:
            return {"sample": options["sample"]}
        if options["paste"]:
            return {"code": sys.stdin.read(), "filename": "submission.py", "source": "paste"}
        path: Path = options["file"] or options["diff"]
        return {
            "code": path.read_bytes(),
            "filename": path.name,
            "source": "file" if options["file"] else "diff",
        }

    def _amended(self, options: dict[str, Any], scenario: DeliberationScenario) -> AmendedCode | None:
        if options["amend"]:
            path: Path = options["amend"]
            try:
                code = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"Cannot read the amended file {path}: {exc}") from exc
            return AmendedCode(code=code, filename=path.name, label=f"{path.name} (amended)")
        return amendments.sample_amendment(scenario, options["sample"])

    def _ask(self, scenario: DeliberationScenario, state: DeliberationState, step: Step) -> Move:
        """Ask the person at the terminal until the machine accepts the move (a refusal loses nothing)."""
        while True:
            move = self._read_move(scenario, state, step)
            try:
                machine.apply(scenario, state, move.event, amendments.payload_for(scenario, move))
                return move
            except (MachineError, checks.CheckError, ValueError) as exc:
                self.stderr.write(f"Refused: {exc}")

    def _read_move(self, scenario: DeliberationScenario, state: DeliberationState, step: Step) -> Move:
        def ask(prompt: str) -> str:
            self.stderr.write(prompt, ending="")
            self.stderr.flush()
            line = sys.stdin.readline()
            if not line:
                raise CommandError("stdin closed before your answer")
            return line.strip()

        self.stderr.write(
            f"Your turn ({scenario.persona(step.seat or '').label}); open: {', '.join(step.events)}"
        )
        if step.actor == Actor.MEMBER:
            stance = ask("Stance [SYNTHESIS/OBJECT/VETO/ABSTAIN]: ").upper()
            confidence = ask("Confidence 0-1: ")
            text = ask("Your opinion: ")
            items = [
                i.strip() for i in ask("Fix items (separated by ';', may be empty): ").split(";") if i.strip()
            ]
            try:
                return Move(Event.OPINION_GIVEN, Opinion(seat=step.seat or "", stance=Stance(stance),
                                                         confidence=float(confidence), text=text, fix_items=items))  # fmt: skip
            except ValueError as exc:
                self.stderr.write(f"Refused: {exc}")
                return self._read_move(scenario, state, step)
        if step.actor == Actor.PROPOSER:
            path = ask("Path of your amended file (empty: decline to amend): ")
            if not path:
                return Move(
                    Event.AMENDMENT_DECLINED, AmendmentDeclined(text=ask("Why not: ") or "I will not amend.")
                )
            try:
                code = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.stderr.write(f"Refused: cannot read {path}: {exc}")
                return self._read_move(scenario, state, step)
            return Move(
                Event.AMENDED_CODE_SUBMITTED,
                amended=AmendedCode(code, Path(path).name, f"{Path(path).name} (amended)"),
            )
        offer = ask("Offer a cost-of-delay compromise? [y/N]: ").lower().startswith("y")
        text = ask("Your argument: ") or "No compromise."
        if not offer:
            return Move(Event.COMPROMISE_DECLINED, CompromiseDeclined(text=text))
        conditions = [c.strip() for c in ask("Conditions (separated by ';'): ").split(";") if c.strip()]
        try:
            return Move(Event.COMPROMISE_OFFERED, CompromiseOffer(text=text, conditions=conditions))
        except ValueError as exc:
            self.stderr.write(f"Refused: {exc}")
            return self._read_move(scenario, state, step)
