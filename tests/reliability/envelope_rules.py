"""The envelope rules of the registry's model test: worker, host and notes writes.

A mixin of ``test_registry_model.RegistryMachine``: each rule writes a session
envelope as the admin (a worker ``PATCH``, with or without ``If-Match``, a host
``PUT``, a working-notes ``PUT`` with its capture), applies the write to the model's
``Envelope`` and compares the answer; a closed session's envelope takes no write
(``409 session_closed``). The invariant compares every envelope after every step.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from tests.conftest import ApiClient, error_of
from tests.reliability.lifecycle_rules import SESSIONS, session_url
from tests.reliability.model import Envelope, Scope, Value, typed

SCALARS = st.sampled_from([None, "", 1, 1.0, True, "1", "m-large"])
NOTES = st.sampled_from(["", "  ", "Finding: flaky", " Finding: flaky ", "Next: fix"])


class EnvelopeRules:
    """Rules over ``self.api`` (an admin), ``self.scopes`` and ``self.now``."""

    api: ApiClient
    scopes: list[Scope]
    now: Any

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
        self._put_notes(
            data.draw(st.sampled_from(self.scopes)), session_id, notes, capture
        )

    def _put_notes(
        self, scope: Scope, session_id: str, notes: str, capture: bool
    ) -> str | None:
        """The working-notes ``PUT``; the id of the note it captured, if any."""
        capture = capture and bool(notes.strip())
        body: dict[str, Any] = {"notes": notes, "capture": {} if capture else None}
        response = self.api.put(
            session_url(scope.scope_id, session_id, "working-notes"), body
        )
        if self._refused_as_closed(response, scope, session_id):
            return None
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
            return source_id
        assert answer["source"] is None
        return None

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
