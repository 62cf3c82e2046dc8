"""Immutability of Sources, capture attempts and Memory records, one test per layer
(STYLE.md)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from powercontext.db.immutable import ImmutableRecordError
from sources.models import CaptureAttempt, ContentSource, MemoryRecord
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def captured(api: ApiClient, scope_id: str) -> ContentSource:
    api.post(
        "/v1/sources/content", {"scope_id": scope_id, "source_id": "c1", "content": "x"}
    )
    api.post(
        "/v1/memory/remember", {"scope_id": scope_id, "kind": "fact", "text": "kept"}
    )
    return ContentSource.objects.get()


MODELS = [ContentSource, CaptureAttempt, MemoryRecord]


@pytest.mark.parametrize("model", MODELS)
def test_save_refuses_to_update(captured: ContentSource, model: Any) -> None:
    row = model.objects.get()
    with pytest.raises(ImmutableRecordError):
        row.save()


@pytest.mark.parametrize("model", MODELS)
def test_instance_delete_is_refused(captured: ContentSource, model: Any) -> None:
    with pytest.raises(ImmutableRecordError):
        model.objects.get().delete()


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("operation", ["update", "delete"])
def test_queryset_update_and_delete_are_refused(
    captured: ContentSource, model: Any, operation: str
) -> None:
    queryset = model.objects.all()
    with pytest.raises(ImmutableRecordError):
        queryset.update(request_id="x") if operation == "update" else queryset.delete()
    assert model.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE sources_contentsource SET content = '\"changed\"'",
        "DELETE FROM sources_contentsource",
        "UPDATE sources_captureattempt SET outcome = 'replayed'",
        "DELETE FROM sources_captureattempt",
        "UPDATE sources_memoryrecord SET text = 'changed'",
        "DELETE FROM sources_memoryrecord",
    ],
)
def test_postgres_trigger_refuses_raw_sql(
    captured: ContentSource, statement: str
) -> None:
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert ContentSource.objects.get().content == '"x"'
    assert MemoryRecord.objects.get().text == "kept"


@pytest.mark.parametrize(
    "url",
    [
        "/admin/sources/contentsource/add/",
        "/admin/sources/captureattempt/add/",
        "/admin/sources/scope/add/",
    ],
)
def test_admin_cannot_add(admin_client: Any, url: str) -> None:
    assert admin_client.get(url).status_code == 403


def test_admin_change_page_is_read_only_and_delete_is_refused(
    admin_client: Any, captured: ContentSource
) -> None:
    change = admin_client.get(f"/admin/sources/contentsource/{captured.pk}/change/")
    post = admin_client.post(
        f"/admin/sources/contentsource/{captured.pk}/change/", {"source_id": "hacked"}
    )
    delete = admin_client.post(
        f"/admin/sources/contentsource/{captured.pk}/delete/", {"post": "yes"}
    )

    assert change.status_code == 200
    assert b'name="source_id"' not in change.content
    assert post.status_code == 403
    assert delete.status_code == 403
    assert ContentSource.objects.get().source_id == "c1"


def test_admin_changelist_offers_no_bulk_actions(
    admin_client: Any, captured: ContentSource
) -> None:
    response = admin_client.get("/admin/sources/contentsource/")

    assert response.status_code == 200
    assert b'name="action"' not in response.content
