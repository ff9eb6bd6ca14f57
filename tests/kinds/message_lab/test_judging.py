"""Issue #68: on the darning-kit brief one persona's concept won in most seeds (the nudger's, 8 runs in 10), because
the evaluator credited that writer's stock phrases ("a trial", "the first step") as answering the audience's doubt,
marked sentence lengths finer than any reader sees, and the verdict handed level scores to the lowest concept id.
Now the scores come from the evaluator's named criteria read from the text, and equals are drawn from the seed: over
whole runs, winners vary on every shipped brief, and each winner's score is the sum its reason states."""

from __future__ import annotations

import re

import pytest

from simulations.kinds.message_lab import offline
from simulations.kinds.message_lab.document import LabState
from simulations.kinds.message_lab.offline import Shown
from simulations.kinds.message_lab.scenario import load_default_scenario

from . import lab_loop

LAB = load_default_scenario()
EVALUATOR = LAB.persona("evaluator")
SEEDS = range(12)  # two-round runs: about a third of a second each
MOST = 7  # wins out of 12 no persona may pass: with three or four comparably good finalists, half is already a lot

_MARK = re.compile(r"(single idea|audience fit|proof used well|tone|call to action) ([\d.]+)/5")


def _explained(reason: str, limit: int | None) -> float:
    """The score a reason's own figures add up to: the criteria on the 1-10 scale, a point per failed constraint,
    and the words over the limit."""
    marks = [float(m) for _, m in _MARK.findall(reason)]
    assert len(marks) == len(offline.CRITERIA), reason
    constraints = reason.split(". Biggest lift:")[0]
    over = re.search(r"(\d+) words FAIL \((\d+)\)", constraints)
    words_over = int(over.group(2)) - int(over.group(1)) if over else 0
    raw = 1 + 9 * (sum(marks) / len(marks) - 1) / 4 - constraints.count("FAIL") - min(1.5, 0.04 * words_over)
    assert limit is None or over is None or int(over.group(1)) == limit
    return round(min(10.0, max(1.0, raw)), 1)


def _winner_note(st: LabState) -> tuple[float, str]:
    assert st.verdict is not None
    last = st.rounds[-1]
    assert last.evaluation is not None
    by_id = {last.aliases[s["alias"]]: s for s in last.evaluation["scores"]}
    note = by_id[st.verdict.winner]
    assert note["score"] == max(s["score"] for s in by_id.values())  # the best score wins
    return note["score"], note["reason"]


@pytest.mark.parametrize("brief", [b.id for b in LAB.briefs])
def test_winners_vary_across_seeds_and_each_winners_score_is_its_criteria(brief: str) -> None:
    wins, states = lab_loop.winners(LAB, brief, SEEDS)
    limit = offline._kit(LAB.brief(brief)).word_limit
    for st in states:
        score, reason = _winner_note(st)
        assert score == _explained(reason, limit), reason
    assert sum(wins.values()) == len(SEEDS)
    assert max(wins.values()) <= MOST and len(wins) >= 3, wins


# A concept without any method's stock phrases, and the same concept with one sentence from each of several
# writers' repertoires dropped in: none of them speaks to the reader, names the doubt or adds a person, so the
# evaluator's marks must not move. (The old evaluator gave "the first step" and "a trial" a point for answering
# the audience's doubt.)
PLAIN = """Subject: A darning kit from Shrewsbury

Picture Ros, who teaches year six: she has never repaired a garment herself. If you own a jumper with a hole in
it, this is for you.

The mushrooms are turned from beech grown within 40 miles of the workshop. The kit costs £24 including UK postage.

Buy the kit from the online shop before the spring batch sells out: [link]"""
HABITS = (
    "Think of it as a trial.",  # the nudger's
    "The first step is small.",  # the nudger's
    "Rumour, as usual, has not read the small print.",  # the humorist's
    "By the time the kettle boils, it is done.",  # the storyteller's
)


def test_one_writers_stock_phrases_earn_no_marks() -> None:
    darning = LAB.brief("darning-kit-launch")
    kit = offline._kit(darning)
    base = offline._criteria(kit, offline._read(kit, darning, PLAIN))
    for habit in HABITS:
        text = PLAIN.replace("this is for you.", f"this is for you. {habit}")
        assert offline._criteria(kit, offline._read(kit, darning, text)) == base, habit


def test_naming_the_audiences_doubt_is_what_answers_it() -> None:
    """What any writer can do to answer the doubt (name it, or use a proof point that makes trying easy or
    reversible) earns the mark, whichever method wrote it."""
    darning = LAB.brief("darning-kit-launch")
    kit = offline._kit(darning)
    named = PLAIN.replace("this is for you.", "this is for you. Mending is less fiddly than it looks.")
    eased = PLAIN.replace(
        "this is for you.", "this is for you. Unused kits can be returned within 30 days for a full refund."
    )
    base = offline._criteria(kit, offline._read(kit, darning, PLAIN))["audience fit"]
    for text in (named, eased):
        assert offline._criteria(kit, offline._read(kit, darning, text))["audience fit"] > base
    scored = offline.evaluation(
        darning, EVALUATOR, seed=1, round_number=1, concepts=[Shown("Concept A", "A", named)], critiques=[]
    )
    assert "audience fit" in scored.scores[0].reason
