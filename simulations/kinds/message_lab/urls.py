"""Message Lab's own URL (included under message_lab/ by mercury/urls.py): the set-up form, which creates the
simulation. Everything else goes through the shared game, move, review and download URLs."""

from __future__ import annotations

from django.urls import path

from . import pages

urlpatterns = [
    path("new/<int:version_id>/", pages.setup, name="message_lab_setup"),
]
