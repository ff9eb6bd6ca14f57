"""How well the delegations talk, measured on a played game's transcript (`manage.py talk_quality`, issue #66).

Pure: it reads transcript lines and ballots given to it, and the judge's rules (`judge.read_signals`) for what a
sentence backs or opposes. Only AI delegations are measured (the student's words are the student's business):

- **template sentences**: a sentence whose shape — delegation names, option ids and labels, offer labels and
  numbers masked — is shared with two or more other sentences of the same game. A few shared shapes are the
  price of a scripted writer; a game made mostly of them reads as a form letter.
- **exact repeats**: a sentence said word for word earlier in the game (by any delegation).
- **self-contradictions**: a seat backs an option in plain words ("we support X") and later says it cannot
  accept it or opposes it, with no reason stated in between (in the opposing message, or in a message of the
  seat between the two that speaks of that option with a reason: "since", "now that", "unless", ...).
- **concessions withdrawn**: a seat concedes an option ("we can accept X", "we could live with X", "we will not
  stand in the way of X") and later opposes it or votes no on it, with no reason stated in between. The two
  counts are disjoint: what the seat first said decides which one a reversal counts under.
- **concessions without a reason**: a concession sentence ("we can accept X", "we will not stand in the way of
  X") in a message or speech that gives no reason anywhere ("since", "because", "given", a condition, ...).
- **proposal sets**: which option the chair tabled on each issue; over many games, how many distinct sets.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulations.kinds.negotiation import judge
from simulations.kinds.negotiation.scenario import Scenario

SPOKEN = ("message", "speech")  # what a delegation writes in the game (openings are the scenario's own text)
STATED = ("opening", "message", "speech")  # what counts as the seat's word on an option
TEMPLATE_MIN_SHARED = 3  # a shape said this many times in one game (the sentence and two others)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_OPTION_ID = re.compile(r"\b\d+\.\d+\b")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\s*%?")
# Forms of a concession: accepting what was not the seat's own aim, or ceasing to obstruct it.
_CONCESSION = re.compile(
    r"\b(?:can|could|is able to|are able to|would be able to)\s+(?:now\s+)?(?:accept|live with|go along with)\b"
    r"|\b(?:will|would|shall|do|does)\s+not\s+(?:stand in the way of|block|oppose|object to)\b"
    r"|\b(?:won't|wouldn't|don't|doesn't)\s+(?:stand in the way of|block|oppose|object to)\b"
    r"|\bno (?:longer )?objection to\b|\bin (?:a|the) spirit of compromise\b|\bfor the sake of agreement\b",
    re.IGNORECASE,
)
# An explicit acceptance: an evaluation alone ("has produced useful work") is no word of acceptance to go back on.
_ACCEPTS = re.compile(
    r"\b(?:support\w*|back\w*|accept\w*|favou?r\w*|prefer\w*|endorse\w*|live with|go along with|stand behind|"
    r"agree\w* (?:to|on)|vote (?:for|yes)|in favou?r of|stand in the way of|block|oppose|object to|objection to)\b",
    re.IGNORECASE,
)
# Words by which a seat gives a reason for a change of mind (or ties its position to a condition).
_REASON = re.compile(
    r"\b(?:because|since|now that|given|as a result|after|unless|without|until|no longer|in return|"
    r"in exchange|broke|broken|changed|having heard|in light of|therefore|so long as|as long as|only if|if|"
    r"whatever is offered|withdraw\w*)\b",
    re.IGNORECASE,
)

# A reason given for a concession in its message: a reason word, an explanation after a colon, a purpose.
_CONCESSION_REASON = re.compile(
    rf"{_REASON.pattern}|:\s+\w|\bfor the sake of\b|\bin the interests? of\b|\bmeets? (?:the|our|its) condition|"
    r"\bto (?:open|reach|secure|allow|help|find|avoid)\b|"
    r"\bwith (?:real|the|this|that|such|enough) \w+",
    re.IGNORECASE,
)

Reader = Callable[[str, str, "str | None"], judge.Signals]


@dataclass(frozen=True)
class Line:
    """One transcript entry, or one ballot (kind "vote", with `ballot` on `proposal`)."""

    seq: int
    speaker: str
    kind: str
    text: str = ""
    issue: str | None = None
    ballot: str | None = None
    proposal: str | None = None


@dataclass(frozen=True)
class Finding:
    """One reversal: `speaker` first said `first` (at `first_seq`), then `then` (at `then_seq`) on `option`."""

    speaker: str
    option: str
    first_seq: int
    then_seq: int
    first: str
    then: str

    def describe(self) -> str:
        return f"{self.speaker} on {self.option}: #{self.first_seq} {self.first!r} -> #{self.then_seq} {self.then!r}"


class _Shares:
    """The template and repeat shares of a game's or a run's AI sentences."""

    sentences: int
    template: int
    repeats: int

    @property
    def template_share(self) -> float:
        return self.template / self.sentences if self.sentences else 0.0

    @property
    def repeat_share(self) -> float:
        return self.repeats / self.sentences if self.sentences else 0.0


@dataclass
class GameFigures(_Shares):
    label: str
    sentences: int = 0
    template: int = 0
    repeats: int = 0
    contradictions: list[Finding] = field(default_factory=list)
    withdrawals: list[Finding] = field(default_factory=list)
    proposals: tuple[tuple[str, str], ...] = ()
    adopted: tuple[str, ...] = ()  # the issues whose proposal was adopted
    # (issue, how) where the chair's proposal rested on what was said in public (`followed_of`)
    followed: tuple[tuple[str, str], ...] = ()
    template_examples: list[str] = field(default_factory=list)  # the most shared shapes, most shared first
    repeated: list[str] = field(default_factory=list)
    concessions: int = 0  # concession sentences of AI seats
    unreasoned: list[str] = field(default_factory=list)  # those in a message or speech that gives no reason


@dataclass
class Totals(_Shares):
    games: int
    sentences: int
    template: int
    repeats: int
    contradictions: int
    withdrawals: int
    proposal_sets: int
    adopted: int
    concessions: int = 0
    unreasoned: int = 0
    followed: int = 0  # proposals that rested on what was said in public
    followed_games: int = 0


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def masker(scenario: Scenario) -> Callable[[str], str]:
    """A sentence's shape: names, options, offers and numbers replaced by placeholders, case and spacing folded."""
    names = {scenario.display_name(r) for r in scenario.role_ids} | set(scenario.role_ids)
    names |= {scenario.chair.name, scenario.chair.id}
    options = {o.label for i in scenario.issues for o in i.options}
    offers = {o.label for o in scenario.offers}

    def alternation(words: Iterable[str]) -> re.Pattern[str]:
        ordered = sorted({w for w in words if w}, key=len, reverse=True)  # longest first: "European Union"
        return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in ordered) + r")\b", re.IGNORECASE)

    patterns = [
        (alternation(options), "<option>"),
        (alternation(offers), "<offer>"),
        (alternation(names), "<name>"),
    ]

    def mask(sentence: str) -> str:
        out = _OPTION_ID.sub("<id>", sentence)
        for pattern, placeholder in patterns:
            out = pattern.sub(placeholder, out)
        out = _NUMBER.sub("<n>", out)
        return " ".join(out.lower().split())

    return mask


