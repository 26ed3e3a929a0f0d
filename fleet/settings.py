"""Settings from the environment (12-factor), with defaults that are safe on a laptop.

Everything that differs between a developer's machine, CI and production is an environment
variable, read through one typed reader (fleet/env.py); `make run` writes a local `.env`
once so the secret and field-encryption keys survive restarts (losing the latter would
make every stored BMC password unreadable)."""

from __future__ import annotations

import warnings
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from fleet.env import env

BASE_DIR = Path(__file__).resolve().parent.parent

ENV_FILE = Path(env.str("CORRAL_ENV_FILE", default=str(BASE_DIR / ".env")))
if ENV_FILE.exists():
    environ.Env.read_env(str(ENV_FILE), overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
# A fixed development key is only acceptable when nothing else was configured; `check
# --deploy` flags it, and `make run` writes a random one into .env.
SECRET_KEY = env.str("SECRET_KEY", default="corral-insecure-development-key-change-me-0123456789")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Fernet key(s) for BMC passwords at rest. Several comma-separated keys allow rotation:
# the first encrypts, all decrypt.
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "knox",
    "axes",
    "csp",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "core",
    "webhooks",  # the outbox every app emits into, and its deliveries
    "engine",
    "inventory",
    "provisioning",
    "attestation",
    "validation",
    "rma",
    "drift",
    "reports",
    "day2",
    "health",
    # The audit trail (audit/__init__.py says why django-auditlog).
    "auditlog",
    "audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "fleet.staticfiles.StaticFilesMiddleware",  # WhiteNoise (fleet/staticfiles.py)
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "fleet.middleware.refuse_nul_in_query",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Keeps the request so audit entries name its user once DRF has authenticated it.
    "audit.actors.AuditActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, so it sees a failed login (page or API token) and answers with the lockout.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "fleet.urls"
WSGI_APPLICATION = "fleet.wsgi.application"

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
                "fleet.context_processors.nav",
            ],
        },
    }
]

# An empty DATABASE_URL counts as unset (a CI matrix or a shell may export it empty).
DATABASES = {
    "default": environ.Env.db_url_config(
        env.str("DATABASE_URL", default="") or f"sqlite:///{BASE_DIR / 'corral.sqlite3'}"
    ),
}
DATABASES["default"].setdefault("ATOMIC_REQUESTS", False)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not :memory:, so a Celery worker process in the test suite sees the rows the
    # test wrote; WAL + a busy timeout let web and worker share one SQLite file.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"}
    )
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}
else:
    # psycopg's pool: a Celery threads worker gives its connection back around every BMC
    # call (provisioning.runner.bmc_io), so hundreds of threads share a few connections.
    # CORRAL_DB_POOL_SIZE=0: no pool, persistent connections (CONN_MAX_AGE) instead.
    POOL_SIZE = env.int("CORRAL_DB_POOL_SIZE", default=20)
    if POOL_SIZE > 0:
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        # With a pool, Django makes this the pool's check: a connection is tested as it is
        # handed out, so after a database restart or a failover (connections cut
        # server-side) the next query gets a live one, not "the connection is closed".
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": POOL_SIZE,
            "timeout": env.float("CORRAL_DB_POOL_TIMEOUT", default=60.0),
        }
    else:
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=600)
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# AxesStandaloneBackend first: it refuses a locked-out client before a password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "landing"  # fleet.views.landing: managers to the dashboards
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "fleet.staticfiles.PlotlyFinder",  # vendor/plotly/plotly.min.js from the plotly package
]
# Serve straight from the source folders too, so a fresh checkout needs no collectstatic
# (and say nothing about the missing STATIC_ROOT in that case).
WHITENOISE_USE_FINDERS = True
warnings.filterwarnings("ignore", message="No directory at", module="whitenoise.base")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env.str(
            "STATICFILES_BACKEND",
            default="django.contrib.staticfiles.storage.StaticFilesStorage",
        )
    },
}

# The API: DRF and its schema; TLS, cookies, lockout, API tokens and the Content Security
# Policy (docs/security.md).
from fleet.settings_api import *  # noqa: E402, F403
from fleet.settings_security import *  # noqa: E402, F403

# The audit trail (docs/audit.md): changes as JSON values, not strings; secrets as "***".
AUDITLOG_STORE_JSON_CHANGES = True
AUDITLOG_MASK_CALLABLE = "audit.redact.redact"

