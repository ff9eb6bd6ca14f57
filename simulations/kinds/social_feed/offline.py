"""The built-in offline model for social feeds: a reasoner that settles an ambiguous choice by a seeded draw
weighted by the agent's tendencies (so a keen replier mostly replies), with its reason; and a writer that composes
posts, replies and reshares from the scenario's stances and the lines for and against them, answering the post."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from simulations.engine import rng

from .config import SocialFeedScenario, Stance
from .entities import AgentState, Ambiguity, Post, SocialAgent
from .positions import WORD, Positions, Side
from .statechart import unit

S = AgentState
# How a post of one's own is put (`line`: a stance's line; `tag`: a hashtag of one of its topic's words, `word`).
COMPOSE_FORMS = ("{line} {tag}", "{tag} {line}", "On {word}: {line}")
INSPIRED_FORMS = (
    "Since @{author} brought it up: {line}",
    "{line} (after @{author}'s post) {tag}",
)  # moved by a post
VERB = {S.COMPOSING: "write a post of its own", S.ENGAGING_LIKE: "like it", S.ENGAGING_REPLY: "reply",
        S.ENGAGING_RESHARE: "reshare it", S.SCROLLING: "scroll on"}  # fmt: skip


def hashtag(words: str) -> str:
    return "#" + re.sub(r"[^A-Za-z0-9]", "", words)


def _weight(agent: SocialAgent, state: AgentState) -> float:
    t = agent.tendencies
    return {S.COMPOSING: t.compose, S.ENGAGING_LIKE: t.like, S.ENGAGING_REPLY: t.reply,
            S.ENGAGING_RESHARE: t.reshare}.get(state, 0.1)  # fmt: skip


def _pick(candidates: Sequence[AgentState], weights: Sequence[float], draw: float) -> AgentState:
    """The candidate whose share of the weights the draw falls in (the last one if rounding leaves some over)."""
    for candidate, weight in zip(candidates, weights, strict=True):
        draw -= weight
        if draw < 0:
            return candidate
    return candidates[-1]


def topic_names(scenario: SocialFeedScenario) -> dict[str, str]:
    return {t.id: t.name.lower() for t in scenario.topics}


def reason_for(item: Ambiguity, chosen: AgentState, topics: Mapping[str, str]) -> str:
    """What the agent saw and why it chose: the post's author and topic, why the feed showed it, and the pull of
    its own tendencies (the choice against the strongest alternative)."""
    on = " / ".join(topics.get(t, t) for t in item.post.topics)
    saw = f"Saw @{item.post.author} on {on}" + (f" ({item.why})" if item.why else "")
    others = sorted((c for c in item.candidates if c is not chosen), key=lambda c: -_weight(item.agent, c))
    if not others:
        return f"{saw}; chose to {VERB[chosen]}"
    mine, theirs = _weight(item.agent, chosen), _weight(item.agent, others[0])
    if mine >= theirs:
        return f"{saw}; would rather {VERB[chosen]} ({mine:.2f}) than {VERB[others[0]]} ({theirs:.2f})"
    return f"{saw}; chose to {VERB[chosen]} ({mine:.2f}) this time, not {VERB[others[0]]} ({theirs:.2f})"


class OfflineReasoner:
    """Settles an ambiguous choice by a seeded draw weighted by the agent's tendencies, with a reason citing what
    the agent saw (`topics`: the topics' names, their ids if not given)."""

    def __init__(self, seed: int, *, topics: Mapping[str, str] | None = None) -> None:
        self.seed, self.topics = seed, dict(topics or {})

    def decide(self, batch: Sequence[object]) -> list[tuple[AgentState, str]]:
        out = []
        for item in batch:
            assert isinstance(item, Ambiguity)
            weights = [_weight(item.agent, c) for c in item.candidates]
            draw = unit(self.seed, "reasoner", item.round_number, item.agent.id) * sum(weights)
            candidate = _pick(item.candidates, weights, draw)
            out.append((candidate, reason_for(item, candidate, self.topics)))
        return out


class OfflineWriter:
    """Posts, replies and reshares from the scenario's own lines, in the writer's voice.

    Each agent holds a view, for or against, on every stance (drawn from the seed), and a habit of a few of the
    scenario's openers; a listed resident adds the sentence of its own voice. A post states a stance (or answers
    the post that moved it to write); a reply answers its parent's stance, agreeing or disagreeing with the side
    the parent took, with the line for or against it; a reshare names the original's author and topic, backing or
    opposing it. Nothing is quoted from the post answered, so reshares of reshares never nest. `taken` says
    whether a text is already in the run: the first candidate not taken is written (the last resort signs it with
    the writer's name and the round), so no two posts of a run read the same."""

    HABIT = 3  # openers an agent keeps to

    def __init__(self, scenario: SocialFeedScenario, seed: int) -> None:
        self.scenario, self.seed = scenario, seed
        self.positions = Positions(scenario)
        self.voices = {a.id: a.voice for a in scenario.agents if a.voice}

    def view(self, agent: SocialAgent, topic: str, stance: int) -> Side:
        """The agent's view of one stance, the same all run: most agree with most stances, not all with all."""
        return "for" if unit(self.seed, "view", agent.id, topic, stance) < 0.6 else "against"

    def _habit(self, agent: SocialAgent, openers: Sequence[str]) -> list[str]:
        start = int(unit(self.seed, "habit", agent.id) * len(openers))
        return [openers[(start + i) % len(openers)] for i in range(min(self.HABIT, len(openers)))]

    def _tags(self, agent: SocialAgent, topic: str, n: int) -> list[str]:
        words = rng.shuffled(self.seed, "tags", self.scenario.topic(topic).words, n, agent.id)
        return [hashtag(w) for w in words]

    def _first_free(
        self, agent: SocialAgent, n: int, candidates: Iterable[str], taken: Callable[[str], bool]
    ) -> str:
        last = ""
        for text in candidates:
            if not taken(text):
                return text
            last = text
        return f"{last} ({agent.name}, round {n + 1})"  # unique: one post an agent a round

    def _voiced(self, agent: SocialAgent, parts: Sequence[str], n: int, purpose: str) -> list[str]:
        """The text with the agent's voice (when it has one, first or not at all, by a seeded draw) and without."""
        plain = " ".join(p for p in parts if p)
        voice = self.voices.get(agent.id)
        if not voice:
            return [plain]
        voiced = " ".join(p for p in (*parts, voice) if p)
        return [voiced, plain] if unit(self.seed, purpose, "voice", n, agent.id) < 0.6 else [plain, voiced]

    def compose(
        self,
        agent: SocialAgent,
        inspired_by: Post | None,
        round_number: int,
        taken: Callable[[str], bool] = lambda _: False,
    ) -> tuple[str, tuple[str, ...]]:
        n = round_number
        topics = tuple(t for t in (inspired_by.topics if inspired_by else ()) if t in agent.interests) or (
            agent.interests[int(unit(self.seed, "topic", n, agent.id) * len(agent.interests))],
        )
        topic = self.scenario.topic(topics[0])
        if inspired_by is not None and self.positions.of(inspired_by).topic == topic.id:
            k = self.positions.of(inspired_by).stance  # moved by that post: its own take on the same stance
        else:
            k = int(unit(self.seed, "stance", n, agent.id) * len(topic.stances))
        stance = topic.stances[k]
        lines = self._own_lines(stance, self.view(agent, topic.id, k))
        if inspired_by is not None:  # not the inspiring post's own words again
            lines = [line for line in lines if line not in inspired_by.content] or lines
        words = rng.shuffled(self.seed, "words", topic.words, n, agent.id)
        forms = COMPOSE_FORMS + (INSPIRED_FORMS if inspired_by is not None else ())
        author = inspired_by.author if inspired_by is not None else ""
        texts = (form.format(line=text, tag=hashtag(w), word=w, author=author)
                 for w in words for form in forms for line in lines
                 for text in self._voiced(agent, [line], n, "compose"))  # fmt: skip
        return self._first_free(agent, n, texts, taken), topics

    @staticmethod
    def _own_lines(stance: Stance, view: Side) -> list[str]:
        """What an agent writes of a stance it holds (`for`) or opposes (`against`), most direct first."""
        if view == "against" and stance.disagree:
            return [stance.disagree, f"{stance.disagree} Change my mind."]
        return [stance.say, *((stance.agree, f"{stance.say} {stance.agree}") if stance.agree else ())]

    def reply(
        self,
        agent: SocialAgent,
        post: Post,
        round_number: int,
        taken: Callable[[str], bool] = lambda _: False,
    ) -> str:
        n, at = round_number, self.positions.of(post)
        stance = at.line(self.scenario)
        mine = self.view(agent, at.topic, at.stance)
        openers = self.scenario.openers.agree if mine == at.side else self.scenario.openers.disagree
        options = [stance.agree or stance.say, stance.say] if mine == "for" else [stance.disagree or ""]
        # Not the very line the parent wrote: agreeing with it, the opener (and the voice) say so.
        line = next((o for o in options if o and o not in post.content), "")
        echo = self._echo(at.topic, line, post)
        candidates = [f"{text} {echo}".rstrip() for opener in self._habit(agent, openers)
                      for text in self._voiced(agent, [f"@{post.author}", opener, line], n, "reply")]  # fmt: skip
        tags = [tag for tag in self._tags(agent, at.topic, n) if tag.lower() != echo]
        tagged = (f"{text} {tag}" for tag in tags for text in candidates)
        return self._first_free(agent, n, [*candidates, *tagged], taken)

    def _echo(self, topic: str, line: str, post: Post) -> str:
        """A hashtag of the first of the topic's own words the post carries, when the reply's line shares none of
        them with it (a line on the post's stance, answering a post that words it otherwise, or no line at all):
        a reply is recognisably about its post. Empty when the line shares one, or the post carries none."""
        if self.positions.shared_topic_words(topic, line, post.content):
            return ""
        own = self.positions.topic_words(topic)
        carried = [w for w in WORD.findall(post.content.lower()) if w in own]
        return f"#{carried[0]}" if carried else ""

    def reshare(
        self,
        agent: SocialAgent,
        post: Post,
        round_number: int,
        taken: Callable[[str], bool] = lambda _: False,
    ) -> str:
        """`post` is the original (rounds.py passes a reshare's original, never the reshare itself)."""
        n, at = round_number, self.positions.of(post)
        stance = at.line(self.scenario)
        backs = self.view(agent, at.topic, at.stance) == at.side
        o = self.scenario.openers
        openers = self._habit(agent, o.reshare if backs else o.reshare_against)
        what = f"@{post.author} on {self.scenario.topic(at.topic).name.lower()}."
        line = "" if backs else ((stance.disagree if at.side == "for" else stance.agree) or "")
        candidates = [text for opener in openers
                      for text in self._voiced(agent, [opener, what, line], n, "reshare")]  # fmt: skip
        tagged = (f"{text} {tag}" for tag in self._tags(agent, at.topic, n) for text in candidates)
        return self._first_free(agent, n, [*candidates, *tagged], taken)
