"""The rule-based reader behind the stance judge: what one message says, clause by clause, for its speaker.

Pure and deterministic. A message is cut into sentences and each sentence into clauses (on ";", "but", "while",
"whereas" and on "and" where a new verb starts), and each clause is read on its own:

- **whose words**: a clause that reports someone else ("Canada supports 2.1", "we have heard Brazil on 2.2",
  "as China argued", "some delegations want ...") says nothing about the speaker; a question asks the listener and
  states nothing either (offers and asks in it still count);
- **which options**: by id ("4.1"), label and the scenario's keywords (word stems, so "controlling emissions"
  matches the keyword "control emissions"), and by its cues, the plain words a student may use instead
  (`cues.py`: "a treaty with real teeth", "keep the power plants out"; offers too: "put new money on the table");
  a mention inside a condition ("if emissions come into scope") is not a stance on that option;
- **which way**: an explicit stance verb ("support", "back", "can accept", "could live with", "oppose",
  "reject"), turned round by a negation before it ("cannot accept", "will not support"; "will not oppose" and
  "will not stand in the way of" are concessions, read as support); without one, the clause's evaluation of the
  option ("is a sensible and proven obligation" / "would weaken the treaty"); nothing when neither is there;
- **on what terms**: support in a clause with a condition ("if", "provided", "as long as", "with ... guaranteed")
  is conditional; offers named in the condition are asks;
- **offers and asks**: an offer the speaker commits to ("we are ready to provide financing") is an offer; one it
  asks for, needs, or makes a condition ("without a dedicated fund we cannot ...") is an ask;
- **trades**: "if you support X, we will support Y" (and its reorderings, and "help us on X and we will help you
  on Y") is a trade, nothing else.

Plain writing is read too: contractions ("we're against", "we dont think"), hedges ("not against", "don't mind", "happy with"),
"X, not Y", a stance on "that" after the clause that named the option ("you want X, but we cannot accept that"),
a clause opening on "it" after one that named an option ("X has produced work, but it has not reduced ..."), and
a cue said plainly at the head of a clause ("Keep the power plants out of this treaty"), which is the speaker's,
and a doubted judgement ("we are not convinced that X is the right tool"). A sentence backs at most one option
of an issue (it describes the one it turns from).

A student's words (`meaning=True`) are also read by meaning (`similarity.py`) where the rules fall short: a
sentence with no position read; a condition's terms among the offers ("only if someone helps us get the cleaner
equipment"); a trade's halves ("Brazil, side with us on keeping it all voluntary and we will back your list");
and a promise's first words among the offers ("our scientists will gladly coach your field officers ...").

An explicit stance outranks an evaluation of the same option, and a clause after "but" the clause it answers; an
option backed and opposed equally strongly is neither; and backing for one option said outright drops backing for
another option of the same issue that was only implied. The corpus that measures all this is
`tests/kinds/negotiation/judge_corpus.yaml` (see docs/kinds/negotiation.md, "The AI delegations").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import cast

from simulations.kinds.negotiation import similarity
from simulations.kinds.negotiation.cues import CueMatcher, compile_cue, stem_of
from simulations.kinds.negotiation.scenario import Scenario

# --- lexicon --------------------------------------------------------------------------------------------------

# Verbs by which a speaker takes a side. Order matters only for readability; matching is by regex alternation.
SUPPORT_VERBS = (
    r"support\w*", r"back(?:s|ed|ing)?", r"favou?r(?:s|ed)?", r"prefer(?:s|red)?", r"endorse[sd]?",
    r"accept(?!s that|ed that)(?:s|ed)?", r"want(?:s|ed)?", r"sign(?:s|ed)? up", r"defend\w*", r"call(?:s|ed)? for", r"champion(?:s|ed)?", r"advocate[sd]?",
    r"insist(?:s|ed)? on", r"push(?:es)? for", r"vote (?:for|yes)", r"agree(?:s|d)? (?:to|with|on|that)",
    r"join(?:s|ed)?", r"go along with", r"live with", r"stands? behind", r"(?:are|is|am) (?:in favou?r of|for)",
    r"would rather", r"urge[sd]?", r"consider(?:s|ed)?", r"values?", r"(?:see|understand|accept) the case for", r"speak for", r"argue for",
    r"seek(?:s)?", r"ask(?:s|ed)? for", r"embrace[sd]?", r"stand by", r"welcome[sd]?",
    r"recommend(?:s|ed)?", r"tolerate[sd]?", r"be open to", r"are open to", r"is open to", r"remain open to",
    r"(?:could|would|can|will|might|may) (?:now )?(?:move|shift) to", r"(?:come|came|comes) round to",
    # plain words
    r"(?:are|is|am) all for", r"on board with", r"(?:happy|fine|ok|okay|comfortable|content) (?:with|to|for)",
    r"would (?:much )?rather", r"rel(?:y|ies) on", r"go for", r"says? yes to", r"stick with", r"fight for",
    r"(?:want|like|love) to see", r"grateful if", r"sign(?:s|ed)? on to", r"(?:would|will|can|could) go with",
    r"get(?:s|ting)? behind",
    r"(?:central |main |first |chief |key |primary |overriding )?(?:aim|goal|objective|priority) (?:is|remains|will be)", r"(?:are|is|am) (?:fully |firmly |squarely |right |all )?behind", r"we (?:really |still |also )?need",
)  # fmt: skip
OPPOSE_VERBS = (
    r"oppose[sd]?", r"reject(?:s|ed)?", r"resist(?:s|ed)?", r"object(?:s|ed)? to", r"refuse[sd]? to accept",
    r"block(?:s|ed)?", r"vote against", r"vote no on", r"stand (?:firmly )?against", r"are against",
    r"is against", r"argue against", r"worr(?:y|ies|ied) (?:that|about)", r"fears? that",
    r"(?:is|are|am|remain) (?:concerned|wary|cautious) (?:about|of|that)", r"rule out", r"rules out", r"veto(?:es|ed)?", r"fight(?:s)? against",
    # plain words
    r"(?:are|is|am) (?:totally |completely |strongly |firmly )?against", r"says? no to", r"can't stand", r"hate[sd]?",
    r"dislike[sd]?", r"(?:will|would) never sign", r"won't sign", r"(?:are|is|am) (?:deeply |very )?worried about",
    r"scrap", r"forget(?: about)?", r"refuse[sd]? to", r"(?:are|is|am) not ready (?:to|for)",
)  # fmt: skip
# "will not stand in the way of X": a negated obstruction, i.e. a concession.
CONCESSIONS = (
    r"(?:will|would|shall|do|does|did) not (?:stand in the way of|block|oppose|object to|resist|fight)",
    r"(?:won't|wouldn't|don't|doesn't) (?:stand in the way of|block|oppose|object to|resist)",
    r"no (?:longer )?(?:objection|opposition) to", r"not (?:be )?(?:an )?obstacle to",
    r"(?:are|is|am) not (?:against|opposed to)", r"won't object to", r"(?:don't|doesn't|do not|does not) mind",
)  # fmt: skip
NEGATIONS = (
    r"not", r"never", r"cannot", r"can't", r"won't", r"wouldn't", r"don't", r"doesn't", r"couldn't",
    r"no longer", r"unable to", r"neither", r"nor", r"hardly",
)  # fmt: skip
# Words that introduce someone else's position, not the speaker's.
REPORT_VERBS = (
    r"said", r"says", r"say", r"argued", r"argues", r"argue", r"stated", r"states", r"suggested", r"suggests",
    r"claimed", r"claims", r"proposed", r"proposes", r"told", r"tells", r"mentioned", r"noted", r"insisted",
    r"made the case", r"spoke", r"speaks", r"called for", r"calls for", r"asked for", r"asks for", r"pressed",
    r"wants", r"want", r"prefer", r"prefers", r"support", r"supports", r"supported", r"favour", r"favours",
    r"back", r"backs", r"backed", r"oppose", r"opposes", r"opposed", r"reject", r"rejects", r"rejected",
    r"accept", r"accepts", r"accepted", r"defended", r"defends", r"put forward", r"is pushing", r"are pushing",
    r"has argued", r"have argued", r"has said", r"have said", r"has called", r"have called", r"is for",
    r"are for", r"would like", r"seems to", r"seem to", r"appears to", r"will support", r"will oppose",
    r"can accept", r"could accept", r"cannot accept", r"can support", r"could support", r"hope[sd]? for",
)  # fmt: skip
OTHERS = (
    r"you", r"your delegation", r"your government", r"your side", r"they", r"some delegations",
    r"some countries", r"other delegations", r"others", r"many delegations", r"several delegations",
    r"those who", r"those delegations", r"some", r"a few delegations", r"the chair", r"some members",
    r"other countries", r"many countries", r"some parties", r"several countries", r"the other side",
    r"both", r"everyone", r"the room",
)  # fmt: skip
# Frames by which the speaker acknowledges what it heard without taking it on.
HEARD_FRAMES = (
    r"we have heard", r"we heard", r"we hear", r"we take (?:careful |good )?note", r"we note", r"we have noted",
    r"we noted", r"we listened to", r"we have listened to", r"we understand why", r"we understand those",
    r"understands why", r"understand why", r"recognises that some", r"recognizes that some",
    r"recognise that some", r"we would listen to", r"we are aware that", r"we thank", r"thank you",
    r"we acknowledge (?:the|what)", r"we welcome what", r"we respect the views", r"understands those",
    r"as (?:\w+ ){0,3}(?:said|argued|put it|noted|suggested)", r"^\W*according to", r"(?:you|they) asked(?: us)?(?: whether| if)?", r"asked whether",
)  # fmt: skip
OWN_SUBJECTS = (
    r"we", r"our delegation", r"our coalition", r"our members", r"our industry", r"our association",
    r"our government", r"my delegation", r"i", r"our country", r"our side", r"my government", r"us",
    r"our organisation", r"our organization", r"our programme", r"our network", r"our scientists",
)  # fmt: skip
# Commitment to provide something (for offers).
COMMIT = (
    r"offer\w*", r"provid\w*", r"commit\w*", r"pledg\w*", r"will", r"ready to", r"prepared to", r"guarante\w*",
    r"contribut\w*", r"put\w* (?:\w+ )?on the table", r"fund\w*", r"financ\w*", r"support\w*", r"back\w*",
    r"propos\w*", r"establish\w*", r"make available", r"give", r"bring", r"secure", r"deliver", r"help pay",
    r"pay for", r"willing to", r"can", r"shall", r"are putting", r"is putting", r"put forward",
)  # fmt: skip
# Needing something (for asks).
NEED = (
    r"need\w*", r"require\w*", r"ask\w*", r"request\w*", r"call\w* for", r"expect\w*", r"insist\w*", r"must",
    r"depend\w* on", r"without", r"unless", r"only with", r"looking for", r"demand\w*", r"urge\w*",
    r"essential", r"cannot do without", r"rel(?:y|ies) on", r"no means to", r"only when", r"matched by",
    r"matching", r"fair only", r"please\b", r"send us", r"give us", r"(?:cannot|can't|not) (?:pay|afford)",
    r"would (?:welcome|appreciate|be grateful for)", r"could use",
)  # fmt: skip
# Evaluations: what a clause says about the option it names (when it takes no explicit side).
POSITIVE = (
    r"sensible", r"proven", r"reasonabl\w*", r"practical", r"spread\w*", r"change\w* practices", r"moving away from mercury", r"cleaner", r"essential", r"only way", r"only answer",
    r"only treaty", r"only common", r"fairest", r"fair", r"workable", r"feasible", r"affordable", r"certainty",
    r"clarity", r"solid", r"sound", r"strong (?:market )?signal", r"clearest signal", r"clear signal",
    r"one clear signal", r"achievable", r"valuable", r"value", r"useful", r"deserve\w*", r"belong\w*",
    r"levels? the playing field", r"is how", r"benefit\w*", r"protect\w*", r"respect\w*", r"allow\w*",
    r"\blets?\b(?!(?: \w+){0,3} down\b)", r"deliver\w*", r"enforceable", r"measurable", r"quick\w*", r"most direct",
    r"do more", r"target\w*", r"match\w*", r"guarantee\w*", r"right", r"best", r"better", r"surest",
    r"real results", r"results", r"progress", r"(?:it|what|that) works\b", r"can work", r"help\w*", r"strong", r"effective",
    r"pragmatic", r"first step", r"good", r"gives?\b", r"give us", r"turns?", r"ensures?", r"needed",
    r"necessary", r"urgent\w*", r"predictable", r"easy to implement", r"easier to", r"more honest",
    r"solid foundation", r"foundation", r"compromise", r"realistic", r"duty", r"responsib\w*", r"worth(?!less)",
    r"tool", r"support", r"obvious candidates", r"cut\w*", r"reduc\w*", r"responsible", r"careful",
    r"acceptable", r"tolerable", r"should(?! not)", r"must(?! not)", r"show\w*", r"room", r"moves? quickly", r"faster",
    r"make sure", r"prepare", r"basis", r"evidence base", r"scientifically", r"makes? sense", r"standard practice",
    r"reasonable cost", r"least we owe", r"victory", r"spare\w*", r"serve\w*", r"starting point", r"tolerat\w*",
    r"enough", r"at least", r"come before", r"come first", r"possible", r"wise", r"smart",
)  # fmt: skip
NEGATIVE = (
    r"fail\w*", r"weaken\w*", r"undermin\w*", r"ignor\w*", r"miss\w*", r"not enough", r"little",
    r"nothing", r"burden\w*", r"harm\w*", r"risk\w*", r"delay\w*", r"excuse", r"hollow", r"empty", r"weak\b",
    r"unfair\w*", r"impossible", r"difficult", r"struggl\w*", r"disrupt\w*", r"destroy\w*", r"close factories",
    r"slow\w*", r"freez\w*", r"frozen", r"outdated", r"lose\w*", r"loses", r"poison\w*", r"unchecked",
    r"leak", r"shield\w*", r"betray\w*", r"upside down", r"punish\w*", r"constrain\w*", r"worr\w*",
    r"concerns?\b", r"(?:are|is|am|remain) concerned", r"wary", r"cautious", r"object\w*", r"hard to", r"only as good as", r"mean\w* little",
    r"appearance of action", r"paper", r"not reduced", r"not fallen", r"has not", r"have not", r"had their",
    r"more of the same", r"shortcoming", r"weakness", r"no way", r"no guaranteed", r"no common",
    r"oblige nobody", r"nobody", r"weigh on", r"in circulation", r"end up in", r"more years", r"threaten\w*",
    r"least able", r"keep moving", r"keep running", r"keep flowing", r"dirtiest", r"(?:would|could|will) leave",
    r"costs?", r"cost billions", r"raise\w*", r"force\w*", r"push\w*", r"dump\w*", r"menu",
    r"riddled", r"lowest common denominator", r"too few", r"too quickly", r"distant dates", r"excluding",
    r"stripped", r"in name only", r"empty shell", r"vague", r"open-ended", r"sweeping", r"loaded",
    r"rigid\w*", r"overnight", r"underground", r"unlimited", r"indefinite\w*", r"postpon\w*", r"waiting",
    r"wait", r"without", r"busy", r"unprotected", r"betray", r"insufficient", r"fell short", r"falls short",
    r"too slow", r"moved slowly", r"still rising", r"keeps? rising", r"trend", r"carry on", r"at a disadvantage",
    r"unacceptable", r"impose\w*", r"offenders", r"informality", r"interference", r"neglect\w*", r"outrun",
    r"doing nothing", r"do nothing", r"inaction", r"exposed", r"unaddressed", r"upset", r"heavy costs",
    r"consequences", r"closures", r"only obliges", r"in haste", r"catch", r"pull apart", r"reward",
    r"lowest", r"short list", r"no alternative", r"no affordable", r"no proven", r"escape\w*", r"paperwork",
    r"hard questions", r"invite", r"take years", r"years to", r"alone cannot", r"exclude\w*", r"no credible",
)  # fmt: skip

# Evaluations that settle the matter on their own ("would weaken the treaty", "a hollow text").
STRONG_NEGATIVE = (
    r"weaken\w*", r"undermin\w*", r"hollow", r"betray\w*", r"indefensible", r"unacceptable", r"in name only",
    r"empty shell", r"appearance of action", r"more of the same", r"mean\w* little", r"do little", r"little for",
    r"never (?:managed|have|provided|reach)", r"have not", r"has not", r"not enough", r"fail\w*", r"harm\w*",
    r"destroy\w*", r"close factories", r"impossible", r"upside down", r"unchecked", r"a leak", r"excuse",
    r"delay\w*", r"ignor\w*", r"untouched", r"off the hook", r"poison\w*", r"dump\w*", r"punish\w*",
    r"no affordable", r"no alternative", r"no proven", r"frozen", r"freez\w*", r"unfair\w*", r"burden\w*",
    r"at a disadvantage", r"carry on unchanged", r"still rising", r"keeps? rising", r"not (?:fallen|reduced|reversed)",
    r"(?:should|must|would|will|could|can|need|does|do) not\b(?! mean)", r"cannot", r"won't",
    r"let(?: \w+){0,3} down", r"pointless", r"worthless", r"useless", r"a waste", r"waste (?:of|years|time)", r"mistake", r"disgrace\w*", r"unrealistic",
    r"nowhere", r"too weak", r"yet again", r"crush\w*", r"last thing", r"unworkable", r"coward\w*", r"shame\w*", r"doubl\w* (?:\w+ )?(?:prices|bills|costs)", r"meaningless", r"a joke", r"shut\w*", r"rush\w*", r"outrageous", r"hurt\w*", r"struggle\w*", r"risk\w*", r"worr\w*", r"concerns?\b", r"(?:are|is|am|remain) concerned", r"wary", r"cautious", r"objects?\b", r"miss\w*",
)  # fmt: skip
STRONG_POSITIVE = (
    r"only way", r"only answer", r"least we owe", r"essential", r"surest", r"fairest", r"clearest", r"victory",
    r"sound response", r"at least", r"only realistic", r"best placed", r"best managed", r"is how",
    r"non-negotiable", r"nothing less", r"(?:has|have|had) to be (?:in|included|covered|part of)", r"deserve\w*",
)  # fmt: skip
_WORD = re.compile(r"[a-z0-9][a-z0-9.'-]*")
_NEVER = re.compile(r"(?!)")  # a cue's pattern slot: cues match through their own matcher
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _alt(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(words) + ")"


_SUPPORT_RE = re.compile(rf"\b{_alt(SUPPORT_VERBS)}\b")
_OPPOSE_RE = re.compile(rf"\b{_alt(OPPOSE_VERBS)}\b")
_CONCESSION_RE = re.compile(rf"\b{_alt(CONCESSIONS)}\b")
_NEGATION_RE = re.compile(rf"\b{_alt(NEGATIONS)}\b|n't\b")
_HEARD_RE = re.compile(rf"\b{_alt(HEARD_FRAMES)}\b")
_COMMIT_RE = re.compile(rf"\b{_alt(COMMIT)}")
_NEED_RE = re.compile(rf"\b{_alt(NEED)}")
_POSITIVE_RE = re.compile(rf"\b{_alt(POSITIVE)}")
_NEGATIVE_RE = re.compile(rf"\b{_alt(NEGATIVE)}")
_STRONG_NEGATIVE_RE = re.compile(rf"\b{_alt(STRONG_NEGATIVE)}")
_STRONG_POSITIVE_RE = re.compile(rf"\b{_alt(STRONG_POSITIVE)}")
_OWN_RE = re.compile(rf"^\W*(?:\w+ ){{0,4}}?{_alt(OWN_SUBJECTS)}\b")
_CLAUSE_SPLIT = re.compile(
    r",\s+(?=(?:we|i)\b[^,]*\b(?:that|this|it)$)|"
    r",\s+so\s+(?!that\b)(?=the (?:treaty|convention|agreement|instrument|text)\b)|"
    r"\s*;\s*|:\s+|(?<!common),?\s+\bbut\b\s+(?!only if\b)|,\s+(?:while|whereas|although|though|yet)\s+|\s+\bwhereas\b\s+"
)
# "and" starts a new clause when a verb or a subject of its own follows it.
_AND_SPLIT = re.compile(
    r",?\s+and\s+(?=(?:(?:we|our delegation|i|they|it|this|that)\b|(?:also\s+)?(?:will|would|can|could|cannot|do|does|must|shall|remain|"
    r"strongly\s+|firmly\s+|fully\s+)?(?:not\s+)?(?:support|oppose|reject|back|favou?r|accept|resist|object|prefer|"
    r"welcome|want|call|insist|endorse|refuse|block|live|agree|join|stand|go)\b))"
)
_CONDITION_LEAD = re.compile(
    r"^\s*(?:if|provided(?: that)?|as long as|so long as|only if|unless|once|assuming|on condition that)\b[^,]*,\s*"
)
_CONDITION_TAIL = re.compile(
    r",?\s*\b(?:(?<!check )(?<!checks )(?<!see )(?<!ask )(?<!asks )(?<!know )(?<!wonder )(?<!decide )if|(?<!have )(?<!has )(?<!never )(?<!been )provided(?: that)?(?! by\b)|providing|as long as|so long as|only if|unless|(?<!at )once|on condition that|"
    r"on the understanding that|assuming)\b.*$"
)
_WITH_LEAD = re.compile(
    r"^\s*(?:only )?with\b(?:[^,]*,\s*(?=(?:we|our|i|(?:[a-z-]+ ){1,4}(?:can|could|will|would))\b)|"
    r".*?,\s*(?=(?:we|our|i|(?:[a-z-]+ ){1,4}(?:can|could|will|would))\b))"
)
_WITHOUT_LEAD = re.compile(r"^\s*without\b[^,]*,\s*")
_PROVISO = r"(?:guaranteed|in place|assured|on the table|secured|in the text|provided|protected)\b"
_TRADE_VERB = (
    r"(?:supports?|backs?|votes? for|votes? yes on|accepts?|agrees? (?:to|that)|join us on|go along with|"
    # plain words: "stand with us on X", "side with us for X", "get behind X", "give us your vote on X"
    r"(?:stands?|sides?|votes?) (?:with|by) (?:us|you) (?:on|for)|backs? (?:us|you) (?:on|for)|get behind|"
    r"helps? (?:us|you) (?:on|with)|gives? (?:us|you) (?:your |our )?(?:vote|support) (?:on|for)|"
    r"comes? (?:a)?round (?:on|to))"
)


@dataclass
class Reading:
    """Sets keyed by issue id, for one message."""

    support: dict[str, set[str]] = field(default_factory=dict)
    oppose: dict[str, set[str]] = field(default_factory=dict)
    conditional: dict[str, set[str]] = field(default_factory=dict)
    offers: set[str] = field(default_factory=set)
    asks: set[str] = field(default_factory=set)
    trades: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Pattern:
    issue: str
    option: str
    regex: re.Pattern[str]
    named: bool  # by id or label (a keyword is only an allusion)
    allusion: bool = False  # counts only while the option's issue is under discussion
    # Text every match contains (the first word's stem, or the id): a message without it is not scanned. Messages
    # are read clause by clause against every option's patterns, and most patterns match nothing.
    literal: str = ""
    cue: CueMatcher | None = None  # a plain-word cue (cues.py): matched by its groups, not by `regex`


@dataclass(frozen=True)
class Lexicon:
    options: tuple[_Pattern, ...]
    offers: tuple[tuple[str, re.Pattern[str], tuple[CueMatcher, ...]], ...]  # id, keywords, cues
    names: dict[str, re.Pattern[str]]  # role id -> how it is named
    issue_of: dict[str, str]
    any_name: re.Pattern[str]  # any seat named
    allusion_literals: dict[str, tuple[str, ...]]  # issue -> the literals of its options' allusions
    # A clause's option or offer by meaning (`similarity.match`), asked only where the rules found none in it.
    # The issue under debate, where there is one, narrows the options (`read` keeps no stance on another issue).
    by_meaning: Callable[[str, str | None], similarity.Match | None] = field(
        default=lambda text, issue: None, compare=False, hash=False
    )
    # Whether a clause speaks for or against an option matched by meaning when the rules read no side in it.
    side_by_meaning: Callable[[str, str], str | None] = field(
        default=lambda text, option: None, compare=False, hash=False
    )
    # Every text of the scenario (briefs, openings, arguments, talk and chair lines), lower case: the scenario's own
    # words, which the AI delegations speak, are read by the rules alone (the corpus checks them line by line).
    # (Built on first use: most readings never need it, and the lexicon is rebuilt when the scenario's memo fills.)
    known: Callable[[], str] = field(default=lambda: "", compare=False, hash=False, repr=False)
    # (sentence, speaker, issue) -> what it says (`_read_sentence`): a third of the sentences read in a game were
    # read before (a message read again without its questions, template sentences, the same words from others).
    sentences: dict[tuple[str, str | None, str | None], _Sentence] = field(
        default_factory=dict, compare=False, hash=False
    )
    # The same, for sentences read again by meaning (a student's words only).
    meant: dict[tuple[str, str | None, str | None], _Sentence] = field(
        default_factory=dict, compare=False, hash=False
    )

    def sentence_key(
        self, sentence: str, speaker: str | None, issue: str | None
    ) -> tuple[str, str | None, str | None]:
        """The memo's key for a sentence read for this speaker and issue. The speaker changes a reading only where
        the sentence names a seat (it tells the speaker naming itself from a report of another's position, and
        its name joins "we" in the patterns); the issue only where one of its options' allusions may occur
        (allusions count only while their issue is discussed). Elsewhere the reading is the one without them,
        and one entry serves every speaker and issue: a game reads a message again for other issues and as
        others heard it."""
        if speaker is not None and not self.any_name.search(sentence):
            speaker = None
        if issue is not None and not any(lit in sentence for lit in self.allusion_literals.get(issue, ())):
            issue = None
        return sentence, speaker, issue


_stem_of = stem_of


def _stem(word: str) -> str:
    if re.fullmatch(r"[\d.]+", word):
        return re.escape(word) + r"(?!\d)"
    return re.escape(_stem_of(word)) + r"[\w-]*"


def _first_literal(phrase: str) -> str:
    """What every match of `phrase_pattern(phrase)` contains: its first word's stem."""
    words = _WORD.findall(phrase.lower())
    return _stem_of(words[0]) if words else ""


