"""What may import what (docs/architecture.md, "What may import what"), read from
the source files themselves.

HTTP code - DRF, drf-spectacular, django-cors-headers, ``powercontext.api`` - is
imported only by the HTTP rooms: views (an app's ``views.py``), ``urls.py``, ``powercontext/api/``,
``powercontext/mcp_server/`` and the WSGI/ASGI entry points. The kernel imports no app;
``sources`` imports none of the apps built on it, and those do not import each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("powercontext", "sources", "sessions_app", "handoffs", "lifecycle")
HTTP_PACKAGES = ("rest_framework", "drf_spectacular", "corsheaders", "powercontext.api")
HTTP_ROOMS = (("powercontext", "api"), ("powercontext", "mcp_server"))
# The rooms that are not the kernel, inside the powercontext package.
PROJECT_ROOMS = ("access", "api", "backups", "mcp_server", "settings", "templates")
PROJECT_MODULES = (
    "urls.py",
    "wsgi.py",
    "asgi.py",
    "gunicorn_logs.py",
)
APPS = ("sources", "sessions_app", "handoffs", "lifecycle")
NOT_IMPORTED_BY = {
    "sources": ("sessions_app", "handoffs", "lifecycle"),
    "sessions_app": ("handoffs", "lifecycle"),
    "handoffs": ("sessions_app", "lifecycle"),
}


def modules() -> list[Path]:
    return sorted(
        path.relative_to(ROOT)
        for directory in SOURCE_DIRS
        for path in (ROOT / directory).rglob("*.py")
        if "migrations" not in path.parts
    )


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """Each module ``path`` imports (relative imports resolved) and its line."""
    package = path.parent.parts
    for node in ast.walk(ast.parse((ROOT / path).read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            yield (
                ".".join((*base, *(node.module or "").split("."))).strip("."),
                (node.lineno),
            )


def is_http_room(path: Path) -> bool:
    return (
        path.name in ("views.py", "urls.py")
        or path.parts[:2] in HTTP_ROOMS
        or path.parts in (("powercontext", "wsgi.py"), ("powercontext", "asgi.py"))
    )


def is_kernel(path: Path) -> bool:
    if path.parts[0] != "powercontext":
        return False
    if len(path.parts) == 2:
        return path.name not in PROJECT_MODULES
    return path.parts[1] not in PROJECT_ROOMS


def starts_with(module: str, packages: tuple[str, ...]) -> bool:
    return any(
        module == package or module.startswith(package + ".") for package in packages
    )


def test_the_modules_are_found() -> None:
    found = modules()
    assert Path("powercontext/mcp_server/views.py") in found
    assert is_http_room(Path("powercontext/mcp_server/views.py"))
    assert not is_http_room(
        Path("sources/views/registry.py")
    )  # a view module is views.py
    assert is_http_room(Path("lifecycle/views.py"))
    assert not is_http_room(Path("sources/services/capture.py"))
    assert is_kernel(Path("powercontext/db/immutable.py"))
    assert not is_kernel(Path("powercontext/access/tokens.py"))


@pytest.mark.parametrize("path", modules(), ids=str)
def test_only_the_http_rooms_import_http_code(path: Path) -> None:
    if is_http_room(path):
        return
    wrong = [
        f"{path}:{line}: {module}"
        for module, line in imported(path)
        if starts_with(module, HTTP_PACKAGES)
    ]
    assert not wrong, (
        "HTTP code outside views, urls and powercontext/api: " + ", ".join(wrong)
    )


@pytest.mark.parametrize("path", [p for p in modules() if is_kernel(p)], ids=str)
def test_the_kernel_imports_no_app(path: Path) -> None:
    rooms = (*APPS, *(f"powercontext.{room}" for room in PROJECT_ROOMS))
    wrong = [
        f"{path}:{line}: {module}"
        for module, line in imported(path)
        if starts_with(module, rooms)
    ]
    assert not wrong, "the kernel imports an app: " + ", ".join(wrong)


@pytest.mark.parametrize(
    "path", [p for p in modules() if p.parts[0] in NOT_IMPORTED_BY], ids=str
)
def test_apps_import_only_the_apps_below_them(path: Path) -> None:
    below = NOT_IMPORTED_BY[path.parts[0]]
    wrong = [
        f"{path}:{line}: {module}"
        for module, line in imported(path)
        if starts_with(module, below)
    ]
    assert not wrong, f"{path.parts[0]} imports an app built on it: " + ", ".join(wrong)
