"""Practice conversations as the platform sees them: scenarios read from seed-001 JSON files, the machine's
outcomes in the ledger's terms, the driver's two AI steps (the judge, then the character streaming), the offline
judge and character, the pages (pages.py, presenters.py, templates/roleplay/), the export."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.kinds import (
    Advance,
    Aim,
    Kind,
    LedgerEntry,
    LedgerEvent,
    Met,
    MovingWords,
    NextStep,
    Outcomes,
    ScenarioSource,
    SeatResult,
)
from simulations.kinds.base import KindBase, ScenarioFiles, check_parts, content_hash, platform_step

from . import machine, prompts
from .document import RoleplayState, Status
from .machine import Outcome
from .scenario import RoleplayScenario, load_file, looks_like_roleplay, validate_scenario
from .wording import unstarred

if TYPE_CHECKING:
    from simulations.models import Game

    from . import authoring, export, headless, pages

    check_parts(authoring, pages, export, headless)  # mypy checks each part against its contract

DEFAULT_USERNAME = "the student"


def _advance(out: Outcome, scenario: RoleplayScenario) -> Advance:
    state = out.state
    entries = tuple(
        LedgerEntry(
            seq=n,
            round=state.turns,
            phase=out.source or out.target,
            speaker=state.username if m.role == "student" else scenario.botname,
            kind=m.role,
            text=m.text,
        )  # fmt: skip
        for n, m in out.said
    )
    event = LedgerEvent(
        seq=out.seq, name=out.event.value, source=out.source, target=out.target, actor=out.actor,
        payload=out.payload, entries=entries, changes=tuple(out.changes),
    )  # fmt: skip
    return Advance(
        events=(event,), state=state.model_dump(mode="json"), phase=state.status.value, human_role="student",
        finished=state.status is Status.ENDED, schema_version=state.schema_version,
        transcript_seq=len(state.messages),
    )  # fmt: skip


class RoleplayScenarios(ScenarioFiles):
    """Seed 001's JSON files, stored as they are (the document itself is hashed, not the model's dump)."""

    def read(self, path: Path) -> list[ScenarioSource]:
        files = sorted(path.glob("*.json")) if path.is_dir() else [path] if path.suffix == ".json" else []
        return [self.stored(*load_file(file)) for file in files]

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return self.stored(validate_scenario(document), document)

    def stored(self, scenario: RoleplayScenario, document: dict[str, Any]) -> ScenarioSource:
        return ScenarioSource(slug=scenario.slug, title=scenario.title, content_hash=content_hash(document),
                              document=document, model=scenario)  # fmt: skip

    def bare_document(self, document: Any) -> bool:
        return looks_like_roleplay(document)  # a scenario file may hold seed 001's JSON as it is


class Roleplay(KindBase):
    name = "roleplay"
    title = "Practice conversation"
    scenarios = RoleplayScenarios("roleplay", RoleplayScenario, load_file, blurb_field="goal")

    def start(self, scenario: RoleplayScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        username = str(options.get("username") or DEFAULT_USERNAME).strip()[:80] or DEFAULT_USERNAME
        out = machine.start(scenario, seed=seed, username=username)
        return _advance(out, scenario)

    def advance(
        self, scenario: RoleplayScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        out = machine.apply(scenario, machine.restore(state), event, payload)
        return _advance(out, scenario)

    def restore(self, scenario: RoleplayScenario, state: dict[str, Any]) -> RoleplayState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, state_of

        return platform_step(machine.next_step(state_of(game)), lambda: scenario_of(game).botname)

    def stream_view(self, text: str) -> str:
        return unstarred(text)  # only the character's words are streamed (the judge's JSON is not)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return prompts.offline_answer(messages)

    def outcomes(self, game: Game) -> Outcomes:
        """The goal reached or not, and the student's messages that took the conversation a step (the judge's
        transitions the report lists), each said in private to the character."""
        from .games import scenario_of, state_of
        from .report import steps_by_message
        from .scenario import fill
        from .wording import FIXED, outcome_words, plain

        scenario, state = scenario_of(game), state_of(game)
        goal = plain(fill(scenario.goal, username=state.username, botname=scenario.botname), scenario)
        ended = state.status is Status.ENDED
        met: Met | None = "met" if state.outcome == "SUCCESS" else "not met" if ended else None
        mine = [m.text for m in state.messages if m.role == "student"]
        moved = tuple(
            MovingWords(words=_excerpt(mine[n - 1]), private=True,
                        moved="; ".join(f"{scenario.botname} reached “{step}”" for step in steps))
            for n, steps in sorted(steps_by_message(scenario, state).items())
            if 0 < n <= len(mine)
        )  # fmt: skip
        verdict = ""
        if ended:
            verdict = FIXED[state.outcome or "FAIL"]
            if words := outcome_words(scenario, state):
                verdict += f": {words}"
        seat = SeatResult(aims=(Aim(words=goal, met=met),), moved=moved)
        return Outcomes(verdict=verdict, seats={game.human_role or "student": seat})


EXCERPT_CHARS = 140


def _excerpt(text: str) -> str:
    """A message on one line, at most EXCERPT_CHARS long (cut at a word)."""
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"


KIND: Kind = Roleplay()  # mypy checks the class against the contract
