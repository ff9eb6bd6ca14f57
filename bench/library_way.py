"""Settings for measuring a hand-written module against the library's way (issue #65): Mercury's settings with the
modules named in MERCURY_BENCH_LIBRARY_WAY (comma-separated) replaced by what Django, Channels or channels_redis
ship. bench/http_games.py and bench/load.py use this module as DJANGO_SETTINGS_MODULE when the variable is set, so
an interleaved run (A, B, A, B ...) differs in that variable alone.

    pool       Django's own back-ends; on PostgreSQL its pool (OPTIONS {"pool": ...}, psycopg_pool), capped as
               Mercury's is (max_size = the process's connection limit); on SQLite none (Django has none there)
    sessions   Django's `cached_db` session engine (mercury/sessions.py); sessionsdb: its `db` engine
    auth       Django's ModelBackend (mercury/auth.py)
    layer      channels_redis's RedisChannelLayer as shipped, or Channels' InMemoryChannelLayer
    asgi       Django's ASGIHandler (read by bench/http_server.py, which swaps it in before mercury.asgi loads)
    rows       the ORM's bulk_create and save (`apply`, called by the benchmarks once Django is set up)
"""

from __future__ import annotations

import os
from typing import Any

from mercury.settings import *  # noqa: F403
from mercury.settings import AUTHENTICATION_BACKENDS, CHANNEL_LAYERS, DATABASES

WAY = {w.strip() for w in os.environ.get("MERCURY_BENCH_LIBRARY_WAY", "").split(",") if w.strip()}

if "pool" in WAY:
    _db = DATABASES["default"]
    _limit = int(_db.pop("MAX_CONNECTIONS", 0) or 0)  # type: ignore[call-overload]
    _size = int(_db.pop("POOL_SIZE", 0) or 0)  # type: ignore[call-overload]
    if _db["ENGINE"] == "mercury.db.postgresql":
        _db["ENGINE"] = "django.db.backends.postgresql"
        # min_size: as many idle as Mercury keeps open; max_size: its cap (threads past it wait, as with Mercury's).
        _db["OPTIONS"] = {**_db.get("OPTIONS", {}), "pool": {"min_size": 2, "max_size": _limit or _size or 8}}  # type: ignore[dict-item]
        _db["CONN_MAX_AGE"] = 0
    else:
        _db["ENGINE"] = "django.db.backends.sqlite3"

if "sessions" in WAY:
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
if "sessionsdb" in WAY:
    SESSION_ENGINE = "django.contrib.sessions.backends.db"

if "auth" in WAY:
    AUTHENTICATION_BACKENDS[:] = ["django.contrib.auth.backends.ModelBackend"]

if "layer" in WAY:
    _layer = CHANNEL_LAYERS["default"]
    if _layer["BACKEND"] == "mercury.channel_layer.LocalChannelLayer":
        _layer["BACKEND"] = "channels.layers.InMemoryChannelLayer"
    else:
        _layer["BACKEND"] = "channels_redis.core.RedisChannelLayer"


def apply() -> None:
    """After django.setup(): the ways that replace functions rather than settings.

    rows  the ORM in place of simulations/services/rows.py's statements built once: `bulk_create`,
          `save(update_fields=...)`, `filter().count()`, `get`, `filter().values_list()` (every module holding one
          of rows.py's functions gets the ORM's instead)
    """
    if "rows" not in WAY:
        return
    import sys
    from types import ModuleType

    from django.db.models import Model

    from simulations.services import rows

    def insert_rows(objs: Any) -> None:
        if objs:
            type(objs[0])._default_manager.bulk_create(objs)

    def update_row(obj: Model, names: Any) -> None:
        obj.save(update_fields=list(names))

    def count_rows(model: type[Model], **equal: Any) -> int:
        return model._default_manager.filter(**equal).count()

    def row_by_pk(model: type[Model], pk: Any) -> Any:
        try:
            return model._default_manager.get(pk=pk)
        except (model.DoesNotExist, ValueError, TypeError):  # type: ignore[attr-defined]
            return None

    def columns_by_pk(model: type[Model], names: Any, pk: Any) -> Any:
        return model._default_manager.filter(pk=pk).values_list(*names).first()

    def rows_after(model: type[Model], names: Any, *, game_id: int, after: int) -> list[tuple[Any, ...]]:
        found = model._default_manager.filter(game_id=game_id, seq__gt=after).order_by("seq")
        return list(found.values_list(*names))

    swaps = {
        id(getattr(rows, name)): fn
        for name, fn in (
            ("insert_rows", insert_rows), ("update_row", update_row), ("count_rows", count_rows),
            ("row_by_pk", row_by_pk), ("columns_by_pk", columns_by_pk), ("rows_after", rows_after),
        )
    }  # fmt: skip
    for module in list(sys.modules.values()):
        if isinstance(module, ModuleType) and module.__name__.startswith(("simulations", "mercury")):
            for name, value in list(vars(module).items()):
                if id(value) in swaps:
                    setattr(module, name, swaps[id(value)])
