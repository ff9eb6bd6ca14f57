"""One driver per game: a lease in the game's row, so two tabs, two connections or two server processes never
generate AI turns for the same game at once. A holder renews its lease each turn; when it dies the lease lapses
and the next page (or `play --resume`) takes over.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from simulations.models import Game


def new_holder() -> str:
    """An id naming this process and this driver instance (for the admin: who drives)."""
    return f"{socket.gethostname()[:20]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def acquire_lease(*, game_id: int, holder: str) -> bool:
    """Take or renew the lease; False while another live holder has it."""
    now = timezone.now()
    free = Q(driver_until__isnull=True) | Q(driver_until__lt=now) | Q(driver=holder)
    until = now + timedelta(seconds=settings.MERCURY_DRIVER_LEASE_SECONDS)
    return Game.objects.filter(free, pk=game_id).update(driver=holder, driver_until=until) == 1


def release_lease(*, game_id: int, holder: str) -> None:
    Game.objects.filter(pk=game_id, driver=holder).update(driver="", driver_until=None)


def lease_expires_in(*, game_id: int) -> float:
    until = Game.objects.filter(pk=game_id).values_list("driver_until", flat=True).first()
    return max(0.0, (until - timezone.now()).total_seconds()) if until else 0.0
