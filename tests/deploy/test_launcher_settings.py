"""What the launcher (``powercontext.serve``) hands granian, read from the
environment without starting it: the bind address, the worker's memory limit,
the server's log lines and the variables it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from granian.constants import RuntimeModes

from powercontext import serve
from powercontext.settings.envfile import SettingsEnv


@pytest.mark.parametrize(
    ("bind", "address"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("0.0.0.0:9000", ("0.0.0.0", 9000)),
        ("[::1]:8001", ("::1", 8001)),
    ],
)
def test_bind_addresses(bind: str, address: tuple[str, int]) -> None:
    assert serve.bind_address(bind) == address


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.1:http", ""])
def test_a_bind_address_without_a_port_is_refused(bind: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="POWERCONTEXT_BIND"):
        serve.bind_address(bind)


def test_a_workers_memory_limit_is_its_share_of_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POWERCONTEXT_WORKERS", "3")
    monkeypatch.delenv("POWERCONTEXT_MEMORY_BUDGET_BYTES", raising=False)

    assert serve.default_worker_max_rss() == 682


@pytest.mark.parametrize(
    ("log_format", "formatter"),
    [
        ("json", {"()": "powercontext.logformat.server_formatter"}),
        ("plain", {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}),
    ],
)
def test_the_servers_lines_follow_the_log_format_with_no_access_lines(
    log_format: str, formatter: dict[str, str]
) -> None:
    config = serve.server_logging(log_format)

    assert config["formatters"]["server"] == formatter
    assert config["handlers"]["server"]["stream"] == "ext://sys.stderr"
    assert set(config["loggers"]) == {"_granian", "granian.access"}


def test_an_unknown_log_level_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERCONTEXT_SERVER_LOG_LEVEL", "loud")

    with pytest.raises(ImproperlyConfigured, match="POWERCONTEXT_SERVER_LOG_LEVEL"):
        serve.granian_server(SettingsEnv())


def test_each_worker_runs_one_single_threaded_runtime_and_the_shapes_threads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """granian's default runtime for WSGI is its multi-threaded one; the launcher
    asks for the single-threaded one (measured faster, decision 0044)."""
    # The launcher writes these for its workers: set here, monkeypatch restores them.
    monkeypatch.setenv(serve.SERVE_MARKER, "")
    monkeypatch.setenv("POWERCONTEXT_WORKERS", "3")
    monkeypatch.setenv("POWERCONTEXT_THREADS", "2")
    monkeypatch.setenv(serve.METRICS_DIR_VARIABLE, str(tmp_path))

    server = serve.granian_server(SettingsEnv())

    assert server.runtime_mode == RuntimeModes.st
    assert server.runtime_threads == 1
    assert (server.workers, server.blocking_threads) == (3, 2)
