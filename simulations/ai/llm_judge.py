"""The LLM judge: with a real model configured, a model reads each committed message into `Signals`.

Its answer must be JSON matching `Signals` and naming only the scenario's ids; anything else (invalid JSON, wrong
shape, unknown ids, a failed call) falls back to the rule-based judge, so a model can never push arbitrary state:
the signals travel in the event payload and the engine validates them again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.conf import settings
from pydantic import ValidationError

from simulations.engine import judge
from simulations.engine.scenario import Scenario

from . import gateway, model_spec, prompts

_JSON = re.compile(r"\{.*\}", re.S)


def is_offline(model: str | None = None) -> bool:
    return (model or settings.MERCURY_MODEL).startswith("mercury-offline/")


@dataclass(frozen=True)
class Judged:
    signals: judge.Signals | None  # None: use the rules
    completion: gateway.Completion | None
    version: str
    error: str = ""


def judge_message(scenario: Scenario, speaker: str, text: str) -> Judged:
    """Precondition: a real model is configured (the offline default judges by rules inside the engine)."""
    prompt = prompts.build_judge_prompt(scenario, speaker, text)
    try:
        completion = gateway.complete(prompt.messages, spec=model_spec.judge_spec())
    except gateway.ModelFailure as exc:
        return Judged(None, None, prompt.version, str(exc))
    return Judged(parse(scenario, completion.text), completion, prompt.version)


def parse(scenario: Scenario, answer: str) -> judge.Signals | None:
    match = _JSON.search(answer)
    if not match:
        return None
    try:
        return judge.check_signals(scenario, judge.Signals.model_validate(json.loads(match.group(0))))
    except (ValueError, ValidationError):
        return None
