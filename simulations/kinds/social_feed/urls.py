"""The social feed's own URL (included under social_feed/ by mercury/urls.py): the set-up form, which creates the
run. Everything else goes through the shared game, move, review and download URLs."""

from __future__ import annotations

from django.urls import path

from . import pages

urlpatterns = [
    path("new/<int:version_id>/", pages.setup, name="social_feed_setup"),
]