def template_sentences(said: Sequence[str], mask: Callable[[str], str]) -> tuple[int, list[str]]:
    """How many of `said` share their shape with two or more others, and the shared shapes, most shared first."""
    shapes = [mask(s) for s in said]
    counts = Counter(shapes)
    shared = sum(1 for s in shapes if counts[s] >= TEMPLATE_MIN_SHARED)
    common = [f"{n}x {shape}" for shape, n in counts.most_common() if n >= TEMPLATE_MIN_SHARED]
    return shared, common


def exact_repeats(said: Sequence[str]) -> list[str]:
    """Every sentence said word for word before, once per repetition."""
    seen: set[str] = set()
    repeated = []
    for sentence in said:
        if sentence in seen:
            repeated.append(sentence)
        seen.add(sentence)
    return repeated


def unreasoned_concessions(lines: Sequence[Line], seats: Iterable[str]) -> tuple[int, list[str]]:
    """(how many concession sentences `seats` said, those in a message or speech that states no reason)."""
    seats = set(seats)
    conceded = [
        (line, sentence)
        for line in lines
        if line.kind in SPOKEN and line.speaker in seats
        for sentence in sentences(line.text)
        if _CONCESSION.search(sentence)
    ]
    return len(conceded), [
        sentence for line, sentence in conceded if not _CONCESSION_REASON.search(line.text)
    ]


def _options_named(signals: judge.Signals) -> set[str]:
    named = {
        o
        for bucket in (signals.support, signals.oppose, signals.conditional)
        for os in bucket.values()
        for o in os
    }
    named |= {t.want for t in signals.trades} | {t.promise for t in signals.trades}
    return named


