"""Two towns read side by side (pure): each town's charts on the same scales, the posts that spread most in each,
and a short written comparison made from the run's figures — which town engaged more, passed posts on more, how
far each of the person's posts reached in each (the agents who read it or a reshare of it) and through whom.

The towns are called Town A (the run as set up) and Town B (the one setting changed) in everything a person reads;
the first sentence says what tells them apart."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from . import presenters, twins
from .config import SocialFeedScenario
from .machine import RunState, town_state
from .ranking import WORDS as RANKING_WORDS
from .reading import count, names, per_round, spread

TOWNS = ("Town A", "Town B")
QUOTED = 60  # characters of a post quoted in a sentence


@dataclass(frozen=True)
class Reach:
    """How far one of the person's posts went in one town: the agents who read it, and how many did so through a
    reshare, by resharer's name."""

    readers: int
    direct: int
    through: Counter[str]


def towns(state: RunState) -> tuple[RunState, RunState]:
    """Town A and Town B, each as a run of its own (the state must compare two)."""
    return state, town_state(state)


def settings_words(state: RunState) -> tuple[str, str]:
    assert state.config.compare is not None
    return twins.town_words(state.config.compare, state.config.ranking)


def reach(town: RunState, readers: dict[str, list[list[int]]]) -> dict[str, Reach]:
    """Each of the person's posts in `town` (by its words) and how far it went there."""
    posts = town.sim.posts  # rows: [author, topics, content, round, reply_to, reshare_of, ...]
    who = names(town)
    out = {}
    for pid, rows in readers.items():
        number = int(pid[1:])
        through: Counter[str] = Counter()
        for _, read in rows:
            if read != number:  # read a reshare of it: credited to whoever passed it on
                author = posts[read - 1][0]
                through[who.get(author, author)] += 1
        out[posts[number - 1][2]] = Reach(readers=len(rows), direct=len(rows) - sum(through.values()),
                                          through=through)  # fmt: skip
    return out


def _times(big: int, small: int) -> str:
    return f"{big / small:.1f}×"


def _quote(text: str) -> str:
    return f"“{text[:QUOTED].rstrip()}{'…' if len(text) > QUOTED else ''}”"


def _through(r: Reach) -> str:
    """Where most of a post's readers found it."""
    if not r.readers:
        return ""
    if r.through and sum(r.through.values()) > r.direct:
        named = [name for name, _ in r.through.most_common(3)]
        listed = ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]
        more = len(r.through) - len(named)
        return (f", mostly through reshares by {listed}{f' and {more} more' if more else ''} "
                f"({sum(r.through.values())} of the {r.readers})")  # fmt: skip
    if r.direct == r.readers:
        return ", all of them in their own feeds (nobody's reshare brought it to anyone)"
    return f", most of them ({r.direct} of the {r.readers}) in their own feeds"


def _compared(a: int, b: int, what: str, *, plural_verb: str) -> str:
    """Which town had more of `what` (a number per town), by how many times (to a tenth: "about as many" under
    1.05)."""
    if a == b:
        return f"Both towns {plural_verb} as many {what}: {a} each."
    (big, bn), (small, sn) = sorted(((a, TOWNS[0]), (b, TOWNS[1])), reverse=True)
    if small == 0:
        return f"{bn} {plural_verb} {what} ({big}), {sn} none."
    if _times(big, small) == "1.0×":
        return f"The towns {plural_verb} about as many {what} ({big} in {bn}, {small} in {sn})."
    return f"{bn} {plural_verb} {_times(big, small)} as many {what} as {sn} ({big} against {small})."


def _totals(town: RunState) -> Counter[str]:
    total: Counter[str] = Counter()
    for r in per_round(town.history):
        total.update(engaged=r.likes + r.replies + r.reshares, reshares=r.reshares)
    return total


