"""`manage.py check_model`: one short streamed call and one judge call with the configured models, in plain words."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai import gateway
from simulations.ai.model_spec import ModelSpec, default_spec, judge_spec
from simulations.kinds.negotiation import llm_judge, prompts
from simulations.kinds.negotiation.scenario import load_scenario_dir

SAMPLE = "We can support a phase-out by 2030 if financing is offered to developing countries."
SPEAK = [
    {
        "role": "system",
        "content": "You are a delegate at a treaty negotiation. Answer in one short sentence.",
    },
    {"role": "user", "content": "Say hello to the other delegations."},
]


class Command(BaseCommand):
    help = (
        "Send one short streamed call (the playing model) and one judge call (the judge model) with the "
        "configured settings, and say what works. Exit code 1 when a call fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--judge", action="store_true", help="check only the judge model")

    def handle(self, *args: Any, **options: Any) -> None:
        playing, judging = default_spec(), judge_spec()
        self.stdout.write(
            f"Deadline {settings.MERCURY_MODEL_TIMEOUT:g} s per call, {settings.MERCURY_MODEL_RETRIES} retries "
            "in games (none here: each check reports its first failure)."
        )
        ok = True
        if playing.offline and not options["judge"]:
            self.stdout.write(
                f"Playing model: {playing.model}, built in (no server, no key, nothing to check)."
            )
        elif not options["judge"]:
            self.stdout.write(_describe("Playing model", playing, "MERCURY_MODEL"))
            ok &= self._streamed(playing)
        if judging.offline:
            self.stdout.write("Judge: the offline model is judged by the rules; no model call to check.")
        else:
            same = judging == playing
            self.stdout.write(
                "Judge model: the playing model (MERCURY_JUDGE_MODEL is empty)"
                if same
                else _describe("Judge model", judging, "MERCURY_JUDGE")
            )
            ok &= self._judge(judging)
        if not ok:
            raise CommandError("The model is not ready: see above for what to change.")
        self.stdout.write("The model is ready.")

    def _streamed(self, spec: ModelSpec) -> bool:
        chunks: list[str] = []
        try:
            result = gateway.complete(SPEAK, spec=spec, on_chunk=chunks.append, retries=0)
        except gateway.ModelFailure as exc:
            self._failed("streamed call", exc)
            return False
        self.stdout.write(
            f"  streamed call: OK in {result.latency_ms / 1000:.1f} s, {len(chunks)} chunks, "
            f"{result.prompt_tokens}+{result.completion_tokens} tokens ({result.token_count_method}): "
            f"{_clip(result.text)!r}"
        )
        return True

    def _judge(self, spec: ModelSpec) -> bool:
        scenario = load_scenario_dir(settings.MERCURY_SCENARIO_DIR / "mercury")
        prompt = prompts.build_judge_prompt(scenario, scenario.roles[0].id, SAMPLE)
        try:
            result = gateway.complete(prompt.messages, spec=spec, retries=0)
        except gateway.ModelFailure as exc:
            self._failed("judge call", exc)
            return False
        signals = llm_judge.parse(scenario, result.text)
        if signals is None:
            self.stdout.write(
                f"  judge call: answered in {result.latency_ms / 1000:.1f} s, but not with signals JSON the "
                f"game can use: {_clip(result.text)!r}. Games will judge by the rules instead; a model that "
                "follows JSON instructions better would do."
            )
            return False
        read = signals.model_dump(exclude_defaults=True) or "nothing to act on"
        self.stdout.write(
            f"  judge call: OK in {result.latency_ms / 1000:.1f} s, valid signals JSON ({read})"
        )
        return True

    def _failed(self, what: str, exc: gateway.ModelFailure) -> None:
        advice = exc.advice.replace("If this keeps happening, ask your teacher to", "If it keeps failing,")
        advice = advice.replace("Ask your teacher to check", "Check").replace(
            "Ask your teacher to set", "Set"
        )
        self.stdout.write(f"  {what}: FAILED ({exc.cause}). {exc.reason} {advice}".rstrip())
        self.stdout.write(f"    the server said: {exc.detail or '(nothing)'}")


def _describe(label: str, spec: ModelSpec, prefix: str) -> str:
    where = spec.api_base or "the provider's own address"
    key = "set" if spec.api_key else "not set"
    extra = f", extra arguments {spec.kwargs}" if spec.kwargs else ""
    return f"{label}: {spec.model} at {where} ({prefix}_API_KEY {key}{extra})"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
