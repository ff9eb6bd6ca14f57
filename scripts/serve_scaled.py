"""The scaled set-up on one machine (`make serve-scaled`): PostgreSQL, Redis, N web processes and M workers.

    .venv/bin/python scripts/serve_scaled.py [--web N] [--workers M] [--bind HOST:PORT] [--prepare-only]

1. Reads DATABASE_URL (default postgres://postgres@127.0.0.1:5432/mercury) and REDIS_URL (default
   redis://127.0.0.1:6379/0) and stops with what to do if either is not reachable.
2. Creates the database if it does not exist (its server must let this user create one), migrates, loads every
   scenario under scenarios/ and collects static files.
3. Runs the Procfile under honcho: one gunicorn with N uvicorn processes on one port (`web`) and M
   `manage.py db_worker` processes (`worker`), with MERCURY_WORKERS=external, DEBUG off and a secret key from
   MERCURY_SECRET_KEY or, failing that, from `.secret-key` (made once, readable by its owner only, never
   committed). Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/mercury"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


def secret_key() -> str:
    key = os.environ.get("MERCURY_SECRET_KEY", "")
    if key:
        return key
    path = ROOT / ".secret-key"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(64) + "\n")
    return path.read_text().strip()


def reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), timeout=3
        ):
            return True
    except OSError:
        return False


def ensure_database(url: str) -> None:
    """CREATE DATABASE when the named one is missing (connecting to the server's `postgres` database)."""
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([str(BIN / "python"), "manage.py", *args], cwd=ROOT, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--web", type=int, default=int(os.environ.get("MERCURY_WEB_PROCESSES", "2")))
    parser.add_argument("--workers", type=int, default=int(os.environ.get("MERCURY_WORKER_PROCESSES", "2")))
    parser.add_argument("--bind", default=os.environ.get("MERCURY_BIND", "127.0.0.1:8000"))
    parser.add_argument(
        "--prepare-only", action="store_true", help="set up the database and files, then stop"
    )
    args = parser.parse_args(argv)

    database = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE
    redis = os.environ.get("REDIS_URL") or DEFAULT_REDIS
    if not database.startswith(("postgres://", "postgresql://")):
        print(f"DATABASE_URL must name a PostgreSQL database for the scaled set-up, not {database}")
        return 2
    if not reachable(database, 5432):
        print(
            f"PostgreSQL is not reachable at {database}. Start it (Debian: pg_ctlcluster 15 main start) or set DATABASE_URL."
        )
        return 1
    if not reachable(redis, 6379):
        print(
            f"Redis is not reachable at {redis}. Start it (Debian: redis-server --daemonize yes) or set REDIS_URL."
        )
        return 1
    env = os.environ | {
        "DATABASE_URL": database,
        "REDIS_URL": redis,
        "MERCURY_WORKERS": "external",
        "MERCURY_DEBUG": os.environ.get("MERCURY_DEBUG", "false"),
        "MERCURY_SECRET_KEY": secret_key(),
        "MERCURY_WEB_PROCESSES": str(args.web),
        "MERCURY_BIND": args.bind,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # the Procfile's gunicorn and python
    }
    ensure_database(database)
    manage("migrate", "--noinput", env=env)
    for folder in sorted(p for p in (ROOT / "scenarios").iterdir() if p.is_dir()):
        manage("load_scenario", str(folder), env=env)
    manage("collectstatic", "--noinput", "--verbosity", "0", env=env)
    if args.prepare_only:
        return 0
    print(
        f"serving http://{args.bind} with {args.web} web processes and {args.workers} workers (Ctrl-C stops)"
    )
    honcho = [str(BIN / "honcho"), "-f", "Procfile", "start", "-c", f"web=1,worker={args.workers}"]
    return subprocess.run(honcho, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
