"""Which position a post takes (pure): its topic, the stance it speaks to and whether it is for or against it, so
that a reply or reshare can answer the post it is on rather than say something of its own.

Posts the offline writer made carry one of the scenario's lines verbatim, so their position is read back from the
text; the scenario's initial posts name their stance; anything else (a real model's words) is placed by the words
it shares with each stance of its topics.

A topic's own words (`topic_words`) are those of its name, and those of its `words`, its stances' lines and the
initial posts on it that no other topic of the scenario uses: "homes", "rents", "landlord", not "every" or "would".
A reply carries one its post carries too (offline.py), so it is recognisably about that post.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from .config import SocialFeedScenario, Stance
from .entities import Post

Side = Literal["for", "against"]
WORD = re.compile(r"[a-z]{4,}")


def words_of(text: str) -> set[str]:
    """The words of four letters or more in `text`, lower case (a hashtag's words run together: "#busLanes" is
    "buslanes")."""
    return set(WORD.findall(text.lower()))


@dataclass(frozen=True)
class Position:
    topic: str
    stance: int  # index into the topic's stances
    side: Side

    def line(self, scenario: SocialFeedScenario) -> Stance:
        return scenario.topic(self.topic).stances[self.stance]


class Positions:
    """The scenario's lines indexed once: `of(post)` is the post's position."""

    def __init__(self, scenario: SocialFeedScenario) -> None:
        self.scenario = scenario

    @cached_property
    def _lines(self) -> list[tuple[str, Position]]:
        out: list[tuple[str, Position]] = []
        for topic in self.scenario.topics:
            for k, stance in enumerate(topic.stances):
                out.append((stance.say, Position(topic.id, k, "for")))
                if stance.agree:
                    out.append((stance.agree, Position(topic.id, k, "for")))
                if stance.disagree:
                    out.append((stance.disagree, Position(topic.id, k, "against")))
        return sorted(out, key=lambda item: -len(item[0]))  # the longest line a text holds is the one it took

    @cached_property
    def _topic_words(self) -> dict[str, frozenset[str]]:
        own: dict[str, set[str]] = {}
        for topic in self.scenario.topics:
            texts = [topic.name, *topic.words, *(w.replace(" ", "") for w in topic.words)]
            texts += [line for s in topic.stances for line in (s.say, s.agree, s.disagree) if line]
            texts += [p.content for p in self.scenario.posts if p.topics[0] == topic.id]
            own[topic.id] = words_of(" ".join(texts))
        names = {t.id: words_of(t.name) for t in self.scenario.topics}  # a topic's name is its own, always
        return {
            t: frozenset(w for w in words if not any(w in others for o, others in own.items() if o != t))
            | names[t]
            for t, words in own.items()
        }

    def topic_words(self, topic_id: str) -> frozenset[str]:
        """The topic's own words: its name's, and those of its texts no other topic uses (empty for a topic the
        scenario does not have)."""
        return self._topic_words.get(topic_id, frozenset())

    def shared_topic_words(self, topic_id: str, text: str, other: str) -> list[str]:
        """The topic's own words both texts carry, in the order `other` has them."""
        own, mine = self.topic_words(topic_id), words_of(text)
        return [w for w in dict.fromkeys(WORD.findall(other.lower())) if w in own and w in mine]

    def _initial(self, post: Post) -> Position | None:
        if post.round != 0 or not post.id.startswith("p") or not post.id[1:].isdigit():
            return None
        n = int(post.id[1:]) - 1
        if not 0 <= n < len(self.scenario.posts) or self.scenario.posts[n].stance is None:
            return None
        spec = self.scenario.posts[n]
        assert spec.stance is not None
        return Position(spec.topics[0], spec.stance - 1, "for")

    def of(self, post: Post) -> Position:
        known = self._initial(post)
        if known is not None:
            return known
        topics = set(post.topics)
        for text, position in self._lines:
            if position.topic in topics and text in post.content:
                return position
        return self._nearest(post)

    def _nearest(self, post: Post) -> Position:
        """The stance of the post's topics sharing most words with it (the first stance of its topic if none)."""
        words = set(WORD.findall(post.content.lower()))
        best, score = Position(post.topics[0], 0, "for"), 0
        for topic_id in post.topics:
            for k, stance in enumerate(self.scenario.topic(topic_id).stances):
                for side, text in (("for", stance.say), ("for", stance.agree), ("against", stance.disagree)):
                    shared = len(words & set(WORD.findall((text or "").lower())))
                    if shared > score:
                        best, score = Position(topic_id, k, side), shared  # type: ignore[arg-type]
        return best
