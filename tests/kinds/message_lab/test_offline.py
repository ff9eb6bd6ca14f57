"""Message Lab's offline personas: deterministic, valid, built from the brief, and judged by what the text does."""

from __future__ import annotations

import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from simulations.kinds.message_lab import offline
from simulations.kinds.message_lab.offline import Shown
from simulations.kinds.message_lab.payloads import (
    ConceptSubmitted,
    CritiqueSubmitted,
    EvaluationSubmitted,
    PresentationGiven,
    RefinementSubmitted,
    SynthesisSubmitted,
    VerdictGiven,
)
from simulations.kinds.message_lab.scenario import Brief, MessageLabScenario, Persona, load_default_scenario

ROOT = Path(__file__).resolve().parents[3]
LAB = load_default_scenario()
DARNING, DRIVERS = LAB.brief("darning-kit-launch"), LAB.brief("community-car-drivers")
PANEL = LAB.of_role("participant")
MODERATOR, EVALUATOR = LAB.persona("moderator"), LAB.persona("evaluator")

GOOD_EMAIL = """Subject: £24 with postage: your first repair

The spring batch is 300 kits; about 120 were left at the time of writing. The kit costs £24 including UK postage.

Ros, who teaches year six, had never darned a thing. She started with the project cards: 12 illustrated project cards
and 9 short video lessons (18 minutes in total) come with the kit. Her first repair is a bright patch of visible
mending on a favourite jumper.

Unused kits can be returned within 30 days for a full refund.

Buy the kit from the online shop before the spring batch sells out: [link]"""

BAD_EMAIL = (
    "Subject: Mending is the best thing you will ever do, honestly, and here is why\n\n"
    + " ".join(["Mending is wonderful and everyone should try it because it is lovely."] * 14)
    + "\n\nBuy now: [link] Reply to this email and tell your friends."
)


def _shown(texts: list[str]) -> list[Shown]:
    return [Shown(f"Concept {string.ascii_uppercase[i]}", f"Concept {i}", t) for i, t in enumerate(texts)]


def _panel_critiques(
    brief: Brief, concepts: list[Shown], seed: int = 1, round_number: int = 1
) -> list[CritiqueSubmitted]:
    return [
        offline.critique(brief, p, seed=seed, round_number=round_number, concepts=concepts) for p in PANEL
    ]


def _scores(brief: Brief, concepts: list[Shown], seed: int = 1, round_number: int = 1) -> dict[str, float]:
    critiques = _panel_critiques(brief, concepts, seed, round_number)
    ev = offline.evaluation(
        brief, EVALUATOR, seed=seed, round_number=round_number, concepts=concepts, critiques=critiques
    )
    return {s.alias: s.score for s in ev.scores}


def _draft(
    brief: Brief, persona: Persona, seed: int, direction: str = "", round_number: int = 1
) -> ConceptSubmitted:
    return offline.concept(
        brief, persona, seed=seed, round_number=round_number, direction=direction, taken_names=[]
    )


def _body_words(text: str) -> int:
    return len(re.findall(r"[\w£$€][\w'’£$€.,/-]*", text.split("\n\n", 1)[1]))


def _figures(brief: Brief) -> set[str]:
    return {n for p in brief.proof_points for n in re.findall(r"\d[\d,]*\d|\d", p)}


# --- determinism ------------------------------------------------------------------------------------------------


def test_the_same_inputs_give_the_same_concept_and_other_seeds_or_personas_another() -> None:
    assert _draft(DARNING, PANEL[0], 3) == _draft(DARNING, PANEL[0], 3)
    assert len({_draft(DARNING, PANEL[0], s).text for s in range(1, 7)}) >= 4
    assert len({_draft(DARNING, p, 3).text for p in PANEL}) == len(PANEL)


def test_a_concept_is_the_same_in_another_process_whatever_the_hash_seed() -> None:
    code = (
        "from simulations.kinds.message_lab import offline\n"
        "from simulations.kinds.message_lab.scenario import load_default_scenario\n"
        "lab = load_default_scenario()\n"
        "c = offline.concept(lab.briefs[1], lab.of_role('participant')[3], seed=9, round_number=2, "
        "direction='', taken_names=[])\n"
        "print(c.name + '|' + c.text)\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "", "PYTHONHASHSEED": h},
        ).stdout  # fmt: skip
        for h in ("1", "2")
    }
    assert len(outs) == 1 and outs.pop().strip()


