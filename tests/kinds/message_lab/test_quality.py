"""Issue #68: the offline panel judges quality, not quantity. Scores come from the evaluator's named criteria read
from the text; a pile of proof points with no single idea loses to a focused concept; no concept ever says the same
sentence twice; a merge keeps the line the moderator kept it for."""

from __future__ import annotations

import re
import string
from typing import Any

import pytest

from simulations.kinds.message_lab import offline
from simulations.kinds.message_lab.document import LabState
from simulations.kinds.message_lab.offline import Shown
from simulations.kinds.message_lab.scenario import Brief, load_default_scenario

from . import lab_loop

LAB = load_default_scenario()
DARNING, DRIVERS = LAB.brief("darning-kit-launch"), LAB.brief("community-car-drivers")
PANEL = LAB.of_role("participant")
MODERATOR, EVALUATOR = LAB.persona("moderator"), LAB.persona("evaluator")

# Every proof point of the brief, inside the limits, one ask: nothing breaks a rule, and nothing leads.
STUFFED = """Subject: Darning kit: £24, 300 kits, refunds

The kit costs £24 including UK postage. It contains a beech-wood darning mushroom, three needles, a needle threader
and six 10 m skeins of wool-blend yarn. The mushrooms are turned from beech grown within 40 miles of the workshop.
12 illustrated project cards and 9 short video lessons (18 minutes in total) come with the kit. 1,400 kits have been
sold since the launch in March 2023. The spring batch is 300 kits; about 120 were left at the time of writing.
Unused kits can be returned within 30 days for a full refund.

Buy the kit from the online shop: [link]"""

# One idea (you can do your first repair), three proof points that serve it, one ask.
FOCUSED = """Subject: Your first repair, this weekend

You might think mending is fiddly and needs a skill you do not have. Fair. But 12 illustrated project cards and
9 short video lessons (18 minutes in total) come with the kit, so your first repair is one short lesson away.

Ros, who teaches year six, had never darned a thing. By Sunday the hole in her favourite jumper was a bright patch
of visible mending.

The kit costs £24 including UK postage, and unused kits can be returned within 30 days for a full refund.

Buy the kit from the online shop before the spring batch sells out: [link]"""


def _shown(texts: list[str]) -> list[Shown]:
    return [Shown(f"Concept {string.ascii_uppercase[i]}", f"Concept {i}", t) for i, t in enumerate(texts)]


def test_a_concept_stuffed_with_every_proof_point_loses_to_a_focused_one() -> None:
    kit = offline._kit(DARNING)
    stuffed, focused = (offline._read(kit, DARNING, t) for t in (STUFFED, FOCUSED))
    assert len(stuffed.used) == len(kit.facts) > len(focused.used) and not stuffed.fails and not focused.fails
    concepts = _shown([STUFFED, FOCUSED])
    critiques = [offline.critique(DARNING, p, seed=1, round_number=1, concepts=concepts) for p in PANEL]
    for cr in critiques:  # every critic, whatever its lens, prefers the focused concept
        a, b = cr.notes
        assert a.score < b.score, (cr.persona, a, b)
    assert sum("piles up 7 proof points" in cr.notes[0].weakness for cr in critiques) >= len(PANEL) // 2
    ev = offline.evaluation(
        DARNING, EVALUATOR, seed=1, round_number=1, concepts=concepts, critiques=critiques
    )
    lo, hi = ev.scores
    assert hi.score > lo.score + 2, (lo, hi)
    for criterion in offline.CRITERIA:  # the reason names each criterion with its mark
        assert re.search(rf"{criterion} \d(\.\d)?/5", lo.reason) and criterion in hi.reason
    assert "single idea 2.5/5 (7 proof points (a pile" in lo.reason and "single idea 4" in hi.reason
    syn = offline.synthesis(DARNING, MODERATOR, seed=1, round_number=1, rounds=3, concepts=concepts, scores=ev,
                            keep=1, direction_from_user="")  # fmt: skip
    assert [d.verdict for d in syn.decisions] == ["eliminate", "survive"]
    verdict = offline.verdict(
        DARNING, MODERATOR, seed=1, finalists=[("c1", concepts[0], lo.score), ("c2", concepts[1], hi.score)]
    )
    assert verdict.winner == "c2" and "one idea carries it" in verdict.reasoning


