"""What a seat's model may put in the transcript: its own words, nothing that speaks for others or leaks its brief.

Models sometimes prefix their own name, write a line for the chair or another delegation, or echo transcript
headers. The seat's own label is dropped; any sentence voiced as someone else (in any of the label forms below:
"Japan (Chair):", "The Chair:", "[Japan]:", "Mr. Chairman:", "Delegate of Japan:", "United States (private):",
behind markdown, invisible or full-width characters) is removed with the rest of its line; so is any sentence
that quotes the seat's own confidential brief (a run of LEAK_RUN words of it, or a whole short red line). An
answer with nothing left is refused, so the turn is retried and nothing is stored.

The same `SeatScreen` screens streamed frames (`ScreenedStream`) sentence by sentence before they are relayed,
so a page never shows words the stored turn will not have.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator

from simulations.ai.gateway import ModelFailure
from simulations.kinds.negotiation.scenario import Scenario

# Voices that are never a delegation's own: the chair's office and the conversation's machinery.
OFFICES = ["Chair", "Chairman", "Chairwoman", "Chairperson", "President", "Presidency", "Secretariat",
           "Facilitator", "Moderator", "Rapporteur", "System", "Assistant", "User", "Narrator"]  # fmt: skip
# A run of this many words shared with the seat's confidential brief is a quotation of it, not a coincidence.
LEAK_RUN = 7
# Shorter brief items (a terse red line) leak when repeated whole, if they have at least this many words.
SHORT_ITEM_MIN = 4
# Sentences a seat's screen remembers the screening of, at most, and the longest it remembers (characters): at most
# about a megabyte a seat, nine seats a scenario, whatever a model writes.
SCREENED_KEPT, SCREENED_LONGEST = 2048, 500


def _label(names: list[str]) -> re.Pattern[str]:
    """A speaker label at the start of a sentence, in the forms models and students use to forge one."""
    alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return re.compile(
        r"^\s*(?:\[\d+\]\s*)?"  # a transcript number: "[12] Japan:"
        r"(?:(?:the|mr|mrs|ms|madam|madame|mister|dear|honou?rable)\.?\s+)*"  # "The Chair:", "Mr. Chairman:"
        r"(?:(?:distinguished\s+)?(?:delegat(?:e|ion)|representative|ambassador|minister|envoy|spokes\w+)"
        r"\s+(?:of|for|from)\s+(?:the\s+)?)?"  # "Delegate of Japan:"
        rf"[\[(]?\s*(?:{alternatives})\s*[\])]?"  # the name, maybe bracketed: "[Japan]:"
        r"(?:\s*\([^)\n]{0,40}\))?"  # a parenthetical: "(Chair)", "(private)", "(to China)"
        r"(?:\s+(?:delegation|delegate|representative|chair))?"  # "Japan delegation:"
        r"\s*[*_]*\s*:\s*",
        re.IGNORECASE,
    )


# Invisible characters (zero-width, bidi controls) and the markdown a label can hide behind.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_MARKUP = re.compile(r"^[\s>#*_~`|-]+|(?<=\w)[*_~`]+(?=\s*\)?\s*:)")
# Sentence ends, except after the titles that precede a label ("Mr. Chairman:").
_SENTENCE_END = re.compile(r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<=[.!?;])\s+")
_WORD = re.compile(r"[^\W_]+")


def _visible(line: str) -> str:
    """The text as a reader sees it: compatibility forms folded (full-width letters), invisible marks removed."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(_visible(text))]


def _runs(words: list[str], n: int) -> Iterator[tuple[str, ...]]:
    return (tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _strings(value: object, *, skip: str = "confidential_brief") -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != skip:
                yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _public_words(scenario: Scenario) -> list[list[str]]:
    """Every public text of the scenario (everything but the confidential briefs), as words."""
    memo = scenario.memo()
    found = memo.get("guard-public-words")
    if not isinstance(found, list):
        found = memo["guard-public-words"] = [_words(t) for t in _strings(scenario.model_dump())]
    return found


def _public_runs(scenario: Scenario, n: int = LEAK_RUN) -> set[tuple[str, ...]]:
    """Every run of `n` words found in some public text of the scenario (made once per length)."""
    memo = scenario.memo()
    key = f"guard-public-runs-{n}"
    found = memo.get(key)
    if not isinstance(found, set):
        found = memo[key] = {r for w in _public_words(scenario) for r in _runs(w, n)}
    return found


def public_phrase(scenario: Scenario, words: list[str]) -> bool:
    """Whether these words occur together in some public text of the scenario. One set of runs per length, not
    one per public text and question: a seat's screen asks this for each of its brief's short items."""
    return tuple(words) in _public_runs(scenario, len(words))


def _names_pattern(scenario: Scenario) -> re.Pattern[str]:
    """The scenario's public names: option and offer labels, issue titles, seats."""
    names = {o.label for i in scenario.issues for o in i.options} | {i.title for i in scenario.issues}
    names |= {o.label for o in scenario.offers} | {scenario.display_name(r) for r in scenario.role_ids}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n.strip())
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


