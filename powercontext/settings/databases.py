"""The ``DATABASES`` entry a ``DATABASE_URL`` stands for (docs/operations.md)."""

import warnings

from powercontext.settings.envfile import SettingsEnv, settings_error

env = SettingsEnv()


# The DATABASES entry's key for how long a new persistent connection waits for the
# database, in seconds: read by powercontext/db/postgresql/base.py, which the
# settings cannot import.
CONNECT_WAIT = "CONNECT_WAIT"

URL_FORMS = (
    "use postgres://USER:PASSWORD@HOST:PORT/NAME or sqlite:////absolute/path "
    "(docs/deploying.md)"
)


def database_from_env(url: str, variable: str = "DATABASE_URL") -> dict:
    """Build the DATABASES entry for ``url`` with the options each engine needs.

    SQLite runs in WAL mode with IMMEDIATE transactions and a busy timeout so that
    concurrent writers wait for each other instead of failing with "database is
    locked". PostgreSQL keeps one connection per server thread (Django's persistent
    connections), checked before a request reuses it and reconnected on demand
    after an outage, a new connection waiting for a restarting database; psycopg
    3's connection pool instead when ``POWERCONTEXT_DB_POOL`` asks for it
    (docs/operations.md, "Failure behaviour"; decision 0045).
    """
    try:
        with warnings.catch_warnings():
            # django-environ warns of a scheme it does not know; refused below.
            warnings.simplefilter("ignore", UserWarning)
            config = SettingsEnv.db_url_config(url)
    except ValueError as exc:  # a port that is not a number
        raise settings_error(variable, f"{exc}; {URL_FORMS}") from None
    if config.get("ENGINE") is None:
        # The value is not repeated: it may hold a password.
        raise settings_error(variable, f"not a database URL; {URL_FORMS}")
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int(
                "POWERCONTEXT_SQLITE_BUSY_TIMEOUT", default=30, minimum=0
            ),
            "init_command": (
                "PRAGMA journal_mode=WAL;"
                "PRAGMA synchronous=NORMAL;"
                "PRAGMA foreign_keys=ON;"
            ),
        }
    elif config["ENGINE"] == "django.db.backends.postgresql":
        options = config.setdefault("OPTIONS", {})
        if env.bool("POWERCONTEXT_DB_POOL", default=False):
            options["pool"] = {
                "min_size": env.int("POWERCONTEXT_DB_POOL_MIN", default=2, minimum=0),
                "max_size": env.int("POWERCONTEXT_DB_POOL_MAX", default=8, minimum=1),
                "timeout": env.float(
                    "POWERCONTEXT_DB_POOL_TIMEOUT", default=10.0, above=0
                ),
                # psycopg's pool retries a failed connect with a backoff that doubles
                # for this long; a short window leaves reconnecting to the next
                # request, so recovery does not lag the database by minutes.
                "reconnect_timeout": env.float(
                    "POWERCONTEXT_DB_POOL_RECONNECT_TIMEOUT", default=5.0, minimum=0
                ),
            }
            if options["pool"]["max_size"] < options["pool"]["min_size"]:
                raise settings_error(
                    "POWERCONTEXT_DB_POOL_MAX",
                    "must be at least POWERCONTEXT_DB_POOL_MIN.",
                )
            config["CONN_MAX_AGE"] = 0
        else:
            config["CONN_MAX_AGE"] = env.int(
                "POWERCONTEXT_DB_CONN_MAX_AGE", default=60, minimum=0
            )
            config["CONN_HEALTH_CHECKS"] = True
            # Read by powercontext.db.postgresql: how long a new connection keeps
            # trying while the database refuses connections (a restart), as a
            # request waits for a pooled connection.
            config[CONNECT_WAIT] = env.float(
                "POWERCONTEXT_DB_CONNECT_WAIT", default=10.0, minimum=0
            )
        # Checks a connection before it is used again (persistent or pooled) and
        # replaces one a database restart broke; a new persistent connection waits
        # for a restarting database; gives hot paths prepared statements.
        config["ENGINE"] = "powercontext.db.postgresql"
        # At least 1: libpq waits for ever on a connect_timeout of 0.
        options.setdefault(
            "connect_timeout",
            env.int("POWERCONTEXT_DB_CONNECT_TIMEOUT", default=5, minimum=1),
        )
        if env.bool("POWERCONTEXT_DB_DISABLE_PREPARE", default=False):
            # Needed behind PgBouncer in transaction mode (psycopg prepared statements).
            options["prepare_threshold"] = None
            config["DISABLE_SERVER_SIDE_CURSORS"] = True
        else:
            # Django turns psycopg's prepared statements off unless asked; only the
            # statements run through powercontext.db.cursors.prepared_cursor are
            # prepared (Django's own cursors bind parameters client-side).
            options.setdefault("prepare_threshold", 5)
    else:
        raise settings_error(
            variable, f"unsupported database engine {config['ENGINE']}; {URL_FORMS}"
        )
    return config


def replica_from_env(url: str, primary: dict) -> dict:
    """The ``replica`` entry: a PostgreSQL streaming replica of the primary, read
    only by the views that tolerate lag (powercontext/db/replica.py)."""
    config = database_from_env(url, "DATABASE_REPLICA_URL")
    if primary["ENGINE"] != config["ENGINE"] or not config["ENGINE"].startswith(
        "powercontext.db.postgresql"
    ):
        raise settings_error(
            "DATABASE_REPLICA_URL",
            "must name a PostgreSQL streaming replica of the PostgreSQL primary in "
            "DATABASE_URL",
        )
    # A replica that cannot be reached costs a read at most this long before the
    # service sends reads to the primary (the pool's wait, a new connection's).
    timeout = env.float("POWERCONTEXT_REPLICA_TIMEOUT", default=1.0, above=0)
    config["OPTIONS"]["connect_timeout"] = max(2, round(timeout))
    if "pool" in config["OPTIONS"]:
        config["OPTIONS"]["pool"]["timeout"] = timeout
    else:
        # An unreachable replica sends reads to the primary at once.
        config[CONNECT_WAIT] = 0.0
    # Tests never create or flush a replica: it mirrors the primary.
    config["TEST"] = {"MIRROR": "default"}
    return config
