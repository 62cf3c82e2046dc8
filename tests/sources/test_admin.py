"""The admin audit console: filters, exact identity search, bounded counts."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(api: ApiClient, scope_id: str) -> str:
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "Plain", "content": "x"},
    )
    for source_id, session, expiry in [
        ("n1", "sess-A", None),
        ("n2", "sess-B", (timezone.now() + timedelta(seconds=1)).isoformat()),
    ]:
        api.post(
            "/v1/sources/working-notes",
            {
                "scope_id": scope_id,
                "source_id": source_id,
                "content": "note body",
                "session_id": session,
                "note_kind": "validation",
                "expires_at": expiry,
            },
        )
    return scope_id


def listed(response: Any) -> list[str]:
    return re.findall(r'field-source_id">([^<]*)<', response.content.decode())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["Plain", "n1", "n2"]),
        ({"is_working_note__exact": "1"}, ["n1", "n2"]),
        ({"note_kind__exact": "validation"}, ["n1", "n2"]),
        ({"q": "sess-A"}, ["n1"]),
        ({"q": "Plain"}, ["Plain"]),
        ({"q": "plain"}, []),  # exact, case-sensitive
        ({"q": "Plai"}, []),  # no substring match
    ],
)
def test_source_changelist_filters_and_search(
    admin_client: Any, rows: str, query: dict, expected: list[str]
) -> None:
    response = admin_client.get("/admin/sources/contentsource/", query)

    assert response.status_code == 200
    assert sorted(listed(response)) == sorted(expected)


def test_expiry_state_filter(admin_client: Any, rows: str) -> None:
    later = timezone.now() + timedelta(minutes=5)
    import time_machine

    with time_machine.travel(later):
        expired = admin_client.get(
            "/admin/sources/contentsource/", {"state": "expired"}
        )
        active = admin_client.get("/admin/sources/contentsource/", {"state": "active"})

    assert listed(expired) == ["n2"]
    assert sorted(listed(active)) == ["Plain", "n1"]


def test_search_by_scope_id(admin_client: Any, rows: str) -> None:
    response = admin_client.get("/admin/sources/contentsource/", {"q": rows})

    assert len(listed(response)) == 3


@pytest.mark.parametrize(
    "url", ["/admin/sources/contentsource/", "/admin/sources/captureattempt/"]
)
def test_changelists_never_count_the_whole_table(
    admin_client: Any, rows: str, url: str
) -> None:
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get(url).status_code == 200

    counts = [
        q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper()
    ]
    assert counts
    assert all("LIMIT" in sql.upper() for sql in counts), counts


def test_source_detail_pretty_prints_content_and_metadata(
    admin_client: Any, rows: str
) -> None:
    from sources.models import ContentSource

    pk = ContentSource.objects.get(source_id="n1").pk

    page = admin_client.get(
        f"/admin/sources/contentsource/{pk}/change/"
    ).content.decode()

    assert "note body" in page
    assert "&quot;kind&quot;: &quot;working_note&quot;" in page


def test_attempt_search_by_request_id(admin_client: Any, rows: str) -> None:
    from sources.models import CaptureAttempt

    request_id = CaptureAttempt.objects.filter(source_id="n1").get().request_id

    response = admin_client.get("/admin/sources/captureattempt/", {"q": request_id})

    assert response.content.decode().count(request_id) >= 1
    assert "n1" in response.content.decode()


@pytest.fixture
def attempts(api: ApiClient, rows: str) -> str:
    """Beyond ``rows``: a replay and a conflict of ``Plain``, a rejected note."""
    for content in ("x", "changed"):
        api.post(
            "/v1/sources/content",
            {"scope_id": rows, "source_id": "Plain", "content": content},
        )
    api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": rows,
            "source_id": "late",
            "content": "too late",
            "session_id": "s",
            "note_kind": "validation",
            "expires_at": timezone.now().isoformat(),
        },
    )
    return rows


def test_the_reason_filter_offers_the_reasons_in_the_log_and_filters_by_one(
    admin_client: Any, attempts: str
) -> None:
    page = admin_client.get("/admin/sources/captureattempt/").content.decode()
    offered = re.findall(r'href="\?reason=([a-z_]+)"', page)
    conflicts = admin_client.get(
        "/admin/sources/captureattempt/", {"reason": "source_conflict"}
    )

    assert offered == ["not_in_future", "source_conflict"]
    assert listed(conflicts) == ["Plain"]
    assert "conflict" in conflicts.content.decode()


@pytest.mark.parametrize(
    "url", ["/admin/sources/contentsource/", "/admin/sources/captureattempt/"]
)
def test_facet_counts_are_never_computed(
    admin_client: Any, attempts: str, url: str
) -> None:
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get(url, {"_facets": "True"}).status_code == 200

    counts = [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"]]
    assert len(counts) == 1, counts  # the capped count of the page, nothing more


def test_past_the_cap_a_list_says_more_than_the_cap(
    admin_client: Any, rows: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from powercontext.admintools import CappedCountPaginator

    monkeypatch.setattr(CappedCountPaginator, "CAP", 2)

    capped = admin_client.get("/admin/sources/contentsource/").content.decode()
    exact = admin_client.get(
        "/admin/sources/contentsource/", {"is_working_note__exact": "1"}
    ).content.decode()

    assert "more than 2 content sources" in capped
    assert "3 content sources" not in capped
    assert re.search(r"\b2 content sources", exact)
    assert "more than" not in exact


def test_a_sources_page_shows_the_attempts_on_its_identity_newest_first(
    admin_client: Any, attempts: str
) -> None:
    from sources.models import ContentSource

    pk = ContentSource.objects.get(source_id="Plain").pk

    page = admin_client.get(f"/admin/sources/contentsource/{pk}/change/")
    body = page.content.decode()
    history = body[body.index('class="attempt-history"') :]
    outcomes = re.findall(r"<tr><td>[^<]*</td><td>([a-z]+)</td>", history)

    assert outcomes == ["conflict", "replayed", "accepted"]
    assert (
        f"scope__exact={attempts}&amp;source_type__exact=content"
        "&amp;source_id__exact=Plain"
    ) in history


def test_a_scopes_page_links_to_its_sources_and_attempts(
    admin_client: Any, attempts: str
) -> None:
    page = admin_client.get(f"/admin/sources/scope/{attempts}/change/")
    links = re.findall(
        r'href="(/admin/sources/[a-z]+/\?scope__exact=[^"]+)"', page.content.decode()
    )

    sources = admin_client.get(links[0])

    assert links == [
        f"/admin/sources/contentsource/?scope__exact={attempts}",
        f"/admin/sources/captureattempt/?scope__exact={attempts}",
    ]
    assert sorted(listed(sources)) == ["Plain", "n1", "n2"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"text": "OTE BO"}, ["n1", "n2"]),  # a fragment, any case
        ({"text": "sk_live_9z"}, ["Leak"]),  # wildcards are literal
        ({"text": "sk%live"}, []),
        ({"text": "ab"}, []),  # under 3 characters: nothing
        ({"text": "note body", "is_working_note__exact": "1", "q": "sess-A"}, ["n1"]),
    ],
)
def test_text_filter_finds_a_fragment_through_the_search_index(
    admin_client: Any, api: ApiClient, rows: str, query: dict, expected: list[str]
) -> None:
    api.post(
        "/v1/sources/content",
        {"scope_id": rows, "source_id": "Leak", "content": "key sk_live_9zQ"},
    )

    response = admin_client.get("/admin/sources/contentsource/", query)

    assert response.status_code == 200
    assert sorted(listed(response)) == sorted(expected)
    assert 'name="text"' in response.content.decode()
