"""Settings shared by every environment, driven by environment variables.

Every variable is documented in ``docs/operations.md``. Values that code reads at
call time (limits, TTLs) are plain settings so tests can override them.
"""

from datetime import timedelta
from pathlib import Path

from powercontext.settings.databases import database_from_env, replica_from_env
from powercontext.settings.envfile import SettingsEnv, settings_error
from powercontext.settings.logs import LOG_LEVELS, default_log_format, logging_config
from powercontext.version import VERSION

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

env = SettingsEnv()

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
# Earlier keys, still accepted for verifying signatures (cursors, admin sessions)
# while clients move to the new one; docs/deploying.md, "Rotating the secret key".
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "powercontext.api.admin_site.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "corsheaders",
    "powercontext.access",
    "powercontext.backups",
    "sources",
    "sessions_app",
    "handoffs",
    "lifecycle",
]

MIDDLEWARE = [
    "powercontext.api.middleware.RequestIdMiddleware",
    # Before anything that may answer early, so errors carry the CORS headers too;
    # only when POWERCONTEXT_CORS_ALLOWED_ORIGINS names an origin.
    "powercontext.api.middleware.CorsWhenConfiguredMiddleware",
    "powercontext.api.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "powercontext.api.middleware.BodySizeLimitMiddleware",
    # Cookies, CSRF, users and messages: the admin's, and only for its paths.
    "powercontext.api.admin_middleware.AdminSessionMiddleware",
    "powercontext.api.admin_middleware.AdminCsrfViewMiddleware",
    "powercontext.api.admin_middleware.AdminAuthenticationMiddleware",
    "powercontext.api.admin_middleware.AdminMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Where the admin is served (docs/operations.md); ``POWERCONTEXT_ADMIN_ENABLED``
# turns it off.
POWERCONTEXT_ADMIN_ENABLED = env.bool("POWERCONTEXT_ADMIN_ENABLED", default=True)
POWERCONTEXT_ADMIN_PATH = env.str("POWERCONTEXT_ADMIN_PATH", default="admin/")
if not POWERCONTEXT_ADMIN_PATH.endswith("/") or POWERCONTEXT_ADMIN_PATH.startswith(
    ("/", "v1/", "health/", "static/")
):
    raise settings_error(
        "POWERCONTEXT_ADMIN_PATH",
        "must be a relative path ending in '/', outside v1/, health/ and static/ "
        "(e.g. 'console/').",
    )

ROOT_URLCONF = "powercontext.urls"
WSGI_APPLICATION = "powercontext.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The audit console's look (wrapping text, capped counts): overrides of
        # admin templates, found before django.contrib.admin's own.
        "DIRS": [BASE_DIR / "powercontext" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


DATABASES = {
    "default": database_from_env(
        env.str("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'powercontext.sqlite3'}")
    )
}
# A streaming replica for list, audit and window reads (docs/operations.md).
if _replica_url := env.str("DATABASE_REPLICA_URL", default=""):
    DATABASES["replica"] = replica_from_env(_replica_url, DATABASES["default"])
DATABASE_ROUTERS = ["powercontext.db.replica.ReplicaRouter"]
POWERCONTEXT_REPLICA_MAX_LAG = env.float(
    "POWERCONTEXT_REPLICA_MAX_LAG", default=5.0, minimum=0
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": (
            "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"
        )
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.str("DJANGO_STATIC_ROOT", default=str(VAR_DIR / "static"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# --- Request and answer sizes ------------------------------------------------------
# --- Rate limits and their cache -----------------------------------------------------
from powercontext.settings.ratelimits import (  # noqa: E402, F401 - settings by name
    CACHES,
    POWERCONTEXT_CACHE_URL,
    POWERCONTEXT_CLIENT_ADDRESS_HEADER,
    POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES,
    POWERCONTEXT_RATE_LIMIT_LEASE_MAX,
    POWERCONTEXT_RATE_LIMIT_READ,
    POWERCONTEXT_RATE_LIMIT_WRITE,
)
from powercontext.settings.sizes import (  # noqa: E402, F401 - settings by name
    DATA_UPLOAD_MAX_MEMORY_SIZE,
    DATA_UPLOAD_MAX_NUMBER_FIELDS,
    POWERCONTEXT_LARGE_BODY_BYTES,
    POWERCONTEXT_LARGE_BODY_CONCURRENCY,
    POWERCONTEXT_MAX_BODY_BYTES,
    POWERCONTEXT_MAX_RESPONSE_BYTES,
    POWERCONTEXT_MAX_SOURCE_BYTES,
)

# --- Authentication -----------------------------------------------------------------
POWERCONTEXT_AUTH_MODE = env.str("POWERCONTEXT_AUTH_MODE", default="enforced")
if POWERCONTEXT_AUTH_MODE not in ("enforced", "disabled"):
    raise settings_error("POWERCONTEXT_AUTH_MODE", "must be enforced or disabled.")
if POWERCONTEXT_AUTH_MODE == "disabled" and not DEBUG:
    raise settings_error(
        "POWERCONTEXT_AUTH_MODE",
        "disabled is refused unless DJANGO_DEBUG=true (it makes every caller an "
        "admin).",
    )
POWERCONTEXT_SERVER_AUTH_TOKEN = env.str("POWERCONTEXT_SERVER_AUTH_TOKEN", default="")
# Accepted tokens are remembered per worker this long: a revocation or a removed
# grant reaches every worker within it (0: read the database on every request).
POWERCONTEXT_TOKEN_CACHE_SECONDS = env.float(
    "POWERCONTEXT_TOKEN_CACHE_SECONDS", default=2.0, minimum=0
)
POWERCONTEXT_TOKEN_LAST_USED_INTERVAL = env.int(
    "POWERCONTEXT_TOKEN_LAST_USED_INTERVAL", default=60, minimum=0
)

# --- Lists ---------------------------------------------------------------------------
POWERCONTEXT_CURSOR_TTL = env.int("POWERCONTEXT_CURSOR_TTL", default=3600, minimum=1)
# A search statement running longer is cancelled: 422 ``too_broad`` (PostgreSQL).
# At least 1 (PostgreSQL reads a statement_timeout of 0 as none at all), at most
# the largest statement_timeout PostgreSQL takes.
POWERCONTEXT_SEARCH_TIMEOUT_MS = env.int(
    "POWERCONTEXT_SEARCH_TIMEOUT_MS", default=3000, minimum=1, maximum=2_147_483_647
)

# --- Session envelopes (docs/api.md; docs/sessions-meta.md) -------------------------
# Caps are UTF-8 bytes. Code reads them at call time, so tests may override them.
SESSION_META_MAX_BYTES = env.int(
    "SESSION_META_MAX_BYTES", default=1024 * 1024, minimum=1
)
WORKING_NOTES_MAX_BYTES = env.int(
    "WORKING_NOTES_MAX_BYTES", default=32 * 1024, minimum=1
)
PERSONA_ID_MAX_BYTES = env.int("PERSONA_ID_MAX_BYTES", default=256, minimum=1)
PERSONA_SNAPSHOT_MAX_BYTES = env.int(
    "PERSONA_SNAPSHOT_MAX_BYTES", default=512 * 1024, minimum=1
)
SELECTED_MODEL_MAX_BYTES = env.int("SELECTED_MODEL_MAX_BYTES", default=256, minimum=1)
ATTACHED_SKILLS_MAX_BYTES = env.int(
    "ATTACHED_SKILLS_MAX_BYTES", default=64 * 1024, minimum=1
)
CWD_MAX_BYTES = env.int("CWD_MAX_BYTES", default=4096, minimum=1)
ACTIVE_SANDBOX_ID_MAX_BYTES = env.int(
    "ACTIVE_SANDBOX_ID_MAX_BYTES", default=256, minimum=1
)
TURN_RUN_ID_MAX_BYTES = env.int("TURN_RUN_ID_MAX_BYTES", default=256, minimum=1)
USAGE_MAX_BYTES = env.int("USAGE_MAX_BYTES", default=8 * 1024, minimum=1)
STATUS_SLOT_MAX_BYTES = env.int("STATUS_SLOT_MAX_BYTES", default=96, minimum=1)
MODEL_MESSAGES_POINTER_MAX_BYTES = env.int(
    "MODEL_MESSAGES_POINTER_MAX_BYTES", default=2048, minimum=1
)
# Envelope revisions older than this are pruned (never an envelope's latest one);
# 0 keeps only the latest, and at most 100 years keeps the cut-off a real date.
SESSION_REVISION_RETENTION = timedelta(
    days=env.int("SESSION_REVISION_RETENTION", default=30, minimum=0, maximum=36500)
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "powercontext.api.authentication.BearerTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "powercontext.api.permissions.IsAuthenticatedPrincipal"
    ],
    "DEFAULT_PARSER_CLASSES": ["powercontext.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["powercontext.api.responses.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": (
        "powercontext.api.negotiation.JSONOnlyNegotiation"
    ),
    "EXCEPTION_HANDLER": "powercontext.api.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["powercontext.api.ratelimit.PrincipalRateThrottle"],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "STRICT_JSON": True,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "powercontext",
    "DESCRIPTION": (
        "Registry of captured Sources, Working Notes, session envelopes and handoff "
        "evidence; wire-compatible with PowerContext 1.4.1."
    ),
    "VERSION": VERSION,
    # pydantic writes JSON Schema 2020-12 (``type: null`` in ``anyOf``): OpenAPI 3.1.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Request bodies are pydantic models, never partial serializers: a PATCH body is
    # the same component as the PUT's, not a "Patched..." copy.
    "COMPONENT_SPLIT_PATCH": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "powercontext.api.openapi_links.add_links",
    ],
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "AUTHENTICATION_WHITELIST": [
        "powercontext.api.authentication.BearerTokenAuthentication"
    ],
    # One component name per choice set that several fields share (W001 otherwise).
    "ENUM_NAME_OVERRIDES": {
        "SourceTypeEnum": ["content"],
        "HandoffArtifactEnum": ["handoff"],
        "HandoffSelectionEnum": ["prepared", "exact", "latest"],
        "HandoffGenerationSelectionEnum": ["built_in", "artifact"],
        "HandoffResolutionStatusEnum": ["empty", "resolved"],
        "PreparedContextStatusEnum": ["ready", "empty"],
        "EvidenceStatusEnum": ["available", "unavailable"],
    },
}

# --- Security (production.py tightens these) ------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REDIRECT_EXEMPT = [r"^health/", r"^metrics$"]

# --- CORS: browser hosts (docs/operations.md, "CORS") -------------------------------
# Origins allowed to call the API from a browser, comma-separated
# (https://app.example.com); none by default. Preflights need no token.
CORS_ALLOWED_ORIGINS = env.list("POWERCONTEXT_CORS_ALLOWED_ORIGINS", default=[])
CORS_URLS_REGEX = r"^/(v1/|mcp/?$)"
CORS_ALLOW_HEADERS = (
    "accept",
    "authorization",
    "content-type",
    "if-match",
    "if-none-match",
    "traceparent",
)
CORS_EXPOSE_HEADERS = (
    "etag",
    "idempotent-replayed",
    "location",
    "retry-after",
    "x-powercontext-request-id",
)
CORS_PREFLIGHT_MAX_AGE = 600

# json (one object per line) or plain; unset: plain on a terminal, JSON elsewhere.
POWERCONTEXT_LOG_FORMAT = env.str(
    "POWERCONTEXT_LOG_FORMAT", default=default_log_format()
)
_log_level = env.str("POWERCONTEXT_LOG_LEVEL", default="INFO")
if _log_level not in LOG_LEVELS:
    # Django would refuse it later, at setup, without naming the variable.
    raise settings_error(
        "POWERCONTEXT_LOG_LEVEL", f"must be one of {', '.join(LOG_LEVELS)}."
    )
try:
    LOGGING = logging_config(_log_level, POWERCONTEXT_LOG_FORMAT)
except ValueError as exc:
    raise settings_error("POWERCONTEXT_LOG_FORMAT", str(exc)) from None
