"""Mercury settings: one module, read from the environment, with embedded defaults (see .env.example).

Defaults need nothing installed: SQLite in WAL mode, the in-memory channel layer and the built-in offline model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# litellm fetches a price map from the internet on import unless told not to; this must precede any import of it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in ("1", "true", "yes", "on")


def env_json(name: str) -> dict[str, object]:
    """A JSON object from the environment (empty when unset); a malformed value stops start-up with its name."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"{name} must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise RuntimeError(f"{name} must be a JSON object, not {type(value).__name__}")
    return value


# Local use (`make serve`: localhost only) may run with DEBUG; any other host, or MERCURY_PRODUCTION, turns DEBUG
# off whatever MERCURY_DEBUG says and refuses to start without a real secret key (fail closed, never open).
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
DEV_SECRET_KEY = "insecure-development-key-only-for-local-use"  # noqa: S105 - refused outside local DEBUG
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("MERCURY_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()
]
PRODUCTION = env_bool("MERCURY_PRODUCTION", False) or not set(ALLOWED_HOSTS) <= LOCAL_HOSTS
DEBUG = env_bool("MERCURY_DEBUG", True) and not PRODUCTION


def real_secret_key(key: str) -> bool:
    """Django's own bar (check --deploy, security.W009): long, varied, not a generated insecure one."""
    return (
        len(key) >= 50
        and len(set(key)) >= 5
        and key != DEV_SECRET_KEY
        and not key.startswith("django-insecure-")
    )


SECRET_KEY = os.environ.get("MERCURY_SECRET_KEY", "")
if PRODUCTION and not real_secret_key(SECRET_KEY):
    raise RuntimeError(
        "MERCURY_SECRET_KEY must be set to a random value of at least 50 characters for a server others reach "
        f"(MERCURY_PRODUCTION or a non-local host: {','.join(ALLOWED_HOSTS)}). Generate one with: python -c "
        '"import secrets; print(secrets.token_urlsafe(64))"'
    )
if not DEBUG and not SECRET_KEY:  # a local run without DEBUG (benchmarks) still needs a key of its own
    raise RuntimeError("MERCURY_SECRET_KEY must be set when MERCURY_DEBUG is off")
SECRET_KEY = SECRET_KEY or DEV_SECRET_KEY

