"""``POST /v1/handoff/commit`` through HTTP: revisions, idempotency, base, lineage."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db.models.deletion import Collector, ProtectedError

from handoffs.models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
)
from sources.models import ContentSource
from tests.conftest import ApiClient, create_scope, error_of
from tests.handoffs.helpers import (
    capture,
    commit,
    committed,
    content_of,
    draft,
    finalize,
    hc,
    href,
    note,
    prepared,
    sc,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def cited(api: ApiClient, scope_id: str, frozen: Any) -> str:
    capture(api, scope_id, "c-1")
    capture(api, scope_id, "c-2")
    note(api, scope_id, "wn-1")
    note(api, scope_id, "wn-exp", expires_at=NOW + timedelta(hours=1))
    return scope_id


def lineage_of(scope_id: str, revision: int) -> list[str]:
    return list(
        HandoffLineage.objects.filter(
            revision__scope_id=scope_id, revision__revision=revision
        )
        .order_by("ordinal")
        .values_list("source__source_id", flat=True)
    )


def test_first_commit_stores_revision_1(api: ApiClient, cited: str) -> None:
    body = draft(
        [sc("c-1"), sc("wn-1"), sc("c-1")],
        [sc("wn-exp"), hc(7)],
        next_action=[sc("c-2"), sc("wn-1")],
        omissions=(
            {"text": "ghost", "citation": sc("ghost")},
            {"text": "uncited", "citation": None},
        ),
    )
    body["state"][1]["citations"] = [sc("wn-exp")]

    response = commit(api, cited, prepared(cited, body))

    assert response.status_code == 200
    assert response.get("Idempotent-Replayed") is None
    assert response.json() == {
        "reference": href(1),
        "content": content_of(body),
        "source_refs": [
            {"name": "content", "source_id": "c-1"},
            {"name": "content", "source_id": "wn-1"},
            {"name": "content", "source_id": "wn-exp"},
            {"name": "content", "source_id": "c-2"},
        ],
        "artifact_refs": [],
    }
    revision = HandoffRevision.objects.get()
    assert (revision.scope_id, revision.revision, revision.request_id) == (
        cited,
        1,
        response["X-PowerContext-Request-ID"],
    )
    assert HandoffHead.objects.get(scope_id=cited).current == revision
    assert lineage_of(cited, 1) == ["c-1", "wn-1", "wn-exp", "c-2"]
    assert list(
        HandoffStatement.objects.order_by("claim", "ordinal").values_list(
            "claim", "ordinal", "text"
        )
    ) == [
        ("next_action", 0, "do this next"),
        ("omission", 0, "ghost"),
        ("omission", 1, "uncited"),
        ("state", 0, "state 0"),
        ("state", 1, "state 1"),
    ]
    assert HandoffCitation.objects.count() == 3 + 1 + 2 + 1


# RFC 8785 by hand: sorted keys, no whitespace (every value here is ASCII).
CANONICAL = (
    '{"disposition":"blocked","generation":null,'
    '"next_action":{"citations":[{"kind":"source",'
    '"source_ref":{"name":"content","source_id":"c-2"}}],"text":"do this next"},'
    '"objective":"Finish the parser","omissions":[{"citation":null,"text":"o"}],'
    '"schema":"powercontext.handoff.v1","state":[{"citations":[{"kind":"source",'
    '"source_ref":{"name":"content","source_id":"c-1"}}],"text":"state 0"}]}'
)


def test_revision_stores_the_canonical_json_of_the_wire_content(
    api: ApiClient, cited: str
) -> None:
    body = draft(
        [sc("c-1")],
        next_action=[sc("c-2")],
        omissions=({"text": "o", "citation": None},),
        disposition="blocked",
    )

    answer = commit(api, cited, prepared(cited, body)).json()

    revision = HandoffRevision.objects.get()
    assert revision.content == CANONICAL
    expected_digest = hashlib.sha256(CANONICAL.encode()).hexdigest()
    assert revision.content_digest == f"sha256:{expected_digest}"
    assert list(answer["content"]) == [
        "generation",
        "schema",
        "objective",
        "state",
        "disposition",
        "next_action",
        "omissions",
    ]
    assert list(answer["content"]["state"][0]["citations"][0]) == [
        "kind",
        "source_ref",
    ]


def test_artifact_citations_are_listed_and_not_pinned(
    api: ApiClient, cited: str
) -> None:
    committed(api, cited, draft([sc("c-1")]))

    second = committed(api, cited, draft([hc(1), sc("c-2"), hc(1)]))

    assert second["reference"] == href(2)
    assert second["artifact_refs"] == [href(1)]
    assert second["source_refs"] == [{"name": "content", "source_id": "c-2"}]
    assert lineage_of(cited, 2) == ["c-2"]


def test_recommit_of_the_head_is_idempotent(api: ApiClient, cited: str) -> None:
    handoff = finalize(api, cited, draft([sc("c-1")])).json()

    first = commit(api, cited, handoff)
    again = commit(api, cited, handoff)

    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert HandoffRevision.objects.count() == 1
    assert HandoffStatement.objects.count() == 1


def test_idempotency_comes_before_the_base_and_the_evidence(
    api: ApiClient, cited: str, frozen: Any
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    second = finalize(api, cited, draft([sc("wn-exp")], objective="Second")).json()
    first_answer = commit(api, cited, second)
    frozen.move_to(NOW + timedelta(days=1))  # wn-exp has expired, base is stale

    again = commit(api, cited, second)

    assert again.status_code == 200
    assert again.content == first_answer.content
    assert HandoffRevision.objects.count() == 2


def test_absent_generation_keys_equal_null_ones(api: ApiClient, cited: str) -> None:
    handoff = finalize(api, cited, draft([sc("c-1")])).json()
    commit(api, cited, handoff)
    del handoff["generation"]
    del handoff["content"]["generation"]

    response = commit(api, cited, handoff)

    assert response.status_code == 200
    assert response.json()["reference"] == href(1)
    assert HandoffRevision.objects.count() == 1


def test_content_equal_to_an_older_revision_is_a_new_revision(
    api: ApiClient, cited: str
) -> None:
    body = draft([sc("c-1")])
    committed(api, cited, body)
    committed(api, cited, draft([sc("c-2")]))

    response = commit(api, cited, prepared(cited, body, base=2))

    assert response.json()["reference"] == href(3)
    assert HandoffRevision.objects.count() == 3


@pytest.mark.parametrize(
    "base",
    [
        pytest.param(None, id="null-after-a-commit"),
        pytest.param(1, id="stale"),
        pytest.param(7, id="future"),
    ],
)
def test_stale_base_is_409_before_evidence(
    api: ApiClient, cited: str, base: int | None
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    committed(api, cited, draft([sc("c-2")]))

    response = commit(api, cited, prepared(cited, draft([sc("missing")]), base=base))

    assert response.status_code == 409
    assert error_of(response)["code"] == "revision_conflict"
    assert HandoffRevision.objects.count() == 2


def test_base_without_any_commit_is_409(api: ApiClient, cited: str) -> None:
    response = commit(api, cited, prepared(cited, draft([sc("c-1")]), base=1))

    assert response.status_code == 409
    assert not HandoffRevision.objects.exists()


@pytest.mark.parametrize(
    ("body", "moved"),
    [
        pytest.param(draft([sc("missing")]), timedelta(0), id="missing"),
        pytest.param(draft([sc("wn-exp")]), timedelta(hours=1), id="expired"),
        pytest.param(
            draft([sc("c-1")], next_action=[sc("wn-exp")]),
            timedelta(hours=2),
            id="expired-in-next-action",
        ),
    ],
)
def test_new_revision_with_unresolvable_evidence_is_404(
    api: ApiClient, cited: str, frozen: Any, body: dict, moved: timedelta
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    frozen.move_to(NOW + moved)

    response = commit(api, cited, prepared(cited, body, base=1))

    assert response.status_code == 404
    assert error_of(response)["code"] == "handoff_evidence_not_found"
    assert HandoffRevision.objects.count() == 1
    assert HandoffHead.objects.get(scope_id=cited).current.revision == 1


def test_note_cited_while_active_commits(
    api: ApiClient, cited: str, frozen: Any
) -> None:
    frozen.move_to(NOW + timedelta(minutes=59))

    response = commit(api, cited, prepared(cited, draft([sc("wn-exp")])))

    assert response.status_code == 200
    assert lineage_of(cited, 1) == ["wn-exp"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"scope_id": "scp_other"}, ["handoff", "scope_id"], id="scope"),
        pytest.param(
            {"base": {"family": "handoff", "artifact_id": "other", "revision": 1}},
            ["handoff", "base", "artifact_id"],
            id="base-artifact-id",
        ),
        pytest.param(
            {"base": {"family": "skill", "artifact_id": "handoff", "revision": 1}},
            ["handoff", "base", "family"],
            id="base-family",
        ),
        pytest.param(
            {"schema": "powercontext.handoff.v1"},
            ["handoff", "schema"],
            id="schema",
        ),
    ],
)
def test_malformed_prepared_handoff_is_422(
    api: ApiClient, cited: str, change: dict, field: list
) -> None:
    handoff = {**prepared(cited, draft([sc("c-1")])), **change}

    response = commit(api, cited, handoff)

    assert response.status_code == 422
    assert [e["loc"] for e in error_of(response)["details"]["errors"]] == [
        ["body", *field]
    ]
    assert not HandoffRevision.objects.exists()


def test_missing_base_key_is_422(api: ApiClient, cited: str) -> None:
    handoff = prepared(cited, draft([sc("c-1")]))
    del handoff["base"]

    response = commit(api, cited, handoff)

    assert error_of(response)["details"]["errors"] == [
        {
            "type": "missing",
            "loc": ["body", "handoff", "base"],
            "msg": "Field required",
        }
    ]


GENERATION_METADATA = {
    "scope_id": "scp_somewhere",
    "prompt_key": "handoff.generate",
    "selection": "built_in",
    "artifact": None,
    "definition_version": "1",
    "builtin_version": "1",
    "compiled_digest": "a" * 64,
    "original_draft_digest": "b" * 64,
    "edit_status": "unchanged",
}


@pytest.mark.parametrize(
    ("envelope", "metadata"),
    [
        pytest.param({"receipt": "made-up"}, None, id="receipt"),
        pytest.param(None, GENERATION_METADATA, id="metadata"),
    ],
)
def test_generation_cannot_be_committed(
    api: ApiClient, cited: str, envelope: dict | None, metadata: dict | None
) -> None:
    handoff = prepared(cited, draft([sc("c-1")]))
    handoff["generation"] = envelope
    handoff["content"]["generation"] = metadata

    response = commit(api, cited, handoff)

    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_handoff_generation"
    assert not HandoffRevision.objects.exists()


def test_unknown_scope_is_404(api: ApiClient) -> None:
    response = commit(api, "scp_nope", prepared("scp_nope", draft([sc("c-1")])))

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("grant", "status", "revisions"),
    [("viewer", 403, 0), ("contributor", 200, 1), ("admin", 200, 1)],
)
def test_commit_needs_a_contributor_grant(
    client_for: Callable[..., ApiClient],
    cited: str,
    grant: str,
    status: int,
    revisions: int,
) -> None:
    client = client_for(f"{cited}:{grant}")

    response = commit(client, cited, prepared(cited, draft([sc("c-1")])))

    assert response.status_code == status
    assert HandoffRevision.objects.count() == revisions


def test_revision_records_its_author(
    client_for: Callable[..., ApiClient], cited: str
) -> None:
    client = client_for(f"{cited}:contributor", name="alice")

    commit(client, cited, prepared(cited, draft([sc("c-1")])))

    revision = HandoffRevision.objects.get()
    assert (revision.created_by, revision.created_at) == ("alice", NOW)
    assert revision.content_digest.startswith("sha256:")


def test_revisions_are_numbered_per_scope(api: ApiClient, cited: str) -> None:
    other = create_scope(api, key="other")
    capture(api, other, "c-1")

    committed(api, cited, draft([sc("c-1")]))
    there = committed(api, other, draft([sc("c-1")]))

    assert there["reference"] == href(1)


def test_a_cited_source_is_protected_from_deletion(api: ApiClient, cited: str) -> None:
    committed(api, cited, draft([sc("c-1")]))
    source = ContentSource.objects.get(scope_id=cited, source_id="c-1")

    with pytest.raises(ProtectedError):
        Collector(using="default").collect([source])
