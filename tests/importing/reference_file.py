"""Files in the reference's database format, for the importer's tests and timing.

The tables and payloads are those a PowerContext 1.4.1 server writes (read from a
database it made): only what the importer reads. ``python -m
tests.importing.reference_file OUT N [--base FILE]`` writes N Sources into one
scope of OUT - into a copy of a server-made ``--base`` database when given.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS pc_scopes (
    scope_id VARCHAR(256) NOT NULL PRIMARY KEY, title VARCHAR(256) NOT NULL,
    summary VARCHAR(2000) NOT NULL, scope_id_search TEXT NOT NULL,
    title_search TEXT NOT NULL, summary_search TEXT NOT NULL,
    parent_scope_id VARCHAR(256) REFERENCES pc_scopes (scope_id),
    version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pc_scope_context_references (
    scope_id VARCHAR(256) NOT NULL, referenced_scope_id VARCHAR(256) NOT NULL,
    PRIMARY KEY (scope_id, referenced_scope_id));
CREATE TABLE IF NOT EXISTS pc_scope_external_references (
    scope_id VARCHAR(256) NOT NULL, ordinal INTEGER NOT NULL,
    kind VARCHAR(128) NOT NULL, value VARCHAR(2000) NOT NULL,
    value_search TEXT NOT NULL, value_digest VARCHAR(64) NOT NULL,
    PRIMARY KEY (scope_id, ordinal));
CREATE TABLE IF NOT EXISTS pc_scope_creation_requests (
    idempotency_key VARCHAR(256) NOT NULL PRIMARY KEY,
    request_digest VARCHAR(64) NOT NULL, scope_id VARCHAR(256) NOT NULL);
CREATE TABLE IF NOT EXISTS pc_source_journal_heads (
    scope_id VARCHAR(256) NOT NULL PRIMARY KEY, position BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS pc_sources (
    scope_id VARCHAR(256) NOT NULL, source_type VARCHAR(128) NOT NULL,
    source_id VARCHAR(256) NOT NULL, payload BLOB NOT NULL,
    journal_position BIGINT NOT NULL,
    PRIMARY KEY (scope_id, source_type, source_id),
    UNIQUE (scope_id, journal_position));
"""


def scope_id(number: int) -> str:
    """A scope id of the reference's form (``scp_`` and 26 Crockford digits)."""
    return f"scp_{number:026d}"


def payload(
    source_id: str,
    content: Any,
    *,
    metadata: dict[str, Any] | None = None,
    working_note: bool = False,
    wire: bool = False,
    handoff_receipt: bool = False,
) -> bytes:
    """A ``pc_sources.payload`` as the reference writes it."""
    value = {
        "content": json.dumps(content, separators=(",", ":")) if wire else content,
        "definition_version": "1",
        "description": None,
        "handoff_receipt": handoff_receipt,
        "internal": None,
        "materialization": "captured",
        "metadata": metadata or {},
        "name": source_id,
        "wire_content": content if wire else None,
        "wire_content_present": wire,
        "working_note": working_note,
    }
    document = {"encoding": "powercontext-source-v1", "representation": "native"}
    return json.dumps({**document, "value": value}, ensure_ascii=False).encode()


def note_payload(
    source_id: str,
    content: str,
    *,
    session_id: str,
    note_kind: str,
    expires_at: str | None,
) -> bytes:
    metadata = {
        "kind": "working_note",
        "session_id": session_id,
        "note_kind": note_kind,
    }
    if expires_at is not None:
        metadata["expires_at"] = expires_at
    return payload(source_id, content, metadata=metadata, working_note=True)


class ReferenceFile:
    """A reference-format database being written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)

    def scope(
        self,
        scope_id: str,
        *,
        title: str = "T",
        summary: str = "S",
        parent: str | None = None,
        key: str | None = None,
        context: Iterable[str] = (),
        external: Iterable[tuple[str, str]] = (),
    ) -> str:
        self.db.execute(
            "INSERT INTO pc_scopes VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
            [scope_id, title, summary, scope_id, title, summary, parent],
        )
        self.db.execute(
            "INSERT INTO pc_scope_creation_requests VALUES (?, ?, ?)",
            [key or f"key-{scope_id}", "0" * 64, scope_id],
        )
        self.db.execute("INSERT INTO pc_source_journal_heads VALUES (?, 0)", [scope_id])
        self.db.executemany(
            "INSERT INTO pc_scope_context_references VALUES (?, ?)",
            [(scope_id, target) for target in context],
        )
        self.db.executemany(
            "INSERT INTO pc_scope_external_references VALUES (?, ?, ?, ?, ?, ?)",
            [
                (scope_id, index, kind, value, value, "0" * 64)
                for index, (kind, value) in enumerate(external)
            ],
        )
        return scope_id

    def sources(
        self,
        scope_id: str,
        rows: Iterable[tuple[str, bytes]],
        *,
        source_type: str = "content",
    ) -> None:
        """Append ``(source_id, payload)`` rows at the scope's next positions."""
        head = self.db.execute(
            "SELECT position FROM pc_source_journal_heads WHERE scope_id = ?",
            [scope_id],
        ).fetchone()[0]
        count = 0
        for count, (source_id, body) in enumerate(rows, start=1):
            self.db.execute(
                "INSERT INTO pc_sources VALUES (?, ?, ?, ?, ?)",
                [scope_id, source_type, source_id, body, head + count],
            )
        self.db.execute(
            "UPDATE pc_source_journal_heads SET position = ? WHERE scope_id = ?",
            [head + count, scope_id],
        )

    def close(self) -> Path:
        self.db.commit()
        self.db.close()
        return self.path


def generated(number: int) -> tuple[str, bytes]:
    """Source ``number`` of a generated file: every fourth a Working Note."""
    source_id = f"gen-{number}"
    if number % 4 == 0:
        return source_id, note_payload(
            source_id,
            f"Generated note {number}: the cache is rebuilt on every call.",
            session_id=f"sess-{number % 100}",
            note_kind="inspection",
            expires_at=None if number % 8 else "2031-01-01T00:00:00+00:00",
        )
    return source_id, payload(
        source_id,
        f"Generated source {number}: positions come from the journal head.",
        metadata={"origin": "generated", "n": number},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument(
        "--base", type=Path, help="a database the reference server made"
    )
    options = parser.parse_args()
    if options.base is not None:
        shutil.copyfile(options.base, options.out)
    file = ReferenceFile(options.out)
    generated_scope = file.scope(
        "scp_00000000000000000generated", title="Generated", key="generated"
    )
    file.sources(generated_scope, (generated(n) for n in range(1, options.count + 1)))
    file.close()
    print(generated_scope)


if __name__ == "__main__":
    main()