# Small words a phrase may carry between its keywords ("leave air emissions" for "leave emissions").
_FILLER = (
    r"(?:(?:a|an|the|of|on|for|to|from|air|all|its|their|our|new|mercury|its|any|every|out|these|this)\s+)?"
)


# The endings a cue's word may take: its inflections and a few derivations ("enforce" gives "enforceable"), not any
# longer word that starts the same ("time" is not "timelines").
_CUE_ENDINGS = (
    r"(?:s|es|e|ed|d|ing|ings|er|ers|ies|ied|ying|y|ly|ment|ments|able|eable|ion|ions|ation|ations|al)?"
)


def cue_phrase(phrase: str) -> re.Pattern[str]:
    """A cue's word or phrase: stems as in keywords, but a short word is only itself ("us" is not "use")."""
    words = _WORD.findall(phrase.lower())
    body = (r"\s+" + _FILLER).join(
        f"(?:{re.escape(w)}|{re.escape(stem_of(w))}){_CUE_ENDINGS}" if len(w) > 3 else re.escape(w)
        for w in words
    )
    return re.compile(rf"(?<![\w.-]){body}(?![\w-])")


def phrase_pattern(phrase: str, *, stem: bool = True) -> re.Pattern[str]:
    words = _WORD.findall(phrase.lower())
    if stem:
        body = (r"\s+" + _FILLER).join(_stem(w) for w in words)
    else:  # plurals only: "fund" must not match "funded", nor "financing" match "financial"
        body = r"\s+".join(re.escape(w.removesuffix("s")) + r"s?" for w in words)
    return re.compile(rf"(?<![\w.]){body}(?![\w-])")


