"""The request line and the metrics are written when the server closes the response.

A WSGI server closes the response once it has taken the body; Django then runs the
response's closers. ``RequestIdMiddleware`` writes after them, so ``duration_ms``
leaves the line out (powercontext/api/middleware.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from django.core.signals import request_finished
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from powercontext.api import middleware
from powercontext.api.middleware import REQUEST_ID_HEADER, RequestIdMiddleware


@pytest.fixture(autouse=True)
def no_database_at_close() -> Iterator[None]:
    """Closing a response ends Django's request, which looks at the database
    connections; these tests have none (as Django's test client does)."""
    request_finished.disconnect(close_old_connections)
    yield
    request_finished.connect(close_old_connections)


def answered(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"answer", status=202)


def request_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "powercontext.request"]


def test_the_line_waits_for_the_server_to_close_the_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    response = RequestIdMiddleware(answered)(RequestFactory().post("/v1/anything"))

    assert request_records(caplog) == []  # the server has not taken the body
    assert b"".join(response) == b"answer"
    assert request_records(caplog) == []
    response.close()  # what the server does once it has the body
    (line,) = request_records(caplog)
    assert line.getMessage().startswith("POST /v1/anything 202 ")
    assert line.request_id == response[REQUEST_ID_HEADER]  # type: ignore[attr-defined]


def test_a_failure_after_sending_is_logged_with_the_request_id(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Django ignores what a closer raises; the middleware logs it instead."""

    def broken(*args: object) -> None:
        raise RuntimeError("metrics directory is gone")

    monkeypatch.setattr(middleware.metrics, "request_observed", broken)
    caplog.set_level(logging.INFO, logger="powercontext.request")

    response = RequestIdMiddleware(answered)(RequestFactory().get("/v1/anything"))
    response.close()

    failure = [r for r in request_records(caplog) if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failure] == [
        "Writing the request line or the metrics failed"
    ]
    assert failure[0].exc_info is not None
    assert "metrics directory is gone" in str(failure[0].exc_info[1])
    assert failure[0].request_id == response[REQUEST_ID_HEADER]  # type: ignore[attr-defined]
