"""The service's version: ``pyproject.toml``'s ``[project] version``, read once.

``pyproject.toml`` is the one place a release changes the number; the installed
package's metadata carries it (``pip install -e .`` writes it), and
``manage.py --version``, the ``X-PowerContext-Version`` header of
``/health/live``, the OpenAPI document's ``info.version`` and the MCP
``serverInfo.version`` all show this value. ``CHANGELOG.md`` lists what each
version changed and what an upgrade to it needs.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "powercontext-service"


def service_version() -> str:
    """The installed distribution's version, or ``"unknown"`` when the code runs
    from a checkout that was never installed (``pip install -e .`` fixes it)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


VERSION = service_version()