def test_a_refinement_of_a_pile_cuts_it_to_the_points_the_idea_needs() -> None:
    (pile,) = _shown([STUFFED])
    notes = offline.critique(DARNING, LAB.persona("skeptic"), seed=1, round_number=1, concepts=[pile]).notes
    ref = offline.refinement(DARNING, PANEL[0], seed=1, round_number=1, concept_id="x", current=pile, notes=notes,
                             direction="", merged=[])  # fmt: skip
    kit = offline._kit(DARNING)
    assert len(offline._read(kit, DARNING, ref.text).used) <= offline.FOCUS
    assert "proof point(s) the idea did not need" in ref.changes and "piles up" in ref.why


def test_a_sentence_said_twice_is_said_once_and_the_refinement_says_so() -> None:
    line = "Ros, who teaches year six, had never darned a thing."
    doubled = FOCUSED.replace("Buy the kit", f"{line}\n\nBuy the kit")
    (c,) = _shown([doubled])
    assert offline._read(offline._kit(DARNING), DARNING, doubled).repeats == [line]
    assert offline._read(offline._kit(DARNING), DARNING, FOCUSED).repeats == []
    ref = offline.refinement(DARNING, PANEL[1], seed=1, round_number=1, concept_id="x", current=c, notes=[],
                             direction="", merged=[])  # fmt: skip
    assert ref.text.count("had never darned a thing") == 1
    assert "once, not twice" in ref.changes and "nothing to fix" not in ref.why


def test_a_proof_point_in_everyday_words_still_counts() -> None:
    kit = offline._kit(DRIVERS)
    induction = next(f for f in kit.facts if "induction" in f.text)
    assert induction.used_in(offline._plain(induction.text))


def _repeated(text: str) -> list[str]:
    units = offline._parse(text).units()
    norm = [offline._norm(u) for u in units]
    return [u for u, n in zip(units, norm, strict=True) if norm.count(n) > 1]


