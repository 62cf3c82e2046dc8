"""Record the PostgreSQL plans of the capture and read paths on a seeded scope.

Drives the API in-process (Django's test client, full middleware) against the
database named by DATABASE_URL, captures every statement each operation sends,
and runs EXPLAIN (ANALYZE, BUFFERS) on it inside a transaction that is rolled
back, so nothing is written twice. Prints markdown: per operation its status, its
statements and their plans, and whether any plan reads a registry table with a
sequential scan. Seed the scope first (manage.py seed_sources).

Usage:
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/pc_bench \
      .venv/bin/python bench/explain.py --scope scp_... > plans.md
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.test")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from powercontext.access.models import Role  # noqa: E402
from powercontext.access.tokens import token_create  # noqa: E402
from sources.models import ContentSource, SourceJournalHead  # noqa: E402

SKIPPED = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET)\b", re.I)
# The tables that grow with the registry; scope-sized ones (a row per scope) may be
# read sequentially while they are a page or two.
SEQ_SCAN = re.compile(r"Seq Scan on (sources_contentsource|sources_captureattempt)\b")


class Rollback(Exception):
    """Raised to undo an EXPLAIN ANALYZE of a data-modifying statement."""


def explain(sql: str) -> str:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            raise Rollback(plan)
    except Rollback as done:
        return str(done)


def operations(scope_id: str) -> list[tuple[str, str, str, dict | None]]:
    """(label, method, path, JSON body) for each operation whose plans we record."""
    note = (
        ContentSource.objects.filter(scope_id=scope_id, is_working_note=True)
        .order_by("-position")
        .values("source_id", "session_id")
        .first()
    )
    if note is None:
        sys.exit("explain.py: the scope holds no working note; seed it first")
    head = SourceJournalHead.objects.get(scope_id=scope_id).last_position
    source = f"/v1/scopes/{scope_id}/sources/content/{quote(note['source_id'])}"
    audit = f"/v1/scopes/{scope_id}/source-audit"
    new_note = {
        "scope_id": scope_id,
        "source_id": f"explain-{secrets.token_hex(6)}",
        "content": "A note captured by bench/explain.py.",
        "session_id": "explain-session",
        "note_kind": "inspection",
    }
    return [
        ("capture a new working note", "POST", "/v1/sources/working-notes", new_note),
        ("replay that note", "POST", "/v1/sources/working-notes", new_note),
        ("get one Source", "GET", source, None),
        ("list, first page", "GET", f"/v1/scopes/{scope_id}/sources?limit=50", None),
        (
            "audit filtered by session",
            "GET",
            f"{audit}?session_id={quote(note['session_id'])}&limit=50",
            None,
        ),
        (
            "generation window page near the head",
            "GET",
            f"/v1/scopes/{scope_id}/sources/window?after={max(0, head - 500)}&limit=50",
            None,
        ),
        (
            "audit detail",
            "GET",
            f"{audit}/content/{quote(note['source_id'])}",
            None,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scope", required=True)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("explain.py: DATABASE_URL must name a PostgreSQL database")

    token = token_create(principal="explain", grants=[("*", Role.ADMIN)])[1]
    client = Client(SERVER_NAME="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    rows = ContentSource.objects.filter(scope_id=args.scope).count()
    print(f"# Plans on scope {args.scope} ({rows} Sources)\n")
    sequential = []
    for label, method, path, body in operations(args.scope):
        with CaptureQueriesContext(connection) as captured:
            if method == "POST":
                response = client.post(path, body, content_type="application/json")
            else:
                response = client.get(path)
        statements = [
            query["sql"]
            for query in captured.captured_queries
            if not SKIPPED.match(query["sql"])
        ]
        print(f"## {label}: `{method} {path.split('?')[0]}` -> {response.status_code}")
        print(f"\n{len(statements)} statements besides transaction control.\n")
        for sql in statements:
            plan = explain(sql)
            sequential += [(label, table) for table in SEQ_SCAN.findall(plan)]
            shown = sql if len(sql) < 600 else sql[:600] + " ..."
            print(f"```sql\n{shown}\n```\n```\n{plan}\n```\n")
    print("## Sequential scans on registry tables\n")
    if sequential:
        for label, table in sequential:
            print(f"- {label}: {table}")
    else:
        print("None: every registry table is read through an index.")


if __name__ == "__main__":
    main()
