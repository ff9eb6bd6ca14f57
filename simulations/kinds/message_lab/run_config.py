"""A Message Lab run's configuration from its set-up's options (the page's form, `manage.py play`, a rehearsal), checked
against the scenario with a sentence for the player when they do not fit."""

from __future__ import annotations

from typing import Any

from .document import Config
from .scenario import MAX_PANEL, MAX_PARALLEL, MAX_ROUNDS, MIN_PANEL, MessageLabScenario

KEEP_DEFAULT = 3  # concepts the moderator keeps alive after a synthesis, at most


def config_from_options(scenario: MessageLabScenario, options: dict[str, Any]) -> Config:
    """A run's configuration: the scenario's defaults, overridden by the set-up's options. ValueError (a sentence
    for the player) when they do not fit. Gates not given are the defaults the run reaches (a 4-round run keeps the
    gate after round 3 and not the one after 6); gates given after a round the run does not reach are refused."""
    if "config" in options:  # an import: the exported run's own configuration
        return Config.model_validate(options["config"])
    d = scenario.defaults
    brief = options.get("brief_model")
    if brief is None:
        brief_id = options.get("brief") or scenario.briefs[0].id
        try:
            brief = scenario.brief(brief_id)
        except KeyError:
            raise ValueError(f"There is no brief {brief_id!r}.") from None
    rounds = int(options.get("rounds", d.rounds))
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"A run has 1 to {MAX_ROUNDS} rounds, not {rounds}.")
    if "gates" in options:
        gates = sorted({int(g) for g in options["gates"]})
        outside = [str(g) for g in gates if not 1 <= g <= rounds]
        if outside:
            raise ValueError(
                f"The run has {rounds} round{'s' * (rounds != 1)}: "
                f"there is no gate after round {', '.join(outside)}."
            )
    else:
        gates = [g for g in d.gates if g <= rounds]
    participants = list(options.get("participants", d.participants))
    if not MIN_PANEL <= len(participants) <= MAX_PANEL:
        raise ValueError(f"Choose {MIN_PANEL} to {MAX_PANEL} participants, not {len(participants)}.")
    if len(set(participants)) != len(participants):
        raise ValueError("A participant is on the panel twice.")
    for persona_id in participants:
        try:
            found = scenario.persona(persona_id)
        except KeyError:
            raise ValueError(f"There is no persona {persona_id!r}.") from None
        if found.role != "participant":
            raise ValueError(f"{found.name} is a {found.role}, not a participant.")
    moderator = str(options.get("moderator") or d.moderator)
    evaluator = str(options.get("evaluator") or d.evaluator)
    refusal = scenario.seat_refusal("moderator", moderator, panel=participants) or scenario.seat_refusal(
        "evaluator", evaluator, panel=participants, other=moderator
    )
    if refusal:
        raise ValueError(refusal)
    parallel = d.parallel if options.get("parallel") in (None, "") else int(options["parallel"])
    if not 1 <= parallel <= MAX_PARALLEL:
        raise ValueError(f"Run 1 to {MAX_PARALLEL} model calls at once, not {parallel}.")
    keep = int(options.get("keep", KEEP_DEFAULT))
    if not 1 <= keep <= len(participants):
        raise ValueError(f"Keep 1 to {len(participants)} concepts after each round.")
    return Config(
        rounds=rounds, gates=gates, participants=participants, moderator=moderator, evaluator=evaluator,
        parallel=parallel, keep=keep, brief=brief,
    )  # fmt: skip