# Words a seat's short name may spell once lower-cased, which text uses as words far more often.
_COMMON_WORDS = frozenset({"us", "we", "i", "it", "me", "our", "you", "them", "can", "all", "one", "un"})


def lexicon(scenario: Scenario) -> Lexicon:
    memo = scenario.memo()
    found = memo.get(("reading-lexicon",))
    if isinstance(found, Lexicon):
        return found
    options: list[_Pattern] = []
    issue_of: dict[str, str] = {}
    for issue in scenario.issues:
        for option in issue.options:
            issue_of[option.id] = issue.id
            id_re = re.compile(rf"(?<![\d.]){re.escape(option.id)}(?![\d])")
            options.append(_Pattern(issue.id, option.id, id_re, True, literal=option.id))
            label = option.label
            options.append(
                _Pattern(issue.id, option.id, phrase_pattern(label), True, literal=_first_literal(label))
            )
            for keyword in option.keywords:
                options.append(
                    _Pattern(
                        issue.id, option.id, phrase_pattern(keyword), False, literal=_first_literal(keyword)
                    )
                )
            for cue in option.cues:
                options.append(_Pattern(issue.id, option.id, _NEVER, False, cue=compile_cue(cue, cue_phrase)))
            for allusion in option.allusions:
                options.append(
                    _Pattern(
                        issue.id, option.id, phrase_pattern(allusion), False, True, _first_literal(allusion)
                    )
                )
    offers = tuple(
        (
            offer.id,
            re.compile(
                "|".join(phrase_pattern(k, stem=False).pattern for k in [offer.label, *offer.keywords])
            ),
            tuple(compile_cue(cue, cue_phrase) for cue in offer.cues),
        )
        for offer in scenario.offers
    )
    names: dict[str, re.Pattern[str]] = {}
    for role in scenario.roles:
        spellings = {role.name.lower().removeprefix("the ")}
        spellings |= {other.lower().removeprefix("the ") for other in role.also_called}
        # An id is a name only when it is the name's acronym ("EU", "AMAP"); "CAN" or "BRA" would be words.
        if "".join(w[0] for w in role.name.split() if w[0].isupper()) == role.id:
            spellings.add(role.id.lower())
        # A name that is also a common word once lower-cased ("the US": "us") is a name only after its article.
        bare = sorted(x for x in spellings if x not in _COMMON_WORDS)
        articled = sorted(x for x in spellings if x in _COMMON_WORDS)
        alternatives = [r"(?:the )?(?:" + "|".join(re.escape(x) for x in bare) + ")"] if bare else []
        alternatives += [r"the (?:" + "|".join(re.escape(x) for x in articled) + ")"] if articled else []
        names[role.id] = re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")
    names[scenario.chair.id] = re.compile(
        r"\b(?:the chair|" + re.escape(scenario.chair.name.lower()) + r")\b"
    )
    any_name = re.compile("|".join(f"(?:{regex.pattern})" for regex in names.values()))
    allusion_literals: dict[str, tuple[str, ...]] = {}
    for pattern in options:
        if pattern.allusion:
            allusion_literals[pattern.issue] = (*allusion_literals.get(pattern.issue, ()), pattern.literal)
    found = Lexicon(
        tuple(options),
        offers,
        names,
        issue_of,
        any_name,
        allusion_literals,
        by_meaning=lambda text, issue: similarity.match(scenario, text, issue),
        side_by_meaning=lambda text, option: similarity.side(scenario, text, option),
        known=functools.cache(
            lambda: "\n".join(_normalise(text) for text in _strings(scenario.model_dump()))
        ),
    )
    memo[("reading-lexicon",)] = found
    return found


