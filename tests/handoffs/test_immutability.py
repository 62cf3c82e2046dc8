"""Immutability of handoff revisions and their rows, one test per layer (STYLE.md)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from handoffs.models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
)
from powercontext.db.immutable import ImmutableRecordError
from tests.conftest import ApiClient
from tests.handoffs.helpers import capture, committed, draft, sc

pytestmark = pytest.mark.django_db

MODELS = [HandoffRevision, HandoffStatement, HandoffCitation, HandoffLineage]


@pytest.fixture
def revision(api: ApiClient, scope_id: str) -> str:
    capture(api, scope_id, "c-1")
    committed(api, scope_id, draft([sc("c-1")]))
    return scope_id


@pytest.mark.parametrize("model", MODELS)
def test_save_refuses_to_update(revision: str, model: Any) -> None:
    row = model.objects.get()

    with pytest.raises(ImmutableRecordError):
        row.save()


@pytest.mark.parametrize("model", MODELS)
def test_instance_delete_is_refused(revision: str, model: Any) -> None:
    with pytest.raises(ImmutableRecordError):
        model.objects.get().delete()


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("operation", ["update", "delete", "bulk_update"])
def test_queryset_changes_are_refused(
    revision: str, model: Any, operation: str
) -> None:
    calls = {
        "update": lambda: model.objects.filter(pk__gt=0).update(pk=0),
        "delete": lambda: model.objects.all().delete(),
        "bulk_update": lambda: model.objects.bulk_update(
            list(model.objects.all()), ["pk"]
        ),
    }

    with pytest.raises(ImmutableRecordError):
        calls[operation]()
    assert model.objects.count() == 1


def test_the_head_moves_on_commit(api: ApiClient, revision: str) -> None:
    committed(api, revision, draft([sc("c-1")], objective="second"))

    assert HandoffHead.objects.get(scope_id=revision).current.revision == 2
    assert list(
        HandoffRevision.objects.order_by("revision").values_list("revision", flat=True)
    ) == [1, 2]


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE handoffs_handoffrevision SET content = '{}'",
        "DELETE FROM handoffs_handoffrevision",
        "UPDATE handoffs_handoffstatement SET text = 'changed'",
        "DELETE FROM handoffs_handoffstatement",
        "UPDATE handoffs_handoffcitation SET source_id = 'other'",
        "DELETE FROM handoffs_handoffcitation",
        "UPDATE handoffs_handofflineage SET ordinal = 5",
        "DELETE FROM handoffs_handofflineage",
    ],
)
def test_postgres_trigger_refuses_raw_sql(revision: str, statement: str) -> None:
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert HandoffStatement.objects.get().text == "state 0"
