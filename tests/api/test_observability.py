"""What an operator sees: the JSON request line, /metrics and CORS
(docs/operations.md "Logs", "Metrics", "CORS")."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import capture

pytestmark = pytest.mark.django_db

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def request_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "powercontext.request"]


def as_json_line(record: logging.LogRecord) -> dict[str, Any]:
    """``record`` through the production JSON formatter, parsed back."""
    options = dict(settings.LOGGING["formatters"]["json"])
    factory = _import(options.pop("()"))
    line = factory(**options).format(record)
    assert "\n" not in line
    return dict(json.loads(line))


def _import(path: str) -> Callable[..., logging.Formatter]:
    module, _, name = path.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)  # type: ignore[no-any-return]


# --- The request line -----------------------------------------------------------------


def test_the_request_line_carries_its_fields(
    api: ApiClient, scope_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    response = api.get(
        f"/v1/scopes/{scope_id}/sources", headers={"traceparent": TRACEPARENT}
    )

    (record,) = request_records(caplog)
    line = as_json_line(record)
    assert line["request_id"] == response["X-PowerContext-Request-ID"]
    assert line["level"] == "INFO"
    assert line["logger"] == "powercontext.request"
    assert line["method"] == "GET"
    assert line["path"] == f"/v1/scopes/{scope_id}/sources"
    assert line["route"] == "v1/scopes/{scope_id}/sources"
    assert line["status"] == 200
    assert line["principal"] == "root"
    assert line["queries"] >= 1
    assert line["traceparent"] == TRACEPARENT
    assert isinstance(line["duration_ms"], float)
    assert re.match(r"\d{4}-\d\d-\d\dT", line["time"])


@pytest.mark.parametrize(
    "value",
    [
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nforged",
    ],
)
def test_a_malformed_traceparent_is_left_out(
    api: ApiClient, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    api.get("/v1/scopes", headers={"traceparent": value})

    (record,) = request_records(caplog)
    assert "traceparent" not in as_json_line(record)


def test_unprintable_paths_cannot_break_a_line(
    api: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    api.get("/v1/scopes/a%0A%7B%22forged%22%3A1%7D%1B/sources")

    (record,) = request_records(caplog)
    line = as_json_line(record)
    assert line["status"] == 404
    assert "\n" not in line["path"]
    assert "forged" in line["path"]


def test_no_secret_or_content_is_ever_logged(
    client_for: Callable[..., ApiClient],
    make_token: Callable[..., str],
    scope_id: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    token = make_token("*:admin")
    api = ApiClient(token)
    secret_text = "sk-live-0123456789abcdef-do-not-log"

    capture(api, scope_id, "c-secret", secret_text)
    api.put(
        f"/v1/scopes/{scope_id}/sessions/s-1/working-notes",
        {"notes": secret_text + " in notes"},
    )
    ApiClient(token + "x").get("/v1/scopes")

    lines = [json.dumps(as_json_line(record)) for record in caplog.records]
    assert lines
    assert not [line for line in lines if secret_text in line or token in line]


# --- /metrics -----------------------------------------------------------------------


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus' text format (0 when absent)."""
    for line in text.splitlines():
        metric, _, value = line.rpartition(" ")
        base, _, label_text = metric.partition("{")
        found = dict(re.findall(r'(\w+)="([^"]*)"', label_text))
        if base == name and found == labels:
            return float(value)
    return 0.0


def test_metrics_count_captures_and_requests(
    client_for: Callable[..., ApiClient], api: ApiClient, scope_id: str
) -> None:
    scraper = client_for("*:viewer")
    before = scraper.get("/metrics").content.decode()

    capture(api, scope_id, "m-1", "one")
    capture(api, scope_id, "m-1", "one")
    conflict = api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "m-1", "content": "two"},
    )
    response = scraper.get("/metrics")

    after = response.content.decode()
    assert conflict.status_code == 409
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    for outcome, added in (("accepted", 1), ("replayed", 1), ("conflict", 1)):
        name = "powercontext_captures_total"
        assert (
            sample(after, name, outcome=outcome) - sample(before, name, outcome=outcome)
            == added
        )
    histogram = "powercontext_http_request_duration_seconds_count"
    labels = {"route": "v1/sources/content", "method": "POST"}
    assert (
        sample(after, histogram, **labels, status="202")
        - sample(before, histogram, **labels, status="202")
        == 2
    )


@pytest.mark.parametrize("grant", ["scp_x:admin", None])
def test_metrics_need_a_star_grant(
    client_for: Callable[..., ApiClient], grant: str | None
) -> None:
    response = (client_for(grant) if grant else ApiClient()).get("/metrics")

    assert response.status_code == (403 if grant else 401)
    assert error_of(response)["code"] in ("forbidden", "unauthorized")


# --- CORS ---------------------------------------------------------------------------

ORIGIN = "https://app.example.com"


def preflight(origin: str) -> Any:
    return Client().options(
        "/v1/scopes",
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, if-match",
    )


def test_no_origin_is_allowed_by_default() -> None:
    response = preflight(ORIGIN)

    assert "Access-Control-Allow-Origin" not in response


def test_an_allowed_origin_gets_its_preflight_without_a_token(settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = [ORIGIN]

    allowed = preflight(ORIGIN)
    other = preflight("https://evil.example.com")

    assert allowed.status_code == 200
    assert allowed["Access-Control-Allow-Origin"] == ORIGIN
    assert "authorization" in allowed["Access-Control-Allow-Headers"]
    assert "if-match" in allowed["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Origin" not in other


def test_an_allowed_origin_reads_the_answer_and_its_headers(
    settings: Any, api: ApiClient
) -> None:
    settings.CORS_ALLOWED_ORIGINS = [ORIGIN]

    response = api.get("/v1/scopes", headers={"Origin": ORIGIN})
    refused = ApiClient().get("/v1/scopes", headers={"Origin": ORIGIN})

    assert response["Access-Control-Allow-Origin"] == ORIGIN
    exposed = response["Access-Control-Expose-Headers"].lower()
    assert "x-powercontext-request-id" in exposed
    assert "retry-after" in exposed
    assert refused.status_code == 401
    assert refused["Access-Control-Allow-Origin"] == ORIGIN