def _gives_reason(sentence: str, option: str, signals: judge.Signals) -> bool:
    return option in _options_named(signals) and _REASON.search(sentence) is not None


def reversals(
    lines: Sequence[Line], seats: Iterable[str], read: Reader
) -> tuple[list[Finding], list[Finding]]:
    """(self-contradictions, concessions withdrawn) of each seat in `seats`, in transcript order (see the module's
    docstring). `read(text, speaker, issue)` is the judge's reading of one sentence."""
    contradictions: list[Finding] = []
    withdrawals: list[Finding] = []
    for seat in seats:
        # option -> (seq, sentence, conceded) of the seat's last standing acceptance of it
        accepted: dict[str, tuple[int, str, bool]] = {}
        reasoned: set[str] = set()  # options the seat gave a reason about since it accepted them
        for line in lines:
            if line.speaker != seat:
                continue
            if line.kind == "vote":
                option = line.proposal
                if line.ballot == "no" and option in accepted and option not in reasoned:
                    seq, said, conceded = accepted.pop(option)
                    if conceded:
                        withdrawals.append(Finding(seat, option, seq, line.seq, said, "votes NO"))
                continue
            if line.kind not in STATED:
                continue
            issue = line.issue if line.kind == "speech" else None
            # An acceptance counts only where the message as the game read it backs the option too: a sentence
            # read alone may lean to an option the whole message settles the other way. A refusal ("we cannot
            # accept X") is plain in its own sentence.
            whole = read(line.text, seat, issue)
            said_for = {o for os in whole.support.values() for o in os}
            for sentence in sentences(line.text):
                signals = read(sentence, seat, issue)
                opposed = {o for os in signals.oppose.values() for o in os}
                backed = {o for os in signals.support.values() for o in os} & said_for
                for option in sorted(opposed):
                    if option in accepted and option not in reasoned and not _REASON.search(sentence):
                        seq, said, conceded = accepted[option]
                        (withdrawals if conceded else contradictions).append(
                            Finding(seat, option, seq, line.seq, said, sentence)
                        )
                    accepted.pop(option, None)
                    reasoned.discard(option)
                for option in sorted(backed) if _ACCEPTS.search(sentence) else ():
                    accepted[option] = (line.seq, sentence, _CONCESSION.search(sentence) is not None)
                    reasoned.discard(option)
                for option in _options_named(signals) - backed - opposed:
                    if option in accepted and _gives_reason(sentence, option, signals):
                        reasoned.add(option)
    return contradictions, withdrawals


def measure(
    scenario: Scenario,
    lines: Sequence[Line],
    *,
    label: str,
    students: Iterable[str] = (),
    proposals: Sequence[tuple[str, str]] = (),
    adopted: Sequence[str] = (),
    followed: Sequence[tuple[str, str]] = (),
    read: Reader | None = None,
) -> GameFigures:
    """Every figure of one game. `students`: the seats played by students (not measured)."""
    skip = {*students, scenario.chair.id}
    seats = [r for r in scenario.role_ids if r not in skip]
    said = [
        s for line in lines if line.kind in SPOKEN and line.speaker in seats for s in sentences(line.text)
    ]
    shared, shapes = template_sentences(said, masker(scenario))
    repeated = exact_repeats(said)

    def rules(text: str, speaker: str, issue: str | None) -> judge.Signals:
        return judge.read_signals(scenario, text, speaker=speaker, issue=issue)

    contradictions, withdrawals = reversals(lines, seats, read or rules)
    concessions, unreasoned = unreasoned_concessions(lines, seats)
    return GameFigures(
        label=label, sentences=len(said), template=shared, repeats=len(repeated), contradictions=contradictions,
        withdrawals=withdrawals, proposals=tuple(proposals), adopted=tuple(adopted), followed=tuple(followed), template_examples=shapes, repeated=repeated,
        concessions=concessions, unreasoned=unreasoned,
    )  # fmt: skip


def totals(games: Sequence[GameFigures]) -> Totals:
    return Totals(
        games=len(games),
        sentences=sum(g.sentences for g in games),
        template=sum(g.template for g in games),
        repeats=sum(g.repeats for g in games),
        contradictions=sum(len(g.contradictions) for g in games),
        withdrawals=sum(len(g.withdrawals) for g in games),
        proposal_sets=len({g.proposals for g in games}),
        adopted=sum(len(g.adopted) for g in games),
        concessions=sum(g.concessions for g in games),
        unreasoned=sum(len(g.unreasoned) for g in games),
        followed=sum(len(g.followed) for g in games),
        followed_games=sum(1 for g in games if g.followed),
    )


