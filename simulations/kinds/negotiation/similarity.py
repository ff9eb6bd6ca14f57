"""Reading by meaning: which option or offer a clause speaks of when the rules found none in it (pure but for the
sentence-embedding model of `simulations.ai.embeddings`).

The rules (`reading.py`) know an option by its id, label, keywords and cues; a student who writes in words of their
own names none of them, and the rules read nothing. This reader compares the clause's meaning with texts taken
from the scenario itself, the same way for every scenario:

- each option: its label, its issue's title with the label, its description, its keywords, its cues spelled out
  (each alternative beside one of every other group: "chimney cover", "smokestack regulate") and the roles'
  argument lines filed under it (for and against: both speak of it);
- each offer: its label, its keywords and its cues spelled out;
- nothing in particular: the scenario's title and summary, the issues' titles and descriptions, the roles' talk
  openers and closers and the chair's lines. A clause nearest to these speaks of the topic or of the talk, and
  names no option.

The topic's own name (the title's head, "Mercury") names no option either: it is taken out of the texts, and its
direction out of every vector, so that "quicksilver" helps a clause that says what to do with it but never makes a
match alone. Each target (option, offer, or nothing) is a class; a linear discriminant over the texts' vectors
(shared covariance, shrunk towards the identity) scores a clause against each class. The clause is matched when
the best class is an option or offer, beats the next best class (another option of the same issue included: "in"
and "out" are the easiest to confuse) by `MARGIN` in log-odds, lies within `MIN_COSINE` of its class's centre, and
is at least as near one of its class's texts as any text of "nothing". Otherwise the reader abstains: a wrong
option moves delegations the wrong way, while a clause not read is only not read.

The model hears a clause's subject ("soot from chimneys") far better than its direction ("inside the treaty"): where
an issue's option labels go one way each ("in scope", "out of scope", "excluded") and the clause says one way, the
option that goes the other way is never named; its sibling is, when it is the runner-up.

Only which option or offer comes from here: whether the clause backs, opposes, conditions, offers or asks is read by
the rules around it, as for a cue. Without the model's files (no `make install`) `match` is None throughout and
the rules read alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from simulations.ai import embeddings
from simulations.kinds.negotiation.cues import parse_cue
from simulations.kinds.negotiation.scenario import Scenario

MARGIN = 6.0  # log-odds of the best class over the next best (another option of its issue included)
MARGIN_ON_ISSUE = 3.0  # the same, where the issue under debate leaves only its own options to confuse
MIN_COSINE = 0.3  # of the clause with its class's centre
SHRINK = 0.5  # of the texts' covariance towards the identity
MIN_WORDS = 2  # a clause with fewer words of its own (small words left out) says too little to be matched
PER_CUE = 40  # spelled-out phrases per cue at most
NOTHING = "nothing"


@dataclass(frozen=True)
class Target:
    kind: Literal["option", "offer"]
    id: str
    issue: str  # an offer's own id: offers compete with one another as options of one issue do


@dataclass(frozen=True)
class Match:
    target: Target
    margin: float  # log-odds over the next best class
    cosine: float  # with the class's centre


def spelled_out(cue: str) -> list[str]:
    """A cue as phrases: each alternative of each group once, beside one alternative of every other group
    ("treaty|pact + teeth|enforced" gives "treaty teeth", "pact enforced")."""
    groups = parse_cue(cue)
    count = min(PER_CUE, max(len(group) for group in groups))
    return [" ".join(group[n % len(group)] for group in groups) for n in range(count)]


def texts(scenario: Scenario) -> list[tuple[Target | None, str]]:
    """The texts that describe each option and offer, and those that name none (None), from the scenario."""
    out: list[tuple[Target | None, str]] = [(None, scenario.title), (None, scenario.summary)]
    for role in scenario.roles:
        out += [(None, line) for line in (*role.talk.openers, *role.talk.closers)]
    for lines in scenario.chair.lines.model_dump().values():
        out += [(None, line) for line in lines if isinstance(line, str)]
    for issue in scenario.issues:
        out += [(None, issue.title), (None, issue.description)]
        for option in issue.options:
            target = Target("option", option.id, issue.id)
            out += [
                (target, option.label),
                (target, f"{issue.title}: {option.label}"),
                (target, option.description),
            ]
            out += [(target, keyword) for keyword in option.keywords]
            out += [(target, phrase) for cue in option.cues for phrase in spelled_out(cue)]
            for role in scenario.roles:
                arguments = role.arguments[issue.id]
                out += [
                    (target, line)
                    for side in (arguments.support, arguments.oppose)
                    for line in side.get(option.id, [])
                ]
    for offer in scenario.offers:
        target = Target("offer", offer.id, offer.id)
        out += [(target, offer.label), *((target, keyword) for keyword in offer.keywords)]
        out += [(target, phrase) for cue in offer.cues for phrase in spelled_out(cue)]
    topic = topic_words(scenario)
    seen: set[tuple[Target | None, str]] = set()
    unique: list[tuple[Target | None, str]] = []
    for about, raw in out:
        text = _clean(raw, topic if about is not None else "")
        if text and (about, text.lower()) not in seen:
            seen.add((about, text.lower()))
            unique.append((about, text))
    return unique


def _clean(raw: str, topic: str) -> str:
    """A text as it is embedded: the chair's lines' slots ("{speaker}") out, and the topic's name where given."""
    text = " ".join(re.sub(r"\{\w+\}", " ", raw).split())
    if topic:
        text = " ".join(re.sub(rf"\b(?:{topic})\b", " ", text, flags=re.IGNORECASE).split()) or text
    return text


