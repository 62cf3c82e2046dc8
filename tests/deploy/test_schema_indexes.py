"""No index of the project's tables is one another index already covers.

Every index is written by every insert into its table, and the registry's tables
take one insert per capture: an index whose columns lead another index (a
foreign key's own index beside a unique constraint that starts with the key, say)
costs each capture a write and serves no query the other cannot
(powercontext/db/indexes.py, ``DropForeignKeyIndex``). Partial indexes are
deliberate (they hold fewer rows) and are not counted as covered; Django's own
apps (auth, admin) are not the project's.
"""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from tests.deploy.test_migration_rule import project_app_labels

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

# An index (a) is covered by another (b) on the same table when a is a plain
# btree index - not unique, not partial, on columns not expressions - and its
# columns, with their operator classes, are the leading columns of b; b may be
# unique, but not partial (a partial b does not hold every row a holds).
COVERED = """
WITH idx AS (
    SELECT i.indexrelid, i.indrelid, c.relname AS index_name,
           t.relname AS table_name, i.indisunique AS is_unique,
           i.indpred IS NOT NULL AS partial, i.indexprs IS NOT NULL AS expressions,
           i.indnkeyatts AS keys,
           (i.indkey::int2[])[0:i.indnkeyatts - 1] AS cols,
           (i.indclass::oid[])[0:i.indnkeyatts - 1] AS classes
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_am am ON am.oid = c.relam
    WHERE am.amname = 'btree' AND t.relname = ANY (%s)
      AND t.relnamespace = 'public'::regnamespace
)
SELECT a.table_name, a.index_name, b.index_name
FROM idx a
JOIN idx b ON a.indrelid = b.indrelid AND a.indexrelid <> b.indexrelid
WHERE NOT a.is_unique AND NOT a.partial AND NOT a.expressions
  AND NOT b.partial AND NOT b.expressions
  AND a.keys <= b.keys
  AND b.cols[1:a.keys] = a.cols AND b.classes[1:a.keys] = a.classes
ORDER BY 1, 2, 3
"""


def project_tables() -> list[str]:
    return [
        model._meta.db_table
        for label in project_app_labels()
        for model in apps.get_app_config(label).get_models()
    ]


def covered_indexes(tables: list[str]) -> list[tuple[str, str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(COVERED, [tables])
        return cursor.fetchall()


def test_no_index_of_the_project_is_covered_by_another() -> None:
    tables = project_tables()

    assert "sources_contentsource" in tables
    assert covered_indexes(tables) == []


def test_the_check_finds_a_covered_index() -> None:
    # The foreign key index Django would have made for the Source's scope, beside
    # the identity constraint that leads with the scope (rolled back with the test).
    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX covered_probe ON sources_contentsource (scope_id)")

    assert (
        "sources_contentsource",
        "covered_probe",
        "sources_source_identity_uniq",
    ) in (covered_indexes(project_tables()))
