"""The scale phase's operations and the prepared requests each one sends.

For every operation of bench/scale.py, a file of requests that touch random rows
of the seeded scope: random Sources, sessions and positions sampled from the
database (``sample_scope``), one request per line as bench/wrk/requests.lua reads
them (``METHOD<TAB>PATH[<TAB>JSON body]``). Before an operation is measured its
first request is sent once (``check_first``) and must get the expected answer;
``prepare_envelopes`` gives every benchmark session working notes first, so the
fold answers 200, not 204.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import psycopg
from apiclient import http_json

# Distinct requests per operation file: enough that the rows touched do not all
# sit in a few cached pages at 1M Sources.
SAMPLE = 2000
EVIDENCE_REFS = 256
EVIDENCE_BODIES = 100
ENVELOPE_SESSIONS = 64


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    expect: str  # accepted status codes, comma separated
    script: str = "requests.lua"


OPERATIONS = [
    Operation("get", "get one Source (random)", "200"),
    Operation("list", "list, first page of 50", "200"),
    Operation("audit_session", "audit filtered by session (random), 50", "200"),
    Operation("window", "generation window page at a random position", "200"),
    Operation("evidence", f"evidence resolution of {EVIDENCE_REFS} refs", "200"),
    Operation("envelope_put", "envelope PUT (host replace)", "200,201"),
    Operation("envelope_patch", "envelope PATCH (worker overlay)", "200,201"),
    Operation("envelope_get", "envelope GET", "200"),
    Operation("fold", "working notes fold", "200"),
    Operation("replay", "replay of a seeded note (random)", "202"),
    Operation("capture", "capture a new working note", "202", "working_notes.lua"),
]
BY_NAME = {operation.name: operation for operation in OPERATIONS}


def sample_scope(db_url: str, scope_id: str) -> SimpleNamespace:
    """Random Sources, notes and sessions of the scope, and its head position."""
    with psycopg.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT last_position FROM sources_sourcejournalhead WHERE scope_id = %s",
            (scope_id,),
        )
        head = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM sources_contentsource")
        # Sampling the table's pages needs no knowledge of how it was seeded;
        # about 4 x SAMPLE rows, a quarter of them notes with the default seed.
        percent = min(100.0, 100.0 * SAMPLE * 4 / max(1, cursor.fetchone()[0]))
        cursor.execute(
            "SELECT source_id FROM sources_contentsource TABLESAMPLE SYSTEM (%s)"
            " WHERE scope_id = %s",
            (percent, scope_id),
        )
        source_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT source_id, content, session_id, note_kind"
            " FROM sources_contentsource TABLESAMPLE SYSTEM (%s)"
            " WHERE scope_id = %s AND is_working_note AND expires_at IS NULL",
            (percent, scope_id),
        )
        # content holds the canonical JSON text of the value; a replay sends the value.
        notes = [
            (source_id, json.loads(content), session_id, note_kind)
            for source_id, content, session_id, note_kind in cursor.fetchall()
        ]
        cursor.execute(
            "SELECT DISTINCT session_id FROM sources_contentsource"
            " WHERE scope_id = %s AND session_id IS NOT NULL"
            " AND position <= 20000",
            (scope_id,),
        )
        sessions = [row[0] for row in cursor.fetchall()]
    if not source_ids or not notes or not sessions:
        sys.exit(f"scale.py: scope {scope_id} holds too few Sources to sample")
    rng = random.Random(head)
    return SimpleNamespace(
        head=head,
        source_ids=rng.sample(source_ids, min(SAMPLE, len(source_ids))),
        notes=rng.sample(notes, min(SAMPLE, len(notes))),
        sessions=sessions,
        rng=rng,
    )


def request_lines(operation: str, scope_id: str, sample: SimpleNamespace) -> list:
    """(method, path, body or None) for every prepared request of an operation."""
    base = f"/v1/scopes/{scope_id}"
    rng = sample.rng
    envelopes = [
        f"{base}/sessions/bench-scale-{index}/envelope"
        for index in range(ENVELOPE_SESSIONS)
    ]
    if operation == "get":
        return [
            ("GET", f"{base}/sources/content/{quote(source_id, safe='')}", None)
            for source_id in sample.source_ids
        ]
    if operation == "list":
        return [("GET", f"{base}/sources?limit=50", None)]
    if operation == "audit_session":
        return [
            ("GET", f"{base}/source-audit?session_id={quote(session)}&limit=50", None)
            for session in sample.sessions
        ]
    if operation == "window":
        return [
            (
                "GET",
                f"{base}/sources/window?after={rng.randrange(sample.head)}&limit=50",
                None,
            )
            for _ in range(SAMPLE)
        ]
    if operation == "evidence":
        return [
            (
                "POST",
                f"{base}/evidence/resolve",
                {
                    "purpose": "handoff",
                    "refs": [
                        {"name": "content", "source_id": source_id}
                        for source_id in rng.sample(sample.source_ids, EVIDENCE_REFS)
                    ],
                },
            )
            for _ in range(EVIDENCE_BODIES)
        ]
    if operation == "envelope_put":
        # Two values per session, alternating: nearly every PUT is a real write.
        return [
            ("PUT", path, {"meta": {"selectedModel": f"model-{turn}", "x-ui": turn}})
            for turn in ("a", "b")
            for path in envelopes
        ]
    if operation == "envelope_patch":
        return [
            ("PATCH", path, {"meta": {"turnStatus": status, "turnCursor": cursor}})
            for cursor, status in enumerate(("running", "completed"))
            for path in envelopes
        ]
    if operation == "envelope_get":
        return [("GET", path, None) for path in envelopes]
    if operation == "fold":
        return [
            ("GET", path[: -len("envelope")] + "working-notes/fold", None)
            for path in envelopes
        ]
    if operation == "replay":
        return [
            (
                "POST",
                "/v1/sources/working-notes",
                {
                    "scope_id": scope_id,
                    "source_id": source_id,
                    "content": content,
                    "session_id": session_id,
                    "note_kind": note_kind,
                },
            )
            for source_id, content, session_id, note_kind in sample.notes
        ]
    raise ValueError(operation)


def write_request_file(path: Path, lines: list) -> None:
    with path.open("w") as file:
        for method, url, body in lines:
            encoded = "" if body is None else "\t" + json.dumps(body)
            file.write(f"{method}\t{url}{encoded}\n")


def prepare_envelopes(base_url: str, token: str, scope_id: str) -> None:
    """Give every benchmark session working notes, so fold answers 200 not 204."""
    for index in range(ENVELOPE_SESSIONS):
        path = f"/v1/scopes/{scope_id}/sessions/bench-scale-{index}/envelope"
        body = {"meta": {"workingNotes": f"Notes of benchmark session {index}."}}
        status, answer = http_json(
            base_url, token, "PATCH", path, json.dumps(body).encode()
        )
        if status not in (200, 201):
            sys.exit(f"scale.py: preparing {path} answered {status}: {answer}")


def check_first(base_url: str, token: str, operation: Operation, line) -> None:
    """Send the file's first request once; stop if the answer is not the expected."""
    method, path, body = line
    encoded = None if body is None else json.dumps(body).encode()
    status, answer = http_json(base_url, token, method, path, encoded)
    if str(status) not in operation.expect.split(","):
        sys.exit(f"scale.py: {operation.name}: {method} {path} -> {status} {answer}")
    if operation.name == "evidence":
        items = answer["items"]
        unavailable = [item for item in items if item["status"] != "available"]
        if unavailable:
            sys.exit(f"scale.py: evidence refs did not resolve: {unavailable[:3]}")
