"""Load the production settings once per variable, each time with one bad value.

``python -m tests.deploy.settings_walk VALUE NAME...`` prints one JSON object:
for each NAME, ``null`` when the settings (and ``powercontext.shape``'s sizes, and
the logging configuration) took ``NAME=VALUE`` from the env file, else the
refusal's type and text. A variable the settings read only in some configuration
(the SQLite busy timeout, the replica's timeout) gets it, on the lines after its
own. Every load is fresh: the settings modules are imported
again from an env file of their own, in this one process (a process per variable
would take a minute). Run by tests/deploy/test_env_file.py.
"""

from __future__ import annotations

import importlib
import json
import logging.config
import os
import sys
import tempfile
from pathlib import Path

BASE = (
    "DJANGO_SETTINGS_MODULE=powercontext.settings.production\n"
    f"DJANGO_SECRET_KEY={'k' * 60}\n"
    # PostgreSQL, so that its connection settings are read too (nothing connects).
    "DATABASE_URL=postgres://powercontext:secret@127.0.0.1:5432/powercontext\n"
    "DJANGO_ALLOWED_HOSTS=context.example.com\n"
)
LINE = BASE.count("\n") + 1  # the bad value's line
# What makes the settings read a variable they skip with BASE.
CONTEXT = {
    "POWERCONTEXT_SQLITE_BUSY_TIMEOUT": "DATABASE_URL=sqlite:////tmp/walk.sqlite3\n",
    **{
        f"POWERCONTEXT_DB_POOL_{name}": "POWERCONTEXT_DB_POOL=true\n"
        for name in ("MIN", "MAX", "TIMEOUT", "RECONNECT_TIMEOUT")
    },
    "POWERCONTEXT_REPLICA_TIMEOUT": (
        "DATABASE_REPLICA_URL=postgres://powercontext:secret@127.0.0.2:5432/pc\n"
    ),
}


def load(env_file: Path) -> str | None:
    os.environ["POWERCONTEXT_ENV_FILE"] = str(env_file)
    for name in [
        name
        for name in sys.modules
        if name.startswith("powercontext.settings") or name == "powercontext.shape"
    ]:
        del sys.modules[name]
    try:
        settings = importlib.import_module("powercontext.settings.production")
        shape = importlib.import_module("powercontext.shape")
        shape.workers(), shape.threads(), shape.memory_budget()
        logging.config.dictConfig(settings.LOGGING)
    except Exception as exc:  # every refusal is reported, whatever its type
        return f"{type(exc).__name__}: {exc}"
    return None


def main(value: str, names: list[str]) -> None:
    pristine = dict(os.environ)
    answers: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory() as directory:
        for name in names:
            os.environ.clear()
            os.environ.update(pristine)
            env_file = Path(directory) / f"{name}.env"
            env_file.write_text(f"{BASE}{name}='{value}'\n{CONTEXT.get(name, '')}")
            answers[name] = load(env_file)
    print(json.dumps(answers))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
