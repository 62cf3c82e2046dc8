"""Only ASCII digits are digits on the wire: queries, date-times, Content-Length.

Python's ``int()``, ``str.isdigit()`` and ``\\d`` in a ``str`` pattern all take any
Unicode decimal digit, so an Arabic-Indic five would otherwise read as 5.
"""

from __future__ import annotations

import pytest

from sources.models import CaptureAttempt, ContentSource, Scope
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

NON_ASCII_INTEGERS = [
    "\u0665",  # Arabic-Indic five
    "\u06f5",  # extended Arabic-Indic five
    "\uff15",  # fullwidth five
    "\u096b",  # Devanagari five
    "\U0001d7d3",  # mathematical bold five
    "1\u0660",  # one, Arabic-Indic zero
    "\uff11\uff10",  # fullwidth ten
]

# Every integer query parameter, with the status the route gives a non-integer.
INTEGER_PARAMETERS = [
    ("/v1/scopes", "limit", 422),
    ("/v1/scopes/{scope}/sources", "limit", 400),
    ("/v1/scopes/{scope}/sources/window", "after", 400),
    ("/v1/scopes/{scope}/sources/window", "limit", 400),
    ("/v1/scopes/{scope}/source-audit", "limit", 400),
    ("/v1/scopes/{scope}/source-audit", "after_position", 400),
    ("/v1/scopes/{scope}/source-attempts/content/s-1", "limit", 400),
]


@pytest.mark.parametrize(("path", "parameter", "status"), INTEGER_PARAMETERS)
@pytest.mark.parametrize("value", ["abc", *NON_ASCII_INTEGERS])
def test_integer_query_parameters_take_ascii_digits_only(
    api: ApiClient, scope_id: str, path: str, parameter: str, status: int, value: str
) -> None:
    response = api.get(path.format(scope=scope_id), query={parameter: value})

    assert response.status_code == status
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [item["loc"] for item in error["details"]["errors"]] == [
        ["query", parameter]
    ]
    assert [item["type"] for item in error["details"]["errors"]] == ["int_parsing"]


@pytest.mark.parametrize(
    "expires_at",
    [
        "\uff12\uff10\uff13\uff10-01-01T00:00:00Z",  # fullwidth year
        "\u0662\u0660\u0663\u0660-01-01T00:00:00Z",  # Arabic-Indic year
        "2030-\u0660\u0661-01T00:00:00Z",  # Arabic-Indic month
        "2030-01-01T00:00:00.\u0665Z",  # Arabic-Indic fraction
        "2030-01-01T00:00:00+\u0660\u0661:00",  # Arabic-Indic offset
        "2030-01-01T00:00:00Z\n",
    ],
)
def test_expires_at_with_non_ascii_digits_is_422_and_writes_nothing(
    api: ApiClient, scope_id: str, expires_at: str
) -> None:
    response = api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": scope_id,
            "source_id": "n-1",
            "content": "a note",
            "session_id": "sess-1",
            "note_kind": "inspection",
            "expires_at": expires_at,
        },
    )

    assert response.status_code == 422
    error = error_of(response)
    assert [item["loc"] for item in error["details"]["errors"]] == [
        ["body", "expires_at"]
    ]
    assert not ContentSource.objects.exists()
    assert not CaptureAttempt.objects.exists()


@pytest.mark.parametrize(
    "content_length", ["\u00b2", *NON_ASCII_INTEGERS, "+60", "-1", "6_0"]
)
def test_content_length_that_is_not_ascii_digits_is_400_and_writes_nothing(
    api: ApiClient, content_length: str
) -> None:
    body = b'{"title": "t", "summary": "s", "idempotency_key": "k"}'

    response = api.post(
        "/v1/scopes", raw=body, headers={"Content-Length": content_length}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_request"
    assert not Scope.objects.exists()