def side_texts(scenario: Scenario) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """Per option, the roles' argument lines for it and against it, as `texts` gives them."""
    topic = topic_words(scenario)
    out = []
    for issue in scenario.issues:
        for option in issue.options:
            lines = [
                tuple(
                    _clean(line, topic)
                    for role in scenario.roles
                    for line in getattr(role.arguments[issue.id], side).get(option.id, [])
                )
                for side in ("support", "oppose")
            ]
            out.append((option.id, lines[0], lines[1]))
    return tuple(out)


def topic_words(scenario: Scenario) -> str:
    """The topic's name as a pattern: the head of the scenario's title ("Mercury: negotiating ..."), else its
    slug, with a plural's singular ("Plastics" gives "plastics|plastic")."""
    head = scenario.title.split(":")[0] if ":" in scenario.title else scenario.slug.replace("-", " ")
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", head) if len(w) > 3]
    forms = {f for w in words for f in (w, w.removesuffix("s"))}
    return "|".join(sorted(forms, key=lambda f: (-len(f), f)))


@dataclass(frozen=True)
class Index:
    classes: tuple[Target | None, ...]  # the last one is None: nothing in particular
    weights: np.ndarray  # (classes, 384): the discriminant of each class
    bias: np.ndarray
    centres: np.ndarray  # (classes, 384), unit length
    texts: tuple[np.ndarray, ...]  # each class's texts' vectors
    topic: np.ndarray | None  # the topic's direction, taken out of every vector
    sides: dict[
        str, tuple[np.ndarray, np.ndarray]
    ]  # option -> its argument lines' vectors: for it, against it


def index(scenario: Scenario) -> Index | None:
    """The scenario's classes, fitted once per content (games of one scenario share it; memoised on the scenario
    too, since every clause read by meaning asks for it); None without the model."""
    memo = scenario.memo()
    found = memo.get(("similarity-index",))
    if isinstance(found, Index):
        return found
    pairs = tuple(texts(scenario))
    key = (pairs, topic_words(scenario), side_texts(scenario))
    fitted = _fitted.get(key)
    if fitted is None:
        fitted = _fit(*key)
        if fitted is None:
            return None  # no model: nothing kept, so that a model installed later is used
        if len(_fitted) >= FITTED_KEPT:
            _fitted.clear()
        _fitted[key] = fitted
    memo[("similarity-index",)] = fitted
    return fitted


FITTED_KEPT = 16  # scenarios' indexes per process (each game of a scenario version shares its own)
_fitted: dict[tuple[tuple[tuple[Target | None, str], ...], str, tuple[Any, ...]], Index] = {}


