"""The lifecycle rules of the registry's model test: session close, purge, redaction.

A mixin of ``test_registry_model.RegistryMachine`` (docs/api.md, "Lifecycle
(ours)"): each rule calls the API as the admin, applies the operation to the
model (``model.Scope.close``/``purge``/``redact``) and compares the answer; the
machine's invariants then compare the whole journal, and the audit rule every
Source's ``state``, ``closed_at`` and ``purged_at``. The model has no legal holds
and no handoffs, so it predicts every tombstone a purge makes.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st
from hypothesis.stateful import rule

from tests.conftest import ApiClient, error_of
from tests.reliability.model import Scope, Value

SESSIONS = st.sampled_from(["sess-1", "sess/2"])
# Ages a purge looks back over, in seconds: now, a few minutes, hours.
AGES = st.sampled_from([0, 300, 3600, 4 * 3600])

NOTES_TEXTS = st.sampled_from(["Finding: flaky", "Next: fix"])

# What the lifecycle rules did in a campaign (closes, tombstones...), for -rP.
DONE: Counter[str] = Counter()


class LifecycleRules:
    """Rules over ``self.api`` (an admin), ``self.scopes`` and ``self.now``."""

    api: ApiClient
    scopes: list[Scope]
    now: datetime
    closures: dict[tuple[str, str], Any]

    def _put_notes(
        self, scope: Scope, session_id: str, notes: str, capture: bool
    ) -> str | None:
        raise NotImplementedError  # the machine's working-notes PUT, with its checks

    def _send_note(
        self, scope: Scope, source_id: str, value: Value, offset: timedelta
    ) -> None:
        raise NotImplementedError  # the machine's capture, with its checks

    @rule(data=st.data(), session_id=SESSIONS)
    def close_session(self, data: Any, session_id: str) -> None:
        self._close(data.draw(st.sampled_from(self.scopes)), session_id)

    @rule(data=st.data(), age=AGES, dry_run=st.booleans())
    def purge(self, data: Any, age: int, dry_run: bool) -> None:
        self._purge(data.draw(st.sampled_from(self.scopes)), age, dry_run)

    @rule(
        data=st.data(),
        source_id=st.sampled_from(["n1", "n2", "n3"]),
        session_id=SESSIONS,
        expiry=st.one_of(st.none(), st.integers(1, 240)),
        dry_run=st.booleans(),
    )
    def session_ends_and_purge_runs(
        self,
        data: Any,
        source_id: str,
        session_id: str,
        expiry: int | None,
        dry_run: bool,
    ) -> None:
        """The usual life of a note: captured, its session closes, a purge runs."""
        scope = data.draw(st.sampled_from(self.scopes))
        expires = None if expiry is None else self.now + timedelta(minutes=expiry)
        value = Value("Finding: flaky", None, True, session_id, "inspection", expires)
        self._send_note(scope, source_id, value, timedelta(0))
        self._close(scope, session_id)
        self._purge(scope, 0, dry_run)

    def _close(self, scope: Scope, session_id: str) -> None:
        """``201`` the first time, then ``200`` with the same record."""
        response = self.api.post(session_url(scope.scope_id, session_id, "close"), {})
        first = (scope.scope_id, session_id) not in self.closures
        assert response.status_code == (201 if first else 200), response.content
        body = response.json()
        if first:
            assert (body["scope_id"], body["session_id"]) == (
                scope.scope_id,
                session_id,
            )
            assert parse(body["closed_at"]) == self.now
            self.closures[(scope.scope_id, session_id)] = body
            DONE["sessions closed"] += 1
            scope.closed[session_id] = self.now
        assert body == self.closures[(scope.scope_id, session_id)]

    def _purge(self, scope: Scope, age: int, dry_run: bool) -> None:
        """The counts are the model's: every tombstone is predicted."""
        response = self.api.post(
            f"/v1/scopes/{scope.scope_id}/purge",
            {"older_than_seconds": age, "dry_run": dry_run},
        )
        assert response.status_code == 200, response.content
        answer = response.json()
        answer.pop("run_id")
        expected = scope.purge(timedelta(seconds=age), self.now, dry_run)
        assert answer == expected
        DONE["purge runs"] += 1
        if not dry_run:
            DONE["notes purged"] += expected["purged"]
            DONE["envelopes cleared"] += expected["envelopes_cleared"]

    @rule(data=st.data(), source_id=st.sampled_from(["s1", "n1", "never"]))
    def redact(self, data: Any, source_id: str) -> None:
        """A known Source (any, notes captured from envelopes too) or an unknown."""
        scope = data.draw(st.sampled_from(self.scopes))
        known = sorted(scope.sources)
        if known and data.draw(st.booleans()):
            source_id = data.draw(st.sampled_from(known))
        self._redact(scope, source_id)

    @rule(data=st.data(), session_id=SESSIONS, notes=NOTES_TEXTS)
    def notes_captured_then_redacted(
        self, data: Any, session_id: str, notes: str
    ) -> None:
        """An erasure request for notes a host kept: the envelope loses them too."""
        scope = data.draw(st.sampled_from(self.scopes))
        source_id = self._put_notes(scope, session_id, notes, True)
        if source_id is not None:
            self._redact(scope, source_id)

    def _redact(self, scope: Scope, source_id: str) -> None:
        response = self.api.post(
            source_url(scope.scope_id, source_id) + "/redact",
            {"reason": "erasure request"},
        )
        source = scope.sources.get(source_id)
        if source is None:
            assert response.status_code == 404, response.content
            assert error_of(response)["code"] == "source_not_found"
            return
        DONE["redactions"] += source.purged_at is None
        scope.redact(source, self.now)
        assert response.status_code == 200, response.content
        record = response.json()
        assert record["state"] == "purged"
        assert parse(record["purged_at"]) == source.purged_at
        assert {key: record[key] for key in source.record(scope.scope_id)} == (
            source.record(scope.scope_id)
        )


def source_url(scope_id: str, source_id: str, collection: str = "sources") -> str:
    quoted = quote(source_id, safe="")
    return f"/v1/scopes/{scope_id}/{collection}/content/{quoted}"


def session_url(scope_id: str, session_id: str, suffix: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/{quote(session_id, safe='')}/{suffix}"


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