def written(state: RunState, scenario: SocialFeedScenario) -> list[str]:
    """The comparison in a few sentences, every number from the run."""
    assert state.comparison is not None
    a, b = towns(state)
    words = settings_words(state)
    assert state.config.compare is not None
    setting = state.config.compare.setting
    agents = count(len(a.sim.agents), "agent")
    if setting == "correction":
        only_b = [
            text
            for text in reach(b, state.comparison.readers[1])
            if text not in reach(a, state.comparison.readers[0])
        ]
        said = ", ".join(_quote(t) for t in only_b) if only_b else "nothing yet"
        out = [f"Both towns rank their feeds {words_of_ranking(state)} and started with the same {agents}, seed "
               f"and posts; Town B also has what you posted into it alone ({said}), so what differs below comes "
               "from that."]  # fmt: skip
    else:
        if setting == "ranking":
            intro = f"Town A's feeds rank {words[0]}; Town B's {words[1]}."
        else:
            intro = f"Town A's agents are {words[0]}; Town B's are {words[1]}."
        out = [f"{intro} Both started with the same {agents}, seed and posts, so what differs below comes from "
               f"the {'feed ranking' if setting == 'ranking' else 'population mix'} alone."]  # fmt: skip
    if not a.history:
        return [*out, "No round has been played yet."]
    ta, tb = _totals(a), _totals(b)
    out.append(_compared(ta["engaged"], tb["engaged"], "likes, replies and reshares", plural_verb="gave"))
    out.append(_compared(ta["reshares"], tb["reshares"], "reshares", plural_verb="made"))
    reach_a = reach(a, state.comparison.readers[0])
    reach_b = reach(b, state.comparison.readers[1])
    for text, ra in reach_a.items():
        rb = reach_b.get(text, Reach(0, 0, Counter()))
        out.append(_your_post(text, ra, rb))
    for text, rb in reach_b.items():  # posted into Town B alone (a correction)
        if text not in reach_a:
            out.append(f"Your post {_quote(text)}, in Town B alone, reached {count(rb.readers, 'agent')} there"
                       f"{_through(rb)}.")  # fmt: skip
    out.append(_most_passed_on(a, b, scenario))
    return out


def words_of_ranking(state: RunState) -> str:
    return RANKING_WORDS[state.config.ranking].lower()


def _your_post(text: str, ra: Reach, rb: Reach) -> str:
    if ra.readers == rb.readers == 0:
        return f"Your post {_quote(text)} has not been read in either town yet."
    if ra.readers == rb.readers:
        return f"Your post {_quote(text)} reached {count(ra.readers, 'agent')} in each town."
    (big, bn, rbig), (small, sn, _) = sorted(((ra.readers, TOWNS[0], ra), (rb.readers, TOWNS[1], rb)),
                                             key=lambda t: t[0], reverse=True)  # fmt: skip
    if small == 0:
        return f"Your post {_quote(text)} reached {count(big, 'agent')} in {bn}{_through(rbig)}, and none in {sn}."
    times = "about" if _times(big, small) == "1.0×" else _times(big, small)
    return (f"Your post {_quote(text)} reached {times} as many agents in {bn} as in {sn} "
            f"({big} against {small}){_through(rbig)}.")  # fmt: skip


def _most_passed_on(a: RunState, b: RunState, scenario: SocialFeedScenario) -> str:
    sa, sb = spread(a, scenario), spread(b, scenario)
    if not sa and not sb:
        return "Nothing was reshared in either town."
    parts = []
    for name, s in ((TOWNS[0], sa), (TOWNS[1], sb)):
        parts.append(f"in {name}, {s[0]['author']}'s on {s[0]['topics'].lower()} ({s[0]['reshares']})" if s
                     else f"in {name}, none")  # fmt: skip
    return f"The post passed on most: {parts[0]}; {parts[1]}."


def context(state: RunState, scenario: SocialFeedScenario) -> dict[str, Any]:
    """The results of a comparison: each town's page context (its charts on the scales both share, its spreads),
    labelled, and the written comparison."""
    pair = towns(state)
    scale = tuple(max(p) for p in zip(*(presenters.peaks(t.history) for t in pair), strict=True))
    words = settings_words(state)
    shown = []
    for i, (town, name) in enumerate(zip(pair, TOWNS, strict=True)):
        ctx = presenters.context(town, scenario, scale=(scale[0], scale[1]))
        # The captions say each town's own highest; the axes go to the top both share.
        own = presenters.peaks(town.history)
        shown.append(ctx | {"town_name": name, "town_words": words[i], "chart_id": f"town-{'ab'[i]}-",
                            "own_peak": own[0], "own_activity_peak": own[1]})  # fmt: skip
    return {"towns": shown, "comparing": written(state, scenario)}