def lines_of(entries: Iterable[Mapping[str, Any]], state: Mapping[str, Any]) -> list[Line]:
    """A game's lines from its transcript entries (dicts with seq, speaker, kind, text, issue) and its final state
    (each ballot is put at its vote entry)."""
    issues = {i["issue_id"]: i for i in state.get("round3", {}).get("issues", [])}
    out = []
    for e in entries:
        issue = e.get("issue") or None
        if e["kind"] == "vote" and issue in issues:
            found = issues[issue]
            out.append(
                Line(e["seq"], e["speaker"], "vote", e["text"], issue,
                     found.get("ballots", {}).get(e["speaker"]), found.get("proposal"))
            )  # fmt: skip
        else:
            out.append(Line(e["seq"], e["speaker"], e["kind"], e["text"], issue))
    return out


def adopted_of(state: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(i["issue_id"] for i in state.get("round3", {}).get("issues", []) if i.get("adopted"))


def proposals_of(state: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (i["issue_id"], i["proposal"]) for i in state.get("round3", {}).get("issues", []) if i.get("proposal")
    )


FOLLOWED_MARKS = {"set aside": "^", "package": "+", "blocker": "!"}


def followed_of(state: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The issues whose proposal rested on what was said in public (`tabling.py`): the leading option "set
    aside" for one no blocker refused, a "package" (a stated need met in public), or a "blocker" named while
    the leading option was tabled all the same."""
    found = []
    for i in state.get("round3", {}).get("issues", []):
        if i.get("set_aside"):
            found.append((i["issue_id"], "set aside"))
        elif i.get("package"):
            found.append((i["issue_id"], "package"))
        elif i.get("blockers"):
            found.append((i["issue_id"], "blocker"))
    return tuple(found)


def report(games: Sequence[GameFigures], *, examples: int = 0) -> str:
    """The figures as a table, one game a row, then the totals (and, with `examples`, findings to read)."""
    rows = [
        f"{'game':<22} {'sent.':>6} {'templ.':>7} {'repeats':>8} {'contra.':>8} {'withdr.':>8}  proposals",
    ]
    for g in games:
        how = dict(g.followed)
        tabled = " ".join(
            option + ("*" if issue in g.adopted else "") + FOLLOWED_MARKS.get(how.get(issue, ""), "")
            for issue, option in g.proposals
        )
        rows.append(
            f"{g.label:<22} {g.sentences:>6} {g.template_share:>6.1%} {g.repeats:>8} "
            f"{len(g.contradictions):>8} {len(g.withdrawals):>8}  {tabled}"
        )
    t = totals(games)
    rows += [
        "",
        f"games: {t.games}; AI sentences: {t.sentences}",
        f"template sentences: {t.template} ({t.template_share:.1%})",
        f"exact repeats: {t.repeats} ({t.repeat_share:.1%})",
        f"self-contradictions: {t.contradictions}",
        f"concessions withdrawn without a reason: {t.withdrawals}",
        f"concessions stated without a reason in their message: {t.unreasoned} of {t.concessions}",
        f"distinct proposal sets: {t.proposal_sets} of {t.games} games",
        f"proposals resting on what was said in public: {t.followed} in {t.followed_games} games "
        "(^ leading option set aside, + package, ! blocker named)",
        f"issues adopted: {t.adopted} of {sum(len(g.proposals) for g in games)} (* in the table)",
    ]
    if examples:
        shapes = Counter[str]()
        for g in games:
            for line in g.template_examples:
                n, shape = line.split("x ", 1)
                shapes[shape] += int(n)
        rows += ["", "most used sentence shapes (all games):"]
        rows += [f"  {n:>4}  {shape}" for shape, n in shapes.most_common(examples)]
        found = [(g.label, f) for g in games for f in g.contradictions][:examples]
        rows += ["", "self-contradictions:"] + [f"  {label}: {f.describe()}" for label, f in found]
        found = [(g.label, f) for g in games for f in g.withdrawals][:examples]
        rows += ["", "concessions withdrawn:"] + [f"  {label}: {f.describe()}" for label, f in found]
        bare = [(g.label, s) for g in games for s in g.unreasoned][:examples]
        rows += ["", "concessions without a reason:"] + [f"  {label}: {s}" for label, s in bare]
    return "\n".join(rows)