# --- reading --------------------------------------------------------------------------------------------------


@dataclass
class _Mention:
    issue: str
    option: str
    start: int
    end: int
    named: bool
    # Found by a plain-word cue (which names a position, not only a topic): the words of its groups. Only they are
    # the option's name; the words between them still say something of it ("miners ... cannot wait ... study").
    parts: tuple[tuple[int, int], ...] = ()

    @property
    def cue(self) -> bool:
        return bool(self.parts)


def _mentions(lex: Lexicon, text: str, issue: str | None) -> list[_Mention]:
    found: list[_Mention] = []
    names: list[tuple[int, int]] | None = None
    for pattern in lex.options:
        if (pattern.allusion and pattern.issue != issue) or pattern.literal not in text:
            continue
        if pattern.cue is not None:
            if names is None:  # a seat's name is not a cue's word ("World Coal Power Association")
                names = [m.span() for m in lex.any_name.finditer(text)]
            for span in pattern.cue.finditer(text):
                if any(lo <= a < hi for a, _ in span.parts for lo, hi in names):
                    continue
                found.append(
                    _Mention(pattern.issue, pattern.option, span.start, span.end, pattern.named, span.parts)
                )
            continue
        for m in pattern.regex.finditer(text):
            found.append(_Mention(pattern.issue, pattern.option, m.start(), m.end(), pattern.named))
    # A mention inside a longer mention of another option is part of that one.
    kept = [
        m
        for m in found
        if not any(
            o is not m
            and o.option != m.option
            and o.start <= m.start
            and m.end <= o.end
            and (o.end - o.start) > (m.end - m.start)
            for o in found
        )
    ]
    return kept


def _offers_in(lex: Lexicon, text: str) -> list[tuple[str, int]]:
    out = []
    for offer_id, regex, cues in lex.offers:
        m = regex.search(text)
        starts = [m.start()] if m else []
        for span in filter(None, (cue.search(text) for cue in cues)):
            # Where a cue's offer begins is not always where what is said of it ends: "our dentists need an
            # exception" (the need before its last word), "we will run workshops so that every country" (the
            # commitment before its first).
            starts += [span.start, span.last]
        for start in sorted(set(starts))[:2]:
            out.append((offer_id, start))
    return out


# Words that frame what a clause says of an option without naming it: who speaks, modals, stance and offer verbs.
_FRAME_WORDS = frozenset(
    re.findall(
        r"\S+",
        "a an the this that these those it its we i you they our us my your their me he she to be been being is are "
        "am was were will would shall should can could may might must do does did have has had also really very "
        "fully strongly firmly just only still now then here there so and or please let lets let's",
    )
)
_FRAME_RE = re.compile(
    rf"\b(?:{_alt(SUPPORT_VERBS)}|{_alt(OPPOSE_VERBS)}|{_alt(CONCESSIONS)}|{_alt(NEGATIONS)}|{_alt(COMMIT)}|"
    rf"{_alt(NEED)})\b|n't\b"
)
# Where the words naming an option end: a verb of the clause, a judgement, a break.
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|would|will|must|should|can|could|cannot|can't|won't|has|have|had|needs?|deserves?|"
    r"means?|makes?|made)\b|,"
)


def _by_meaning(
    lex: Lexicon, clause: str, issue: str | None = None, speaker: str | None = None
) -> tuple[list[tuple[str, int]], list[_Mention]]:
    """(offers, mentions) of a clause whose words the rules do not know, by meaning (`similarity.py`): at most one
    option or offer, named by the words after the clause's frame ("we are ready to" | "pay for the schools",
    "we back" | "fumes from boilers" | "being cut"). Nothing when the model is unsure or absent, and never for the
    scenario's own words or a clause that names another seat than the speaker ("X argues that ...", "Y agrees"):
    those are the AI delegations' lines and connectives, which the rules read, and reading them by meaning would
    only cost time. With `issue` (a debate), only that issue's options compete."""
    own = lex.names.get(speaker or "")
    names = lex.any_name.finditer(re.sub(r"^[^,]{0,40},\s*", "", clause))
    if _scenario_says(lex, clause) or any(own is None or not own.fullmatch(n.group(0)) for n in names):
        return [], []  # the speaker may name itself ("Ottawa wants ..."), but no other seat
    found = lex.by_meaning(clause, issue)
    if found is None:
        return [], []
    covered = [m.span() for m in _FRAME_RE.finditer(clause)] + [
        m.span() for m in lex.any_name.finditer(clause)
    ]
    start = _first_own_word(clause, covered, 0)
    # A subject the rules do not know as a seat ("Ottawa wants", "the Union will accept") stands before the
    # clause's verb: what the clause is about starts after the verb.
    verb = _SIDE_VERB.match(clause, start) if start < len(clause) else None
    if verb is not None:
        start = _first_own_word(clause, covered, verb.end())
    if start == len(clause):
        return [], []
    if found.target.kind == "offer":
        return [(found.target.id, start)], []
    words = re.match(r"\S+", clause[start:])
    first = start + (words.end() if words else 0)  # its first word names the option, whatever it is
    stop = min(
        (
            m.start()
            for regex in (_PREDICATE, _POSITIVE_RE, _NEGATIVE_RE)
            for m in regex.finditer(clause, first)
        ),
        default=len(clause),
    )
    end = len(clause[:stop].rstrip())
    # No cue's parts: words matched by meaning name what the clause is about, never a position said plainly.
    return [], [_Mention(found.target.issue, found.target.id, start, end, False)]


# A word or two of subject, then a verb that takes a side.
_SIDE_VERB = re.compile(
    rf"[\w'-]+(?:\s+[\w'-]+)?\s+(?:(?:will|would|can|could|do|does)\s+)?"
    rf"(?:{_SUPPORT_RE.pattern}|{_OPPOSE_RE.pattern}|{_CONCESSION_RE.pattern})"
)


def _first_own_word(clause: str, covered: list[tuple[int, int]], at: int) -> int:
    """Where the first word from `at` on that is neither a frame word nor inside a frame or a name starts."""
    for word in _WORD.finditer(clause, at):
        if word.group(0) not in _FRAME_WORDS and not any(lo <= word.start() < hi for lo, hi in covered):
            return word.start()
    return len(clause)


def _scenario_says(lex: Lexicon, clause: str) -> bool:
    """Whether the clause is the scenario's own words, but for up to six words in front ("Canada argues that ")."""
    words = clause.split()
    known = lex.known()
    return any(" ".join(words[skip:]) in known for skip in range(min(7, len(words) - 3)))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _meant(lex: Lexicon, words: str, meaning: bool) -> list[_Mention]:
    """The option `words` name by meaning, when meaning is asked for."""
    return _by_meaning(lex, words.strip(" ,"))[1] if meaning else []


_CONDITION_WORD = re.compile(
    r"^\W*(?:but\s+)?(?:if|provided(?: that)?|providing|as long as|so long as|only if|unless|once|with|without|"
    r"on condition that|on the understanding that|assuming)\b"
)


def _meant_offers(lex: Lexicon, condition: str, issue: str | None) -> list[tuple[str, int]]:
    """The offer a condition names by meaning, where the rules found neither an offer nor an option in it (an
    option named in a condition is no stance on it, and no offer)."""
    if not condition.strip() or _mentions(lex, condition, issue):
        return []
    offers, _ = _by_meaning(lex, _condition_body(condition), issue)
    return offers


def _condition_body(condition: str) -> str:
    """A condition's terms without the word that makes it one ("if", "provided that", ...), whether it leads the
    clause ("if someone pays, we ...") or trails it (", provided someone pays")."""
    return _CONDITION_WORD.sub("", condition.strip(" ,")).strip(" ,")


