"""The error envelope for every kind of failure, and no input producing a 5xx."""

from __future__ import annotations

import json
import logging

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import OperationalError
from rest_framework.exceptions import ValidationError

from sources import selectors
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

SCOPE_BODY = '{"title": "T", "summary": "S", "idempotency_key": "k"}'


@pytest.mark.parametrize(
    ("raw", "content_type", "status", "first_type"),
    [
        pytest.param(b"{bad", "application/json", 422, "json_invalid", id="malformed"),
        pytest.param(b"", "application/json", 422, "missing", id="empty-body"),
        pytest.param(b"[1, 2]", "application/json", 422, "dict_type", id="array-body"),
        pytest.param(b'"text"', "application/json", 422, "dict_type", id="string-body"),
        pytest.param(b"null", "application/json", 422, "dict_type", id="null-body"),
        pytest.param(
            b'{"title": "\xff\xfe"}',
            "application/json",
            422,
            "json_invalid",
            id="non-utf8",
        ),
        pytest.param(
            b'{"title": NaN}', "application/json", 422, "json_invalid", id="nan"
        ),
        pytest.param(
            b'{"title": Infinity}',
            "application/json",
            422,
            "json_invalid",
            id="infinity",
        ),
        pytest.param(
            b'{"a": 1, "a": 2}', "application/json", 422, "json_invalid", id="dup-keys"
        ),
        pytest.param(
            b"[" * 100_000 + b"]" * 100_000,
            "application/json",
            422,
            "json_invalid",
            id="deep",
        ),
        pytest.param(
            b'{"title": 1' + b"0" * 5000 + b"}",
            "application/json",
            422,
            "json_invalid",
            id="5000-digits",
        ),
        pytest.param(
            b'{"title": 1e400}',
            "application/json",
            422,
            "number_unsupported",
            id="1e400",
        ),
        pytest.param(
            b'{"title": 9007199254740992}',
            "application/json",
            422,
            "number_unsupported",
            id="2^53",
        ),
        pytest.param(
            b'{"title": "a\\u0000b"}',
            "application/json",
            422,
            "string_unstorable",
            id="nul-value",
        ),
        pytest.param(
            b'{"a\\u0000": "x"}',
            "application/json",
            422,
            "string_unstorable",
            id="nul-key",
        ),
        pytest.param(
            b'{"title": "\\ud800"}',
            "application/json",
            422,
            "string_unstorable",
            id="lone-surrogate",
        ),
        pytest.param(
            b'{"\\udfff": 1}',
            "application/json",
            422,
            "string_unstorable",
            id="surrogate-key",
        ),
        pytest.param(
            b'{"title": 5, "summary": "S", "idempotency_key": "k"}',
            "application/json",
            422,
            "string_type",
            id="wrong-type",
        ),
        pytest.param(
            b'{"title": "T", "summary": "S", "idempotency_key": "k", "x": 1}',
            "application/json",
            422,
            "extra_forbidden",
            id="unknown-field",
        ),
        pytest.param(SCOPE_BODY.encode(), "text/plain", 415, None, id="text-plain"),
        pytest.param(
            b"title=T", "application/x-www-form-urlencoded", 415, None, id="form"
        ),
    ],
)
def test_bad_body_gets_a_4xx_envelope(
    api: ApiClient, raw: bytes, content_type: str, status: int, first_type: str | None
) -> None:
    response = api.post("/v1/scopes", raw=raw, content_type=content_type)

    assert response.status_code == status
    error = error_of(response)
    assert error["code"] == (
        "unsupported_media_type" if status == 415 else "invalid_request"
    )
    if first_type is not None:
        assert error["details"]["errors"][0]["type"] == first_type
        assert error["details"]["errors"][0]["loc"][0] == "body"


