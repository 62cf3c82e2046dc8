"""The admin audit console for envelopes and revisions: read-only, exact search,
meta pretty-printed, bounded counts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.models import EnvelopeRevision, SessionEnvelope
from tests.conftest import ApiClient, create_scope
from tests.sessions_app.conftest import session_path

pytestmark = pytest.mark.django_db

ENVELOPES = "/admin/sessions_app/sessionenvelope/"
REVISIONS = "/admin/sessions_app/enveloperevision/"


@pytest.fixture
def envelopes(api: ApiClient) -> dict[str, str]:
    first = create_scope(api, key="first")
    second = create_scope(api, key="second")
    api.put(session_path(first, "Sess-A"), {"meta": {"personaId": "p-é"}})
    api.patch(session_path(first, "Sess-A"), {"meta": {"cwd": "/w", "turnCursor": 2}})
    api.put(session_path(first, "sess-b"), {"meta": {}})
    api.put(session_path(second, "Sess-A"), {"meta": {"x-n": 1}})
    return {"first": first, "second": second}


def sessions_listed(response: Any) -> list[str]:
    return sorted(re.findall(r'field-session_id">([^<]*)<', response.content.decode()))


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("", ["Sess-A", "Sess-A", "sess-b"]),
        ("Sess-A", ["Sess-A", "Sess-A"]),
        ("sess-a", []),  # exact: case-sensitive
        ("Sess", []),  # exact: no substring match
        ("{first}", ["Sess-A", "sess-b"]),
        ("{second}", ["Sess-A"]),
    ],
)
def test_envelope_changelist_searches_identity_exactly(
    admin_client: Any, envelopes: dict[str, str], term: str, expected: list[str]
) -> None:
    response = admin_client.get(ENVELOPES, {"q": term.format(**envelopes)})

    assert response.status_code == 200
    assert sessions_listed(response) == expected


def test_envelope_page_shows_meta_pretty_printed_and_read_only(
    admin_client: Any, envelopes: dict[str, str]
) -> None:
    envelope = SessionEnvelope.objects.get(
        scope_id=envelopes["first"], session_id="Sess-A"
    )

    page = admin_client.get(f"{ENVELOPES}{envelope.pk}/change/").content.decode()

    assert "<pre" in page
    assert (
        "\n  &quot;cwd&quot;: &quot;/w&quot;,\n  &quot;personaId&quot;: &quot;p-é&quot;"
        in page
    )
    assert 'name="session_id"' not in page
    assert f"{REVISIONS}?envelope__id__exact={envelope.pk}" in page


def test_the_envelope_links_to_its_revisions(
    admin_client: Any, envelopes: dict[str, str]
) -> None:
    envelope = SessionEnvelope.objects.get(
        scope_id=envelopes["first"], session_id="Sess-A"
    )

    response = admin_client.get(REVISIONS, {"envelope__id__exact": envelope.pk})

    assert response.status_code == 200
    assert response.content.decode().count('class="field-version"') == 2


def test_revision_page_rebuilds_its_meta(
    admin_client: Any, envelopes: dict[str, str]
) -> None:
    revision = EnvelopeRevision.objects.get(
        envelope__scope_id=envelopes["first"],
        envelope__session_id="Sess-A",
        version=2,
    )

    page = admin_client.get(f"{REVISIONS}{revision.pk}/change/").content.decode()

    assert "&quot;turnCursor&quot;: 2" in page
    assert "&quot;personaId&quot;: &quot;p-é&quot;" in page
    assert revision.request_id in page


@pytest.mark.parametrize(
    ("term", "count"),
    [("{first}", 3), ("Sess-A", 3), ("sess-b", 1), ("root", 4), ("Root", 0)],
)
def test_revision_changelist_searches_identity_exactly(
    admin_client: Any, envelopes: dict[str, str], term: str, count: int
) -> None:
    response = admin_client.get(REVISIONS, {"q": term.format(**envelopes)})

    assert response.status_code == 200
    assert response.content.decode().count('class="field-version"') == count


def test_revision_changelist_searches_by_request_id(
    admin_client: Any, envelopes: dict[str, str]
) -> None:
    revision = EnvelopeRevision.objects.order_by("id").first()
    assert revision is not None

    response = admin_client.get(REVISIONS, {"q": revision.request_id})

    assert response.content.decode().count('class="field-version"') == 1


@pytest.mark.parametrize("url", [ENVELOPES, REVISIONS])
def test_admin_cannot_add(admin_client: Any, url: str) -> None:
    assert admin_client.get(f"{url}add/").status_code == 403


@pytest.mark.parametrize(
    ("url", "model"), [(ENVELOPES, SessionEnvelope), (REVISIONS, EnvelopeRevision)]
)
def test_admin_refuses_change_and_delete(
    admin_client: Any, envelopes: dict[str, str], url: str, model: Any
) -> None:
    row = model.objects.order_by("id").first()

    change = admin_client.post(f"{url}{row.pk}/change/", {"session_id": "x"})
    delete = admin_client.post(f"{url}{row.pk}/delete/", {"post": "yes"})

    assert (change.status_code, delete.status_code) == (403, 403)
    assert model.objects.filter(pk=row.pk).exists()
    assert not SessionEnvelope.objects.filter(session_id="x").exists()


@pytest.mark.parametrize("url", [ENVELOPES, REVISIONS])
def test_changelists_offer_no_bulk_actions_and_cap_their_counts(
    admin_client: Any, envelopes: dict[str, str], url: str
) -> None:
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(url)

    assert response.status_code == 200
    assert b'name="action"' not in response.content
    counts = [
        q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper()
    ]
    assert counts
    assert all("LIMIT" in sql.upper() for sql in counts), counts
