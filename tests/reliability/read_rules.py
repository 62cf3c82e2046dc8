"""The read rules of the registry's model test: one Source, audit, windows, resolution.

A mixin of ``test_registry_model.RegistryMachine``: each rule reads as the admin and
compares the answer with the model at the model's clock, in every availability
state (``active``, ``expired``, ``closed``, ``purged``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from tests.conftest import ApiClient, error_of
from tests.reliability.lifecycle_rules import parse, source_url
from tests.reliability.model import Scope, content_digest

SOURCE_IDS = st.sampled_from(["s1", "s2", "s3", "a/b", "n1", "n2"])


class ReadRules:
    """Rules over ``self.api`` (an admin), ``self.scopes`` and ``self.now``."""

    api: ApiClient
    scopes: list[Scope]
    now: datetime

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
