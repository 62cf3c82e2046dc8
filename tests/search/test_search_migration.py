"""Migration ``sources.0014_words_through_trigrams`` on PostgreSQL: forwards it drops
the words index, backwards it builds it again, both ``CONCURRENTLY`` (so outside a
transaction), and search answers the same words queries either way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.conftest import ApiClient
from tests.search.helpers import capture, found

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

BEFORE = ("sources", "0013_search_text_plpgsql")
AFTER = ("sources", "0014_words_through_trigrams")


def search_indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'sources_contentsource' "
            "AND indexdef LIKE '%%sources_search_text%%'"
        )
        return {row[0] for row in cursor.fetchall()}


def migrate_to(target: tuple[str, str]) -> None:
    MigrationExecutor(connection).migrate([target])


@pytest.fixture
def back_at_the_end() -> Iterator[None]:
    """Whatever happens, the database ends migrated to its last migration."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_it_drops_the_words_index_and_going_back_builds_it_again(
    api: ApiClient, scope_id: str, back_at_the_end: None
) -> None:
    capture(api, scope_id, "fox", "The quick brown fox, go")
    assert search_indexes() == {"sources_source_trigram_idx"}

    migrate_to(BEFORE)
    assert search_indexes() == {
        "sources_source_trigram_idx",
        "sources_source_words_idx",
    }
    assert found(api, scope_id, "fox go") == ["fox"]

    migrate_to(AFTER)
    assert search_indexes() == {"sources_source_trigram_idx"}
    assert found(api, scope_id, "fox go") == ["fox"]
