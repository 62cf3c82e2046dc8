"""What may import what (docs/architecture.md, "What may import what"), read from
the source files themselves.

Every import statement counts, at the top of a module or inside a function: the
rules are about what a module needs, not when it loads it. Each row of the
table is a test below (its name says which), parametrized over the modules it
governs; one more test finds any cycle between the rooms.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from functools import cache
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
    "serve.py",
)
APPS = ("sources", "sessions_app", "handoffs", "lifecycle")
NOT_IMPORTED_BY = {
    "sources": ("sessions_app", "handoffs", "lifecycle"),
    "sessions_app": ("handoffs", "lifecycle"),
    "handoffs": ("sessions_app", "lifecycle"),
}
# What the kernel may import besides the standard library and itself.
KERNEL_LIBRARIES = ("django", "pydantic", "pydantic_core")
KERNEL_LIBRARIES_WHERE = {
    ("powercontext", "db"): ("psycopg", "psycopg_pool"),  # the database backend
    ("powercontext", "metrics.py"): ("prometheus_client",),  # the /metrics registry
}
ACCESS = "powercontext.access"
ACCESS_TO_SOURCES = (Path("powercontext/access/scopes.py"),)
ACCESS_SOURCES_MODULES = ("sources.selectors", "sources.exceptions", "sources.signals")
API_ACCESS_MODULES = ("powercontext.access.tokens",)
MCP_OPERATION_IMPORTERS = (Path("powercontext/mcp_server/tools.py"),)
WRITERS = ("powercontext.access.tokens", "powercontext.access.grants")
ADMIN_WRITES = {Path("powercontext/access/admin.py"): ("powercontext.access.tokens",)}


def modules() -> list[Path]:
    return sorted(
        path.relative_to(ROOT)
        for directory in SOURCE_DIRS
        for path in (ROOT / directory).rglob("*.py")
        if "migrations" not in path.parts
    )


def module_path(module: str) -> Path | None:
    """The repository file of a dotted module name (a package's ``__init__``)."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(ROOT)
    return None


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """Each module ``path`` imports and its line, at any depth of the module.

    Relative imports are resolved, and ``from package import name`` counts as
    importing ``package.name`` when that is a module (``from . import views``).
    """
    package = path.parent.parts
    for node in ast.walk(ast.parse((ROOT / path).read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module or "").split("."))).strip(".")
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found = module_path(submodule) is not None
                yield (submodule if found else module), node.lineno


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


def is_entry_point(path: Path) -> bool:
    """What Django calls into: views, urls, admin, management commands."""
    return path.name in ("views.py", "urls.py", "admin.py") or (
        "management" in path.parts
    )


def app_of(path: Path) -> str | None:
    """``sources``... or ``powercontext.access``/``powercontext.backups``."""
    if path.parts[0] in APPS:
        return path.parts[0]
    if path.parts[:2] in (("powercontext", "access"), ("powercontext", "backups")):
        return ".".join(path.parts[:2])
    return None


def is_domain(path: Path) -> bool:
    """An app's models, services, selectors, inputs, renderers, schemas and the
    rule modules beside them: everything of an app but its entry points."""
    return app_of(path) is not None and not is_entry_point(path)


def starts_with(module: str, packages: tuple[str, ...]) -> bool:
    return any(
        module == package or module.startswith(package + ".") for package in packages
    )


def is_layer(module: str, layer: str) -> bool:
    """Whether ``module`` is in an app's ``layer`` (a module or a package)."""
    return layer in module.split(".")[1:] and starts_with(
        module, (*APPS, ACCESS, "powercontext.backups")
    )


def violations(path: Path, wrong: Callable[[str], bool]) -> list[str]:
    """Each import of ``path`` that ``wrong`` refuses, as ``path:line: module``."""
    return [
        f"{path}:{line}: {module}" for module, line in imported(path) if wrong(module)
    ]


def governed(rule: Callable[[Path], bool]) -> list[Path]:
    """The modules a rule applies to."""
    return [path for path in modules() if rule(path)]


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
    assert is_domain(Path("powercontext/access/services.py"))
    assert not is_domain(Path("sources/management/commands/seed_sources.py"))
    assert is_layer("sources.services.capture", "services")
    assert not is_layer("powercontext.api.requests", "services")


def test_from_package_import_module_counts_as_the_module() -> None:
    """``from handoffs import operations`` must be seen as importing the
    operations module, not only the package."""
    assert ("handoffs.operations", 12) in set(
        imported(Path("powercontext/mcp_server/tools.py"))
    )


# --- kernel ---------------------------------------------------------------------------


