"""What a name-only student may reach (services/people/class_sessions.join_as_guest): their class session's
waiting page and their games in it, nothing else. Everywhere else they are sent back to the waiting page (a page)
or refused (anything else). The views behind the allowed paths check the rest as for anyone: only their own games
open, only their session's pages."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.shortcuts import redirect

from simulations.kinds import all_kinds
from simulations.services.people.class_sessions import guest_session

# Their games (and their reviews and downloads), the join page, logging out, static files and the kinds' own pages
# (the set-up form a class's game may start from); not `/games/new/` (the lobby's new game), the lobby, the
# admin, other sessions.
ALLOWED = re.compile(
    r"^/(games/\d+/|join/|accounts/logout/|static/|favicon\.ico"
    + "".join(f"|{re.escape(kind.name)}/" for kind in all_kinds())
    + ")"
)


class GuestScope:
    """Middleware, after authentication: a name-only student stays inside their class session."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session_id = guest_session(request.user)  # no query but for a name-only student's account
        if session_id is None:
            return self.get_response(request)
        own = f"/classes/{session_id}/"
        if request.path.startswith((own + "wait/", own + "play/")) or ALLOWED.match(request.path):
            return self.get_response(request)
        if request.method == "GET":
            return redirect("class_wait", session_id=session_id)
        return HttpResponseNotFound("Not part of your class session.")