def named(scenario: Scenario, text: str) -> tuple[list[str], list[str]]:
    """The options and offers a text names, in order of appearance, whatever it says of them (a question names
    what it asks about but backs nothing). Kept in the scenario's memo: prompts ask it of the same messages again
    and again (a talk's last lines, each debate speech, the candidate sentences built from them)."""
    memo = scenario.memo()
    key = ("named", text)
    found = memo.get(key)
    if found is None:
        lex = lexicon(scenario)
        lowered = _normalise(text)
        options = [m.option for m in sorted(_mentions(lex, lowered, None), key=lambda m: m.start)]
        offers = [o for o, _ in sorted(_offers_in(lex, lowered), key=lambda found: found[1])]
        found = memo[key] = (tuple(dict.fromkeys(options)), tuple(dict.fromkeys(offers)))
    options_named, offers_named = cast(tuple[tuple[str, ...], tuple[str, ...]], found)
    return list(options_named), list(offers_named)


def read(
    scenario: Scenario,
    text: str,
    *,
    speaker: str | None = None,
    issue: str | None = None,
    meaning: bool = False,
) -> Reading:
    """What a message says for its speaker. With `meaning` (a student's own words, never the AI's), a sentence in
    which the rules read no position and name no option is read again with its options and offers matched by
    meaning (`similarity.py`, `_by_meaning_too`)."""
    lex = lexicon(scenario)
    reading = Reading()
    explicit: dict[tuple[str, str, str], int] = {}  # (kind, issue, option) -> rank: 2 explicit, 1 evaluation
    mixed: set[tuple[str, str]] = set()  # options opposed and conditionally backed within one sentence
    for raw in _SENTENCE.split(text):
        sentence = _normalise(raw)
        if not sentence:
            continue
        said = _read_sentence(lex, sentence, speaker, issue, meaning=meaning)
        if said.trade:
            reading.trades.append(said.trade)
            continue
        reading.offers |= said.offers
        reading.asks |= said.asks
        mixed |= said.mixed
        for kind, issue_id, option, rank in said.ranks:
            key = (kind, issue_id, option)
            explicit[key] = max(explicit.get(key, 0), rank)
    _settle(reading, explicit, mixed)
    if issue is not None:
        for bucket in (reading.support, reading.oppose, reading.conditional):
            for other in [i for i in bucket if i != issue]:
                del bucket[other]
    reading.asks -= reading.offers
    return reading


@dataclass(frozen=True)
class _Sentence:
    """What one sentence says, whatever the sentences around it say."""

    trade: tuple[str, str] | None
    offers: frozenset[str]
    asks: frozenset[str]
    ranks: tuple[tuple[str, str, str, int], ...]  # (kind, issue, option, rank), in the order they were read
    mixed: frozenset[tuple[str, str]]  # options it both opposes and backs on terms


SENTENCES_KEPT = 20_000  # per scenario; then the memo starts afresh (a game reads about 900)


def _read_sentence(
    lex: Lexicon, sentence: str, speaker: str | None, issue: str | None, *, meaning: bool = False
) -> _Sentence:
    key = lex.sentence_key(sentence, speaker, issue)
    found = lex.sentences.get(key)
    if found is None:
        found = _read_words(lex, sentence, key[1], key[2], meaning=False)
        if len(lex.sentences) >= SENTENCES_KEPT:
            lex.sentences.clear()
        lex.sentences[key] = found
    if meaning and not found.trade:
        # A trade whose halves are in words of the student's own: "stand with us on keeping it all voluntary and
        # we will back your list" (a trade says nothing else).
        trade = _trade(lex, sentence, key[1], meaning=True)
        if trade:
            return _Sentence(trade, frozenset(), frozenset(), (), frozenset())
    if meaning and not found.ranks and not found.trade:
        # No position read (an offer or an ask may be): read again by meaning; the issue under debate narrows it.
        found = _by_meaning_too(lex, (sentence, key[1], issue), found)
    elif meaning and not (found.offers or found.asks) and any(r[0] == "conditional" for r in found.ranks):
        # Backing on terms the rules could not name: "only if someone helps us get the cleaner equipment".
        found = _terms_by_meaning(lex, (sentence, key[1], issue), found)
    if meaning and not found.offers and not found.trade and not _is_question(sentence):
        offers = _promised_by_meaning(lex, sentence, key[1])
        if offers:
            found = replace(found, offers=frozenset(offers), asks=found.asks - offers)
    return found


# A condition that asks for something names who gives or who gets it, or what is allowed or spared.
_ASKING = re.compile(
    r"\b(?:we|us|our|you|your|they|them|their|someone|somebody|anyone|anybody|partners?|donors?|countries|"
    r"nations|economies|states|governments|developed|developing|rich\w*|poor\w*|wealth\w*|there (?:is|are|will be))\b"
    r"|\b(?:allowed|permitted|exempt\w*|spared|kept|protected)\b"
)


# What the speaker promises to do, in its own voice: "we can send our scientists to ...", "Mercury Free Future will
# run workshops ...", "our companies are happy to pass that equipment on ...".
_PROMISE = (
    r"\b(?:we|our (?:\w+ ){{0,2}}(?:members|companies|experts|scientists|engineers|delegation|government)|{own})\s+"
    r"(?:(?:\w+ly|also|then|gladly|stand ready to)\s+)?"
    r"(?:will|can|shall|(?:are|is|am) (?:happy|glad|willing|ready|prepared|able) to|"
    r"would be (?:happy|glad|willing) to|"
    r"offer to|commit to|promise to|pledge to)\s+(?:(?:also|gladly|then)\s+)?(?P<deed>[^,;.]+)"
)
# A promise that grants something to others: "accept that poorer countries are given extra years".
_GRANTED = re.compile(
    r"(?:agree|accept)s? (?:that )?(?:\w+ ){1,6}?(?:get|gets|are given|is given|receive|receives|have|has|can have)\s+"
    r"(?P<what>.+)"
)
# A promise to back or oppose an option, or not to: no offer.
_STANCE_DEED = re.compile(
    rf"(?:{_SUPPORT_RE.pattern}|{_OPPOSE_RE.pattern}|{_CONCESSION_RE.pattern}|not\b|never\b)"
)
PROMISE_WORDS = 8  # what the promise does is said in its first words; the rest says for whom, where, how


def _promised_by_meaning(lex: Lexicon, sentence: str, speaker: str | None) -> set[str]:
    """The offers a sentence promises in words of the speaker's own, each promise's first words matched among the
    offers alone (a long tail, "... in the air, in fish and in people", reads as the topic). A promise to back an
    option, or one said under a negation, is no offer."""
    own = _own_pattern(lex, speaker) or "(?!)"
    found: set[str] = set()
    for m in re.finditer(_PROMISE.format(own=own), sentence):
        deed = m["deed"]
        if re.search(r"\b(?:which|that|who|where)\s+$", sentence[: m.start()]):
            continue  # "a list which we can add to later": a relative clause describes, it promises nothing
        granted = _GRANTED.match(deed)  # "we will agree that they get more time": the time is ours to give
        if _NEGATION_RE.search(sentence[max(0, m.start() - 30) : m.start("deed")]) or (
            not granted and _STANCE_DEED.match(deed)
        ):
            continue
        deed = granted["what"] if granted else deed
        head = " ".join(deed.split()[:PROMISE_WORDS])
        if _scenario_says(lex, head):
            continue
        meant = lex.by_meaning(head, similarity.OFFERS)
        if meant is not None and meant.target.kind == "offer":
            found.add(meant.target.id)
    return found


def _terms_by_meaning(lex: Lexicon, key: tuple[str, str | None, str | None], rules: _Sentence) -> _Sentence:
    """`rules` with the offers its conditions name by meaning, among the offers alone (a condition asks for
    something, or promises it when the speaker sets it on itself), memoised beside `_by_meaning_too`."""
    sentence, speaker, _ = key
    found = lex.meant.get(key)
    if found is None:
        asks, offers = set(rules.asks), set(rules.offers)
        for clause, _after_but in _clauses(sentence):
            condition, _main = _split_condition(lex, clause)
            if not condition.strip() or _offers_in(lex, condition) or _mentions(lex, condition, None):
                continue
            body = _condition_body(condition)
            if not (_ASKING.search(body) or lex.any_name.search(body)) or _scenario_says(lex, body):
                continue  # "as long as the dates are realistic": terms of the option itself, not a thing asked
            meant = lex.by_meaning(body, similarity.OFFERS) if body else None
            if meant is None or meant.target.kind != "offer":
                continue
            own = bool(re.match(_OWN_CONDITION, condition)) and not _RECEIVES.search(condition)
            (offers if own else asks).add(meant.target.id)
        found = replace(rules, asks=frozenset(asks - offers), offers=frozenset(offers))
        if len(lex.meant) >= SENTENCES_KEPT:
            lex.meant.clear()
        lex.meant[key] = found
    return found


def _by_meaning_too(lex: Lexicon, key: tuple[str, str | None, str | None], rules: _Sentence) -> _Sentence:
    """A sentence in which the rules read no position (`rules`: at most offers and asks), read again with its
    clauses' options and offers matched by meaning where the rules know no option in it at all, as in "if you train
    our inspectors, we will back your push to clean up coal plants" (memoised apart: the rules' reading stays
    what everyone else reads)."""
    sentence, speaker, issue = key
    found = lex.meant.get(key)
    if found is None:
        found = rules
        # Beside an offer or an ask, only a verb that takes a side says a position (what else such a sentence
        # describes is mostly what the offer is for).
        sides = not (rules.offers or rules.asks) or any(
            regex.search(sentence) for regex in (_SUPPORT_RE, _OPPOSE_RE, _CONCESSION_RE)
        )
        if sides and not _mentions(lex, sentence, issue):
            found = _read_words(lex, sentence, speaker, issue, meaning=True)
        if len(lex.meant) >= SENTENCES_KEPT:
            lex.meant.clear()
        lex.meant[key] = found
    return found


