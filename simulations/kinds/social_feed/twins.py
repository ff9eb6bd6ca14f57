"""Two towns side by side (pure): what a comparison run changes in its second town, and nothing else.

A student sets a run up to compare with a second town that differs in ONE setting — the feed's ranking, or the
mix of the generated population, or nothing but what the student posts into it alone (a rumour posted into both
towns, its correction into the second only) — while the seed, the listed residents, the scenario and every other
setting are the first town's. Built from the same seed, the generated agents are the same people (each draws the same numbers
in the same order), so with another mix they hold the same interests and their tendencies are shifted; whatever
differs between the two towns' runs follows from the one setting. `reading` counts, round by round, who read each
of the person's posts in a town (the figure the written comparison, comparing.py, is made from).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from .config import Distribution, Range, SocialFeedScenario
from .entities import AgentState, RoundResult
from .ranking import WORDS as RANKING_WORDS
from .ranking import Ranking
from .rounds import Simulation
from .stored import post_number

Setting = Literal["ranking", "population", "correction"]
SETTINGS: tuple[Setting, ...] = ("ranking", "population", "correction")
Mix = Literal["sharing", "quiet"]
MIXES: tuple[Mix, ...] = ("sharing", "quiet")
MIX_WORDS: dict[Mix, str] = {
    "sharing": "Keener to pass posts on",
    "quiet": "A quieter town",
}
MIX_EXPLAINED: dict[Mix, str] = {
    "sharing": "every generated agent's tendency to reshare raised by 0.3 (at most 1)",
    "quiet": "every generated agent's tendencies to like, reply, reshare and write halved",
}
SETTING_WORDS: dict[Setting, str] = {
    "ranking": "another feed ranking",
    "population": "another population mix",
    "correction": "the same settings, to compare a rumour with its correction (posted into the second town alone)",
}
SHARING_BOOST = 0.3  # how much keener to reshare the `sharing` mix draws each generated agent
QUIET = 0.5  # the `quiet` mix's factor on every tendency


class Compare(BaseModel):
    """The second town's one difference: a ranking other than the first town's, a population mix, or (setting
    "correction") none but the posts the person writes into it alone."""

    model_config = ConfigDict(extra="forbid")

    setting: Setting
    ranking: Ranking | None = None  # the second town's feed ranking (setting "ranking")
    mix: Mix | None = None  # the second town's generated population (setting "population")

    @model_validator(mode="after")
    def _one(self) -> Compare:
        if self.setting == "ranking" and (self.ranking is None or self.mix is not None):
            raise ValueError("a second town with another ranking names that ranking, and no population mix")
        if self.setting == "population" and (self.mix is None or self.ranking is not None):
            raise ValueError("a second town with another population names its mix, and no ranking")
        if self.setting == "correction" and (self.mix is not None or self.ranking is not None):
            raise ValueError("a second town for a correction changes no setting")
        return self


def second_ranking(compare: Compare, first: Ranking) -> Ranking:
    return compare.ranking if compare.ranking is not None else first


class NotDifferent(ValueError):
    SAME_RANKING = "The second town must rank its feeds differently from the first: choose another ranking."
    NOBODY_TO_MIX = "A population mix changes the generated agents: generate some, or compare rankings."


def check(compare: Compare, *, ranking: Ranking, agents: int) -> None:
    """Raises NotDifferent (a sentence) unless the second town really differs from the first."""
    if compare.setting == "ranking" and compare.ranking == ranking:
        raise NotDifferent(NotDifferent.SAME_RANKING)
    if compare.setting == "population" and agents == 0:
        raise NotDifferent(NotDifferent.NOBODY_TO_MIX)


def _shifted(span: Range, *, add: float = 0.0, times: float = 1.0) -> Range:
    return Range(low=min(1.0, span.low * times + add), high=min(1.0, span.high * times + add))


def mixed(population: Distribution, mix: Mix) -> Distribution:
    """`population` drawn with `mix`: the same draws, each tendency's range moved."""
    if mix == "sharing":
        return population.model_copy(update={"reshare": _shifted(population.reshare, add=SHARING_BOOST)})
    return population.model_copy(update={
        name: _shifted(getattr(population, name), times=QUIET) for name in ("like", "reply", "reshare", "compose")
    })  # fmt: skip


def second_scenario(scenario: SocialFeedScenario, compare: Compare, *, agents: int) -> SocialFeedScenario:
    """The scenario as the second town is built from it (its population's mix; a ranking is the run's config)."""
    if compare.mix is None:
        return scenario
    population = scenario.population or Distribution(count=max(1, agents))
    return scenario.model_copy(update={"population": mixed(population, compare.mix)})


def town_words(compare: Compare, first_ranking: Ranking) -> tuple[str, str]:
    """What tells the two towns apart, in words: the first's, the second's ("newest first", "by engagement (hot)")."""
    if compare.setting == "ranking":
        second = second_ranking(compare, first_ranking)
        return RANKING_WORDS[first_ranking].lower(), RANKING_WORDS[second].lower()
    if compare.setting == "correction":
        return "as set up", "as set up, with what you post into it alone"
    assert compare.mix is not None
    return "the scenario's own mix", MIX_WORDS[compare.mix].lower()


def reading(readers: dict[str, list[list[int]]]) -> Callable[[Simulation, RoundResult], None]:
    """Who reads each of the person's posts (`readers`' keys), round by round: an agent that turned to the post or
    to a reshare of it, the first time (its place, and the number of the post it read)."""
    placed = {pid: {row[0] for row in rows} for pid, rows in readers.items()}

    def note(sim: Simulation, result: RoundResult) -> None:
        place = {a.id: i for i, a in enumerate(sim.agents)} if result.decisions else {}
        for d in result.decisions:
            if d.to_state is not AgentState.EVALUATING:
                continue
            i = place[d.agent_id]
            post = sim.posts.get(sim.agents[i].looking_at or "")
            if post is None:
                continue
            original = sim.original(post).id
            if original in placed and i not in placed[original]:
                placed[original].add(i)
                readers[original].append([i, post_number(post.id)])

    return note
