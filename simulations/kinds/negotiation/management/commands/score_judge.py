"""Score the configured judge on the labelled corpus, per reading kind (by hand: it calls the model once a sentence).

With a real judge model (MERCURY_JUDGE_MODEL, else MERCURY_MODEL) each sentence goes through the LLM judge exactly as
in a game (`llm_judge.judge_message`); `--rules` scores the rule judge instead (what offline games use, and what the
corpus test checks in CI): its rules, then, for a sentence they know no word of, the options and offers matched by
meaning (similarity.py, when `make install` fetched the embedding model); `--no-meaning` scores the rules alone.
Either prints the share read right per reading kind and per sentence family; `--family plain` scores only the
sentences in the student's own words (per kind within them).
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai import embeddings, model_spec
from simulations.kinds.negotiation import judge, judge_score, llm_judge
from simulations.kinds.negotiation.scenario import ScenarioError, load_scenario_dir


class Command(BaseCommand):
    help = (
        "Score the judge (the configured model's, or --rules) on tests/kinds/negotiation/judge_corpus.yaml."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rules", action="store_true", help="score the rule judge instead of the model")
        parser.add_argument(
            "--no-meaning",
            action="store_true",
            help="with --rules: the rules alone, without the options and offers matched by meaning",
        )
        parser.add_argument("--limit", type=int, default=0, help="score only the first N sentences")
        parser.add_argument(
            "--family",
            default="",
            help="score only this sentence family (e.g. plain: the student's own words)",
        )
        parser.add_argument("--misses", type=int, default=10, help="list this many misreadings")
        parser.add_argument("--corpus", default=str(judge_score.CORPUS))
        parser.add_argument("--scenario", default=str(settings.BASE_DIR / "scenarios" / "mercury"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            scenario = load_scenario_dir(options["scenario"])
            items = judge_score.load_corpus(judge_score.Path(options["corpus"]))
        except (OSError, ScenarioError) as exc:
            raise CommandError(str(exc)) from exc
        if options["family"]:
            items = [item for item in items if item.family == options["family"]]
            if not items:
                raise CommandError(f"no sentence of family {options['family']!r} in the corpus")
        if options["limit"]:
            items = items[: options["limit"]]
        spec = model_spec.judge_spec()
        if options["rules"]:
            if options["no_meaning"]:  # as on a checkout without the model's files
                os.environ[embeddings.DIRECTORY_ENV] = os.devnull
                embeddings.reset()
            meaning = "" if options["no_meaning"] or not embeddings.available() else ", then meaning"
            title = f"rule judge (rules{meaning})"

            def read(item: judge_score.Item) -> judge.Signals | None:
                return judge.read_signals(
                    scenario,
                    item.text,
                    speaker=item.speaker,
                    issue=item.issue,
                    meaning=not options["no_meaning"],
                )

        elif spec.offline:
            raise CommandError(
                "The judge model is the offline one, which judges by the rules: set MERCURY_JUDGE_MODEL or "
                "MERCURY_MODEL to a real model, or pass --rules."
            )
        else:
            title = f"model judge {spec.model}"

            def read(item: judge_score.Item) -> judge.Signals | None:
                # The engine refuses what the judge gets wrong in form; here that is simply no reading.
                return llm_judge.judge_message(scenario, item.speaker or scenario.chair.id, item.text).signals

        result = judge_score.score(items, read)
        self.stdout.write(judge_score.report(result, title=title, misses=options["misses"]))