def _kernel_may_import(path: Path, module: str) -> bool:
    top = module.split(".")[0]
    extra = next(
        (
            libs
            for where, libs in KERNEL_LIBRARIES_WHERE.items()
            if path.parts[:2] == where
        ),
        (),
    )
    if top == "powercontext":
        target = module_path(module)
        return target is None or is_kernel(target)
    return top in sys.stdlib_module_names or top in (*KERNEL_LIBRARIES, *extra)


@pytest.mark.parametrize("path", governed(is_kernel), ids=str)
def test_kernel_imports_only_django_pydantic_and_the_standard_library(
    path: Path,
) -> None:
    wrong = violations(path, lambda module: not _kernel_may_import(path, module))
    assert not wrong, "the kernel imports beyond its libraries: " + ", ".join(wrong)


@pytest.mark.parametrize("path", governed(is_kernel), ids=str)
def test_kernel_imports_no_app(path: Path) -> None:
    rooms = (*APPS, *(f"powercontext.{room}" for room in PROJECT_ROOMS))
    wrong = violations(path, lambda module: starts_with(module, rooms))
    assert not wrong, "the kernel imports an app: " + ", ".join(wrong)


# --- powercontext/access --------------------------------------------------------------


@pytest.mark.parametrize("path", governed(lambda p: app_of(p) == ACCESS), ids=str)
def test_access_imports_sources_only_in_its_scopes_module(path: Path) -> None:
    allowed = ACCESS_SOURCES_MODULES if path in ACCESS_TO_SOURCES else ()
    wrong = violations(
        path,
        lambda module: starts_with(module, APPS) and not starts_with(module, allowed),
    )
    assert not wrong, "access imports sources beyond scopes.py: " + ", ".join(wrong)


# --- powercontext/api -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path", governed(lambda p: p.parts[:2] == ("powercontext", "api")), ids=str
)
def test_api_imports_of_the_apps_only_access_tokens(path: Path) -> None:
    apps = (*APPS, ACCESS, "powercontext.backups", "powercontext.mcp_server")
    wrong = violations(
        path,
        lambda module: (
            starts_with(module, apps) and not starts_with(module, API_ACCESS_MODULES)
        ),
    )
    assert not wrong, "powercontext.api imports an app: " + ", ".join(wrong)


# --- an app's domain modules ----------------------------------------------------------


@pytest.mark.parametrize("path", governed(is_domain), ids=str)
def test_domain_modules_import_no_views_urls_admin_or_commands(path: Path) -> None:
    def wrong_module(module: str) -> bool:
        target = module_path(module)
        return (
            target is not None
            and app_of(target) is not None
            and (is_entry_point(target))
        )

    wrong = violations(path, wrong_module)
    assert not wrong, "a domain module imports an entry point: " + ", ".join(wrong)


@pytest.mark.parametrize(
    "path", governed(lambda p: is_domain(p) and p.parts[0] in APPS), ids=str
)
def test_domain_modules_of_the_apps_import_no_access_mcp_or_backups(
    path: Path,
) -> None:
    rooms = (ACCESS, "powercontext.mcp_server", "powercontext.backups")
    wrong = violations(path, lambda module: starts_with(module, rooms))
    assert not wrong, "an app imports a project room: " + ", ".join(wrong)


@pytest.mark.parametrize(
    "path", governed(lambda p: app_of(p) == "powercontext.backups"), ids=str
)
def test_backups_imports_only_the_kernel(path: Path) -> None:
    others = (
        *APPS,
        *(f"powercontext.{room}" for room in PROJECT_ROOMS if room != "backups"),
    )
    wrong = violations(path, lambda module: starts_with(module, others))
    assert not wrong, "backups imports another app: " + ", ".join(wrong)


def dotted(path: Path) -> str:
    return ".".join(path.with_suffix("").parts).removesuffix(".__init__")


def reached(path: Path) -> dict[Path, str]:
    """Every repository module that importing ``path`` loads, with the import
    chain that reaches it (``a.py:3: b -> b.py:7: c``)."""
    chains: dict[Path, str] = {}
    frontier = [(path, "")]
    while frontier:
        current, chain = frontier.pop()
        for module, line in imported(current):
            target = module_path(module)
            if target is not None and target not in chains and target != path:
                chains[target] = f"{chain}{current}:{line}: {module}"
                frontier.append((target, chains[target] + " -> "))
    return chains


@pytest.mark.parametrize(
    "path", governed(lambda p: p.name == "inputs.py" and app_of(p) is not None), ids=str
)
def test_inputs_import_no_service_or_selector(path: Path) -> None:
    """Directly or through another module: a request model loads no query."""
    wrong = [
        chain
        for target, chain in reached(path).items()
        if is_layer(dotted(target), "services") or is_layer(dotted(target), "selectors")
    ]
    assert not wrong, "a request model imports a service or selector: " + ", ".join(
        wrong
    )