def _fit(
    pairs: tuple[tuple[Target | None, str], ...],
    topic: str,
    sides: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...],
) -> Index | None:
    vectors = embeddings.embed([text for _, text in pairs], keep=True)
    direction = embeddings.embed([topic.split("|")[0]]) if topic else None
    if vectors is None:
        return None
    axis = None if direction is None else direction[0]
    vectors = _without(vectors, axis)
    classes: tuple[Target | None, ...] = (*dict.fromkeys(t for t, _ in pairs if t is not None), None)
    labels = [classes.index(target) for target, _ in pairs]
    members = [vectors[[n for n, label in enumerate(labels) if label == c]] for c in range(len(classes))]
    means = np.stack([m.mean(axis=0) for m in members])
    centred = vectors - means[labels]
    covariance = centred.T @ centred / max(1, len(vectors) - len(classes))
    covariance = (1 - SHRINK) * covariance + SHRINK * np.trace(covariance) / len(covariance) * np.eye(
        len(covariance)
    )
    weights = np.linalg.solve(covariance, means.T).T
    bias = -0.5 * np.einsum("ij,ij->i", weights, means)
    centres = means / np.linalg.norm(means, axis=1, keepdims=True)
    row = {
        (t.id, text.lower()): n for n, (t, text) in enumerate(pairs) if t is not None and t.kind == "option"
    }

    def rows(option: str, lines: tuple[str, ...]) -> np.ndarray:
        return vectors[[row[(option, line.lower())] for line in lines if (option, line.lower()) in row]]

    by_side = {option: (rows(option, pro), rows(option, con)) for option, pro, con in sides}
    return Index(classes, weights, bias, centres, tuple(members), axis, by_side)


def _without(vectors: np.ndarray, axis: np.ndarray | None) -> np.ndarray:
    """The vectors with their component along `axis` (a unit vector) taken out, at unit length again."""
    if axis is None:
        return vectors
    out = vectors - np.outer(vectors @ axis, axis)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.asarray(out / np.where(norms > 0, norms, 1.0))


_SMALL = frozenset(
    re.findall(
        r"\S+",
        "a an the of on for to from in into at by with and or but so if we i you they it this that these those our "
        "us your their them is are am be been was were will would can could shall should must may might do does did "
        "not no yes please thank thanks also very really just all any some more most here there what which who how "
        "has have had as too then than",
    )
)
_WORD = re.compile(r"[a-z][a-z'-]*")


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _SMALL]


# `match`'s issue for a condition's terms: only the offers compete with nothing in particular.
OFFERS = "offers"


def match(scenario: Scenario, text: str, issue: str | None = None) -> Match | None:
    """The option or offer `text` speaks of, or None: when unsure, when it names none, or without the model. With
    `issue` (the issue under debate), only its options compete with the offers and with nothing in particular;
    with `OFFERS` (the terms of a condition: "only if someone helps us get the cleaner equipment"), no option
    does."""
    if len(content_words(text)) < MIN_WORDS:
        return None
    memo = scenario.memo()
    key = ("similarity", text, issue)
    if key not in memo:
        memo[key] = _match(scenario, text, issue)
    found = memo[key]
    return found if isinstance(found, Match) else None


def _match(scenario: Scenario, text: str, issue: str | None) -> Match | None:
    scored = scores(scenario, text)
    if scored is None:
        return None
    found, vector, score = scored
    if issue is not None:
        others = [
            n
            for n, c in enumerate(found.classes)
            if c is not None and c.kind == "option" and (c.issue != issue or issue == OFFERS)
        ]
        score = score.copy()
        score[others] = -np.inf
    order = list(np.argsort(-score, kind="stable"))
    best = found.classes[int(order[0])]
    if best is None:
        return None
    way = _way(text)
    if best.kind == "option" and way and _option_way(scenario, best) not in (None, way):
        # The model hears "air pollution" and not whether it is to be in or out: a clause that says which way
        # names the issue's option that goes that way, when it is the runner-up; else nothing.
        runner = found.classes[int(order[1])]
        if runner is None or runner.issue != best.issue or _option_way(scenario, runner) != way:
            return None
        best, order = runner, order[1:]  # it must still beat the rest by the margin
    margin = float(score[order[0]] - score[order[1]])
    cosine = float(found.centres[order[0]] @ vector)
    nearest = float((found.texts[int(order[0])] @ vector).max())
    if (
        margin < (MARGIN if issue in (None, OFFERS) else MARGIN_ON_ISSUE)
        or cosine < MIN_COSINE
        or nearest < float((found.texts[-1] @ vector).max())
    ):
        return None
    return Match(best, round(margin, 3), round(cosine, 3))