def test_schema_error_names_every_field_with_its_location(api: ApiClient) -> None:
    response = api.post("/v1/scopes", {"title": 5, "summary": "", "extra": True})

    errors = error_of(response)["details"]["errors"]
    assert {(e["type"], tuple(e["loc"])) for e in errors} == {
        ("string_type", ("body", "title")),
        ("string_too_short", ("body", "summary")),
        ("missing", ("body", "idempotency_key")),
        ("extra_forbidden", ("body", "extra")),
    }
    assert all(set(e) == {"type", "loc", "msg"} for e in errors)


def test_unstorable_key_is_reported_escaped(api: ApiClient) -> None:
    response = api.post("/v1/scopes", raw=b'{"k\\ud800": 1}')

    assert error_of(response)["details"]["errors"][0]["loc"] == ["body", "k\\ud800"]


def test_body_over_the_limit_is_413_before_parsing(api: ApiClient, settings) -> None:
    body = b'{"title": "' + b"x" * (20 * 1024 * 1024) + b'"}'

    response = api.post("/v1/scopes", raw=body)

    assert response.status_code == 413
    assert error_of(response)["code"] == "request_too_large"


def test_body_limit_is_a_setting(api: ApiClient, settings) -> None:
    settings.POWERCONTEXT_MAX_BODY_BYTES = 10

    response = api.post("/v1/scopes", raw=SCOPE_BODY)

    assert response.status_code == 413


def test_body_at_the_limit_is_accepted(api: ApiClient, settings) -> None:
    settings.POWERCONTEXT_MAX_BODY_BYTES = len(SCOPE_BODY)

    response = api.post("/v1/scopes", raw=SCOPE_BODY)

    assert response.status_code == 201


def most_nodes(size: int) -> int:
    """docs/operations.md: 7 JSON nodes for every 32 bytes of the body, plus 262,144."""
    return 7 * size // 32 + 262_144


def array_body(item: bytes, count: int) -> bytes:
    """``{"content":[item,item,...]}``: ``count`` items."""
    return b'{"content":[' + b",".join([item] * count) + b"]}"


def test_a_body_denser_in_json_nodes_than_its_size_allows_is_413_unread(
    api: ApiClient, scope_id: str
) -> None:
    """Each ``[{}]`` is two nodes in five bytes; the object, its one member and the
    outer array are three more."""
    count = 600_000
    body = array_body(b"[{}]", count)
    assert 2 * count + 3 > most_nodes(len(body))

    response = api.post(f"/v1/scopes/{scope_id}/sources", raw=body)

    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "request_too_large"
    assert error["details"] == {
        "reason": "too_many_nodes",
        "nodes": 2 * count + 3,
        "max_nodes": most_nodes(len(body)),
    }


def test_a_body_at_its_most_json_nodes_is_read(api: ApiClient, scope_id: str) -> None:
    """The same shape with as many nodes as the limit allows is read and stored."""
    count = 600_000
    size = len(array_body(b"[{}]", count))
    while 2 * count + 3 > most_nodes(size):
        count, size = count - 1, size - len(b"[{}],")
    assert len(array_body(b"[{}]", count)) == size

    response = api.post(
        f"/v1/scopes/{scope_id}/sources", raw=array_body(b"[{}]", count)
    )

    assert response.status_code == 201, response.content[:300]


def test_brackets_and_colons_inside_strings_are_not_nodes(
    api: ApiClient, scope_id: str
) -> None:
    text = "[{:" * 150_000
    body = json.dumps({"content": text}).encode()
    assert sum(body.count(mark) for mark in (b"[", b"{", b":")) > most_nodes(len(body))

    response = api.post(f"/v1/scopes/{scope_id}/sources", raw=body)

    assert response.status_code == 201, response.content[:300]
    assert api.get(response["Location"]).json()["content"] == text


