"""The registry behaves like its model across arbitrary sequences of operations.

A hypothesis ``RuleBasedStateMachine`` drives the HTTP API (the full middleware
stack, in process, on the suite run's database) with scopes, content and note
captures, exact and conflicting replays, expiry (the clock is time-machine's),
envelope writes and working notes with their capture (``envelope_rules.py``), reads,
audit, windows and evidence resolution (``read_rules.py``), the lifecycle (session
close, purge, redaction: ``lifecycle_rules.py``), and compares every answer and,
after every step, the whole journal and every envelope with
``tests/reliability/model.py``.

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
from tests.reliability.envelope_rules import EnvelopeRules
from tests.reliability.lifecycle_rules import (
    DONE,
    SESSIONS,
    LifecycleRules,
)
from tests.reliability.model import Scope, Value
from tests.reliability.read_rules import SOURCE_IDS, ReadRules

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("PC_MODEL_EXAMPLES", "12"))
STEPS = int(os.environ.get("PC_MODEL_STEPS", "30"))

# Runs and states compared (journal and envelopes after every step), for -rP.
EXPLORED: Counter[str] = Counter()

CONTENTS = st.sampled_from(["alpha", "beta", "\u00e9\u2603\U0001f680 gamma"])
METADATA = st.sampled_from([None, {}, {"k": 1}, {"k": 1.0}, {"k": True}, {"k": "1"}])

# Expiry relative to the model's clock, in minutes; <= 0 is not in the future.
EXPIRY = st.one_of(st.none(), st.integers(-30, 240))
OFFSETS = st.sampled_from([timedelta(0), timedelta(hours=8), timedelta(hours=-5)])


def rfc3339(instant: datetime, offset: timedelta) -> str:
    return instant.astimezone(timezone(offset)).isoformat()


class RegistryMachine(ReadRules, EnvelopeRules, LifecycleRules, RuleBasedStateMachine):
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
