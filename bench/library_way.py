"""Settings for measuring a hand-written module against the library's way (issue #65): Mercury's settings with the
modules named in MERCURY_BENCH_LIBRARY_WAY (comma-separated) replaced by what Django, Channels or channels_redis
ship. bench/http_games.py and bench/load.py use this module as DJANGO_SETTINGS_MODULE when the variable is set, so
an interleaved run (A, B, A, B ...) differs in that variable alone.

    pool       Django's SQLite back-end, which pools nothing, in place of mercury/db/pool.py's (PostgreSQL runs on
               Django's pool either way)
    sessions   Django's `cached_db` session engine; sessionsdb: its `db` engine (the set-up decides otherwise)
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

if "pool" in WAY and DATABASES["default"]["ENGINE"] == "mercury.db.sqlite3":
    DATABASES["default"]["ENGINE"] = "django.db.backends.sqlite3"
    DATABASES["default"].pop("POOL_SIZE", None)

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

    rows  the ORM in place of simulations/services/ledger/rows.py's statements built once: `bulk_create`,
          `QuerySet.update`, `filter().count()`, `get`, `filter().values_list()` (every module holding one of
          rows.py's functions gets the ORM's instead)
    """
    if "rows" not in WAY:
        return
    import sys
    from types import ModuleType

    from django.db.models import Model

    from simulations.services.ledger import rows

    def insert_rows(objs: Any) -> None:
        if objs:
            type(objs[0])._default_manager.bulk_create(objs)

    # QuerySet.update, not save(update_fields=): a model's own save may call update_row.
    def update_row(obj: Model, names: Any) -> None:
        fields = [obj._meta.get_field(name) for name in names]
        values = {f.attname: f.pre_save(obj, False) for f in fields}  # type: ignore[union-attr]
        if type(obj)._base_manager.filter(pk=obj.pk).update(**values) != 1:
            raise LookupError(f"{type(obj).__name__} {obj.pk}: no row to update")

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
