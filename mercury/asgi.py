"""ASGI entry point: HTTP through Django, websockets through Channels; on the embedded default, the background
workers that drive games run in this process too."""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
# Django must be set up before anything imports models (consumers do); what get_asgi_application does, with the
# handler that runs the middleware and the view in one thread (mercury/asgi_handler.py).
django.setup(set_prefix=False)

from mercury.asgi_handler import OneHopASGIHandler  # noqa: E402

django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import path, re_path  # noqa: E402

from mercury.asgi_guards import BodySizeLimit, SameOriginValidator  # noqa: E402
from mercury.cpu_placement import pin_to_one_cpu  # noqa: E402
from mercury.startup import hand_the_lock_over_sooner, keep_startup_objects_out_of_gc  # noqa: E402
from simulations.consumers import GameConsumer, NotFoundConsumer  # noqa: E402
from simulations.driving.embedded import EmbeddedWorkers  # noqa: E402
from simulations.room_consumer import ClassRoomConsumer  # noqa: E402

websocket_urlpatterns = [
    path("ws/games/<int:game_id>/", GameConsumer.as_asgi()),
    path("ws/classes/<int:session_id>/", ClassRoomConsumer.as_asgi()),
    re_path(r"", NotFoundConsumer.as_asgi()),  # any other path: a clean refusal, not an error
]

# EmbeddedWorkers: on the embedded default the server also runs the queue's workers (simulations/driving/tasks.py).
application = EmbeddedWorkers(
    ProtocolTypeRouter(
        {
            "http": BodySizeLimit(django_asgi_app),
            "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        }
    )
)
keep_startup_objects_out_of_gc(drives_games=settings.MERCURY_WORKERS == "embedded")
hand_the_lock_over_sooner(settings.MERCURY_SWITCH_INTERVAL_MS)
pin_to_one_cpu()  # a server process: its threads hand each other the GIL all the time (mercury/cpu_placement.py)