# --- Celery -------------------------------------------------------------------------------
# The broker, task acknowledgement and limits, and the beat schedule: fleet/settings_celery.py
from fleet.settings_celery import *  # noqa: E402,F403
from fleet.settings_converge import *  # noqa: E402,F403  (docs/converge.md)

# --- Corral -------------------------------------------------------------------------------
# Seconds a node may stay in each transitional state before the sweeper fails it.
CORRAL_STATE_DEADLINES = {
    "inspecting": env.int("CORRAL_DEADLINE_INSPECTING", default=15 * 60),
    "deploying": env.int("CORRAL_DEADLINE_DEPLOYING", default=45 * 60),
    "validating": env.int("CORRAL_DEADLINE_VALIDATING", default=24 * 3600),
    "draining": env.int("CORRAL_DEADLINE_DRAINING", default=12 * 3600),
}
# Seconds an operation may take from its acceptance to its end, per kind; the sweeper fails
# one that overruns with the reason (never started: which queue has no worker). A validate
# operation lasts its whole gate run. Kinds not listed get CORRAL_OPERATION_DEADLINE_DEFAULT.
CORRAL_OPERATION_DEADLINES = {
    "power_on": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    "power_off": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    "power_cycle": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    "boot_pxe": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    "inspect": env.int("CORRAL_OP_DEADLINE_INSPECT", default=20 * 60),
    "repaired": env.int("CORRAL_OP_DEADLINE_INSPECT", default=20 * 60),
    "deploy": env.int("CORRAL_OP_DEADLINE_DEPLOY", default=20 * 60),
    # A drain lasts until its node's jobs end (the draining deadline fails it first).
    "drain": CORRAL_STATE_DEADLINES["draining"] + 600,
    "undrain": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    "admit": env.int("CORRAL_OP_DEADLINE_POWER", default=10 * 60),
    # The whole chain: drain, deploy, gates, admission.
    "recycle": sum(CORRAL_STATE_DEADLINES.values()) + 3600,
    "validate": CORRAL_STATE_DEADLINES["validating"] + 3600,
    "publish_image": env.int("CORRAL_OP_DEADLINE_PUBLISH", default=2 * 3600),
    "import_nodes": env.int("CORRAL_OP_DEADLINE_IMPORT", default=30 * 60),
}
CORRAL_OPERATION_DEADLINE_DEFAULT = env.int("CORRAL_OPERATION_DEADLINE_DEFAULT", default=3600)
# A pending operation whose task was sent this long ago and not started is sent again (its
# message may have been lost with a Redis restarted empty, or a worker that died holding
# it); the duplicate is harmless, the first run claims the operation.
CORRAL_RESEND_PENDING_SECONDS = env.int("CORRAL_RESEND_PENDING_SECONDS", default=120)
# A running task refreshes its node lock and its operation this often; a lock or a running
# operation silent for CORRAL_LOCK_STALE_SECONDS belongs to a worker that died: the sweeper
# breaks the lock and fails the operation with that reason (it is not run a second time).
CORRAL_HEARTBEAT_SECONDS = env.float("CORRAL_HEARTBEAT_SECONDS", default=15.0)
CORRAL_LOCK_STALE_SECONDS = env.int("CORRAL_LOCK_STALE_SECONDS", default=60)
# Each worker process reports itself this often (inventory.workers); one silent for
# CORRAL_WORKER_STALE_SECONDS no longer counts as listening to its queues.
CORRAL_WORKER_HEARTBEAT_SECONDS = env.float("CORRAL_WORKER_HEARTBEAT_SECONDS", default=15.0)
CORRAL_WORKER_STALE_SECONDS = env.int("CORRAL_WORKER_STALE_SECONDS", default=60)
# Inventory checks BMC settings with the driver's schema (named: inventory imports no app).
CORRAL_BMC_SETTINGS_CHECK = "provisioning.drivers.validate_settings"
# A task that finds its node locked retries every WAIT_SECONDS, WAIT_RETRIES times, then
# ends its operation (or gate run) failed with the holder's name.
CORRAL_LOCK_WAIT_RETRIES = env.int("CORRAL_LOCK_WAIT_RETRIES", default=60)
CORRAL_LOCK_WAIT_SECONDS = env.float("CORRAL_LOCK_WAIT_SECONDS", default=2)
# CSV imports of at most this many rows run in the request; larger ones are operations.
CORRAL_IMPORT_SYNC_ROWS = env.int("CORRAL_IMPORT_SYNC_ROWS", default=200)
# At most this many power-ons at once per rack in a bulk action (0 = no stagger).
CORRAL_POWER_ON_STAGGER = env.int("CORRAL_POWER_ON_STAGGER", default=4)
# Max age of a node's recorded power state before the refresher asks (per-BMC poll rate).
CORRAL_POWER_REFRESH_SECONDS = env.int("CORRAL_POWER_REFRESH_SECONDS", default=300)
# How nodes reach /boot/ (e.g. http://10.0.0.5:8000); empty = the host of the request.
CORRAL_BOOT_BASE_URL = env.str("CORRAL_BOOT_BASE_URL", default="").rstrip("/")
# Boot ISOs built for virtual-media deploys (docs/boot-modes.md): the workers that build
# them and the web servers that serve them to BMCs must share this folder.
CORRAL_VMEDIA_DIR = env.str("CORRAL_VMEDIA_DIR", default=str(BASE_DIR / ".vmedia"))
# Where BMCs fetch those ISOs, when they reach Corral at another address than the nodes do
# (a management network); empty = CORRAL_BOOT_BASE_URL, else CORRAL_PUBLIC_URL.
CORRAL_VMEDIA_BASE_URL = env.str("CORRAL_VMEDIA_BASE_URL", default="").rstrip("/")
# UEFI HTTP-boot clients (arch 16 / 19) are sent, by the DHCP exports, to these EFI loader
# URLs (an iPXE or GRUB image on an HTTP server); empty = no HTTP-boot entry in the export.
CORRAL_HTTP_BOOT_LOADER_X64 = env.str("CORRAL_HTTP_BOOT_LOADER_X64", default="")
CORRAL_HTTP_BOOT_LOADER_ARM64 = env.str("CORRAL_HTTP_BOOT_LOADER_ARM64", default="")
# Image publishing: artifacts above this size are refused; detached signatures are checked
# against these ed25519 public keys (raw 32-byte keys, base64, comma-separated).
CORRAL_IMAGE_MAX_BYTES = env.int("CORRAL_IMAGE_MAX_BYTES", default=8 * 1024**3)
# Published images' artifacts kept here and served to nodes by Corral's own web server
# (/boot/images/<sha256>; provisioning/imagestore.py). The workers that publish and the web
# servers share it. Empty = nodes fetch the artifacts' own URLs.
CORRAL_IMAGE_STORE = env.str("CORRAL_IMAGE_STORE", default="")
CORRAL_IMAGE_SIGNING_KEYS = env.list("CORRAL_IMAGE_SIGNING_KEYS", default=[])
CORRAL_REQUIRE_SIGNED_IMAGES = env.bool("CORRAL_REQUIRE_SIGNED_IMAGES", default=False)
# Acceptance gates run their checks on the node over SSH with this identity.
CORRAL_SSH_USER = env.str("CORRAL_SSH_USER", default="root")
CORRAL_SSH_KEY_PATH = env.str("CORRAL_SSH_KEY_PATH", default=str(BASE_DIR / ".ssh" / "id_ed25519"))
CORRAL_SSH_PORT = env.int("CORRAL_SSH_PORT", default=22)
CORRAL_SSH_CONNECT_TIMEOUT = env.float("CORRAL_SSH_CONNECT_TIMEOUT", default=10.0)
# Raw stdout/stderr kept per check (characters per stream).
CORRAL_GATE_OUTPUT_CAP = env.int("CORRAL_GATE_OUTPUT_CAP", default=256 * 1024)
# Start the default gate profile as soon as a node phones home.
CORRAL_GATE_ON_PHONE_HOME = env.bool("CORRAL_GATE_ON_PHONE_HOME", default=True)
# Boot-request records: 0 = one INSERT per request; > 0 = batched every N seconds per web
# process (set it, e.g. 0.5, where a whole hall network-boots at once).
CORRAL_BOOT_LOG_FLUSH_SECONDS = env.float("CORRAL_BOOT_LOG_FLUSH_SECONDS", default=0.0)
# Boot storms: each web process keeps a copy of MAC -> node state refreshed every N seconds
# (0 = ask the database on every /boot/ipxe request); see provisioning/bootserver/cache.py.
CORRAL_BOOT_CACHE_SECONDS = env.float("CORRAL_BOOT_CACHE_SECONDS", default=0.0)
CORRAL_BOOT_CACHE_FULL_SECONDS = env.float("CORRAL_BOOT_CACHE_FULL_SECONDS", default=60.0)
# Boot records older than this are deleted hourly, except each node's latest (0 = keep all).
# A node stuck PXE-looping writes thousands a day; a hall of them, millions.
CORRAL_BOOT_RECORD_DAYS = env.int("CORRAL_BOOT_RECORD_DAYS", default=30)
# Under the production ASGI server (fleet.asgi): threads per web process running Django's
# views, and as many again for boot requests that need the database.
CORRAL_WEB_THREADS = env.int("CORRAL_WEB_THREADS", default=8)
# Transient BMC errors (unreachable, 5xx, 409) are retried this many times, waiting
# base, 2 x base, 4 x base ... seconds; fatal ones (credentials, unsupported) never are.
CORRAL_BMC_RETRIES = env.int("CORRAL_BMC_RETRIES", default=4)
# How long to wait for one BMC answer (each Redfish response, each IPMI datagram) before
# counting the BMC as not answering (a transient error); slow BMCs may need more.
CORRAL_BMC_TIMEOUT_SECONDS = env.float("CORRAL_BMC_TIMEOUT_SECONDS", default=10.0)
CORRAL_BMC_RETRY_BASE_SECONDS = env.float("CORRAL_BMC_RETRY_BASE_SECONDS", default=2.0)
# The most Redfish requests in flight on one BMC from one worker process (an inspection,
# the power refresh and a firmware update share them): real BMCs refuse past a few.
CORRAL_BMC_MAX_IN_FLIGHT = env.int("CORRAL_BMC_MAX_IN_FLIGHT", default=2)
# A live console (browser or `corral console`) with no key typed this long is closed, so a
# forgotten tab does not hold a node's keyboard (docs/console.md).
CORRAL_CONSOLE_IDLE_SECONDS = env.float("CORRAL_CONSOLE_IDLE_SECONDS", default=900.0)
# After a power request, read the state back until it matches (BMCs apply it late).
CORRAL_POWER_WAIT_SECONDS = env.float("CORRAL_POWER_WAIT_SECONDS", default=60.0)
CORRAL_POWER_POLL_SECONDS = env.float("CORRAL_POWER_POLL_SECONDS", default=2.0)
# Day-2 settings (webhooks, RMA, drift) live beside this file to keep it readable.
from fleet.settings_day2 import *  # noqa: E402, F403

