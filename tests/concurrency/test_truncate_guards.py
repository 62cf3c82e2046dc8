"""Append-only tables refuse TRUNCATE on PostgreSQL.

Row triggers stop UPDATE and DELETE but never see a TRUNCATE; statement triggers
refuse it. The tables are found from the models, so a new append-only model
without its guard fails here. Django's flush (which these transactional tests use
between tests) still empties them, as a superuser.
"""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import DatabaseError, connection, transaction

from powercontext.db.immutable import ImmutableModel
from sessions_app.models import AppendOnlyModel

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

APPEND_ONLY_TABLES = sorted(
    model._meta.db_table
    for model in apps.get_models()
    if issubclass(model, ImmutableModel | AppendOnlyModel)
)


def test_every_append_only_model_is_listed() -> None:
    assert {
        "sources_contentsource",
        "sources_captureattempt",
        "sessions_app_enveloperevision",
        "sessions_app_envelopevalue",
        "handoffs_handoffrevision",
        "handoffs_handoffstatement",
        "handoffs_handoffcitation",
        "handoffs_handofflineage",
    } <= set(APPEND_ONLY_TABLES)


@pytest.mark.parametrize("table", APPEND_ONLY_TABLES)
def test_truncate_is_refused(table: str) -> None:
    with (
        pytest.raises(DatabaseError, match="TRUNCATE refused"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"TRUNCATE {table} CASCADE")
