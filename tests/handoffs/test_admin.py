"""The read-only handoff audit console."""

from __future__ import annotations

from typing import Any

import pytest

from handoffs.models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
)
from tests.conftest import ApiClient, create_scope
from tests.handoffs.helpers import capture, committed, draft, hc, note, sc

pytestmark = pytest.mark.django_db

CHANGELISTS = [
    "/admin/handoffs/handoffrevision/",
    "/admin/handoffs/handoffcitation/",
    "/admin/handoffs/handofflineage/",
    "/admin/handoffs/handoffhead/",
]


@pytest.fixture
def revisions(api: ApiClient, scope_id: str) -> str:
    capture(api, scope_id, "c-1", "plain")
    note(api, scope_id, "wn-1")
    committed(
        api,
        scope_id,
        draft(
            [sc("c-1"), sc("wn-1")],
            next_action=[sc("wn-1")],
            omissions=({"text": "Skipped <b>lexer</b>", "citation": sc("ghost")},),
            objective="Finish the parser",
        ),
    )
    committed(api, scope_id, draft([hc(1)], objective="Review revision one"))
    return scope_id


def test_revision_page_shows_statements_citations_and_lineage(
    admin_client: Any, revisions: str
) -> None:
    first = HandoffRevision.objects.get(revision=1)

    page = admin_client.get(
        f"/admin/handoffs/handoffrevision/{first.pk}/change/"
    ).content.decode()

    assert "Finish the parser" in page
    assert "source content/wn-1" in page
    assert "source content/ghost" in page
    assert "Skipped &lt;b&gt;lexer&lt;/b&gt;" in page
    assert "next_action" in page
    assert f"{revisions}/content/c-1@1" in page
    assert first.content_digest in page


@pytest.mark.parametrize(
    ("url", "query", "count"),
    [
        ("/admin/handoffs/handoffcitation/", "wn-1", 2),
        ("/admin/handoffs/handoffcitation/", "WN-1", 0),
        ("/admin/handoffs/handoffcitation/", "wn", 0),
        ("/admin/handoffs/handofflineage/", "c-1", 1),
        ("/admin/handoffs/handoffrevision/", "{scope}", 2),
        ("/admin/handoffs/handoffrevision/", "root", 2),
    ],
)
def test_search_is_exact(
    admin_client: Any, revisions: str, url: str, query: str, count: int
) -> None:
    response = admin_client.get(url, {"q": query.format(scope=revisions)})

    assert response.status_code == 200
    assert response.context["cl"].result_count == count


def test_citation_search_by_scope(admin_client: Any, revisions: str, api: Any) -> None:
    other = create_scope(api, key="other")
    capture(api, other, "c-1")
    committed(api, other, draft([sc("c-1")]))

    response = admin_client.get("/admin/handoffs/handoffcitation/", {"q": other})

    assert response.context["cl"].result_count == 1
    assert HandoffCitation.objects.count() == 6


@pytest.mark.parametrize("url", CHANGELISTS)
def test_changelists_render_without_bulk_actions(
    admin_client: Any, revisions: str, url: str
) -> None:
    response = admin_client.get(url)

    assert response.status_code == 200
    assert b'name="action"' not in response.content


@pytest.mark.parametrize("url", CHANGELISTS)
def test_nothing_can_be_added(admin_client: Any, url: str) -> None:
    assert admin_client.get(url + "add/").status_code == 403


@pytest.mark.parametrize(
    "model", [HandoffRevision, HandoffCitation, HandoffLineage, HandoffHead]
)
def test_nothing_can_be_changed_or_deleted(
    admin_client: Any, revisions: str, model: Any
) -> None:
    row = model.objects.first()
    base = f"/admin/handoffs/{model._meta.model_name}/{row.pk}"

    change = admin_client.get(f"{base}/change/")
    post = admin_client.post(f"{base}/change/", {})
    delete = admin_client.post(f"{base}/delete/", {"post": "yes"})

    assert change.status_code == 200
    assert b'type="submit" value="Save"' not in change.content
    assert (post.status_code, delete.status_code) == (403, 403)
    assert model.objects.filter(pk=row.pk).exists()
