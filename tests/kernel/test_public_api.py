"""Django, DRF, gunicorn, psycopg and redis-py are used through their public APIs.

A private attribute or method of a dependency may change in any release without a
word; code that reads, writes or overrides one breaks silently on an upgrade. So
outside ``tests/`` none of the names below may appear, no module subclasses a
gunicorn worker, ``gunicorn.conf.py`` names one of gunicorn's own worker classes,
and the served application leaves Django's request signal receivers connected (the
request cycle the tests run is the one production runs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Each with the library it is private to and what used it (or could).
PRIVATE_NAMES = {
    "_resource_closers": "Django HttpResponseBase's closers list",
    "_full_data": "DRF Request's parsed body",
    "request._body": "Django HttpRequest's read body",
    "request._stream": "Django HttpRequest's body stream",
    "request._data": "DRF Request's parsed data",
    "_connection_pools": "Django's PostgreSQL pools by alias",
    "_get_ready_connection": "psycopg-pool ConnectionPool's checkout",
    "_set_autocommit": "Django DatabaseWrapper's autocommit switch",
    "_prepare_cursor": "Django DatabaseWrapper's cursor wrapping",
    "pool._pool": "psycopg-pool ConnectionPool's idle deque",
    "__class__ =": "swapping a live object's class",
    "schema_editor._": "Django schema editor's private SQL builders",
    "stderr._out": "Django OutputWrapper's wrapped stream",
    "stdout._out": "Django OutputWrapper's wrapped stream",
    "cache._cache": "Django RedisCache's client",
    "get_client(": "Django RedisCacheClient's private client getter",
    "_DEFER": "gunicorn gthread's deferred connections",
    "TConn": "gunicorn gthread's connection class",
    "unreader": "gunicorn's HTTP parser buffer",
    "request_started.disconnect": "Django's own request signal receivers",
    "request_finished.disconnect": "Django's own request signal receivers",
}
# Not even the docs outside tests/ name these private names.
NAMED_NOWHERE = (
    "_resource_closers",
    "_full_data",
    "request._body",
    "request._stream",
    "_connection_pools",
    "_get_ready_connection",
    "__class__ =",
    "cache._cache",
)
GUNICORN_WORKER_BASES = re.compile(
    r"from gunicorn\.workers|import gunicorn\.workers|\b(ThreadWorker|SyncWorker)\b"
)
# gunicorn's own worker classes (its ``--worker-class`` short names).
STOCK_WORKERS = {"sync", "gthread", "eventlet", "gevent", "tornado"}


def source_files(pattern: str = "*.py") -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", pattern],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        ROOT / name
        for name in listed
        if not name.startswith("tests/") and (ROOT / name).exists()
    ]


@pytest.mark.parametrize("name", sorted(PRIVATE_NAMES))
def test_no_private_name_of_a_dependency_is_used(name: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in source_files()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if name in line
    ]
    assert found == [], f"{name} ({PRIVATE_NAMES[name]})"


@pytest.mark.parametrize("name", NAMED_NOWHERE)
def test_no_file_outside_the_tests_names_the_removed_private_names(name: str) -> None:
    found = [
        str(path.relative_to(ROOT))
        for path in source_files("*")
        if name in path.read_text(errors="replace")
    ]
    assert found == [], name


def test_no_module_subclasses_a_gunicorn_worker() -> None:
    found = [
        str(path.relative_to(ROOT))
        for path in source_files()
        if GUNICORN_WORKER_BASES.search(path.read_text())
    ]
    assert found == []


def test_the_server_runs_a_stock_gunicorn_worker() -> None:
    config = (ROOT / "gunicorn.conf.py").read_text()
    (worker_class,) = re.findall(r'^worker_class = "([^"]+)"', config, re.MULTILINE)
    assert worker_class in STOCK_WORKERS


def test_the_served_application_keeps_djangos_request_receivers() -> None:
    """Loading ``powercontext.wsgi`` (what the server does) disconnects nothing."""
    script = (
        "import json, weakref, powercontext.wsgi\n"
        "from django.core.signals import request_finished, request_started\n"
        "live = lambda r: r() if isinstance(r, weakref.ReferenceType) else r\n"
        "names = lambda signal: sorted(\n"
        "    getattr(live(r), '__name__', '?') for _key, r, *_ in signal.receivers\n"
        ")\n"
        "print(json.dumps([names(request_started), names(request_finished)]))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.test",
        "POWERCONTEXT_ENV_FILE": os.devnull,
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    started, finished = json.loads(result.stdout.strip().splitlines()[-1])

    assert {"reset_queries", "close_old_connections"} <= set(started)
    assert {"close_old_connections", "close_caches", "reset_urlconf"} <= set(finished)
