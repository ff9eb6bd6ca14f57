"""A negotiation page's websocket updates send only the panels' regions that changed (presenters.render_update with
the consumer's `shown` memory). Played over a whole game, a page that applies every update as htmx does (each
region replaces the element with its id; a move's response replaces the panels whole) always shows exactly what a
full render of the game shows at that moment."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.utils.html import escape

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.presenters import game_context, render_update
from simulations.models import Game
from simulations.services.ledger.turns import create_game
from simulations.services.pages.region_memo import forget_all
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db

REGIONS = ("progress", "decided-slot", "actions", "support-slot", "outcomes-slot", "issue-slot", "talks-slot")


class _Regions(HTMLParser):
    """The outer HTML of every element whose id is a panel region (regions do not nest)."""

    VOID = {"input", "br", "img", "meta", "link", "hr"}

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=False)
        self.html, self.found = html, dict[str, str]()
        self.lines = [0]
        for line in html.splitlines(keepends=True):
            self.lines.append(self.lines[-1] + len(line))
        self.open: tuple[str, int, int] | None = None  # (region id, start offset, depth)
        self.depth = 0
        self.feed(html)

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        self.depth += 1
        region = dict(attrs).get("id")
        if self.open is None and region in REGIONS:
            self.open = (region, self._offset(), self.depth)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if self.open is not None and self.open[2] == self.depth:
            region, start, _ = self.open
            end = self.html.index(">", self._offset()) + 1
            self.found[region] = self.html[start:end]
            self.open = None
        self.depth -= 1


def _regions(html: str) -> dict[str, str]:
    return _Regions(html).found


def _same_page(html: str) -> str:
    """What the student sees: without the swap instructions, the versions regions carry for the page's check,
    and the one-render idempotency key."""
    html = html.replace(' hx-swap-oob="outerHTML"', "")
    html = re.sub(r'(<(?:div|details) class="[^"]*" id="[\w-]+"[^>]*?) data-version="\d+"', r"\1", html)
    return re.sub(r'name="idem" value="\w+"', 'name="idem" value=""', html)


def _full(game: Game) -> dict[str, str]:
    """A full render with no kept region (services/pages/region_memo.py): what the game shows, rendered afresh."""
    forget_all()
    html, _ = render_update(game, since_seq=game.version, full=True)
    return _regions(html)


def test_partial_updates_always_leave_the_page_as_a_full_render_would() -> None:
    game = create_game(scenario_version=mercury_version(), seed=4)
    shown: dict[str, str] = {}
    page: dict[str, str] = {}
    counts = {"full": 0, "partial": 0, "left_out": 0, "decided": 0, "decided_in_dialog": 0, "placement": 0}
    counts |= {"moves": 0, "posted": 0}
    offered: list[int] = []  # the version of the last update that offered the student a move

    def update(played: Game, what: str) -> None:
        played = Game.objects.select_related("scenario").get(pk=played.pk)
        knew = bool(shown)
        moved = bool(offered) and played.version > offered[-1]  # the student's move is committed
        offered.clear()
        counts["moves"] += moved
        # Most moves go over the page's websocket; every third is posted (a socket not yet open), as a page can.
        if moved and counts["moves"] % 3 == 0:
            counts["posted"] += (
                1  # the student's move was posted: its answer redrew the panels whole (pages.move)
            )
            page.update(_full(played))
            shown.clear()  # what the consumer does on broadcast.notify_panels_drawn
            knew = False
        html, _ = render_update(played, since_seq=played.version, full=False, shown=shown)
        sent = _regions(html)
        assert knew or 'id="panels"' in html  # nothing known of the page: the panels whole
        # Every update remembers the page, one that offers a move too: a move sent over the socket redraws nothing
        # itself, so the update after it sends only what changed.
        assert shown and (not knew or 'id="panels"' not in html)
        if "event" in game_context(played)["action"]:
            offered.append(played.version)
        counts["full" if 'id="panels"' in html else "partial"] += 1
        counts["left_out"] += len(REGIONS) - len(sent)
        if 'id="panels"' not in html:  # each region carries the version the page's check compares
            for part in sent.values():
                assert f'data-version="{played.version}"' in part and 'hx-swap-oob="outerHTML"' in part
            assert list(sent)[-1] == "actions"  # the move last: the page takes the panels' version from it
        page.update(sent)
        fresh = _full(played)
        assert set(page) == set(REGIONS) == set(fresh)
        for region in REGIONS:
            assert _same_page(page[region]) == _same_page(fresh[region]), (played.version, what, region)
        context = game_context(played)
        # The dialog opens by itself when the student places a speech, and the progress card names the
        # issue on the table (both read a value of their own, not `action` and `issue` whole: kept regions).
        placing = context["action"]["kind"] == "placement"
        assert ("data-autoshow" in page["issue-slot"]) == placing, (played.version, what)
        counts["placement"] += placing
        if context["issue"]:
            assert f"On the table: <strong>{escape(context['issue']['title'])}</strong>" in page["progress"]
        else:
            assert "On the table" not in page["progress"]
        decided = context["just_decided"]
        if decided:  # the vote just decided is told in its own card and atop the dialog alike
            told = escape(
                f"The vote on issue {decided['number']} ({decided['title']}) is over: {decided['proposal']} "
            )
            assert told in fresh["decided-slot"], (played.version, what)
            assert 'id="issue-modal"' not in fresh["issue-slot"] or told in fresh["issue-slot"], (
                played.version,
                what,
            )
            counts["decided"] += 1
            counts["decided_in_dialog"] += told in fresh["issue-slot"]

    play_game(game_id=game.pk, policy=make_policy("advocate", "CHN"), on_progress=update)
    assert counts["partial"] > 50 and counts["full"] > 10 and counts["decided_in_dialog"] > 0, counts
    assert counts["placement"] > 0 and counts["posted"] > 5 and counts["moves"] > 3 * counts["posted"] - 3, (
        counts
    )
    assert counts["left_out"] > 3 * counts["partial"], counts  # most regions stay as they were, most turns
