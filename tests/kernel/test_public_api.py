"""Django, DRF, granian, psycopg and redis-py are used through their public APIs.

A private attribute or method of a dependency may change in any release without a
word; code that reads, writes or overrides one breaks silently on an upgrade. So
outside ``tests/`` none of the names below may appear (granian's private modules
and server methods among them, and the names of gunicorn's internals the service
once used), only the launcher imports granian, and only from its public modules,
subclassing nothing of it and starting its own WSGI workers; and the served
application leaves Django's request signal receivers connected (the request cycle
the tests run is the one production runs).
"""

from __future__ import annotations

import ast
import json
import os
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
    "_DEFER": "gunicorn gthread's deferred connections (decision 0035)",
    "TConn": "gunicorn gthread's connection class (decision 0035)",
    "unreader": "gunicorn's HTTP parser buffer (decision 0035)",
    "granian._": "granian's private modules (_granian, _internal, _signals...)",
    "_callback_wrapper": "granian's WSGI callback wrapper",
    "_spawn_worker": "granian's server: spawning a worker",
    "_spawn_wsgi_worker": "granian's server: the WSGI worker's target",
    "_respawn_workers": "granian's server: respawning workers",
    "_serve_loop": "granian's server: its main loop",
    "_stop_workers": "granian's server: stopping workers",
    "_handle_rss_signal": "granian's server: the memory check",
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
LAUNCHER = ROOT / "powercontext" / "serve.py"
# granian's public modules: the package (granian.Granian), its constants, HTTP
# settings and log levels, and the server classes Granian is (for types only).
GRANIAN_PUBLIC_MODULES = {
    "granian",
    "granian.constants",
    "granian.http",
    "granian.log",
    "granian.server",
}


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
        # is_file: a worktree's venv links are untracked links to directories.
        if not name.startswith("tests/") and (ROOT / name).is_file()
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


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from package import name`` as ``package``."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_only_the_launcher_imports_granian() -> None:
    found = [
        str(path.relative_to(ROOT))
        for path in source_files()
        if any(name.split(".")[0] == "granian" for name in imported_modules(path))
    ]
    assert found == [str(LAUNCHER.relative_to(ROOT))]


def test_the_launcher_uses_granians_public_modules_only() -> None:
    granian = {
        name for name in imported_modules(LAUNCHER) if name.split(".")[0] == "granian"
    }
    assert granian <= GRANIAN_PUBLIC_MODULES


def test_the_launcher_subclasses_nothing_and_starts_granians_wsgi_workers() -> None:
    """``Granian(..., interface=Interfaces.WSGI)`` served with granian's own worker
    (``serve()`` given no ``spawn_target`` or ``target_loader`` of ours)."""
    tree = ast.parse(LAUNCHER.read_text())
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    (granian,) = [
        call
        for call in calls
        if isinstance(call.func, ast.Name) and call.func.id == "Granian"
    ]
    serves = [
        call
        for call in calls
        if isinstance(call.func, ast.Attribute) and call.func.attr == "serve"
    ]
    interface = {kw.arg: ast.unparse(kw.value) for kw in granian.keywords}["interface"]

    assert classes == []
    assert interface == "Interfaces.WSGI"
    assert [(call.args, call.keywords) for call in serves] == [([], [])]


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