# HTTPS: on by default in production (a local run without DEBUG, e.g. a benchmark, stays plain HTTP); each can
# be turned off for a deployment that knows why.
SESSION_COOKIE_SECURE = env_bool("MERCURY_SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("MERCURY_SSL_REDIRECT", PRODUCTION)
SECURE_HSTS_SECONDS = int(os.environ.get("MERCURY_HSTS_SECONDS", "31536000" if PRODUCTION else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("MERCURY_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("MERCURY_HSTS_PRELOAD", PRODUCTION)
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients): trust it, or every
# request looks like plain HTTP (redirect loops, and CSRF refusing every POST).
if env_bool("MERCURY_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Origins allowed to POST (scheme and host); default in production: https:// for every named allowed host.
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("MERCURY_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
] or (
    [f"https://{h.lstrip('.')}" for h in ALLOWED_HOSTS if "*" not in h and h not in LOCAL_HOSTS]
    if PRODUCTION
    else []
)
# Scripts, styles and connections from this site only; no inline script, no framing, no plugins.
MERCURY_CSP = os.environ.get(
    "MERCURY_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)

# The simulation kinds this server plays: each is a folder simulations/kinds/<name>/ and a Django app (for its
# management commands); the platform reaches them only through the registry in simulations/kinds/__init__.py.
MERCURY_KINDS = ("negotiation", "deliberation", "message_lab", "roleplay", "social_feed")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "django_tasks",
    "django_tasks_db",
    "simulations",
    *(f"simulations.kinds.{kind}" for kind in MERCURY_KINDS),
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from this process, compressed and cached (collectstatic fills STATIC_ROOT); no proxy needed.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "mercury.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "simulations.views.guests.GuestScope",  # a name-only class student reaches only their session
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "mercury.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    },
    {
        # The fragments a game page's update renders after every turn (simulations/services/pages/fragments.py).
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        # The stream box (templates/jinja2/game/_stream.html) too: every streamed frame is rendered in the server's
        # event loop, where Django's template language was a visible share of its time.
        "DIRS": [
            BASE_DIR / "templates" / "jinja2",
            BASE_DIR / "simulations" / "kinds" / "negotiation" / "jinja2",
        ],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "simulations.services.pages.fragments.environment"},
    },
]
ASGI_APPLICATION = "mercury.asgi.application"


# SQLite: idle connections kept for the next thread (mercury/db/pool.py): requests, consumers and workers each
# close theirs after every call, and a closed connection goes back to the pool instead of being closed. 0: no pool.
DB_POOL_SIZE = int(os.environ.get("MERCURY_DB_POOL_SIZE", "8"))


# Connections a process opens at most on PostgreSQL, by what it does (see `_database`; docs/deploying.md: "Running
# Mercury for a school"). The scaled set-up's defaults, 2 web processes and 2 workers, open at most 80 of PostgreSQL's 100.
WEB_DB_MAX_CONNECTIONS = 10
WORKER_DB_MAX_CONNECTIONS = int(os.environ.get("MERCURY_WORKER_DB_MAX_CONNECTIONS") or 30)
DB_POOL_WAIT = 30.0  # seconds a thread waits for a connection when all a process may open are in use


def _database() -> dict[str, object]:
    url = os.environ.get("DATABASE_URL", "")
    if url:
        import dj_database_url

        database = dict(dj_database_url.parse(url))
        if database["ENGINE"] == "django.db.backends.sqlite3":
            return database | {"ENGINE": "mercury.db.sqlite3", "POOL_SIZE": DB_POOL_SIZE}
        if "postgresql" not in str(database["ENGINE"]):
            return database
        # Django's pool (psycopg_pool): a thread that closes its connection (requests, consumers and workers each
        # do after every call; model calls run in threads of their own) gives it back to the process's pool, and
        # a process opens at most `max_size`, a thread that needs one more waiting for one to come back:
        # PostgreSQL refuses clients past its max_connections (100 by default), and a school's web and worker
        # processes together must stay under it. A process that drives games needs more than one that only
        # serves pages (`drive_worker` raises its own to MERCURY_WORKER_DB_MAX_CONNECTIONS,
        # mercury.db.pool.limit_connections): too few, and a worker's drive threads queue for a connection after
        # each model call while games go silent.
        drives = os.environ.get("MERCURY_WORKERS", "embedded").strip().lower() == "embedded"
        default = WORKER_DB_MAX_CONNECTIONS if drives else WEB_DB_MAX_CONNECTIONS
        limit = int(os.environ.get("MERCURY_DB_MAX_CONNECTIONS") or default)
        pool = {"min_size": 2, "max_size": limit, "timeout": DB_POOL_WAIT}
        return database | {"OPTIONS": {**database.get("OPTIONS", {}), "pool": pool}}  # type: ignore[dict-item]
    return {
        "ENGINE": "mercury.db.sqlite3",
        "POOL_SIZE": DB_POOL_SIZE,
        "NAME": os.environ.get("MERCURY_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
        # IMMEDIATE takes the write lock at BEGIN, so two writers queue instead of failing mid-transaction;
        # WAL lets readers carry on while a turn commits.
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # A file (Channels' live server and async tests need one), per process so concurrent runs never collide.
        "TEST": {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")},
    }


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_redis = os.environ.get("REDIS_URL", "")
# A page's consumer waits on Redis with a blocking pop of up to 5 s (channels_redis's brpop_timeout); redis-py 8
# gives every socket read a 5 s time-out by default, which that wait can reach: an idle page's socket then broke
# (issue #16's multi-process test found it). Reads may take longer than the pop; a dead Redis still fails them.
REDIS_SOCKET_TIMEOUT = float(os.environ.get("MERCURY_REDIS_SOCKET_TIMEOUT", "20"))
# The channel layer: channels_redis's, reading a server process's messages off Redis many at a time
# (mercury/channel_layer.py; channels_redis reads one per four round trips, and under load streamed words waited
# seconds in Redis). MERCURY_CHANNEL_LAYER names another: channels_redis.core.RedisChannelLayer (as shipped) or
# channels_redis.pubsub.RedisPubSubChannelLayer (Redis pub/sub); figures in docs/benchmarks.md ("Load").
CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": os.environ.get(
                "MERCURY_CHANNEL_LAYER", "mercury.channel_layer.BatchedRedisChannelLayer"
            ),
            "CONFIG": {"hosts": [{"address": _redis, "socket_timeout": REDIS_SOCKET_TIMEOUT}]},
        }
        if _redis
        else {"BACKEND": "mercury.channel_layer.LocalChannelLayer"}
    )
}

# Background work (the game driver) is a django-tasks queue kept in the database: no broker to run.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# A Redis cache (rate limits, judge-call claims) shared by every process; unset: each process has its own.
# Use its own Redis database (e.g. redis://host:6379/1): clearing the cache flushes that database.
_cache = os.environ.get("MERCURY_CACHE_URL", "")
if _cache:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache}}
# Django's database sessions, read through the cache where every process that reads them shares it (the cache named
# above, or one server process: no Redis, no second one): every request and every page's render of a committed turn
# reads its session. A cache of each process's own in a set-up of several would keep a session alive in the others
# after a log-out in one, so they read the database.
SESSION_ENGINE = "django.contrib.sessions.backends." + ("cached_db" if _cache or not _redis else "db")

