"""Django settings, read from the environment.

Two modes, chosen by what is set:
- embedded (nothing set): SQLite in the repo and Celery tasks run in-process (eager);
- services (DATABASE_URL and REDIS_URL set): PostgreSQL, Redis as broker, tasks run in workers.
DJANGO_ENV=production additionally requires SECRET_KEY and turns on every deploy check.
Reference: https://docs.djangoproject.com/en/5.2/ref/settings/
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from advisor.env import env_bool, env_choice, env_int, env_list, env_str, env_url

# Lets admin classes be written as ModelAdmin[Model] at run time, as django-stubs types them.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

DJANGO_ENV = env_choice("DJANGO_ENV", ("development", "test", "production"), "development")
PRODUCTION = DJANGO_ENV == "production"

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when DJANGO_ENV=production")
    SECRET_KEY = "dev-only-insecure-key-never-use-in-production-0123456789abcdef"  # noqa: S105
elif PRODUCTION and len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("SECRET_KEY must be at least 50 characters in production")

DEBUG = env_bool("DEBUG", default=not PRODUCTION)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when DJANGO_ENV=production")

ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"] if not PRODUCTION else []
)
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DJANGO_ENV=production")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

DATABASE_URL = env_url("DATABASE_URL", ("postgres", "postgresql", "sqlite"))
REDIS_URL = env_url("REDIS_URL", ("redis", "rediss"))
RUN_MODE = "services" if (DATABASE_URL and REDIS_URL) else "embedded"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "advisor.scenarios",
    "api",
    "frontend",
    "advisor.hardware",
    "advisor.measurements",
    "axes",
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Query parameters and form values with NUL or other control characters: 400 naming the
    # field, before any view (JSON bodies: api.parsers).
    "advisor.text_guard.ControlCharacterMiddleware",
    # A damaged stored result: "this result cannot be read; compute it again", not a 500.
    "frontend.middleware.UnreadableResultMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "advisor.urls"
WSGI_APPLICATION = "advisor.wsgi.application"
ASGI_APPLICATION = "advisor.asgi.application"

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
                "frontend.context_processors.roles",
            ],
        },
    },
]

# https://github.com/jazzband/dj-database-url
# A pool of PostgreSQL connections per process (Django's own, psycopg_pool:
# https://docs.djangoproject.com/en/5.2/ref/databases/#connection-pool), on by default in
# production: a request takes an open connection from it instead of each server thread opening
# its own (a new backend process and SCRAM authentication, inside the thread's first request;
# under `make load` all twelve gunicorn threads did that at once in the 50 users' first burst).
# gunicorn opens each worker's pool before the worker answers anyone (gunicorn.conf.py); a
# Celery worker (one task at a time per process) uses plain connections (advisor.celery).
# Without it, each thread keeps its own connection for CONN_MAX_AGE seconds.
DATABASE_POOL = env_bool("DATABASE_POOL", PRODUCTION)
DATABASE_POOL_MAX_SIZE = env_int("DATABASE_POOL_MAX_SIZE", 8, minimum=1)
DATABASE_CONN_MAX_AGE = 60
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=DATABASE_CONN_MAX_AGE)}
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # A blip in PostgreSQL must not poison persistent connections: a kept connection is
        # checked before its first query in each request (with the pool: when it is taken).
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
        if DATABASE_POOL:
            # The pool opens one connection when it starts and grows to max_size when
            # threads need more; a thread that finds it full waits up to `timeout` seconds.
            # Pooling replaces persistent connections (Django refuses both at once).
            DATABASES["default"]["CONN_MAX_AGE"] = 0
            DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
                "min_size": 1,
                "max_size": DATABASE_POOL_MAX_SIZE,
                "timeout": 10,
            }
else:
    # Embedded mode serves several requests at once (runserver threads, the webhook
    # deliverer): WAL lets readers and one writer work together, every transaction takes the
    # write lock when it begins (IMMEDIATE: no "database is locked" when a reader upgrades to
    # a writer) and a writer waits up to SQLITE_BUSY_TIMEOUT_S for the lock.
    # https://docs.djangoproject.com/en/5.2/ref/databases/#database-is-locked-errors
    # https://www.sqlite.org/wal.html
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                "transaction_mode": "IMMEDIATE",
                "timeout": env_int("SQLITE_BUSY_TIMEOUT_S", 20, minimum=1),
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# plotly.js is served from the installed plotly package (frontend/staticfinders.py).
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "frontend.staticfinders.PlotlyJsFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Request size limit (bytes) for bodies read through request.body / request.POST.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 1_048_576, minimum=1024)

# --- Security (https://docs.djangoproject.com/en/5.2/howto/deployment/checklist/) ---------
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# --- Django REST Framework ------------------------------------------------------------------
# https://www.django-rest-framework.org/api-guide/settings/ ; the API's conventions live in
# api/ (one error shape: api.errors; tokens: api.authentication; throttles: api.throttling).
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "api.schema.ApiAutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.LimitedJSONParser"],
    # Token first: its WWW-Authenticate header is what makes DRF answer 401, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.IsApiClientOrStaff"],
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.AnonymousThrottle",
        "api.throttling.ClientThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "60/minute"),
        "client": env_str("API_THROTTLE_CLIENT", "600/minute"),
    },
    # Reverse proxies in front of the web (0: trust REMOTE_ADDR, never a caller's
    # X-Forwarded-For, which would let anonymous callers dodge their rate limit).
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0, minimum=0),
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
# https://drf-spectacular.readthedocs.io/en/latest/settings.html
SPECTACULAR_SETTINGS = {
    "TITLE": "Fabric Advisor API",
    "DESCRIPTION": (
        "What network does this GPU workload need? Scenarios, runs, bill of materials.\n\n"
        "Authenticate with `Authorization: Token <key>` (keys come from "
        "`manage.py create_api_client`). Every error has one shape: "
        '`{"error": {"code", "message", "fields"}}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Separate request components, so request-only rules (minLength of required text)
    # are documented and generated clients send what we accept.
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "advisor.scenarios.models.RunStatus",
        "FabricEnum": "advisor.engine.facts.vocabulary.FABRIC_CHOICES",
        "WhatIfFabricEnum": "advisor.engine.tools.whatif.WHATIF_FABRIC_CHOICES",
    },
}

# --- Celery (https://docs.celeryq.dev/en/stable/userguide/configuration.html) -------------
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None  # results live in PostgreSQL (ScenarioRun), not in Redis
CELERY_TASK_IGNORE_RESULT = True
# Embedded mode: no broker, tasks run in-process when the transaction commits.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
# A message is acknowledged only after the task finished; a killed worker's message goes back.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 240, minimum=1)
# Redis redelivers an unacknowledged message after this many seconds (a worker killed outright).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT_S", 600, minimum=1),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fix-up closes a worker's database connections around every task unless this
# is set, and then only every this many tasks: each run opened a new PostgreSQL session (a
# backend process and its authentication). advisor.celery closes them around each task as
# Django does around a request (broken, or older than DATABASE_CONN_MAX_AGE seconds).
# https://docs.celeryq.dev/en/stable/userguide/configuration.html (Django fix-up)
CELERY_DB_REUSE_MAX = 100
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
}

# --- Reliability ----------------------------------------------------------------------------
# Run lifecycle, reconciler and sweeps (advisor.scenarios.claims, docs/ARCHITECTURE.md).
# Every threshold is read from the environment. The defaults recover within a minute: a run
# whose worker was killed is requeued at most RUN_STALE_AFTER_S + RUN_RECONCILE_EVERY_S
# (30 + 10 s) after its last heartbeat; a run queued while the broker lost its queues is resent
# on the next tick (the reconciler's sentinel key notices the loss: advisor.scenarios.claims),
# and any other lost message within RUN_QUEUED_LOST_AFTER_S + RUN_RECONCILE_EVERY_S (45 + 10 s);
# a run submitted while Redis was down goes out on the first tick after it returns.
# https://docs.celeryq.dev/en/stable/userguide/tasks.html#retrying
# https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#caveats

# A RUNNING run (or sweep chunk) whose heartbeat is older than this is presumed orphaned:
# its worker died. It must be well above the heartbeat interval and any database blip (a
# worker cut off from PostgreSQL longer than this loses its claim and the run is redone).
RUN_STALE_AFTER_S = env_int("RUN_STALE_AFTER_S", 30, minimum=2)
# How often a worker touches heartbeat_at while it evaluates (a thread, independent of progress).
RUN_HEARTBEAT_EVERY_S = env_int("RUN_HEARTBEAT_EVERY_S", max(1, RUN_STALE_AFTER_S // 4), minimum=1)
if RUN_HEARTBEAT_EVERY_S * 2 > RUN_STALE_AFTER_S:
    raise ImproperlyConfigured("RUN_HEARTBEAT_EVERY_S must be at most half of RUN_STALE_AFTER_S")
# A QUEUED run whose message was sent longer ago than this is presumed lost and is sent again.
# Duplicates are harmless (the claim lets one delivery in; a duplicate costs one UPDATE that
# matches nothing), so a run waiting longer than this behind a busy queue only gains a second
# message.
RUN_QUEUED_LOST_AFTER_S = env_int("RUN_QUEUED_LOST_AFTER_S", 45, minimum=1)
# How often celery beat runs the reconciler.
RUN_RECONCILE_EVERY_S = env_int("RUN_RECONCILE_EVERY_S", 10, minimum=1)
# A run whose worker died this many times is failed with a reason instead of retried forever
# (a scenario that kills its worker, e.g. by exhausting memory, must not loop).
RUN_MAX_ATTEMPTS = env_int("RUN_MAX_ATTEMPTS", 5, minimum=1)
# Retries of one delivery after a transient database/broker error (exponential backoff, capped).
RUN_TRANSIENT_RETRIES = env_int("RUN_TRANSIENT_RETRIES", 8, minimum=0)
RUN_RETRY_BACKOFF_MAX_S = env_int("RUN_RETRY_BACKOFF_MAX_S", 60, minimum=1)

# Sweeps: design points per chunk (one Celery task) and the largest sweep accepted. Each task
# costs ~20 ms of Celery round trip (ack, fetch, hand-over to the pool) besides its points
# (~0.15 ms each): 500 points keep that under a quarter of a chunk and still give a
# 10,000-point sweep 20 chunks to spread (bench/sweep_bench.py).
SWEEP_CHUNK_POINTS = env_int("SWEEP_CHUNK_POINTS", 500, minimum=1)
SWEEP_MAX_POINTS = env_int("SWEEP_MAX_POINTS", 20_000, minimum=1)
# Unfinished sweeps one person (or API client) may have at a time: sweeps are the only way to
# ask for minutes of worker time with one request.
SWEEP_MAX_ACTIVE_PER_USER = env_int("SWEEP_MAX_ACTIVE_PER_USER", 3, minimum=1)

# Interactive runs and sweep chunks go to separate queues. Workers started without -Q consume
# every queue listed here, and kombu's Redis transport polls them round-robin, so a 10,000-point
# sweep never makes a customer's scenario wait behind all of its chunks.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {"celery": {}, "sweeps": {}}
CELERY_TASK_ROUTES = {"advisor.scenarios.tasks.sweep_chunk": {"queue": "sweeps"}}

# kombu scans for unacknowledged messages of dead workers every interval * throttle seconds
# (default 10 * 10); scan at most every visibility timeout so a short test timeout means
# something. The reconciler below remains the backstop.
CELERY_BROKER_TRANSPORT_OPTIONS.update(
    {
        "unacked_restore_interval": min(10, CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]),
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": 5,
    }
)
# Publishing while Redis restarts: retry for a few seconds, then leave it to the reconciler.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 5,
    "interval_start": 0.2,
    "interval_step": 0.5,
    "interval_max": 1.0,
}

CELERY_BEAT_SCHEDULE = {
    "reconcile-runs-and-sweeps": {
        "task": "advisor.scenarios.tasks.reconcile",
        "schedule": float(RUN_RECONCILE_EVERY_S),
        # A tick that waited in the queue longer than one interval is superseded by the next.
        "options": {"expires": float(RUN_RECONCILE_EVERY_S)},
    },
}

# Test-only: pause this many seconds (heartbeating) before each evaluation, so the fault tests
# can kill a worker or stop PostgreSQL while a run is certainly in flight. Refused in production.
FABRIC_TEST_EVAL_DELAY_S = env_int("FABRIC_TEST_EVAL_DELAY_S", 0, minimum=0)
if PRODUCTION and FABRIC_TEST_EVAL_DELAY_S:
    raise ImproperlyConfigured("FABRIC_TEST_EVAL_DELAY_S is a test hook; unset it in production")

# --- API (api/) -------------------------------------------------------------------------------
# Absolute links in webhook payloads (a worker has no request to build them from). Required in
# production: a customer's webhook must never point them at localhost.
API_PUBLIC_BASE_URL = env_url("API_PUBLIC_BASE_URL", ("http", "https")).rstrip("/")
if not API_PUBLIC_BASE_URL:
    if PRODUCTION:
        raise ImproperlyConfigured(
            "API_PUBLIC_BASE_URL must be set when DJANGO_ENV=production "
            "(e.g. https://advisor.example.com): webhook payloads link to it"
        )
    API_PUBLIC_BASE_URL = "http://localhost:8000"
# POST /api/v1/evaluate/ answers in the request; larger clusters go through POST scenarios/.
API_SYNC_EVALUATE_MAX_GPUS = env_int("API_SYNC_EVALUATE_MAX_GPUS", 512, minimum=1)
# Wall time (seconds) of an engine call made inside a web request: POST /api/v1/evaluate/,
# and runs in embedded mode (tasks run in the web process). Well under gunicorn's 30 s
# worker timeout, so a slow evaluation fails with a reason instead of killing the worker.
ENGINE_IN_REQUEST_TIME_LIMIT_S = env_int("ENGINE_IN_REQUEST_TIME_LIMIT_S", 20, minimum=1)
# Wall time of reading and fitting one uploaded measurement inside the request. The parser is
# linear (a 512,000-character upload reads in well under a second); this is the backstop.
MEASUREMENT_PARSE_TIME_LIMIT_S = env_int("MEASUREMENT_PARSE_TIME_LIMIT_S", 5, minimum=1)
for _scope, _rate in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"].items():  # type: ignore[attr-defined]
    _num, _, _period = _rate.partition("/")
    if not (_num.isdigit() and _period[:1] in {"s", "m", "h", "d"}):
        raise ImproperlyConfigured(
            f"throttle rate for {_scope!r} must look like '60/minute', got {_rate!r}"
        )
# Throttle counters must be shared by every web process (Redis when it is there); a
# per-process memory cache would multiply the allowed rate by the number of processes.
API_THROTTLE_CACHE = "api-throttle"
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Drawn PDF reports, per web process (advisor.scenarios.reports): ~100-300 KB each.
    "reports": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "reports",
        "OPTIONS": {"MAX_ENTRIES": 64},
    },
    API_THROTTLE_CACHE: (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "api-throttle",
            # A Redis that does not answer must not hold requests: the throttles fail open
            # (advisor.cache) after at most these many seconds.
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "api"}
    ),
}
# --- Sign-in limits (https://django-axes.readthedocs.io/en/latest/4_configuration.html) ----
# Failed sign-ins per client address, on this site's login and the admin's alike; a good
# password does not count (and does not help once locked). The address is the real client's
# behind API_NUM_PROXIES proxies (frontend.throttle.client_address), never a shared proxy's.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1) / 60  # hours
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_RESET_ON_SUCCESS = False
AXES_CLIENT_IP_CALLABLE = "frontend.throttle.client_address"
AXES_LOCKOUT_CALLABLE = "frontend.throttle.locked_out"
# Failures are rows in the database every web process shares (axes' own tables); successful
# sign-ins write nothing.
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False

# --- Content-Security-Policy (https://django-csp.readthedocs.io/en/latest/configuration.html)
# Django's own CSP support arrived in 6.0, which needs Python 3.12; this project runs on 3.11
# (pyproject), so django-csp provides the header. Scripts only from this origin: no inline
# script anywhere (figures travel as application/json data, read by static/frontend/app.js).
# Styles allow inline because plotly.js and htmx insert <style> rules at run time and style
# attributes remain in a few templates; a style cannot run code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Webhooks: https://docs.celeryq.dev/en/stable/userguide/tasks.html#retrying
# Loopback and private addresses are refused unless allowed (tests deliver to 127.0.0.1);
# link-local and cloud metadata addresses are refused always.
WEBHOOK_ALLOW_PRIVATE = env_bool("WEBHOOK_ALLOW_PRIVATE", default=False)
WEBHOOK_TIMEOUT_S = env_int("WEBHOOK_TIMEOUT_S", 10, minimum=1)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1)
# Attempt n waits BASE * 2**(n-1) seconds (30 s, 1 min, 2 min, ...), at most MAX.
WEBHOOK_BACKOFF_BASE_S = env_int("WEBHOOK_BACKOFF_BASE_S", 30, minimum=0)
WEBHOOK_BACKOFF_MAX_S = env_int("WEBHOOK_BACKOFF_MAX_S", 3600, minimum=0)
# A pending delivery whose message is overdue by this much is presumed lost (broker down when
# it was sent, worker killed mid-attempt) and is sent again by beat; attempts are claimed by
# number, so a duplicate never POSTs twice.
WEBHOOK_LOST_AFTER_S = env_int("WEBHOOK_LOST_AFTER_S", 300, minimum=1)
CELERY_BEAT_SCHEDULE["api-webhook-sweep"] = {
    "task": "api.tasks.webhook_sweep",
    "schedule": 60.0,
    "options": {"expires": 60.0},
}
