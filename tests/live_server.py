"""A live service for test suites that are not pytest (``clients/typescript``).

``python -m tests.live_server --database-url URL`` starts the service the way the
robustness suite does (production settings, a database of its own, migrated, one
``*:admin`` token), prints one JSON line ``{"url", "token", "cors_origin"}`` on
stdout, and serves until its stdin closes; then it stops the server and drops the
database. On PostgreSQL (``postgres://...``) the database is a new one on that
server; on SQLite (``sqlite://...``, any path) a new file in a temporary directory.

Which server runs the WSGI app is decided in one place, ``start_server``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.robustness.processes import (
    LaunchedServer,
    database_create,
    database_drop,
    manage,
    mint_token,
    service_env,
)

PRODUCTION = "powercontext.settings.production"
# A browser origin the service allows, so clients can test CORS as a browser sees it.
CORS_ORIGIN = "http://host.test"


@contextlib.contextmanager
def service_database(server_url: str, directory: Path) -> Iterator[str]:
    """A fresh database of ``server_url``'s kind, removed afterwards."""
    if server_url.startswith(("postgres://", "postgresql://")):
        name = f"pc_live_{secrets.token_hex(6)}"
        url = database_create(server_url, name)
        try:
            yield url
        finally:
            database_drop(server_url, name)
    else:
        yield f"sqlite:///{directory / 'service.sqlite3'}"


def start_server(
    env: dict[str, str], log_dir: Path, port: int | None
) -> LaunchedServer:
    """The WSGI app under the production server, on ``port`` (or a free one)."""
    server = LaunchedServer(env, log_dir, workers=1, threads=4)
    if port is not None:
        server.port = port
        server.url = f"http://127.0.0.1:{port}"
    server.start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--port", type=int, default=None)
    arguments = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="pc-live-") as directory,
        service_database(arguments.database_url, Path(directory)) as database_url,
    ):
        env = service_env(
            database_url, PRODUCTION, POWERCONTEXT_CORS_ALLOWED_ORIGINS=CORS_ORIGIN
        )
        manage(env, "migrate", "--noinput", "-v", "0")
        token = mint_token(env)
        server = start_server(env, Path(directory), arguments.port)
        try:
            print(
                json.dumps(
                    {"url": server.url, "token": token, "cors_origin": CORS_ORIGIN}
                ),
                flush=True,
            )
            sys.stdin.read()  # until the caller closes our stdin (or exits)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