# Django's ModelBackend with the user's row read by a statement built once (mercury/auth.py).
AUTHENTICATION_BACKENDS = ["mercury.auth.UserRowBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise: a production process serves STATIC_ROOT (run `collectstatic`); a local one (tests, `make serve`, a
# benchmark without DEBUG) serves the source folders as they are, with no collectstatic step.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION

# --- Mercury ------------------------------------------------------------------------------------------------
# Any litellm model string; "mercury-offline/default" is the built-in deterministic offline provider.
MERCURY_MODEL = os.environ.get("MERCURY_MODEL", "mercury-offline/default")
MERCURY_OFFLINE_TOKEN_DELAY = float(os.environ.get("MERCURY_OFFLINE_TOKEN_DELAY", "0.02"))
# Seconds the offline model waits before each answer, as a real model takes time to answer (0: at once). For
# benchmarks that simulate model latency (bench/message_lab.py) and for demonstrating a slow model in class.
MERCURY_OFFLINE_CALL_LATENCY = float(os.environ.get("MERCURY_OFFLINE_CALL_LATENCY", "0"))
MERCURY_MODEL_API_BASE = os.environ.get("MERCURY_MODEL_API_BASE", "")  # e.g. http://127.0.0.1:11434/v1
MERCURY_MODEL_API_KEY = os.environ.get("MERCURY_MODEL_API_KEY", "")  # optional where the server needs none
MERCURY_MODEL_KWARGS = env_json("MERCURY_MODEL_KWARGS")  # anything else litellm.completion accepts
MERCURY_JUDGE_MODEL = os.environ.get("MERCURY_JUDGE_MODEL", "")  # empty: the judge uses MERCURY_MODEL
MERCURY_JUDGE_API_BASE = os.environ.get("MERCURY_JUDGE_API_BASE", "")
MERCURY_JUDGE_API_KEY = os.environ.get("MERCURY_JUDGE_API_KEY", "")
MERCURY_JUDGE_KWARGS = env_json("MERCURY_JUDGE_KWARGS")
MERCURY_MODEL_TIMEOUT = float(os.environ.get("MERCURY_MODEL_TIMEOUT", "60"))
MERCURY_MODEL_RETRIES = int(os.environ.get("MERCURY_MODEL_RETRIES", "2"))
MERCURY_MAX_TOKENS_PER_GAME = int(os.environ.get("MERCURY_MAX_TOKENS_PER_GAME", "0"))  # 0: no limit
MERCURY_RATE_MOVES_PER_MINUTE = int(os.environ.get("MERCURY_RATE_MOVES_PER_MINUTE", "120"))  # 0: no limit
MERCURY_RATE_GAMES_PER_HOUR = int(os.environ.get("MERCURY_RATE_GAMES_PER_HOUR", "30"))  # 0: no limit
# The work a run set up from the web may ask for (simulations/services/play/work_budget.py), estimated before it starts:
# the server's own time, the storage it leaves, its calls to a real model; per run, and for one person's unfinished
# background runs together. A 2,000-agent feed checkpointed every round took 12 minutes and 1.2 GB (issue #64);
# on a school's two cores one run stays under a minute and a person's runs together under a minute and a half.
# 0: no limit. The command line (`manage.py play`) is not limited.
MERCURY_MAX_RUN_SECONDS = int(os.environ.get("MERCURY_MAX_RUN_SECONDS", "60"))
MERCURY_MAX_RUN_MB = int(os.environ.get("MERCURY_MAX_RUN_MB", "50"))
MERCURY_MAX_RUN_MODEL_CALLS = int(os.environ.get("MERCURY_MAX_RUN_MODEL_CALLS", "2000"))
MERCURY_MAX_RUN_SECONDS_PER_USER = int(os.environ.get("MERCURY_MAX_RUN_SECONDS_PER_USER", "90"))
MERCURY_MAX_RUN_MB_PER_USER = int(os.environ.get("MERCURY_MAX_RUN_MB_PER_USER", "75"))
MERCURY_MAX_BACKGROUND_RUNS_PER_USER = int(os.environ.get("MERCURY_MAX_BACKGROUND_RUNS_PER_USER", "2"))
# Finished runs keep their rows: what one person's runs of the last 24 hours may store together (a disk's day).
MERCURY_MAX_RUN_MB_PER_USER_PER_DAY = int(os.environ.get("MERCURY_MAX_RUN_MB_PER_USER_PER_DAY", "500"))
# Per client address: sign-ups, and failed log-ins; per user name: log-in attempts, successful ones included. A
# class often shares one address (a school's network): 30 students signing up or logging in at the start of a
# lesson must get through (with 10 sign-ups an hour and every log-in counted per address, the 11th and the 21st
# were refused).
MERCURY_RATE_SIGNUPS_PER_HOUR = int(os.environ.get("MERCURY_RATE_SIGNUPS_PER_HOUR", "60"))  # 0: no limit
MERCURY_SHARE_LINK_DAYS = int(os.environ.get("MERCURY_SHARE_LINK_DAYS", "14"))  # a share link's lifetime
MERCURY_RATE_LOGINS_PER_15_MINUTES = int(
    os.environ.get("MERCURY_RATE_LOGINS_PER_15_MINUTES", "20")
)  # per user name; 0: none
# Class-session join codes a user may try in 15 minutes: a class types its code once; guessing codes is stopped.
MERCURY_RATE_JOINS_PER_15_MINUTES = int(
    os.environ.get("MERCURY_RATE_JOINS_PER_15_MINUTES", "10")
)  # 0: no limit
MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS = int(
    os.environ.get("MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS", "50")
)  # per client address and 15 minutes; 0: none
# Milliseconds a thread of a server process keeps Python's lock while another waits for it (sys.setswitchinterval;
# CPython's default is 5). mercury/startup.py says why a server wants it short; `drive_worker` keeps the default.
MERCURY_SWITCH_INTERVAL_MS = float(os.environ.get("MERCURY_SWITCH_INTERVAL_MS", "1"))
# Seconds a driver's lease on a game lasts without renewal. A live driver renews it every third of that (a
# heartbeat, whatever the model is doing), so this bounds how long a dead driver on another machine holds a game;
# one on the same machine is known dead at once (its process is gone).
MERCURY_DRIVER_LEASE_SECONDS = float(os.environ.get("MERCURY_DRIVER_LEASE_SECONDS", "15"))
# Who runs queued drives: "embedded" (threads inside the server process, the default: nothing else to start) or
# "external" (`python manage.py db_worker` processes; use REDIS_URL so their streamed turns reach every page).
MERCURY_WORKERS = os.environ.get("MERCURY_WORKERS", "embedded").strip().lower()
if MERCURY_WORKERS not in ("embedded", "external"):
    raise RuntimeError("MERCURY_WORKERS must be 'embedded' or 'external'")
# Embedded worker threads: how many games the server drives at the same time. A drive waits on its model most of
# the time, so the pool is sized for a class answering at once, not for the cores.
MERCURY_EMBEDDED_WORKERS = int(os.environ.get("MERCURY_EMBEDDED_WORKERS", "64"))  # games driven at once
# /healthz reports the workers failing when a queued drive has been due this long without a worker taking it.
MERCURY_HEALTH_QUEUE_SECONDS = float(os.environ.get("MERCURY_HEALTH_QUEUE_SECONDS", "60"))
# Request bodies larger than this are refused (413) before they are read; no form here comes near it.
MERCURY_MAX_REQUEST_BYTES = int(os.environ.get("MERCURY_MAX_REQUEST_BYTES", str(1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MERCURY_MAX_REQUEST_BYTES
# A game page's websocket: frames it may send. A frame that is not a move asks for a full re-render (a page sends
# none of its own); a move (`{"move": {...}}`) may carry a message of 2,000 characters, up to 4 bytes each and some
# escaped, and is limited by the move rate (MERCURY_RATE_MOVES_PER_MINUTE) instead of the frame rate.
MERCURY_WS_MAX_FRAME_BYTES = int(os.environ.get("MERCURY_WS_MAX_FRAME_BYTES", "4096"))
MERCURY_WS_MAX_MOVE_BYTES = int(os.environ.get("MERCURY_WS_MAX_MOVE_BYTES", "32768"))
MERCURY_WS_FRAMES_PER_10_SECONDS = int(os.environ.get("MERCURY_WS_FRAMES_PER_10_SECONDS", "20"))
# Push every committed turn to the game's websocket group (off only for headless benchmarks).
MERCURY_BROADCAST = env_bool("MERCURY_BROADCAST", True)
MERCURY_STREAM_TIMESTAMPS = env_bool(
    "MERCURY_STREAM_TIMESTAMPS", False
)  # bench/load.py: stamp streamed frames
MERCURY_SCENARIO_DIR = Path(os.environ.get("MERCURY_SCENARIO_DIR", str(BASE_DIR / "scenarios")))

# MERCURY_LOG_FORMAT=json: one JSON object per line (mercury/logs.py) from Mercury, Django and the servers, for a
# log collector; plain text otherwise.
LOG_FORMAT = os.environ.get("MERCURY_LOG_FORMAT", "text").strip().lower()
if LOG_FORMAT not in ("text", "json"):
    raise RuntimeError("MERCURY_LOG_FORMAT must be 'text' or 'json'")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "mercury.logs.JsonLines"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", **({"formatter": "json"} if LOG_FORMAT == "json" else {})}
    },
    "loggers": {
        "LiteLLM": {"level": "WARNING"},
        # The task queue's start and end lines for every drive (two a student's move; daphne's command line sets
        # the root logger to INFO): failures still show. MERCURY_TASK_LOG_LEVEL=INFO to see them all.
        **{name: {"level": os.environ.get("MERCURY_TASK_LOG_LEVEL", "WARNING")}
           for name in ("django_tasks", "django_tasks_db")},
        "mercury": {"handlers": ["console"], "level": os.environ.get("MERCURY_LOG_LEVEL", "INFO")},
        **(
            {name: {"handlers": ["console"], "level": "INFO", "propagate": False}
             for name in ("django", "daphne", "simulations")}
            if LOG_FORMAT == "json" else {}
        ),
    },
}  # fmt: skip
