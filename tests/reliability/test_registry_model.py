"""The registry behaves like its model across arbitrary sequences of operations.

A hypothesis ``RuleBasedStateMachine`` drives the HTTP API (the full middleware
stack, in process, on the suite run's database) with scopes, content and note
captures, exact and conflicting replays, expiry (the clock is time-machine's),
envelope writes and working notes with their capture, reads, audit, windows and
evidence resolution, the lifecycle (session close, purge, redaction:
``lifecycle_rules.py``), and compares every answer and, after every step, the whole
journal and every envelope with ``tests/reliability/model.py``.

``make test`` runs a bounded campaign; ``PC_MODEL_EXAMPLES`` and ``PC_MODEL_STEPS``
make it as long as you like (``make test-long``; docs/reliability.md).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import time_machine
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.conftest import ApiClient, error_of
from tests.reliability import model
from tests.reliability.lifecycle_rules import (
    DONE,
    LifecycleRules,
    parse,
    session_url,
    source_url,
)
from tests.reliability.model import Envelope, Scope, Value, content_digest, typed

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("PC_MODEL_EXAMPLES", "12"))
STEPS = int(os.environ.get("PC_MODEL_STEPS", "30"))

# Runs and states compared (journal and envelopes after every step), for -rP.
EXPLORED: Counter[str] = Counter()

SOURCE_IDS = st.sampled_from(["s1", "s2", "s3", "a/b", "n1", "n2"])
CONTENTS = st.sampled_from(["alpha", "beta", "\u00e9\u2603\U0001f680 gamma"])
METADATA = st.sampled_from([None, {}, {"k": 1}, {"k": 1.0}, {"k": True}, {"k": "1"}])
SESSIONS = st.sampled_from(["sess-1", "sess/2"])
# Expiry relative to the model's clock, in minutes; <= 0 is not in the future.
EXPIRY = st.one_of(st.none(), st.integers(-30, 240))
OFFSETS = st.sampled_from([timedelta(0), timedelta(hours=8), timedelta(hours=-5)])
SCALARS = st.sampled_from([None, "", 1, 1.0, True, "1", "m-large"])
NOTES = st.sampled_from(["", "  ", "Finding: flaky", " Finding: flaky ", "Next: fix"])


def rfc3339(instant: datetime, offset: timedelta) -> str:
    return instant.astimezone(timezone(offset)).isoformat()


class RegistryMachine(LifecycleRules, RuleBasedStateMachine):
    """One scope at first, more on demand; an admin and a viewer of the first."""

    def __init__(self, admin_token: str, start: datetime) -> None:
        super().__init__()
        self.api = ApiClient(admin_token)
        self.clock = time_machine.travel(start, tick=False)
        self.traveller = self.clock.start()
        self.now = start
        self.scopes: list[Scope] = []
        self.scope_keys: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.viewer = ApiClient()
        self.run = uuid.uuid4().hex  # idempotency keys of this run's scopes
        self.closures: dict[tuple[str, str], Any] = {}

    def teardown(self) -> None:
        EXPLORED["runs"] += 1
        self.clock.stop()

    # --- scopes ---------------------------------------------------------------------

    @initialize()
    def first_scope(self) -> None:
        self._create_scope("first", "Model scope")
        _, token = token_create(
            principal="model-viewer",
            grants=[(self.scopes[0].scope_id, Role("viewer"))],
        )
        self.viewer = ApiClient(token)

    def _create_scope(self, key: str, title: str) -> Any:
        body = {"title": title, "summary": "Stateful model", "idempotency_key": key}
        response = self.api.post(
            "/v1/scopes", {**body, "idempotency_key": self._k(key)}
        )
        known = self.scope_keys.get(key)
        if known is None:
            assert response.status_code == 201, response.content
            self.scope_keys[key] = (body, response.json())
            self.scopes.append(Scope(response.json()["scope_id"]))
        elif known[0] == body:
            assert (response.status_code, response.json()) == (201, known[1])
        else:
            assert response.status_code == 409, response.content
            assert error_of(response)["code"] == "scope_idempotency_conflict"
        return response

    def _k(self, key: str) -> str:
        return f"{self.run}-{key}"

    @precondition(lambda self: len(self.scopes) < 3)
    @rule(key=st.sampled_from(["first", "second", "third"]), title=CONTENTS)
    def create_scope(self, key: str, title: str) -> None:
        self._create_scope(key, title)

    # --- captures -------------------------------------------------------------------

    @rule(data=st.data(), source_id=SOURCE_IDS, content=CONTENTS, metadata=METADATA)
    def capture_content(
        self, data: Any, source_id: str, content: str, metadata: Any
    ) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        body = {"scope_id": scope.scope_id, "source_id": source_id, "content": content}
        if metadata is not None:
            body["metadata"] = metadata
        response = self.api.post("/v1/sources/content", body)
        value = Value(content, metadata)
        self._assert_capture(response, scope, source_id, value)

    @rule(data=st.data(), source_id=SOURCE_IDS, content=CONTENTS)
    def capture_reserved_kind(self, data: Any, source_id: str, content: str) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        body = {
            "scope_id": scope.scope_id,
            "source_id": source_id,
            "content": content,
            "metadata": {"kind": "working_note"},
        }
        response = self.api.post("/v1/sources/content", body)
        assert response.status_code == 422, response.content
        assert error_of(response)["details"]["reason"] == "reserved_kind"
        scope.reject(source_id)

    @rule(
        data=st.data(),
        source_id=SOURCE_IDS,
        content=CONTENTS,
        session_id=SESSIONS,
        kind=st.sampled_from(model.NOTE_KINDS),
        expiry=EXPIRY,
        offset=OFFSETS,
    )
    def capture_note(
        self,
        data: Any,
        source_id: str,
        content: str,
        session_id: str,
        kind: str,
        expiry: int | None,
        offset: timedelta,
    ) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        expires = None if expiry is None else self.now + timedelta(minutes=expiry)
        value = Value(content, None, True, session_id, kind, expires)
        self._send_note(scope, source_id, value, offset)

    @rule(data=st.data(), offset=OFFSETS)
    def replay_exactly(self, data: Any, offset: timedelta) -> None:
        """An existing identity sent again with its value (notes: at any offset)."""
        scope = data.draw(st.sampled_from(self.scopes))
        known = list(scope.sources.values())
        if not known:
            return
        source = data.draw(st.sampled_from(known))
        value = source.value
        if value.working_note:
            self._send_note(scope, source.source_id, value, offset)
            return
        body = {
            "scope_id": scope.scope_id,
            "source_id": source.source_id,
            "content": value.content,
            "metadata": value.metadata,
        }
        response = self.api.post("/v1/sources/content", body)
        self._assert_capture(response, scope, source.source_id, value)

    def _send_note(
        self, scope: Scope, source_id: str, value: Value, offset: timedelta
    ) -> None:
        expires = value.expires_at
        body = {
            "scope_id": scope.scope_id,
            "source_id": source_id,
            "content": value.content,
            "session_id": value.session_id,
            "note_kind": value.note_kind,
            "expires_at": None if expires is None else rfc3339(expires, offset),
        }
        response = self.api.post("/v1/sources/working-notes", body)
        self._assert_capture(response, scope, source_id, value)

    def _assert_capture(
        self, response: Any, scope: Scope, source_id: str, value: Value
    ) -> None:
        status, answer = scope.capture(source_id, value, now=self.now)
        assert response.status_code == status, (response.content, status, answer)
        if status == 202:
            assert response.json() == answer
            replayed = scope.attempts[source_id][-1] == "replayed"
            assert (response.headers.get("Idempotent-Replayed") == "true") is replayed
        else:
            error = error_of(response)
            assert answer in (error["code"], (error["details"] or {}).get("reason"))

    @rule(minutes=st.integers(1, 180))
    def advance_the_clock(self, minutes: int) -> None:
        self.traveller.shift(timedelta(minutes=minutes))
        self.now += timedelta(minutes=minutes)

    # --- reads ----------------------------------------------------------------------

    @rule(data=st.data(), source_id=SOURCE_IDS)
    def read_one(self, data: Any, source_id: str) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        response = self.api.get(source_url(scope.scope_id, source_id))
        source = scope.sources.get(source_id)
        if source is None:
            assert response.status_code == 404, response.content
            assert error_of(response)["code"] == "source_not_found"
        else:
            assert (response.status_code, response.json()) == (
                200,
                source.record(scope.scope_id),
            )

    @rule(data=st.data(), source_id=SOURCE_IDS)
    def audit_one(self, data: Any, source_id: str) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        audit = self.api.get(source_url(scope.scope_id, source_id, "source-audit"))
        attempts = self.api.get(
            source_url(scope.scope_id, source_id, "source-attempts"),
            query={"limit": 100},
        )
        log = scope.attempts.get(source_id, [])
        source = scope.sources.get(source_id)
        assert attempts.status_code == (200 if log else 404), attempts.content
        if log:
            outcomes = [item["outcome"] for item in attempts.json()["items"]]
            assert outcomes == log
        if source is None:
            assert audit.status_code == 404, audit.content
            return
        record = audit.json()
        assert record["position"] == source.position
        assert record["working_note"] is source.value.working_note
        assert record["state"] == scope.state_of(source, self.now)
        closed_at = scope.closed.get(source.value.session_id or "")
        assert (record["closed_at"] and parse(record["closed_at"])) == closed_at
        assert (record["purged_at"] and parse(record["purged_at"])) == source.purged_at
        assert record["content"] == source.record(scope.scope_id)["content"]
        assert record["attempts_total"] == len(log)
        assert [a["outcome"] for a in record["attempts"]] == log[-20:]

    @rule(data=st.data(), limit=st.integers(1, 4))
    def window(self, data: Any, limit: int) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        after = data.draw(st.integers(0, len(scope.sources)))
        response = self.api.get(
            f"/v1/scopes/{scope.scope_id}/sources/window",
            query={"after": after, "limit": limit},
        )
        assert (response.status_code, response.json()) == (
            200,
            scope.window(after, limit),
        )

    @rule(
        data=st.data(),
        refs=st.lists(
            st.tuples(SOURCE_IDS, st.sampled_from(["none", "right", "wrong"])),
            min_size=1,
            max_size=4,
        ),
        purpose=st.sampled_from(["handoff", "generation"]),
    )
    def resolve_evidence(
        self, data: Any, refs: list[tuple[str, str]], purpose: str
    ) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        pins = [
            (source_id, self._pin(scope, source_id, how)) for source_id, how in refs
        ]
        body = {
            "purpose": purpose,
            "refs": [
                {"name": "content", "source_id": source_id, "content_digest": pin}
                for source_id, pin in pins
            ],
        }
        response = self.api.post(f"/v1/scopes/{scope.scope_id}/evidence/resolve", body)
        assert response.status_code == 200, response.content
        answer = response.json()
        assert parse(answer["resolved_at"]) == self.now
        for (source_id, pin), item in zip(pins, answer["items"], strict=True):
            status, reason = scope.resolution(source_id, pin, purpose, self.now)
            source = scope.sources.get(source_id)
            assert (item["status"], item["reason"]) == (status, reason), item
            assert item["source"] == (
                source.record(scope.scope_id) if status == "available" else None
            )
            assert item["working_note"] == (source and source.value.working_note)

    @staticmethod
    def _pin(scope: Scope, source_id: str, how: str) -> str | None:
        source = scope.sources.get(source_id)
        content = "never stored" if source is None else source.value.content
        return {
            "none": None,
            "right": content_digest(content),
            "wrong": content_digest(content + "!"),
        }[how]

    # --- authorization (invariant 6) ------------------------------------------------

    @rule(data=st.data(), source_id=SOURCE_IDS, content=CONTENTS)
    def viewer_reads_and_cannot_write(
        self, data: Any, source_id: str, content: str
    ) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        granted = scope is self.scopes[0]
        read = self.viewer.get(f"/v1/scopes/{scope.scope_id}/sources")
        write = self.viewer.post(
            "/v1/sources/content",
            {"scope_id": scope.scope_id, "source_id": source_id, "content": content},
        )
        assert read.status_code == (200 if granted else 403), read.content
        assert write.status_code == 403, write.content

    # --- envelopes ------------------------------------------------------------------

    @rule(data=st.data(), session_id=SESSIONS, cursor=st.sampled_from([None, 0, 1, 2]))
    def worker_patch(self, data: Any, session_id: str, cursor: int | None) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        response = self.api.patch(
            session_url(scope.scope_id, session_id, "envelope"),
            {"meta": {"turnCursor": cursor}},
        )
        if self._refused_as_closed(response, scope, session_id):
            return
        envelope = scope.envelopes.setdefault(session_id, Envelope())
        self._assert_envelope(
            response, envelope.write({"turnCursor": cursor}), envelope
        )

    @rule(data=st.data(), session_id=SESSIONS, model_=SCALARS, mark=SCALARS)
    def host_put(self, data: Any, session_id: str, model_: Any, mark: Any) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        meta = {"selectedModel": model_, "x-mark": mark}
        meta = {key: value for key, value in meta.items() if value is not None}
        if not isinstance(meta.get("selectedModel", ""), str):
            meta.pop("selectedModel")
        response = self.api.put(
            session_url(scope.scope_id, session_id, "envelope"), {"meta": meta}
        )
        if self._refused_as_closed(response, scope, session_id):
            return
        envelope = scope.envelopes.setdefault(session_id, Envelope())
        self._assert_envelope(response, envelope.replace_host_part(meta), envelope)

    @rule(data=st.data(), session_id=SESSIONS, notes=NOTES, capture=st.booleans())
    def put_working_notes(
        self, data: Any, session_id: str, notes: str, capture: bool
    ) -> None:
        scope = data.draw(st.sampled_from(self.scopes))
        capture = capture and bool(notes.strip())
        body: dict[str, Any] = {"notes": notes, "capture": {} if capture else None}
        response = self.api.put(
            session_url(scope.scope_id, session_id, "working-notes"), body
        )
        if self._refused_as_closed(response, scope, session_id):
            return
        envelope = scope.envelopes.setdefault(session_id, Envelope())
        status = envelope.write({"workingNotes": notes.strip() or None})
        assert response.status_code == status, response.content
        answer = response.json()
        assert (answer["version"], answer["notes"]) == (
            envelope.version,
            envelope.meta.get("workingNotes"),
        )
        if capture:
            source_id = f"session-notes:{session_id}:v{envelope.notes_version}"
            value = Value(notes.strip(), None, True, session_id, "host_context", None)
            expected = scope.capture(source_id, value, now=self.now)
            assert answer["source"] == expected[1]
        else:
            assert answer["source"] is None

    @rule(data=st.data(), session_id=SESSIONS, stale=st.booleans())
    def conditional_patch(self, data: Any, session_id: str, stale: bool) -> None:
        """``If-Match`` with the current version writes; any other is 412."""
        scope = data.draw(st.sampled_from(self.scopes))
        envelope = scope.envelopes.get(session_id)
        version = envelope.version if envelope else 0
        response = self.api.patch(
            session_url(scope.scope_id, session_id, "envelope"),
            {"meta": {"turnCursor": 7}},
            headers={"If-Match": f'"{version - 1 if stale else version}"'},
        )
        if self._refused_as_closed(response, scope, session_id):
            return
        if envelope is None or stale or envelope.version == 0:
            assert response.status_code == 412, response.content
            return
        self._assert_envelope(response, envelope.write({"turnCursor": 7}), envelope)

    @staticmethod
    def _refused_as_closed(response: Any, scope: Scope, session_id: str) -> bool:
        """A closed session's envelope takes no write (checked before If-Match)."""
        if session_id not in scope.closed:
            return False
        assert response.status_code == 409, response.content
        assert error_of(response)["code"] == "session_closed"
        return True

    def _assert_envelope(self, response: Any, status: int, envelope: Envelope) -> None:
        assert response.status_code == status, response.content
        answer = response.json()
        assert answer["version"] == envelope.version
        assert typed(answer["meta"]) == typed(envelope.meta)
        assert response.headers["ETag"] == f'"{envelope.version}"'

    # --- after every step -----------------------------------------------------------

    @invariant()
    def journal_is_the_model(self) -> None:
        EXPLORED["steps"] += 1
        EXPLORED["sources"] += sum(len(scope.sources) for scope in self.scopes)
        for scope in self.scopes:
            response = self.api.get(
                f"/v1/scopes/{scope.scope_id}/sources", query={"limit": 100}
            )
            assert response.status_code == 200, response.content
            assert response.json() == {
                "items": [source.record(scope.scope_id) for source in scope.journal],
                "next_cursor": None,
            }

    @invariant()
    def envelopes_are_the_model(self) -> None:
        for scope in self.scopes:
            for session_id, envelope in scope.envelopes.items():
                response = self.api.get(
                    session_url(scope.scope_id, session_id, "envelope")
                )
                if envelope.version == 0:
                    assert response.status_code == 404, response.content
                    continue
                answer = response.json()
                assert answer["version"] == envelope.version
                assert typed(answer["meta"]) == typed(envelope.meta)


def test_the_registry_behaves_like_its_model(admin_token: str) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    EXPLORED.clear()
    DONE.clear()
    run_state_machine_as_test(
        lambda: RegistryMachine(admin_token, start),
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    print(f"model: {EXPLORED['runs']} runs, {EXPLORED['steps']} states compared")
    print("lifecycle:", ", ".join(f"{n} {what}" for what, n in sorted(DONE.items())))
