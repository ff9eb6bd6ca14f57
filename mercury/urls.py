from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from simulations.kinds import all_kinds
from simulations.views import accounts, classes, health, lobby, play, review


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask for /favicon.ico whatever the page links: send them to the icon (a temporary redirect, as the
    static file's address changes with its content in production)."""
    return HttpResponseRedirect(static("mercury/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/logout/", accounts.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("", lobby.lobby, name="lobby"),
    path("healthz", health.health, name="health"),
    path("games/new/", lobby.new_game, name="new_game"),
    path("games/<int:game_id>/", play.game_page, name="game"),
    path("games/<int:game_id>/move/", play.move, name="move"),
    path("games/<int:game_id>/review/", review.review, name="review"),
    path("games/<int:game_id>/share/", review.share, name="share"),
    path("games/<int:game_id>/unshare/", review.unshare, name="unshare"),
    path("games/<int:game_id>/export.<str:fmt>", review.download, name="download"),
    path("classes/", classes.session_list, name="class_list"),
    path("classes/new/", classes.session_new, name="class_new"),
    path("classes/<int:session_id>/", classes.room, name="class_room"),
    path("classes/<int:session_id>/roster/", classes.roster, name="class_roster"),
    path("classes/<int:session_id>/start/", classes.start, name="class_start"),
    path("classes/<int:session_id>/end/", classes.end, name="class_end"),
    path("classes/<int:session_id>/pause/", classes.pause, name="class_pause"),
    path("classes/<int:session_id>/resume/", classes.resume, name="class_resume"),
    path("classes/<int:session_id>/games/<int:game_id>/pause/", classes.pause, name="class_game_pause"),
    path("classes/<int:session_id>/games/<int:game_id>/resume/", classes.resume, name="class_game_resume"),
    path(
        "classes/<int:session_id>/games/<int:game_id>/seats/<str:seat>/stand-in/",
        classes.stand_in,
        name="class_seat_stand_in",
    ),
    path("classes/<int:session_id>/results.csv", classes.results, name="class_results"),
    path("classes/<int:session_id>/results/", classes.results_page, name="class_results_page"),
    path("classes/<int:session_id>/notice/", classes.notice, name="class_notice"),
    path("classes/<int:session_id>/class-results/", classes.shared_results, name="class_shared_results"),
    path(
        "classes/<int:session_id>/results-by-game.csv", classes.results_by_game, name="class_results_by_game"
    ),
    path("classes/<int:session_id>/games.zip", classes.games_zip, name="class_games_zip"),
    path(
        "classes/<int:session_id>/guests/<int:guest_id>/return-code/",
        classes.guest_return_code,
        name="class_guest_return_code",
    ),
    path("classes/<int:session_id>/wait/", classes.wait, name="class_wait"),
    path("classes/<int:session_id>/play/", classes.play, name="class_play"),
    path("classes/<int:session_id>/seat/", classes.choose_seat, name="class_choose_seat"),
    path("join/", classes.join, name="class_join"),
    path("join/<str:code>/", classes.join, name="class_join_code"),
    path("shared/", review.shared_entry, name="shared_entry"),
    path("shared/<str:token>/", review.shared_review, name="shared_review"),  # links made before the fragment
    # A kind's own pages (e.g. a deliberation's set-up form) live under /<kind>/ (`Kind.pages.urlpatterns`).
    *(
        path(f"{kind.name}/", include(list(kind.pages.urlpatterns)))
        for kind in all_kinds()
        if kind.pages.urlpatterns
    ),
]
