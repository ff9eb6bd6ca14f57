"""How a feed is ordered (pure): the ranking a run is set up with decides which posts an agent sees first, and an
agent mostly looks at the top of its feed. Each ranking also says, in words, why a post ranked where it did: the
reasoner's reasons quote it.

- `chronological`: the newest posts of the agent's topics first.
- `hot`: by engagement with time decay — (1 + likes + 2 × replies + 3 × reshares) / (age in rounds + 2) ^ 1.5 —
  over the agent's topics and the town's latest posts of any topic, so a post that catches fire reaches beyond its
  own topic's followers.
- `interest`: the posts sharing most of their topics with the agent's interests first, the newest first among
  equals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from .entities import Post

Ranking = Literal["chronological", "hot", "interest"]
RANKINGS: tuple[Ranking, ...] = ("chronological", "hot", "interest")
DEFAULT: Ranking = "chronological"
WORDS: dict[Ranking, str] = {
    "chronological": "Newest first",
    "hot": "By engagement (hot)",
    "interest": "By interest match",
}
EXPLAINED: dict[Ranking, str] = {
    "chronological": "the newest posts of each agent's topics first",
    "hot": "likes, replies and reshares weighed against the post's age, over each agent's topics and the town's "
    "latest posts of any topic",
    "interest": "the posts sharing most of their topics with the agent's interests first, the newest among equals",
}
GRAVITY = 1.5  # how fast a hot post cools with age (the larger, the sooner new posts overtake it)
TOWN = "*"  # the windows' key for the town's latest posts of any topic (topic ids start with a letter)


def order(post: Post) -> int:
    """Creation order: post ids are p1, p2, ... (a string sort would put p10 before p9)."""
    return int(post.id[1:]) if post.id[1:].isdigit() else 0


def hot(post: Post, now: int) -> float:
    weight = 1 + post.likes + 2 * post.replies + 3 * post.reshares
    return weight / (max(0, now - post.round) + 2) ** GRAVITY


def match(post: Post, interests: Sequence[str]) -> float:
    return sum(1 for t in post.topics if t in interests) / len(post.topics) if post.topics else 0.0


def rank(posts: Iterable[Post], ranking: Ranking, interests: Sequence[str], now: int) -> list[Post]:
    """`posts` in the ranking's order (ties: the newest first)."""
    if ranking == "hot":
        return sorted(posts, key=lambda p: (hot(p, now), order(p)), reverse=True)
    if ranking == "interest":
        return sorted(posts, key=lambda p: (match(p, interests), order(p)), reverse=True)
    return sorted(posts, key=order, reverse=True)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def why(post: Post, ranking: Ranking, interests: Sequence[str], now: int) -> str:
    """Why the post ranked where it did in a feed ordered by `ranking`, in a few words (reasons quote it)."""
    age = max(0, now - post.round)
    if ranking == "hot":
        if not post.engagement:
            return f"hot while new: nothing yet in {_plural(age, 'round', 'rounds')}"
        counts = ", ".join([_plural(post.likes, "like", "likes"), _plural(post.replies, "reply", "replies"),
                            _plural(post.reshares, "reshare", "reshares")])  # fmt: skip
        return f"hot: {counts} in {_plural(age, 'round', 'rounds')}"
    if ranking == "interest":
        shared = sum(1 for t in post.topics if t in interests)
        if shared == len(post.topics):
            return "matches its interests" if shared > 1 else "matches an interest"
        return f"matches {shared} of {len(post.topics)} topics"
    return "new this round" if age == 0 else f"new {_plural(age, 'round', 'rounds')} ago"
