"""A live server for the official client: our service under granian, production
settings, on a fresh database of the suite's kind (PostgreSQL or SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.robustness.conftest import PRODUCTION, serving_production, suite_database
from tests.robustness.processes import manage, service_env


@dataclass(frozen=True)
class LiveService:
    url: str
    token: str  # *:admin
    env: dict[str, str]

    def mint(self, grant: str, name: str) -> str:
        out = manage(self.env, "createtoken", "--name", name, "--grant", grant)
        return out.splitlines()[-1]


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    directory = tmp_path_factory.mktemp("mcp-live")
    static = directory / "static"
    env = service_env("postgres://unused@127.0.0.1/unused", PRODUCTION)
    manage({**env, "DJANGO_STATIC_ROOT": str(static)}, "collectstatic", "--noinput")
    with (
        suite_database(directory) as url,
        serving_production(url, directory, static) as service,
    ):
        yield LiveService(service.url, service.token, service.server.env)