def test_the_densest_content_a_source_may_hold_is_accepted(
    api: ApiClient, scope_id: str, settings
) -> None:
    """Empty arrays, three bytes a node, up to the largest canonical content."""
    count = (settings.POWERCONTEXT_MAX_SOURCE_BYTES - 1) // 3
    body = array_body(b"[]", count)
    assert len(body) - len(b'{"content":}') <= settings.POWERCONTEXT_MAX_SOURCE_BYTES

    response = api.post(f"/v1/scopes/{scope_id}/sources", raw=body)

    assert response.status_code == 201, response.content[:300]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/v1/nope", 404, "not_found"),
        ("GET", "/", 404, "not_found"),
        ("GET", "/v1/scopes/", 404, "not_found"),
        ("POST", "/admin", 404, "not_found"),
        ("DELETE", "/v1/scopes", 405, "method_not_allowed"),
        ("PUT", "/health/live", 405, "method_not_allowed"),
    ],
)
def test_routing_errors_use_the_envelope(
    api: ApiClient, method: str, path: str, status: int, code: str
) -> None:
    response = api.request(method, path)

    assert response.status_code == status
    assert error_of(response)["code"] == code


def test_405_lists_the_allowed_methods(api: ApiClient) -> None:
    response = api.delete("/v1/scopes")

    assert "POST" in response["Allow"]
    assert "GET" in response["Allow"]


def test_unexpected_exception_is_a_bare_500_with_the_traceback_logged(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(**kwargs: object) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(selectors, "scope_get", explode)
    caplog.set_level(logging.ERROR)

    response = api.get("/v1/scopes/scp_x")

    assert response.status_code == 500
    error = error_of(response)
    assert error["code"] == "internal_error"
    assert "secret" not in response.content.decode()
    request_id = response["X-PowerContext-Request-ID"]
    logged = [
        r
        for r in caplog.records
        if r.exc_info and getattr(r, "request_id", None) == request_id
    ]
    assert logged, "the traceback is logged with the request id"


def test_a_drf_validation_error_is_a_422_of_value_errors(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our inputs are pydantic models; a DRF component raising its own
    ValidationError still gets the envelope, one value error per message."""

    def invalid(**kwargs: object) -> None:
        raise ValidationError({"a": ["first"], "b": {"c": ["second"]}})

    monkeypatch.setattr(selectors, "scope_get", invalid)

    response = api.get("/v1/scopes/scp_x")

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"] == [
        {"type": "value_error", "loc": ["body"], "msg": "first"},
        {"type": "value_error", "loc": ["body"], "msg": "second"},
    ]


def test_database_outage_is_503_unavailable(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(**kwargs: object) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(selectors, "scope_get", unreachable)

    response = api.get("/v1/scopes/scp_x")

    assert response.status_code == 503
    assert error_of(response)["code"] == "unavailable"


def test_database_outage_outside_drf_is_503_unavailable_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The admin reads its session from the database: an outage there is no 500."""

    def unreachable(self: SessionStore) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(SessionStore, "load", unreachable)
    client = ApiClient()
    client.client.cookies["sessionid"] = "s" * 32

    response = client.get("/admin/")

    assert response.status_code == 503
    assert error_of(response)["code"] == "unavailable"


def test_other_failures_outside_drf_stay_500(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self: SessionStore) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(SessionStore, "load", explode)
    client = ApiClient()
    client.client.cookies["sessionid"] = "s" * 32
    client.client.raise_request_exception = False

    response = client.get("/admin/")

    assert response.status_code == 500
    assert error_of(response)["code"] == "internal_error"


def test_accept_header_does_not_cause_406(api: ApiClient) -> None:
    response = api.get("/v1/scopes", headers={"Accept": "text/html"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("GET", None),
        ("POST", {"a": 1}),
        ("PUT", {"a": 1}),
        ("PATCH", {"a": 1}),
        ("DELETE", None),
        ("OPTIONS", None),
    ],
)
@pytest.mark.parametrize(
    "path", ["/v1/nope", "/nope", "/v1/scopes/x/nope/y", "/static"]
)
@pytest.mark.parametrize("authenticated", [True, False])
def test_every_method_on_an_unknown_route_is_the_404_envelope(
    api: ApiClient, method: str, body: object, path: str, authenticated: bool
) -> None:
    """Including a POST without a CSRF token: only the admin uses CSRF."""
    client = api if authenticated else ApiClient()

    response = client.request(method, path, body)

    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