def _read_words(
    lex: Lexicon, sentence: str, speaker: str | None, issue: str | None, *, meaning: bool
) -> _Sentence:
    trade = _trade(lex, sentence, speaker, meaning=meaning)
    if trade:
        return _Sentence(trade, frozenset(), frozenset(), (), frozenset())  # a trade says nothing else
    question = _is_question(sentence)
    said = Reading()
    own: dict[tuple[str, str, str], int] = {}  # this sentence's readings, to tell a mixed sentence apart
    previous = ""
    for clause, after_but in _clauses(sentence):
        clause = _resolve_that(lex, clause, previous, issue)
        _read_clause(lex, clause, speaker, issue, question, said, own, after_but, meaning=meaning)
        previous = clause
    _one_per_issue(own)
    mixed = frozenset((i, o) for k, i, o in own if k == "oppose" and ("conditional", i, o) in own)
    return _Sentence(
        None, frozenset(said.offers), frozenset(said.asks), tuple((*k, r) for k, r in own.items()), mixed
    )


_ASKED = re.compile(r"^\W*(?:can|could|may|will|would|shall) (?:we|i|you|your delegation) (?!not\b)")
_ASKED_WHETHER = re.compile(
    r"\b(?:know|wonder(?:ing)?|ask(?:ing)?|find out|tell us|let us know) (?:if|whether)\b"
)


def _is_question(sentence: str) -> bool:
    """A question, also one typed without its mark ("can we get some exceptions for medicines") or asked
    indirectly ("we would like to know whether ...")."""
    return sentence.endswith("?") or bool(_ASKED.match(sentence) or _ASKED_WHETHER.search(sentence))


# A comparison right after an evaluative word: "better than", "more sense than", "far more done than".
_COMPARED = re.compile(r"(?:\s+[\w'-]+){0,2}?\s+than\b")
# Where a clause turns from its reason to its conclusion.
_CONCLUSION = re.compile(
    r"(?:,\s*|\s)(?:and )?(?:so(?! that| on| far| much| many| long| as| to)|therefore|thus|which is why|"
    r"that is why|that's why|hence)\s+(?=\w)"
)


# A part that speaks of what came before it ("..., so those uses must be protected"): read with what it refers to.
_REFERS_BACK = re.compile(
    r"(?:it|they|them|such|he|she)\b|(?:this|that|these|those)\b(?! (?:treaty|convention|accord|agreement|"
    r"instrument|text|deal)\b)"
)


def _conclusion_start(clause: str) -> int:
    """Where a clause's conclusion starts after "so", "therefore", ... (0: none, or one that refers back)."""
    conclusion = _CONCLUSION.search(clause)
    if conclusion is None or _REFERS_BACK.match(clause, conclusion.end()):
        return 0
    return conclusion.end()


def _one_per_issue(ranks: dict[tuple[str, str, str], int]) -> None:
    """A sentence backs one option of an issue ("we would prefer to wait for a study before we write any rules"):
    where it reads as backing two, the more explicit reading stands, else the first named (what follows it is
    mostly a contrast or a description)."""
    for kind in ("support", "conditional"):
        by_issue: dict[str, list[tuple[str, int]]] = {}
        for (k, issue_id, option), rank in ranks.items():
            if k == kind:
                by_issue.setdefault(issue_id, []).append((option, rank))
        for issue_id, found in by_issue.items():
            if len(found) > 1:
                kept = max(found, key=lambda f: f[1])  # max keeps the first of equal ranks
                for option, _ in found:
                    if option != kept[0]:
                        del ranks[(kind, issue_id, option)]


_NOTHING = _Sentence(None, frozenset(), frozenset(), (), frozenset())
_CONTRACTED = {"re": "are", "ll": "will", "d": "would", "ve": "have", "m": "am"}


_THAT = re.compile(
    rf"\b(?:{_alt(SUPPORT_VERBS)}|{_alt(OPPOSE_VERBS)}|{_alt(CONCESSIONS)})\s+(?:that|this|it)\s*$"
)


def _resolve_that(lex: Lexicon, clause: str, previous: str, issue: str | None) -> str:
    """ "You want rules on every coal plant, but we cannot accept that": a stance on "that" is a stance on the one
    option the clause before named."""
    found = _THAT.search(clause)
    # "..., but it has not reduced ...": a clause that opens on "it" speaks of what the clause before named.
    opening = re.match(r"(?:it|this|that)\s+(?:has|have|is|was|will|would|does|did|can|could)\b", clause)
    if not (found or opening) or not previous or _mentions(lex, clause, issue):
        return clause
    before = _mentions(lex, previous, issue)
    if len({m.option for m in before}) != 1:
        return clause
    named = previous[before[0].start : before[0].end]
    if opening:
        return named + clause[opening.start() + len(opening.group(0).split()[0]) :]
    pronoun = re.search(r"(?:that|this|it)\s*$", clause)
    assert pronoun is not None
    return clause[: pronoun.start()] + named


def _normalise(raw: str) -> str:
    text = raw.lower().strip()
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = re.sub(r"[–—]", ",", text)
    text = re.sub(r"\s+", " ", text)
    # Plain writing contracts: "we're against", "we'll pay". ("'s" stays: it is also a possessive.)
    text = re.sub(r"\b(we|you|they|i)'(re|ll|d|ve|m)\b", lambda m: f"{m[1]} {_CONTRACTED[m[2]]}", text)
    # ... and drops the apostrophe: "we dont think", "cant accept".
    text = re.sub(r"\b(do|does|did|is|are|was|were|could|would|should|wo|ca|have|has)nt\b", r"\1n't", text)
    return text


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The clauses of a sentence, each with whether it answers the one before ("..., but ...")."""
    body = sentence.rstrip(".!?")
    pieces: list[tuple[str, bool]] = []
    pos, contrast = 0, False
    for m in _CLAUSE_SPLIT.finditer(body):
        pieces.append((body[pos : m.start()], contrast))
        contrast = bool(re.search(r"\b(?:but|yet)\b", m.group(0)))
        pos = m.end()
    pieces.append((body[pos:], contrast))
    out: list[tuple[str, bool]] = []
    for text, after_but in pieces:
        for n, piece in enumerate(_AND_SPLIT.split(text)):
            if piece.strip(" ,"):
                out.append((piece.strip(" ,"), after_but and n == 0))
    return out


def _is_reported(lex: Lexicon, clause: str, speaker: str | None) -> bool:
    """Whether the clause states someone else's position (or the speaker only acknowledges one)."""
    if _HEARD_RE.search(clause):
        return True
    head = clause[:90]
    for role_id, regex in lex.names.items():
        m = regex.search(head)
        if not m:
            continue
        if speaker is None or role_id == speaker:
            continue  # the speaker naming itself ("The United States supports ...")
        rest = head[m.end() :]
        if re.match(rf"\W*(?:\w+ ){{0,3}}?{_alt(REPORT_VERBS)}\b", rest) or re.match(r"'s\b", rest):
            return True
    others = re.search(
        rf"^\W*(?:\w+ ){{0,2}}?{_alt(OTHERS)}\b\W*(?:\w+ ){{0,3}}?{_alt(REPORT_VERBS)}\b", head
    )
    return bool(others and not _OWN_RE.match(head))


OTHER_SUBJECTS = (
    r"you", r"your delegation", r"your government", r"your side", r"some delegations", r"some countries",
    r"other delegations", r"others", r"many delegations", r"several delegations", r"those delegations",
    r"other countries", r"many countries", r"some parties", r"several countries",
)  # fmt: skip


def _subject_is_other(clause: str) -> bool:
    """A clause whose subject is another delegation or the listener ("you support 4.1")."""
    if _OWN_RE.match(clause):
        return False
    return bool(
        re.match(
            rf"^\W*(?:\w+ ){{0,2}}?{_alt(OTHER_SUBJECTS)}\b\W*(?:\w+ ){{0,3}}?(?:{_alt(SUPPORT_VERBS)}|{_alt(OPPOSE_VERBS)})\b",
            clause,
        )
    )


_LISTENER_STANCE = re.compile(
    r"\b(?:ask|urge|invite|call on|encourage|need|want|expect|hope)s? (?:you|your delegation|your government|"
    r"others|other delegations|all delegations|every delegation|delegations|everyone)\b"
)
# "as long as we get X": a condition in the speaker's voice that names what it receives, not what it gives.
_RECEIVES = re.compile(r"\b(?:we|i) (?:get|receive|are given|are offered|obtain)\b")
_OWN_CONDITION = (
    r"^\W*(?:if|once|provided(?: that)?|as long as|in return)\s+(?:\w+\s+){0,2}?(?:we|our delegation|i)\b"
)


def _split_condition(lex: Lexicon, clause: str) -> tuple[str, str]:
    """(condition, main) of a clause: a leading "if ..., " / "with <offer> ..., " / "without <offer>, " and a
    trailing ", provided ..." are conditions; the rest states the position."""
    condition, main = "", clause
    lead = _CONDITION_LEAD.match(main)
    if lead:
        condition, main = lead.group(0), main[lead.end() :]
    for pattern in (_WITH_LEAD, _WITHOUT_LEAD):
        found = pattern.match(main)
        if found and (
            _offers_in(lex, found.group(0))
            or re.search(_PROVISO, found.group(0))
            or re.match(r"\s*without (?:it|this|that|them|those|these)\b", found.group(0))
        ):
            condition, main = condition + found.group(0), main[found.end() :]
    tail = _CONDITION_TAIL.search(main)
    if tail and re.search(r"\b(?:grateful|glad|pleased|appreciate it)\s*$", main[: tail.start()]):
        tail = None  # "we would be grateful if X": a polite wish for X
    if tail and re.match(r",?\s*if (?:they|it|you|we) (?:want|wish|like|choose)s?\b", tail.group(0)):
        tail = None  # "let companies join if they want": a freedom, not a condition
    if tail and re.match(r",?\s*if (?:\S+ ){1,3}(?:is|are) to\b", tail.group(0)):
        tail = None  # "essential if the instrument is to matter": a purpose, not a condition
    if tail and tail.start() > 0:
        condition, main = condition + tail.group(0), main[: tail.start()]
    elif tail and not lead:
        condition, main = condition + main, ""
    return condition, main