def _check_run(brief: Brief, seed: int) -> LabState:
    state = lab_loop.play(LAB, lab_loop.config(LAB, brief=brief), seed=seed)
    for concept in state.concepts:
        for v in concept.versions:  # no concept, in any version, says a sentence twice
            assert not _repeated(v.text), (seed, concept.id, v.version, _repeated(v.text))
            assert not offline._read(offline._kit(brief), brief, v.text).repeats, (seed, concept.id)
    for rec in state.rounds:  # a merge keeps the line the moderator kept it for
        for d in (rec.synthesis or {}).get("decisions", []):
            if d["verdict"] != "merge":
                continue
            line = re.search(r"its line ‘([^’]*?)(?:…)?’", d["reason"])
            assert line, d["reason"]
            into = state.concept(rec.aliases[d["into"]])
            refined = next(v for v in into.versions if v.round == rec.number and v.version > 1)
            assert offline._norm(line.group(1)) in offline._norm(refined.text), (seed, line.group(1))
    # A refinement acts on the notes: it keeps the copy only when they found little to fix, or, rarely, says which
    # note it could not answer.
    unanswered: list[str] = []
    for rec in state.rounds:
        for cid in rec.refined:
            concept = state.concept(cid)
            version = next(v for v in concept.versions if v.round == rec.number and v.version > 1)
            alias = next(a for a, i in rec.aliases.items() if i == cid)
            notes = [n["weakness"] for c in rec.critiques.values() for n in c["notes"] if n["alias"] == alias]
            if version.changes.startswith("Kept the copy") and not all("little to fix" in n for n in notes):
                assert version.why.startswith("No change I could make answers ‘"), (seed, cid, version.why)
                unanswered.append(version.why)
    assert len(unanswered) <= max(1, sum(len(rec.refined) for rec in state.rounds) // 10), unanswered
    assert state.verdict is not None
    kit = offline._kit(brief)
    for cid in [state.verdict.winner, *state.verdict.runners_up]:  # it leaves out only what it does leave out
        c = state.concept(cid)
        said = re.search(
            rf"'{re.escape(c.name)}'[^']*?leaves out the proof point ‘([^’…]*)", state.verdict.reasoning
        )
        if said:
            fact = next(f for f in kit.facts if f.text.startswith(said.group(1).strip()))
            assert not fact.used_in(c.text), (seed, c.name, fact.text)
    return state


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_whole_runs_say_nothing_twice_keep_merged_lines_and_crown_a_focused_concept(brief: Brief) -> None:
    kit = offline._kit(brief)
    for seed in (1, 2, 3, 4, 5):
        state = _check_run(brief, seed)
        assert state.verdict is not None
        winner = offline._read(kit, brief, state.concept(state.verdict.winner).text)
        assert 2 <= len(winner.used) <= offline.FOCUS and not winner.fails, (seed, winner.used)
        final = state.concept(state.verdict.winner).versions[-1]
        assert "nothing to fix" not in final.why or not offline._read(kit, brief, final.text).repeats


def test_the_seats_casts_never_share_an_invented_person_nor_do_the_briefs() -> None:
    def own(seats: int, block: int, each: int) -> list[tuple[str, str, str]]:
        return [person for slot in range(seats) for person in offline.cast(4, slot, seats, block)[:each]]

    for seats in (3, 5, 7):
        for block in (
            0,
            1,
            2,
        ):  # each seat's own people: a brief's third of the cast shared out, nobody twice
            people = own(seats, block, 11 // seats)
            assert len({n for n, _, _ in people}) == len({life for _, _, life in people}) == len(people)
        first, second = ({n for n, _, _ in own(seats, b, 17 // seats)} for b in (0, 1))
        assert not first & second  # the shipped briefs played with one seed invent different people


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_every_invented_person_and_detail_belongs_to_one_concept_of_a_run(brief: Brief) -> None:
    for seed in (2, 6, 8):
        state = lab_loop.play(LAB, lab_loop.config(LAB, brief=brief), seed=seed)
        owners: dict[str, set[str]] = {}
        for concept in state.concepts:
            for v in concept.versions:
                for name in offline.people_in([v.text]):
                    owners.setdefault(name, set()).add(concept.id)
                for life in offline.LIVES:
                    if life in v.text:
                        owners.setdefault(life, set()).add(concept.id)
        assert len(owners) >= 4, (seed, owners)  # the panel does invent people
        shared = {who: ids for who, ids in owners.items() if len(ids) > 1}
        assert not shared, (seed, shared)


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_every_critique_quotes_the_draft_it_means(brief: Brief) -> None:
    """Each weakness quotes the line it means (or, for a missing proof point, the brief's words for it)."""
    state = lab_loop.play(LAB, lab_loop.config(LAB, brief=brief), seed=2)
    notes = 0
    for rec in state.rounds:
        for critique in rec.critiques.values():
            for note in critique["notes"]:
                concept = state.concept(rec.aliases[note["alias"]])
                texts = " ".join(" ".join(v.text.split()) for v in concept.versions)
                quotes = re.findall(r"‘([^’]*?)(?:…)?’|'([^']+)'", note["weakness"])
                said = [a or b for a, b in quotes]
                missing = (
                    "leaves out the proof point" in note["weakness"]
                )  # it quotes the brief's missing point
                where = texts + " ".join(brief.proof_points) * missing
                assert any(q.strip() and q.strip() in where for q in said), (note["weakness"], said)
                notes += 1
    assert notes > 30


def test_the_last_direction_asks_for_one_idea_in_few_words() -> None:
    concepts = _shown([FOCUSED, STUFFED])
    scores = offline.evaluation(DARNING, EVALUATOR, seed=1, round_number=6, concepts=concepts, critiques=[])
    last = offline.synthesis(DARNING, MODERATOR, seed=1, round_number=6, rounds=6, concepts=concepts, scores=scores,
                             keep=1, direction_from_user="")  # fmt: skip
    assert last.direction.startswith("Final polish") and "one idea, in eight words or fewer" in last.direction
    assert "eight of them" not in last.direction and "Put this proof point to work" not in last.direction


def test_a_four_round_run_on_the_default_gates_pauses_after_round_three_only_and_finishes() -> None:
    from simulations.kinds.message_lab.run_config import config_from_options
    from simulations.kinds.message_lab.state import SimulationStatus

    cfg = config_from_options(LAB, {"rounds": 4})
    assert (cfg.rounds, cfg.gates, LAB.defaults.gates) == (4, [3], [3, 6])
    paused: list[int] = []

    def approve(st: LabState) -> dict[str, Any]:
        paused.append(st.round)
        return {}

    state = lab_loop.play(LAB, cfg, seed=4, gate=approve)
    assert paused == [3] and state.status is SimulationStatus.OUTPUT_READY and state.round == 4


def test_level_scores_are_separated_by_the_criteria_not_by_the_concept_id() -> None:
    stuffed, focused = _shown([STUFFED, FOCUSED])
    v = offline.verdict(DARNING, MODERATOR, seed=1, finalists=[("a1", stuffed, 8.0), ("b2", focused, 8.0)])
    assert (v.winner, v.runners_up) == ("b2", ["a1"])