CORRAL_SCHEDULER = env.str("CORRAL_SCHEDULER", default="provisioning.schedulers.NoopScheduler")
# Enrolled GPUs the BMC does not report: "fail" the inspection or "flag" it (docs/inspection.md).
CORRAL_INSPECT_GPU_MISMATCH = _MISMATCH = env.str("CORRAL_INSPECT_GPU_MISMATCH", default="fail")
if _MISMATCH not in ("fail", "flag"):
    raise ImproperlyConfigured(f"CORRAL_INSPECT_GPU_MISMATCH is fail or flag, not {_MISMATCH!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # axes logs every failed login at INFO; its lockouts (WARNING) are what an operator needs.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}
from fleet.settings_egress import *  # noqa: E402, F403  (docs/egress.md)
from fleet.settings_fleetfile import *  # noqa: E402, F403  (docs/fleet-as-code.md)
from fleet.settings_metrics import *  # noqa: E402, F403  (docs/metrics.md)
from fleet.settings_sso import *  # noqa: E402, F403  (docs/sso.md)

INSTALLED_APPS += ["metrics"]  # /metrics reads every app; none imports it
INSTALLED_APPS += ["converge", "sso"]  # sso's backend idles while CORRAL_OIDC_ISSUER is unset
INSTALLED_APPS += ["fleetfile"]  # the fleet as code: plan, apply, export
INSTALLED_APPS += ["trays"]  # racks built as one unit: templates, trays, readiness
INSTALLED_APPS += ["consoles"]  # serial consoles: recorded while nodes deploy or run gates
AUTHENTICATION_BACKENDS += ["sso.backends.OIDCBackend"]

# Settings each valid alone but wrong together stop every process here, naming them all.
from fleet.settings_checks import refuse_bad  # noqa: E402

refuse_bad(globals())
