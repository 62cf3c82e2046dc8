"""The env file: one configuration for the server, every command and every make target.

``manage.py``, the WSGI and ASGI modules, ``gunicorn.conf.py`` and the local and
production settings call ``env_file_read`` before anything reads a variable. The
file is ``POWERCONTEXT_ENV_FILE`` (an empty value reads none), by default ``.env``
at the repository root when it exists. Variables already in the process
environment win over the file, so ``VAR=... manage.py ...`` still overrides it.

This module imports nothing of Django's settings: it runs before they exist.
"""

from __future__ import annotations

import os
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

ENV_FILE_VARIABLE = "POWERCONTEXT_ENV_FILE"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ENV_FILE = ROOT / ".env"
FROM_FILE_VARIABLE = "POWERCONTEXT_ENV_FILE_KEYS"
LOCAL_SETTINGS = "powercontext.settings.local"
# Set by gunicorn.conf.py in the master; workers inherit it (powercontext.wsgi).
GUNICORN_CONFIG_MARKER = "POWERCONTEXT_GUNICORN_CONFIG"


def env_file_path() -> Path | None:
    """The env file to read, or None: none named and no ``.env`` at the root."""
    named = os.environ.get(ENV_FILE_VARIABLE)
    if named is None:
        return DEFAULT_ENV_FILE if DEFAULT_ENV_FILE.exists() else None
    return Path(named) if named else None


def env_file_read() -> Path | None:
    """Load the env file into ``os.environ``; return the file read (None: none).

    A variable the process environment set before the first read wins over the
    file. A variable an earlier read took from the file follows the file: reading
    again (gunicorn re-runs its config on ``HUP``) picks up edits and drops what
    left the file. Which variables came from the file is kept in the environment
    itself (``POWERCONTEXT_ENV_FILE_KEYS``), so it survives fresh imports of this
    module. A named file that is missing or unreadable is
    ``ImproperlyConfigured``: silently falling back to defaults is how a token
    lands in the wrong database.
    """
    path = env_file_path()
    values = _parse(path) if path is not None else {}
    from_file = set(filter(None, os.environ.get(FROM_FILE_VARIABLE, "").split(",")))
    for key in from_file - set(values):
        os.environ.pop(key, None)
    taken = set()
    for key, value in values.items():
        if key in from_file or key not in os.environ:
            os.environ[key] = value
            taken.add(key)
    os.environ[FROM_FILE_VARIABLE] = ",".join(sorted(taken))
    return path


def _parse(path: Path) -> dict[str, str]:
    """The variables of ``path``, parsed by django-environ's ``read_env``."""

    class EnvFile(environ.Env):
        ENVIRON: dict[str, str] = {}

    try:
        with path.open(encoding="utf-8") as handle:
            EnvFile.read_env(handle)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"Cannot read the env file {path} ({exc.strerror}); set "
            f"{ENV_FILE_VARIABLE} to a readable file, or to '' to read none."
        ) from None
    return EnvFile.ENVIRON


def local_default_notice(env_file: Path | None) -> str:
    """The one line ``manage.py`` prints when it falls back to the local settings."""
    if env_file is not None:
        source = str(env_file)
    elif os.environ.get(ENV_FILE_VARIABLE) == "":
        source = f"an env file ({ENV_FILE_VARIABLE} is empty)"
    else:
        source = f"an env file ({DEFAULT_ENV_FILE} does not exist)"
    where = (
        "the DATABASE_URL of the environment"
        if os.environ.get("DATABASE_URL")
        else f"the SQLite database {ROOT / 'var' / 'powercontext.sqlite3'}"
    )
    return (
        f"manage.py: using the local settings and {where}: DJANGO_SETTINGS_MODULE "
        f"is set neither in the environment nor in {source}; on a server set "
        f"{ENV_FILE_VARIABLE} (docs/deploying.md).\n"
    )
