"""The LLM judge: with a real model configured, a model reads each committed message into `Signals`.

Where litellm says the provider supports structured output, the call asks for the `Signals` JSON schema
(`response_format`); either way the answer is parsed as JSON, checked against `Signals` and must name only the
scenario's ids. Anything else (no JSON, wrong shape, unknown ids, a failed call) falls back to the rule-based
judge, so a model can never push arbitrary state: the signals travel in the event payload and the engine validates
them again. Every outcome is reported (`used`, `fallback` with why, `failed` with the cause) so it can be recorded.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from simulations.ai import costs, gateway, model_spec
from simulations.ai.model_spec import ModelSpec
from simulations.kinds.negotiation import judge, prompts
from simulations.kinds.negotiation.scenario import Scenario

log = logging.getLogger("mercury.judge")

_JSON = re.compile(r"\{.*\}", re.S)

USED, FALLBACK, FAILED = "used", "fallback", "failed"
NO_JSON = "no JSON object in the answer"
BAD_JSON = "the answer is not valid JSON"
WRONG_SHAPE = "the JSON does not have the Signals shape"
UNKNOWN_IDS = "ids the scenario does not have"


def is_offline(model: str | ModelSpec | None = None) -> bool:
    """Is this model (a spec, a model string, or by default the settings' judge) the offline one?"""
    if isinstance(model, ModelSpec):
        return model.offline
    return (model or model_spec.judge_spec().model).startswith(model_spec.OFFLINE_PREFIX)


@dataclass(frozen=True)
class Judged:
    signals: judge.Signals | None  # None: use the rules
    completion: gateway.Completion | None  # None: the call failed
    version: str
    outcome: str = USED  # USED | FALLBACK | FAILED
    reason: str = ""  # why the answer was not used, or the failure's cause
    model: str = ""
    prompt_tokens: int = 0  # a failed call: the prompt, estimated

    @property
    def error(self) -> str:
        return self.reason if self.outcome == FAILED else ""


def judge_message(scenario: Scenario, speaker: str, text: str, spec: ModelSpec | None = None) -> Judged:
    """Precondition: `spec` (default: the settings' judge) is a real model; the offline one judges by rules."""
    spec = spec or model_spec.judge_spec()
    prompt = prompts.build_judge_prompt(scenario, speaker, text)
    try:
        completion = gateway.complete(prompt.messages, spec=spec, response_format=response_format_for(spec))
    except gateway.ModelFailure as exc:
        cause = exc.record  # the cause kind and the provider's own words
        log.warning("judge call failed (%s): %s", spec.model, cause)
        return Judged(
            None, None, prompt.version, FAILED, cause[:300], spec.model,
            costs.estimated_prompt_tokens(prompt.messages),
        )  # fmt: skip
    signals, why = read(scenario, completion.text)
    if signals is None:
        log.info("judge answer not used (%s): %s", spec.model, why)
        return Judged(None, completion, prompt.version, FALLBACK, why, completion.model)
    return Judged(signals, completion, prompt.version, USED, "", completion.model)


def response_format_for(spec: ModelSpec) -> dict[str, Any] | None:
    """The Signals schema as structured output where the provider supports it, else None (parse the text).

    Sent with `strict: false`: OpenAI's strict mode refuses schemas with free-form objects, and Signals maps issue
    ids to options. A `response_format` in the spec's own kwargs wins (an admin's choice for that server)."""
    if spec.offline or "response_format" in spec.kwargs or not supports_schema(spec.model):
        return None
    return {
        "type": "json_schema",
        "json_schema": {"name": "signals", "schema": judge.Signals.model_json_schema(), "strict": False},
    }


def supports_schema(model: str) -> bool:
    import litellm

    litellm.suppress_debug_info = True
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:  # an unmapped provider: assume plain text
        return False


def read(scenario: Scenario, answer: str) -> tuple[judge.Signals | None, str]:
    """The answer's validated signals, or None and why they cannot be used."""
    match = _JSON.search(answer)
    if not match:
        return None, NO_JSON
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None, BAD_JSON
    try:
        signals = judge.Signals.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(answer)"
        return None, f"{WRONG_SHAPE} ({where}: {first['msg']})"[:300]
    try:
        return judge.check_signals(scenario, signals), ""
    except judge.InvalidSignals as exc:
        log.warning("judge named ids outside the scenario: %s", exc)
        return None, f"{UNKNOWN_IDS} ({exc})"[:300]
    except ValueError as exc:  # any other refusal by the scenario check
        return None, f"{UNKNOWN_IDS} ({exc})"[:300]


def parse(scenario: Scenario, answer: str) -> judge.Signals | None:
    return read(scenario, answer)[0]