def _read_clause(
    lex: Lexicon,
    clause: str,
    speaker: str | None,
    issue: str | None,
    question: bool,
    reading: Reading,
    ranks: dict[tuple[str, str, str], int],
    after_but: bool,
    *,
    meaning: bool = False,
) -> None:
    """What one clause says, into `reading` and `ranks`. With `meaning`, a clause part in which the rules found no
    option or offer is matched by meaning (`_by_meaning`)."""
    if not question and (_is_reported(lex, clause, speaker) or _subject_is_other(clause)):
        # "We have heard your concerns, and in that spirit we can accept X": what follows the report is the
        # speaker's own again.
        tail = _own_tail(lex, clause, speaker)
        if tail is None:
            if _is_reported(lex, clause, speaker):
                return
        else:
            clause = tail
    condition, main = _split_condition(lex, clause)
    guaranteed = bool(
        re.search(rf"\bwith (?:\S+ ){{0,8}}{_PROVISO}", main)
        or re.search(r"\bmust (?:come with|be matched by|be backed by)\b", main)
    )
    own = _own_pattern(lex, speaker)
    # Offers and asks. In a question the speaker proposes its conditions and asks for what it names in the body.
    own_condition = bool(re.match(_OWN_CONDITION, condition)) and not _RECEIVES.search(condition)
    own_condition = own_condition or bool(own and re.match(rf"^\W*if\s+{own}", condition))
    condition_offers = _offers_in(lex, condition) or (_meant_offers(lex, condition, issue) if meaning else [])
    for offer_id, _ in condition_offers:
        (reading.offers if own_condition or question else reading.asks).add(offer_id)
    main_offers = _offers_in(lex, main)
    mentions = _mentions(lex, main, issue)
    judged = main  # what is weighed for a side: for a clause read by meaning, only up to its next comma
    meant = False  # the clause's option was matched by meaning: its side may be too
    if meaning and not main_offers and not mentions:
        # Where the position starts: after "so" ("children in the camps are being poisoned, so countries with gold
        # mines should make plans": the reason reads as the topic, and its grim words are no side), else the whole
        # clause.
        for at in dict.fromkeys((_conclusion_start(main), 0)):
            main_offers, mentions = _by_meaning(lex, main[at:], issue, speaker)
            if main_offers or mentions:
                if at:
                    main_offers = [(o, p + at) for o, p in main_offers]
                    mentions = [replace(m, start=m.start + at, end=m.end + at) for m in mentions]
                    main = " " * at + main[at:]
                break
        meant = bool(mentions)
        if mentions:
            comma = main.find(",", mentions[0].end)
            judged = main if comma < 0 else main[:comma]
    if main_offers:
        other_subject = _subject_is_other(main)
        for offer_id, pos in main_offers:
            before = main[:pos]
            if re.search(r"\b(?:your|the|their|its|\w+'s) offers? of\s+(?:\S+\s+){0,2}$", before):
                continue  # "we welcome the offer of financing from X": someone else's offer, acknowledged
            if question:
                ours = re.search(
                    r"\b(?:we|i) (?:\w+ ){0,2}(?:offer|give|provide|send|share|pay)\b", before
                ) or (
                    re.search(r"\b(?:we|us|our)\b", before)
                    and not re.search(r"\byou", before)
                    and not re.search(r"\b(?:we|i) (?:\w+ )?(?:get|have|receive|obtain|count on)\b", main)
                    and not re.search(r"\b(?:they|them|their|countries|nations|donors|partners)\b", main)
                )  # "can we get some exceptions?", "will the rich countries share ...?": asks
                (reading.offers if ours else reading.asks).add(offer_id)
            elif (
                other_subject
                or _LISTENER_STANCE.search(before)
                or guaranteed
                # (a few words on: "we cannot pay for any of this" is a need said before its offer's words end)
                or (
                    _NEED_RE.search(main[: pos + 12])
                    and not re.search(r"\b(?:must|should|will|would) not\b", before)
                )
            ):
                reading.asks.add(offer_id)
            elif (
                (_COMMIT_RE.search(before) or re.search(r"\bon the table\b", main[pos:]))
                and not _NEGATION_RE.search(_segment(before))
                and (
                    re.search(r"\b(?:we|our|i|us)\b", _segment(before))
                    or (own and re.search(own, _segment(before)))
                )
            ):
                reading.offers.add(offer_id)
    if question or not main.strip() or _subject_is_other(main) or _LISTENER_STANCE.search(main):
        return
    conditional = bool(condition.strip()) or guaranteed
    needs_offer = bool(condition_offers) or guaranteed or "without" in condition
    if re.search(r"\bwould (?:allow|enable|let) us\b|\bwould make (?:\S+ ){1,8}possible\b", main):
        conditional = True  # "that would allow us to accept X": backing that waits on something
    for mention in sorted(mentions, key=lambda m: m.start):  # in the order said (`_one_per_issue`)
        polarity, rank = _polarity(judged, mention, mentions)
        if polarity is None and meant:
            polarity, rank = lex.side_by_meaning(main, mention.option), 1
        if polarity is None or (rank == 0 and not conditional):
            continue
        rank = max(rank, 1)
        if after_but:
            rank += 1
        kind = polarity
        if conditional and (polarity == "support" or needs_offer):
            # "we support X if Y" and "without Y we cannot accept X": backing on terms
            kind = "conditional"
        key = (kind, mention.issue, mention.option)
        ranks[key] = max(ranks.get(key, 0), rank)


def _own_tail(lex: Lexicon, clause: str, speaker: str | None) -> str | None:
    """The part of a clause after a comma where the speaker speaks for itself again, if any."""
    own = _own_pattern(lex, speaker)
    subject = r"(?:we|i|our (?:delegation|association|coalition|members|industry|government|country)" + (
        f"|{own})" if own else ")"
    )
    for comma in re.finditer(r",\s+", clause):
        rest = clause[comma.end() :]
        found = re.search(
            rf"\b{subject}\s+(?:\w+\s+)?(?:can|could|will|would|shall|are|is|am|support|accept|back)\b", rest
        )
        if found:
            return rest[found.start() :]
    return None


def _segment(before: str) -> str:
    """The words since the last subordinate break: who commits to an offer is said there."""
    cut = max((m.end() for m in re.finditer(r",|\bbecause\b|\bwhich\b|\bthat\b|\bso\b", before)), default=0)
    return before[cut:]


def _own_pattern(lex: Lexicon, speaker: str | None) -> str:
    if speaker is None or speaker not in lex.names:
        return ""
    return lex.names[speaker].pattern


