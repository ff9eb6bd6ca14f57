"""What every request and every render of a committed turn pays to know who is asking: the session read and the
log-in's user (Django's SessionMiddleware and AuthenticationMiddleware, lazily), and a page's check that its
session is still valid (`broadcast.session_still_valid`).

    .venv/bin/python bench/auth_reads.py [--db sqlite|postgres] [--database-url URL] [--reads N] [--json FILE]

One process, a fresh database (a temporary SQLite file, or the PostgreSQL database named, dropped and created), one
logged-in session; then `--reads` times each of: a request's session and user (`auth.get_user` on a new
SessionStore for the key, as the middlewares do per request) and a page's session check, after a warm-up. Reports
µs per read (median of 5 blocks). MERCURY_BENCH_LIBRARY_WAY (bench/library_way.py) names another session engine
(sessions: cached_db, sessionsdb: db) or Django's ModelBackend in place of mercury/auth.py (auth);
bench/interleaved.py alternates two set-ups.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/bench_auth"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--database-url", default=DEFAULT_PG_URL, help="PostgreSQL only; dropped and created")
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    way = os.environ.get("MERCURY_BENCH_LIBRARY_WAY")
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.library_way" if way else "mercury.settings"
    os.environ |= {"MERCURY_DEBUG": "0", "MERCURY_SECRET_KEY": "bench-" + secrets.token_hex(32)}
    tmp = Path(tempfile.mkdtemp(prefix="mercury-auth-bench-"))
    if args.db == "postgres":
        from bench.http_games import fresh_postgres

        fresh_postgres(args.database_url)
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["MERCURY_SQLITE_PATH"] = str(tmp / "auth.sqlite3")
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.http import HttpRequest

    from simulations.services.pages.broadcast import session_still_valid

    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench", password="bench-password-1")
    engine = import_module(settings.SESSION_ENGINE)
    store = engine.SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    key = store.session_key
    assert key

    def request_user() -> None:
        request = HttpRequest()
        request.session = engine.SessionStore(key)
        assert get_user(request).is_authenticated

    def page_check() -> None:
        assert session_still_valid(key, user.pk)

    figures: dict[str, float] = {}
    for name, read in (("request_user_us", request_user), ("page_check_us", page_check)):
        for _ in range(200):
            read()
        blocks = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(args.reads // 5):
                read()
            blocks.append((time.perf_counter() - started) / (args.reads // 5) * 1e6)
        figures[name] = statistics.median(blocks)
    connections.close_all()
    report = {"db": args.db, "way": way or "", "note": args.note, "loadavg": os.getloadavg(), **figures}
    print(f"{args.db} {way or 'mercury'}: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