# Which way a text goes on an issue's scope: into the treaty ("in") or out of it ("out").
_IN = re.compile(
    r"\b(?:in|into|inside|within|under|part of) (?:the |this |our |a |an )?(?:new )?"
    r"(?:treaty|convention|instrument|accord|agreement|text|scope|deal)\b|\binclud\w*|\bcover(?:ed|s|ing)?\b"
)
_OUT = re.compile(
    r"\b(?:out of|outside) (?:the |this |our |a |an )?(?:new )?(?:treaty|convention|instrument|accord|agreement|"
    r"text|scope|deal)\b|\b(?:left out|leave\w* (?:\w+ )?out|kept out|keep\w* (?:\w+ )?out|exclud\w*)\b"
    r"|\b(?:left|leav\w*|stays?|remains?) (?:\w+ )?(?:to|with) (?:each|every|the) (?:country|countries|government|"
    r"governments|capital|state|nation)\b|\b(?:left|leav\w*) (?:\w+ )?(?:to|with) national\b"
)


def _way(text: str) -> str | None:
    """ "in" or "out" when the text says one way and not the other, else None."""
    lowered = text.lower()
    ins, outs = bool(_IN.search(lowered)), bool(_OUT.search(lowered))
    return "in" if ins and not outs else "out" if outs and not ins else None


def _option_way(scenario: Scenario, target: Target) -> str | None:
    """The way an option's label goes ("Emissions in scope", "Products and processes excluded"), if it says."""
    label = scenario.issue(target.issue).option(target.id).label.lower()
    if re.search(r"\bout of scope\b|\bexclud\w*|\boutside\b", label):
        return "out"
    if re.search(r"\bin scope\b|\binclud\w*|\bwithin\b", label):
        return "in"
    return None


def scores(scenario: Scenario, text: str) -> tuple[Index, np.ndarray, np.ndarray] | None:
    """The index, the clause's vector and its score per class (None without the model)."""
    found = index(scenario)
    vector = embeddings.embed([text])
    if found is None or vector is None:
        return None
    clause = _without(vector, found.topic)[0]
    return found, clause, found.weights @ clause + found.bias


SIDE_MARGIN = 0.06  # of the nearest argument lines' mean cosine, for over against (or the other way)
SIDE_NEAREST = 3  # argument lines of each side compared with the clause
SIDE_MIN_LINES = 3  # an option with fewer lines on either side is given no side by meaning


def side(scenario: Scenario, text: str, option: str) -> Literal["support", "oppose"] | None:
    """Whether `text` speaks for `option` or against it, by meaning: the clause is nearer the roles' arguments on one
    side of it than on the other by `SIDE_MARGIN` (the mean cosine of the `SIDE_NEAREST` nearest of each). Asked
    only where the rules read a clause's option but no side; None when unsure or without the model."""
    memo = scenario.memo()
    key = ("similarity-side", text, option)
    if key not in memo:
        memo[key] = _side(scenario, text, option)
    found = memo[key]
    return "support" if found == "support" else "oppose" if found == "oppose" else None


def _side(scenario: Scenario, text: str, option: str) -> Literal["support", "oppose"] | None:
    scored = scores(scenario, text)
    if scored is None or option not in scored[0].sides:
        return None
    found, clause, _ = scored
    pro, con = found.sides[option]
    if min(len(pro), len(con)) < SIDE_MIN_LINES:
        return None
    nearest = [float(np.sort(lines @ clause)[-SIDE_NEAREST:].mean()) for lines in (pro, con)]
    if abs(nearest[0] - nearest[1]) < SIDE_MARGIN:
        return None
    return "support" if nearest[0] > nearest[1] else "oppose"


def ranked(scenario: Scenario, text: str) -> list[tuple[str, float]]:
    """Every class with its score, best first ("nothing" for the texts that name none): to look into a reading."""
    scored = scores(scenario, text)
    if scored is None:
        return []
    found, _, score = scored
    named = [NOTHING if t is None else t.id for t in found.classes]
    return sorted(zip(named, (round(float(s), 2) for s in score), strict=True), key=lambda pair: -pair[1])