def _polarity(main: str, mention: _Mention, mentions: list[_Mention]) -> tuple[str | None, int]:
    """("support"|"oppose"|None, rank) of the clause towards one option it names."""
    before = main[: mention.start]
    # Contrast markers right before the option turn the clause's side round for it.
    contrast = re.search(
        r"(?:\brather than|\binstead of|, not|\band not|\bbut not|\bover|\bthan|\bto (?:a|an|the))\s+(?:\S+\s+){0,3}$",
        before,
    )
    if (
        contrast
        and contrast.group(0).startswith(("to", "over", "than"))
        and not re.search(r"\b(?:prefer\w*|rather)\b", before)
    ):
        contrast = None
    if contrast is None:
        # "without X, nothing works": what goes wrong without X speaks for X
        contrast = re.search(r"\bwithout\s+(?:\S+\s+){0,2}$", before)
    concession = None
    for m in _CONCESSION_RE.finditer(before):
        concession = m
    verb = None
    verb_kind = ""
    for m in _SUPPORT_RE.finditer(before):
        verb, verb_kind = m, "support"
    for m in _OPPOSE_RE.finditer(before):
        if verb is None or m.start() > verb.start():
            verb, verb_kind = m, "oppose"
    # A verb governs the options up to the next break in the sentence ("we value X, and its work should continue
    # alongside Y": Y is not valued by the verb).
    if verb is not None and re.search(
        r",\s+(?:and|but|so|which|while|because|as)\b|\b(?:alongside|because|so that)\b", before[verb.end() :]
    ):
        verb = None
    if concession and re.search(r",\s+(?:and|but|so|which|while|because)\b", before[concession.end() :]):
        concession = None
    if concession and (verb is None or concession.end() >= verb.start()):
        side = "support"
        return (_flip(side) if contrast else side), 3
    # "X is a position we can live with" / "X is not a position we would defend": the side taken after the option.
    after = re.match(
        r"^[^,;]{0,40}?\b(?:we|i|our \w+|the science)\s+(?:can|could|will|would)\s+(?:\w+\s+)?"
        r"(?:live with|accept|support|back|defend|go along with)\b",
        main[mention.end :],
    )
    if verb is None and concession is None and after:
        side = "oppose" if re.search(r"\bnot\b|n't", after.group(0)) else "support"
        return side, 3
    if verb is not None:
        window = before[max(0, verb.start() - 40) : verb.start()]
        negated = bool(_NEGATION_RE.search(window)) and not re.search(r"\bnot only\b", window)
        side = verb_kind if not negated else _flip(verb_kind)
        if contrast and contrast.start() > verb.end():
            side = _flip(side)
        return side, 3
    # No explicit side: the clause's evaluation of the option. Each evaluative word speaks of the option named
    # nearest to it (so in "X gives us what Y never have", "never" is about Y), a strong one counting double.
    masked = main
    for other in sorted(mentions, key=lambda m: -m.start):
        for start, end in other.parts or ((other.start, other.end),):
            masked = masked[:start] + " " * (end - start) + masked[end:]
    anchors = sorted({(m.start, m.end, m.option) for m in mentions})
    score = 0.0
    doubted = _doubted(masked)
    for regex, weight in (
        (_STRONG_NEGATIVE_RE, -2.0), (_NEGATIVE_RE, -1.0), (_POSITIVE_RE, 1.0), (_STRONG_POSITIVE_RE, 2.0)
    ):  # fmt: skip
        for cue in regex.finditer(masked):
            window = masked[max(0, cue.start() - 30) : cue.start()]
            if re.search(
                r"\bmost $|\b(?:sources|products|goods|uses|people|countries) (?:that|which|who) $", window
            ) or (
                cue.group(0).endswith("ed")
                and re.match(r" (?:miners|women|children|people|families|workers)\b", masked[cue.end() :])
            ):
                continue  # "the most harmful products", "sources that harm", "poisoned miners": not about the option
            flipped = re.search(
                r"(?:(?<!should )(?<!must )(?<!would )(?<!will )(?<!could )(?<!can )(?<!need )(?<!does )(?<!do )\bnot|"
                r"\bno|\bnever|\bwithout|\bavoid\w*|\bspar\w*)\s+(?:\S+\s+)?$",
                window,
            ) or re.search(r"\b(?:than|instead of|not mean)\s+(?:\S+\s+){0,2}$", window)
            # "not enough", "without imposing costs", "no duty to help"; a negation itself is never turned round
            if flipped and not re.search(r"\bnot\b|cannot|n't", cue.group(0)):
                weight_here = -weight
            else:
                weight_here = weight
            if doubted[0] <= cue.start() < doubted[1]:
                weight_here = -weight_here  # "we are not convinced that X is the right tool"
            compared = _COMPARED.match(masked, cue.end())
            if compared:
                # "X is much better than Y", "X makes more sense than Y": the judgement is X's, and Y's the other way
                before_it = [a for a in anchors if a[1] <= cue.start()]
                after_it = [a for a in anchors if a[0] >= compared.end()]
                if before_it and before_it[-1][2] == mention.option:
                    score += weight_here
                elif after_it and after_it[0][2] == mention.option:
                    score -= weight_here
                continue
            nearest = _about(anchors, cue.start(), masked)
            if nearest[2] == mention.option:
                score += weight_here
    # "only X can" and "no excuse for leaving X out" back X.
    if re.search(r"\bno excuse\b", masked) or re.search(r"\bonly (?:\S+ ){0,2}$", before):
        score += 4.0
    if (
        abs(score) < 0.5
        and contrast
        and re.match(r",? ?(?:not|and not|but not|rather than|instead of)\b", contrast.group(0).strip())
        and any(m.start < mention.start and m.option != mention.option for m in mentions)
    ):
        return "oppose", 1  # "an agreement with teeth, not another round of promises"
    if (
        abs(score) < 0.5
        and mention.cue
        and (
            re.fullmatch(r"\W*(?:\S+\s+){0,4}", before)
            or re.search(r"\b(?:has to|have to|must|should|needs? to|ought to)\s+(?:\S+\s+)?$", before)
        )
    ):
        # A cue names a position ("keep the power plants out", "a treaty with teeth"): said plainly, in the
        # speaker's own voice and without a judgement, it is the speaker's when it opens the clause (a cue deep in
        # a clause is part of a description); "don't <cue>" is the opposite.
        if re.search(r"(?:\bdon't|\bdo not|\bnever|\bno)\s+$", before):
            return "oppose", 1
        return "support", 1
    if abs(score) < 0.5:
        if mention.start < 20 and re.match(
            r"^\S+(?: \S+){0,6} (?:would|could|will|can) ", main[mention.start :]
        ):
            return (
                "support",
                0,
            )  # "X would do this" with no judgement: backing only if a condition makes it so
        return None, 0
    side = "oppose" if score < 0 else "support"
    if contrast:
        side = _flip(side)
    return side, 1


def _doubted(text: str) -> tuple[int, int]:
    """The stretch of a clause whose judgements the speaker doubts ("we don't think it makes sense to ..."), up to
    the next break; (0, 0) when none is."""
    doubt = _DOUBT.search(text)
    if doubt is None:
        return 0, 0
    stop = _DOUBT_ENDS.search(text, doubt.end())
    return doubt.end(), (stop.start() if stop else len(text))


_DOUBT_ENDS = re.compile(r";|\b(?:while|because|since|but|and|as)\b")
# A judgement the speaker doubts.
_DOUBT = re.compile(
    r"\b(?:(?:do|does|did|am|is|are) not|don't|doesn't|didn't|isn't|aren't)\s+(?:really\s+|yet\s+|at all\s+)?"
    r"(?:think|believe|convinced|persuaded|sure|see (?:how|why))\b|\b(?:doubt|unconvinced|unpersuaded)\b"
)


def _about(anchors: list[tuple[int, int, str]], at: int, text: str) -> tuple[int, int, str]:
    """The option an evaluative word speaks of: the clause's subject when it opens the clause, unless the word
    follows another option set against it ("than X", "which X never", "without X"); else the nearest option."""
    subject = anchors[0] if anchors[0][0] < 20 else None
    if subject is not None:
        later = [a for a in anchors if a[2] != subject[2] and a[0] < at]
        for anchor in reversed(later):
            lead = text[max(0, anchor[0] - 25) : anchor[0]]
            if re.search(
                r"\b(?:than|rather than|instead of|without|what|which|whereas|while|not|something)\s+(?:\S+\s+){0,2}$",
                lead,
            ):
                return anchor
        return subject
    return min(anchors, key=lambda a: min(abs(at - a[1]), abs(at - a[0])))


def _flip(side: str) -> str:
    return "oppose" if side == "support" else "support"


def _settle(
    reading: Reading,
    ranks: dict[tuple[str, str, str], int],
    mixed: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Per option, the strongest reading wins; an option backed and opposed equally strongly is neither, except
    that opposed as it stands and accepted on a condition in two sentences ("we cannot accept X." … "we could
    accept X if Y were offered.") is both: the refusal and the price. Within an issue, backing for one option said
    outright outranks backing for another that was only implied."""
    options = sorted({(issue, option) for _, issue, option in ranks})
    won: dict[tuple[str, str], tuple[str, int]] = {}
    priced: list[tuple[str, str]] = []  # opposed as they stand, accepted on a condition
    for issue, option in options:
        kinds = {k: r for (k, i, o), r in ranks.items() if (i, o) == (issue, option)}
        top = max(kinds.values())
        best = [k for k, r in kinds.items() if r == top]
        if len(best) == 1:
            won[(issue, option)] = (best[0], top)
        elif "oppose" not in best:  # support and conditional support equally: the condition stands
            won[(issue, option)] = ("conditional", top)
        elif set(best) == {"oppose", "conditional"} and (issue, option) not in mixed:
            won[(issue, option)] = ("conditional", top)
            priced.append((issue, option))
    for issue, option in priced:
        reading.oppose.setdefault(issue, set()).add(option)
    for (issue, option), (kind, rank) in won.items():
        if kind != "oppose":
            rivals = [r for (i, o), (k, r) in won.items() if i == issue and o != option and k != "oppose"]
            if rivals and max(rivals) > rank:
                continue
        getattr(reading, kind).setdefault(issue, set()).add(option)


def _trade(
    lex: Lexicon, sentence: str, speaker: str | None, *, meaning: bool = False
) -> tuple[str, str] | None:
    # The listener, or in a student's words a seat named in its place ("if China comes round on X, we will back
    # Y", said to China; an AI delegation's "Canada supports X if China accepts Y" stays a conditional).
    others = (
        "|".join(f"(?:{p.pattern})" for role, p in lex.names.items() if role != speaker)
        if meaning
        else "(?!)"
    )
    you = rf"(?:you|your delegation|your government|your side|{others})"
    own = _own_pattern(lex, speaker)
    we = rf"(?:we|our delegation|i{'|' + own if own else ''})"
    modal = r"(?:will|would|shall|can|could|are ready to|are prepared to|promise to|commit to)"
    patterns = (
        rf"\b(?:if|should) {you} (?:will |would |can |could )?(?:(?:is|are) (?:willing|ready|prepared) to )?{_TRADE_VERB}\b(?P<want>[^,;]+?),?\s+(?:then\s+)?{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+){{0,2}}{_TRADE_VERB}\b(?P<promise>.+)",
        rf"\b{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+){{0,2}}{_TRADE_VERB}\b(?P<promise>[^,;]+?),?\s+(?:if|provided|as long as) {you} (?:will |would |can |also )?{_TRADE_VERB}\b(?P<want>.+)",
        rf"\b(?:in return for|in exchange for) your (?:support|vote)s? (?:for|on)\b(?P<want>[^,;]+?),?\s+{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+){{0,2}}{_TRADE_VERB}\b(?P<promise>.+)",
        rf"\b{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+){{0,2}}{_TRADE_VERB}\b(?P<promise>[^,;]+?),?\s+in (?:return|exchange) for your (?:support|vote)s? (?:for|on)\b(?P<want>.+)",
        rf"^\W*(?:[^:]{{0,20}}:\s*)?(?:(?:{others}),\s+)?(?:{you}\s+)?{_TRADE_VERB}\b(?P<want>[^,;]+?),?\s+and\s+{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+){{0,2}}{_TRADE_VERB}\b(?P<promise>.+)",
        # plain words: "help us on X and we will help you on Y"
        rf"^\W*(?:please\s+)?help us (?:on|with)\b(?P<want>[^,;]+?),?\s+and\s+{we}\s+(?:\w+\s+)?{modal}\s+help you (?:on|with)\b(?P<promise>.+)",
    )
    for pattern in patterns:
        m = re.search(pattern, sentence)
        if not m:
            continue
        # Each half up to a contrast: "we will back a list rather than a ban" promises the list.
        halves = [
            re.split(r"\b(?:rather than|instead of|but not|and not|not)\b", m[g])[0]
            for g in ("want", "promise")
        ]
        want = {x.option for x in _mentions(lex, halves[0], None) or _meant(lex, halves[0], meaning)}
        promise = {x.option for x in _mentions(lex, halves[1], None) or _meant(lex, halves[1], meaning)}
        if len(want) == 1 and len(promise) == 1 and want != promise:
            return next(iter(want)), next(iter(promise))
    return None