def test_the_offline_module_imports_neither_django_nor_litellm() -> None:
    code = (
        "import sys\nimport simulations.kinds.message_lab.offline\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'litellm'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})  # fmt: skip
    assert out.stdout.strip() == ""


# --- concepts ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_concepts_use_their_own_briefs_facts_and_differ_across_personas(brief: Brief) -> None:
    other = DRIVERS if brief is DARNING else DARNING
    foreign = {f for f in _figures(other) - set(re.findall(r"\d[\d,]*", brief.text)) if len(f) > 1}
    facts = offline._kit(brief).facts
    concepts = [_draft(brief, p, 4) for p in PANEL]
    for c in concepts:
        assert isinstance(c, ConceptSubmitted)
        head = "Subject:" if brief is DARNING else "Headline:"
        assert c.text.startswith(head)
        assert any(f.used_in(c.text) for f in facts), c.text
        assert not any(re.search(rf"(?<![\d,]){re.escape(f)}(?![\d,])", c.text) for f in foreign), c.text
    assert sum(any(k.lower() in c.text.lower() for k in brief.keywords) for c in concepts) >= len(PANEL) - 1
    openings = [c.text.split("\n\n")[1][:60] for c in concepts]
    assert len(set(openings)) >= len(PANEL) - 1
    assert len({c.name for c in concepts}) == len(PANEL)


def test_a_methods_signature_shows_in_its_concepts() -> None:
    by_id = {p.id: p for p in PANEL}
    for seed in (1, 2, 3):
        text = {pid: _draft(DRIVERS, by_id[pid], seed).text for pid in by_id}
        assert "You might think" in text["skeptic"]
        assert offline.people_in([text["storyteller"]])
        assert "Rumour" in text["humorist"]
        assert "Image:" in text["art_director"]
        assert re.search(r"\bwe\b", text["organiser"], re.I)


def test_a_new_name_avoids_the_names_taken() -> None:
    persona = PANEL[2]
    first = _draft(DARNING, persona, 5)
    again = offline.concept(
        DARNING, persona, seed=5, round_number=1, direction="", taken_names=[first.name.upper()]
    )
    assert again.name.lower() != first.name.lower()


def test_a_direction_visibly_shapes_a_new_concept() -> None:
    plain = LAB.persona("plain_editor")
    fact = DRIVERS.proof_points[2]  # last winter's unmet journeys
    direction = f"Round 2 focus: (1) Put a person in it: a name, a place, one detail. (2) Put this proof point to work: {fact}."
    for seed in (1, 2, 3):
        before = _draft(DRIVERS, plain, seed, round_number=2).text
        after = offline.concept(
            DRIVERS, plain, seed=seed, round_number=2, direction=direction, taken_names=[]
        ).text
        assert "3 in 10" in after and after != before
        assert offline.people_in([after])


def test_a_direction_that_names_the_limit_keeps_a_long_winded_writer_inside_it() -> None:
    humorist = LAB.persona("humorist")
    assert any(
        _body_words(_draft(DARNING, humorist, s, round_number=2).text) > 150 for s in range(8)
    )  # the slip…
    told = "(1) Cut every draft to 150 words or fewer, and count them."
    for s in range(8):  # …and a direction that names it prevents it
        assert _body_words(_draft(DARNING, humorist, s, told, round_number=2).text) <= 150


# --- critique and evaluation ------------------------------------------------------------------------------------


def test_every_critic_flags_a_concept_over_the_word_limit_and_one_missing_proof_points() -> None:
    long_text = GOOD_EMAIL.replace(
        "Unused kits", " ".join(["It really is a lovely thing to learn."] * 12) + " Unused kits"
    )
    thin_text = (
        "Subject: Mend it\n\nMending is a lovely thing to learn.\n\nBuy the kit from the online shop: [link]"
    )
    concepts = _shown([long_text, thin_text])
    for critic in PANEL:
        cr = offline.critique(DARNING, critic, seed=2, round_number=1, concepts=concepts)
        assert [n.alias for n in cr.notes] == ["Concept A", "Concept B"]
        assert "against a limit of 150" in cr.notes[0].weakness, (critic.id, cr.notes[0].weakness)
        assert "leaves out the proof point" in cr.notes[1].weakness or critic.id in (
            "storyteller",
            "organiser",
            "art_director",
        )
    scores = [
        n.score for cr in _panel_critiques(DARNING, concepts) for n in cr.notes if n.alias == "Concept A"
    ]
    fine = [n.score for cr in _panel_critiques(DARNING, _shown([GOOD_EMAIL])) for n in cr.notes]
    assert sum(scores) / len(scores) < sum(fine) / len(fine)


def test_critics_differ_by_what_they_care_about() -> None:
    concepts = _shown([_draft(DRIVERS, p, 6).text for p in PANEL])
    critiques = _panel_critiques(DRIVERS, concepts, seed=6)
    for alias in ("Concept A", "Concept C"):
        weaknesses = {n.weakness.split(":", 1)[1] for cr in critiques for n in cr.notes if n.alias == alias}
        assert len(weaknesses) >= 3
    assert all(1.0 <= n.score <= 10.0 for cr in critiques for n in cr.notes)


def test_a_forbidden_claim_is_caught_and_quoted() -> None:
    text = GOOD_EMAIL.replace("Unused kits", "Nobody will ever know it was mended. Unused kits")
    cr = offline.critique(DARNING, LAB.persona("skeptic"), seed=1, round_number=1, concepts=_shown([text]))
    assert "Nobody will ever know" in cr.notes[0].weakness and "invisible" in cr.notes[0].weakness
    ev = offline.evaluation(
        DARNING, EVALUATOR, seed=1, round_number=1, concepts=_shown([text]), critiques=[cr]
    )
    assert "FAIL" in ev.scores[0].reason


def test_evaluation_ranks_the_concept_that_uses_the_proof_points_within_the_limit_first() -> None:
    concepts = _shown([BAD_EMAIL, GOOD_EMAIL])
    scores = _scores(DARNING, concepts)
    assert scores["Concept B"] > scores["Concept A"] + 2
    ev = offline.evaluation(DARNING, EVALUATOR, seed=1, round_number=1, concepts=concepts, critiques=[])
    bad, good = ev.scores
    assert "150 words FAIL" in bad.reason and "one call to action FAIL" in bad.reason
    assert "150 words pass" in good.reason and "proof points" in good.reason


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_a_refinement_that_answers_its_notes_scores_higher(brief: Brief) -> None:
    gains = []
    for seed in (1, 2):
        drafts = [_draft(brief, p, seed) for p in PANEL]
        concepts = _shown([d.text for d in drafts])
        first = _scores(brief, concepts, seed)
        for persona, mine in zip(PANEL, concepts, strict=True):
            others = [c for c in concepts if c is not mine]
            critiques = [
                offline.critique(brief, p, seed=seed, round_number=1, concepts=[mine])
                for p in PANEL
                if p != persona
            ]
            before = first[mine.alias]
            notes = [n for cr in critiques for n in cr.notes]
            ref = offline.refinement(brief, persona, seed=seed, round_number=1, concept_id="c1", current=mine, notes=notes,
                                     direction="", merged=[])  # fmt: skip
            assert isinstance(ref, RefinementSubmitted) and ref.concept == "c1" and ref.changes and ref.why
            after = _scores(brief, [*others, Shown(mine.alias, ref.name, ref.text)], seed, round_number=2)[
                mine.alias
            ]
            gains.append(after - before)
            if before < 6.5:  # a draft with a real flaw gets clearly better
                assert after > before, (persona.id, seed, before, after, ref.changes)
    assert min(gains) > -0.3 and sum(gains) / len(gains) > 0.4


def test_a_refinement_fixes_what_the_notes_name() -> None:
    text = BAD_EMAIL
    notes = offline.critique(
        DARNING, LAB.persona("direct_response"), seed=1, round_number=1, concepts=_shown([text])
    ).notes
    ref = offline.refinement(DARNING, LAB.persona("plain_editor"), seed=1, round_number=1, concept_id="x",
                             current=_shown([text])[0], notes=notes, direction="", merged=[])  # fmt: skip
    assert "Reply to this email" not in ref.text and "best" not in ref.text.split("\n\n", 1)[1]
    assert len(re.findall(r"\w+", ref.text.split("\n\n", 1)[1])) <= 150
    assert "second ask" in ref.changes


def test_a_merged_concepts_best_line_is_folded_in() -> None:
    mine, theirs = _shown([
        "Subject: Mend it\n\nThe kit costs £24 including UK postage.\n\nBuy the kit from the online shop: [link]",
        "Subject: Mended\n\nUnused kits can be returned within 30 days for a full refund.\n\nBuy it: [link]",
    ])  # fmt: skip
    ref = offline.refinement(DARNING, PANEL[0], seed=1, round_number=1, concept_id="x", current=mine, notes=[],
                             direction="", merged=[theirs])  # fmt: skip
    assert "returned within 30 days" in ref.text and "Concept B" in ref.changes


# --- the moderator ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("keep", "seed"), [(1, 1), (2, 2), (3, 3), (3, 4), (9, 5)])
def test_synthesis_keeps_at_most_keep_and_merges_only_into_survivors(keep: int, seed: int) -> None:
    concepts = _shown([_draft(DARNING, p, seed).text
                       for p in PANEL])  # fmt: skip
    critiques = _panel_critiques(DARNING, concepts, seed)
    scores = offline.evaluation(
        DARNING, EVALUATOR, seed=seed, round_number=1, concepts=concepts, critiques=critiques
    )
    syn = offline.synthesis(DARNING, MODERATOR, seed=seed, round_number=1, rounds=6, concepts=concepts, scores=scores,
                            keep=keep, direction_from_user="")  # fmt: skip
    assert isinstance(syn, SynthesisSubmitted)
    assert [d.alias for d in syn.decisions] == [c.alias for c in concepts]
    survivors = {d.alias for d in syn.decisions if d.verdict == "survive"}
    assert 1 <= len(survivors) <= keep
    best = max(scores.scores, key=lambda s: s.score).score
    assert all(s.score == best for s in scores.scores if s.alias in survivors) or len(survivors) > 1
    for d in syn.decisions:
        assert d.reason
        if d.verdict == "merge":
            assert d.into in survivors and d.into != d.alias
        else:
            assert d.into == ""
    ranked = sorted(scores.scores, key=lambda s: -s.score)
    assert min(s.score for s in scores.scores if s.alias in survivors) >= ranked[len(survivors) - 1].score
    assert 2 <= len(re.findall(r"\(\d\)", syn.direction)) <= 4 and syn.direction.startswith("Round 2 focus")


def test_synthesis_merges_a_near_copy_of_a_survivor() -> None:
    strong = GOOD_EMAIL
    copy = strong.replace(
        "Ros, who teaches year six, had never darned a thing.", "Someone had never darned a thing."
    )
    copy = copy.replace("The kit costs £24 including UK postage.", "").replace(
        "Unused kits can be returned within 30 days for a full refund.", ""
    )
    copy = copy.replace(
        "Her first repair", "1,400 kits have been sold since the launch in March 2023. Her first repair"
    )
    concepts = _shown([strong, copy, BAD_EMAIL])
    scores = offline.evaluation(DARNING, EVALUATOR, seed=1, round_number=1, concepts=concepts, critiques=[])
    syn = offline.synthesis(DARNING, MODERATOR, seed=1, round_number=1, rounds=6, concepts=concepts, scores=scores,
                            keep=1, direction_from_user="")  # fmt: skip
    verdicts = {d.alias: (d.verdict, d.into) for d in syn.decisions}
    assert verdicts == {
        "Concept A": ("survive", ""),
        "Concept B": ("merge", "Concept A"),
        "Concept C": ("eliminate", ""),
    }


def test_the_direction_honours_the_player_and_the_last_round_polishes() -> None:
    concepts = _shown([BAD_EMAIL, GOOD_EMAIL])
    scores = offline.evaluation(DARNING, EVALUATOR, seed=1, round_number=1, concepts=concepts, critiques=[])
    mid = offline.synthesis(DARNING, MODERATOR, seed=1, round_number=3, rounds=6, concepts=concepts, scores=scores,
                            keep=2, direction_from_user="Make it warmer")  # fmt: skip
    assert mid.direction.startswith("Round 4 focus: (1) From the player: Make it warmer.")
    assert "150 words" in mid.direction and "call to action" in mid.direction
    last = offline.synthesis(DARNING, MODERATOR, seed=1, round_number=6, rounds=6, concepts=concepts, scores=scores,
                             keep=2, direction_from_user="")  # fmt: skip
    assert last.direction.startswith("Final polish")


# --- pitching and placing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", PANEL, ids=lambda p: p.id)
def test_a_pitch_is_two_to_four_sentences_about_the_audience_and_goal(persona: Persona) -> None:
    c = _draft(DRIVERS, persona, 2)
    for score in (None, 7.4):
        pitch = offline.presentation(DRIVERS, persona, seed=2, round_number=1, concept_id="c9",
                                     current=Shown("Concept A", c.name, c.text), score=score)  # fmt: skip
        assert isinstance(pitch, PresentationGiven) and pitch.concept == "c9"
        assert 2 <= len(re.findall(r"[.!?](?:\s|$)", pitch.text)) <= 4
        assert c.name in pitch.text and "20-minute" in pitch.text


def test_the_verdict_places_the_best_and_draws_between_equals_from_the_seed() -> None:
    """Two finalists level on score and on every criterion are equally good: which one wins is the seed's draw,
    never their ids (an order by id hands every tie to the same writer)."""
    a, b, c = _shown([GOOD_EMAIL, BAD_EMAIL, GOOD_EMAIL])
    winners = set()
    for seed in range(8):
        v = offline.verdict(
            DARNING, MODERATOR, seed=seed, finalists=[("c3", c, 8.2), ("c1", a, 8.2), ("c2", b, 4.0)]
        )
        assert isinstance(v, VerdictGiven)
        assert {v.winner, v.runners_up[0]} == {"c1", "c3"} and v.runners_up[1] == "c2"
        assert "wins at 8.2" in v.reasoning and "stood level with it on every criterion" in v.reasoning
        assert "came close, but" in v.reasoning
        winners.add(v.winner)
    assert winners == {"c1", "c3"}
    alone = offline.verdict(DARNING, MODERATOR, seed=1, finalists=[("c7", a, 6.0)])
    assert (alone.winner, alone.runners_up) == ("c7", [])


# --- a whole offline game -----------------------------------------------------------------------------------------


def _play(
    lab: MessageLabScenario, brief: Brief, seed: int, rounds: int = 4, keep: int = 3
) -> dict[str, list[float]]:
    """A small game through every function: new concepts, critique, scoring, synthesis, refinement, pitches."""
    panel = [lab.persona(x) for x in lab.defaults.participants]
    alive: dict[str, tuple[str, str, str]] = {}  # id -> (persona, name, text)
    history: dict[str, list[float]] = {}
    direction, names = "", list[str]()
    for rn in range(1, rounds + 1):
        for p in panel:
            if rn < rounds and p.id not in {a for a, _, _ in alive.values()}:
                c = offline.concept(
                    brief, p, seed=seed, round_number=rn, direction=direction, taken_names=names
                )
                assert c.name not in names
                names.append(c.name)
                alive[f"{p.id}-{rn}"] = (p.id, c.name, c.text)
        ids = list(alive)
        shown = {f"Concept {string.ascii_uppercase[i]}": Shown(f"Concept {string.ascii_uppercase[i]}", alive[k][1], alive[k][2])
                 for i, k in enumerate(ids)}  # fmt: skip
        by_alias = dict(zip(shown, ids, strict=True))
        critiques = []
        for p in panel:
            theirs = [s for a, s in shown.items() if alive[by_alias[a]][0] != p.id]
            if theirs:
                critiques.append(offline.critique(brief, p, seed=seed, round_number=rn, concepts=theirs))
        scores = offline.evaluation(
            brief, EVALUATOR, seed=seed, round_number=rn, concepts=[*shown.values()], critiques=critiques
        )
        assert isinstance(scores, EvaluationSubmitted)
        syn = offline.synthesis(brief, MODERATOR, seed=seed, round_number=rn, rounds=rounds, concepts=[*shown.values()],
                                scores=scores, keep=keep, direction_from_user="")  # fmt: skip
        for model in (scores, syn, *critiques):
            assert type(model).model_validate(model.model_dump()) == model
        for s in scores.scores:
            history.setdefault(by_alias[s.alias], []).append(s.score)
        direction = syn.direction
        for d in syn.decisions:
            key = by_alias[d.alias]
            if d.verdict != "survive":
                del alive[key]
                continue
            persona = lab.persona(alive[key][0])
            notes = [n for cr in critiques for n in cr.notes if n.alias == d.alias]
            merged = [shown[x.alias] for x in syn.decisions if x.into == d.alias]
            ref = offline.refinement(brief, persona, seed=seed, round_number=rn, concept_id=key, current=shown[d.alias],
                                     notes=notes, direction=direction, merged=merged)  # fmt: skip
            alive[key] = (alive[key][0], ref.name, ref.text)
            pitch = offline.presentation(brief, persona, seed=seed, round_number=rn, concept_id=key,
                                         current=Shown(d.alias, ref.name, ref.text), score=history[key][-1])  # fmt: skip
            assert type(pitch).model_validate(pitch.model_dump()) == pitch
    finalists = [(k, Shown("x", name, text), history[k][-1]) for k, (_, name, text) in alive.items()]
    verdict = offline.verdict(brief, MODERATOR, seed=seed, finalists=finalists)
    assert dict((k, sc) for k, _, sc in finalists)[verdict.winner] == max(sc for _, _, sc in finalists)
    return {k: h for k, h in history.items() if len(h) == rounds}


@pytest.mark.parametrize("brief", [DARNING, DRIVERS], ids=lambda b: b.id)
def test_a_whole_game_runs_and_survivors_improve_over_the_rounds(brief: Brief) -> None:
    for seed in (3, 8):
        survivors = _play(LAB, brief, seed)
        assert survivors
        for history in survivors.values():
            assert history[-1] > history[0], history