@pytest.mark.parametrize(
    "path", [p for p in modules() if p.parts[0] in NOT_IMPORTED_BY], ids=str
)
def test_apps_import_only_the_apps_below_them(path: Path) -> None:
    below = NOT_IMPORTED_BY[path.parts[0]]
    wrong = violations(path, lambda module: starts_with(module, below))
    assert not wrong, f"{path.parts[0]} imports an app built on it: " + ", ".join(wrong)


# --- HTTP code ------------------------------------------------------------------------


@pytest.mark.parametrize("path", governed(lambda p: not is_http_room(p)), ids=str)
def test_only_the_http_rooms_import_http_code(path: Path) -> None:
    wrong = violations(path, lambda module: starts_with(module, HTTP_PACKAGES))
    assert not wrong, (
        "HTTP code outside views, urls and powercontext/api: " + ", ".join(wrong)
    )


# --- powercontext/mcp_server ----------------------------------------------------------


@pytest.mark.parametrize(
    "path", governed(lambda p: p.parts[:2] == ("powercontext", "mcp_server")), ids=str
)
def test_mcp_server_reaches_the_apps_only_through_their_operations(
    path: Path,
) -> None:
    def wrong_module(module: str) -> bool:
        target = module_path(module)
        if target is None or app_of(target) is None:
            return False
        return target.name != "operations.py" or path not in MCP_OPERATION_IMPORTERS

    wrong = violations(path, wrong_module)
    assert not wrong, (
        "the MCP server imports an app beyond its operations: " + ", ".join(wrong)
    )


@pytest.mark.parametrize(
    "path", governed(lambda p: p.parts[:2] == ("powercontext", "mcp_server")), ids=str
)
def test_mcp_server_imports_only_the_sdks_types(path: Path) -> None:
    wrong = violations(path, lambda module: starts_with(module, ("mcp",)))
    assert not wrong, "the MCP server imports the whole SDK: " + ", ".join(wrong)


# --- admin ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", governed(lambda p: p.name == "admin.py"), ids=str)
def test_admin_imports_no_service_that_writes(path: Path) -> None:
    allowed = ADMIN_WRITES.get(path, ())
    wrong = violations(
        path,
        lambda module: (
            (is_layer(module, "services") or starts_with(module, WRITERS))
            and not starts_with(module, allowed)
        ),
    )
    assert not wrong, "an admin imports a writing service: " + ", ".join(wrong)


# --- no cycle between rooms -----------------------------------------------------------


def room_of(path: Path) -> str:
    """The room of a module: the kernel, a project room, or an app's domain or
    entry-point side (an app's views import its services, never the reverse)."""
    if is_kernel(path):
        return "kernel"
    app = app_of(path)
    if app is not None:
        return f"{app} (entry points)" if is_entry_point(path) else app
    if path.parts[0] == "powercontext" and len(path.parts) > 2:
        return f"powercontext.{path.parts[1]}"
    return "project entry points"


@cache
def room_graph() -> dict[str, dict[str, str]]:
    """room -> {room it imports: one import that makes the edge}."""
    graph: dict[str, dict[str, str]] = {}
    for path in modules():
        room = room_of(path)
        edges = graph.setdefault(room, {})
        for module, line in imported(path):
            target = module_path(module)
            if target is not None and room_of(target) != room:
                edges.setdefault(room_of(target), f"{path}:{line}: {module}")
    return graph


def path_back(start: str) -> list[str] | None:
    """The imports of a path from ``start`` back to it, None when there is none."""
    graph = room_graph()
    trail: dict[str, tuple[str, str]] = {}
    frontier = [start]
    while frontier:
        room = frontier.pop()
        for target, why in graph.get(room, {}).items():
            if target == start:
                steps = [why]
                while room != start:
                    room, step = trail[room]
                    steps.append(step)
                return steps[::-1]
            if target not in trail:
                trail[target] = (room, why)
                frontier.append(target)
    return None


@pytest.mark.parametrize("room", sorted(room_graph()))
def test_no_import_path_leads_back_to_a_room(room: str) -> None:
    assert path_back(room) is None, f"{room} imports itself through: " + " -> ".join(
        path_back(room) or []
    )


def test_the_room_graph_has_the_apps_in_it() -> None:
    graph = room_graph()
    assert "sources" in graph["sessions_app"]
    assert "powercontext.access" in graph["powercontext.api"]