class SeatScreen:
    """The screen for one seat: whose labels are others', and which word runs would quote its brief."""

    def __init__(self, scenario: Scenario, role: str) -> None:
        own_names = [role, scenario.display_name(role)]
        others = [
            n
            for r in [*scenario.role_ids, scenario.chair.id]
            if r != role
            for n in (r, scenario.display_name(r))
        ]
        self.own, self.other = _label(own_names), _label([*others, *OFFICES])
        self._screened: dict[str, tuple[str, bool]] = {}  # sentence -> its screening (see `sentence`)
        self.secret_runs: set[tuple[str, ...]] = set()
        # Short brief items that must not be quoted whole, by their length in words: a text's runs of each length
        # are made once for all the items of that length.
        self.short_items: dict[int, set[tuple[str, ...]]] = {}
        if role in scenario.role_ids:
            brief = scenario.role(role).confidential_brief
            public = _public_runs(scenario)
            names = _names_pattern(scenario)
            for item in [brief.interests, *brief.priorities, *brief.red_lines, *brief.can_trade]:
                # Only the brief's own words are secret: the scenario's names (options, offers, issues, seats)
                # split it into pieces, and a run also found in public text (arguments, talk lines, openings,
                # public briefs) is something the seat may say aloud.
                for piece in names.split(item):
                    words = _words(piece)
                    if len(words) >= LEAK_RUN:
                        self.secret_runs.update(r for r in _runs(words, LEAK_RUN) if r not in public)
                    elif len(words) >= SHORT_ITEM_MIN and not public_phrase(scenario, words):
                        self.short_items.setdefault(len(words), set()).add(tuple(words))

    def leaks(self, text: str) -> bool:
        words = _words(text)
        if any(run in self.secret_runs for run in _runs(words, LEAK_RUN)):
            return True
        return any(not items.isdisjoint(_runs(words, n)) for n, items in self.short_items.items())

    def sentence(self, raw: str) -> tuple[str, bool]:
        """One sentence: (what may be shown, whether the rest of its line is someone else's voice).

        Remembered: a streamed turn screens each sentence as it arrives (ScreenedStream) and `clean` screens the
        stored turn again, sentence by sentence; the screen never changes, so the second look is a lookup."""
        if len(raw) > SCREENED_LONGEST:
            return self._sentence(raw)
        found = self._screened.get(raw)
        if found is None:
            if len(self._screened) >= SCREENED_KEPT:
                self._screened.clear()  # a bound, not an LRU: a turn's sentences are looked up moments apart
            found = self._screened[raw] = self._sentence(raw)
        return found

    def _sentence(self, raw: str) -> tuple[str, bool]:
        raw = _visible(raw)
        probe = _MARKUP.sub("", raw)
        if self.other.match(probe):
            return "", True  # voiced as someone else: the rest of the line is theirs too
        if self.own.match(probe):
            raw = self.own.sub("", probe, count=1)
        if self.leaks(raw):
            return "", False
        return raw, False

    def line(self, raw: str) -> str | None:
        """A line with every sentence screened; None when nothing of it may be shown."""
        if _MARKUP.sub("", _visible(raw)).lstrip().startswith(("{", "<<")):
            return None  # an event or markup the model should not write
        kept: list[str] = []
        for part in _SENTENCE_END.split(raw):
            shown, muted = self.sentence(part)
            if muted:
                break
            if shown.strip():
                kept.append(shown.strip() if kept else shown.rstrip())
        return " ".join(kept) if kept else None


def seat_screen(scenario: Scenario, role: str) -> SeatScreen:
    """The seat's screen, built once per scenario and seat: building it reads every public text of the scenario
    (costly, and needed twice per AI turn), and it never changes."""
    memo = scenario.memo()
    key = f"guard-screen-{role}"
    found = memo.get(key)
    if not isinstance(found, SeatScreen):
        found = memo[key] = SeatScreen(scenario, role)
    return found


def clean(scenario: Scenario, role: str, text: str) -> str:
    screen = seat_screen(scenario, role)
    kept = [line for line in (screen.line(raw) for raw in text.splitlines()) if line is not None]
    cleaned = "\n".join(kept).strip()
    if not cleaned or screen.leaks(cleaned):  # a quotation split across lines: refuse the whole answer
        raise ModelFailure(ModelFailure.MALFORMED)
    return cleaned


class ScreenedStream:
    """Relays streamed words to `send` only after the seat's screen passed them: text is held until its sentence
    (or line) ends, then the sentence goes out screened exactly as `clean` will screen the stored turn."""

    def __init__(self, scenario: Scenario, role: str, send: Callable[[str], None]) -> None:
        self.screen, self.send = seat_screen(scenario, role), send
        self.restart()

    def restart(self) -> None:
        """The model call is retried: anything held belongs to the void attempt."""
        self.pending, self.muted, self.line_started = "", False, False
        self.searched = 0  # no boundary starts before this index of `pending` (see feed)

    def feed(self, chunk: str) -> None:
        self.pending += chunk
        while True:
            cut = self._boundary()
            if cut is None:
                # Any boundary still to come starts at or after the held text's trailing whitespace: the next
                # chunk's search starts there instead of at the start of the sentence (a chunk is often one word,
                # and searching the whole held sentence again for each was a twentieth of a worker's time).
                self.searched = len(self.pending.rstrip())
                return
            piece, sep = self.pending[: cut[0]], self.pending[cut[0] : cut[1]]
            self.pending = self.pending[cut[1] :]
            self.searched = 0
            self._emit(piece, sep)

    def _boundary(self) -> tuple[int, int] | None:
        newline = self.pending.find("\n", self.searched)
        end = _SENTENCE_END.search(self.pending, self.searched)  # its look-behinds still see the text before
        if end and (newline < 0 or end.start() < newline) and end.end() < len(self.pending):
            return end.start(), end.end()  # the whitespace after a sentence, once more text follows it
        if newline >= 0:
            return newline, newline + 1
        return None

    def _emit(self, piece: str, sep: str) -> None:
        new_line = "\n" in sep
        if not self.muted:
            if _MARKUP.sub("", _visible(piece)).lstrip().startswith(("{", "<<")) and not self.line_started:
                self.muted = True
            else:
                shown, self.muted = self.screen.sentence(piece)
                if shown.strip():
                    self.send(shown + sep)
                    self.line_started = not new_line
        if new_line:
            self.muted, self.line_started = False, False
