"""Handoff values on the wire: shapes, key order, digests, and what they cite.

Pure functions over validated request data (no database). A handoff's content is
kept as the reference's wire value (``HandoffContent``); ``content_value`` puts any
validated or stored form into that shape and key order, so a revision renders
byte-identically every time and two contents compare by their canonical digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from powercontext.canonical import canonical_json, canonical_sha256

HANDOFF_SCHEMA = "powercontext.handoff.v1"
PREPARED_SCHEMA = "powercontext.prepared-handoff.v1"
CONTEXT_SCHEMA = "powercontext.prepared-context.v1"
# One handoff artifact per scope: the family and id are always these.
ARTIFACT_FAMILY = "handoff"
ARTIFACT_ID = "handoff"

Citation = dict[str, Any]
CitationKey = tuple[Any, ...]


def revision_ref(number: int) -> dict[str, Any]:
    """The ArtifactReference of revision ``number`` of a scope's handoff."""
    return {"family": ARTIFACT_FAMILY, "artifact_id": ARTIFACT_ID, "revision": number}


def citation_value(citation: Citation) -> Citation:
    """A citation in wire key order (``kind`` first)."""
    if citation["kind"] == "source":
        ref = citation["source_ref"]
        return {
            "kind": "source",
            "source_ref": {"name": ref["name"], "source_id": ref["source_id"]},
        }
    ref = citation["artifact_ref"]
    return {
        "kind": "artifact",
        "artifact_ref": {
            "family": ref["family"],
            "artifact_id": ref["artifact_id"],
            "revision": ref["revision"],
        },
    }


def citation_key(citation: Citation) -> CitationKey:
    """A hashable identity of a citation (equal citations, equal keys)."""
    if citation["kind"] == "source":
        ref = citation["source_ref"]
        return ("source", ref["name"], ref["source_id"])
    ref = citation["artifact_ref"]
    return ("artifact", ref["family"], ref["artifact_id"], ref["revision"])


def statement_value(statement: dict[str, Any] | None) -> dict[str, Any] | None:
    if statement is None:
        return None
    return {
        "text": statement["text"],
        "citations": [citation_value(c) for c in statement["citations"]],
    }


def omission_value(omission: dict[str, Any]) -> dict[str, Any]:
    citation = omission["citation"]
    return {
        "text": omission["text"],
        "citation": None if citation is None else citation_value(citation),
    }


def content_value(content: dict[str, Any]) -> dict[str, Any]:
    """A HandoffContent (or a draft) as the wire value, in the reference's key order.

    ``generation`` is kept when present (a prepared value may carry metadata from a
    generating server) and is ``None`` otherwise.
    """
    return {
        "generation": content.get("generation"),
        "schema": HANDOFF_SCHEMA,
        "objective": content["objective"],
        "state": [statement_value(s) for s in content["state"]],
        "disposition": content["disposition"],
        "next_action": statement_value(content["next_action"]),
        "omissions": [omission_value(o) for o in content["omissions"]],
    }


def content_text(content: dict[str, Any]) -> str:
    """The stored form of a content value: its RFC 8785 canonical JSON."""
    return canonical_json(content).decode("utf-8")


def content_digest(content: dict[str, Any]) -> str:
    """``sha256:`` + hex SHA-256 of the canonical JSON of a content value.

    Two contents are equal for commit idempotency exactly when their digests are.
    """
    return "sha256:" + canonical_sha256(content)


@dataclass(frozen=True)
class Claim:
    """A statement whose evidence is checked: ``state[state_index]`` or the next
    action (``state_index`` None)."""

    claim: str
    state_index: int | None
    citations: list[Citation]


def checked_claims(content: dict[str, Any]) -> list[Claim]:
    """The state statements in order, then the next action when there is one.

    Omissions are not claims: finalize, commit and continue never check them.
    """
    claims = [
        Claim("state", index, statement["citations"])
        for index, statement in enumerate(content["state"])
    ]
    if content["next_action"] is not None:
        claims.append(Claim("next_action", None, content["next_action"]["citations"]))
    return claims


def omission_citations(content: dict[str, Any]) -> list[Citation]:
    return [o["citation"] for o in content["omissions"] if o["citation"] is not None]


def claim_citations(content: dict[str, Any]) -> list[Citation]:
    """Every citation of the checked claims, in order (duplicates kept)."""
    return [c for claim in checked_claims(content) for c in claim.citations]


def distinct(citations: Iterable[Citation]) -> list[Citation]:
    """``citations`` without repeats, first occurrence first."""
    seen: set[CitationKey] = set()
    unique = []
    for citation in citations:
        key = citation_key(citation)
        if key not in seen:
            seen.add(key)
            unique.append(citation)
    return unique


def _refs(content: dict[str, Any], kind: str, field: str) -> Iterator[dict[str, Any]]:
    for citation in distinct(claim_citations(content)):
        if citation["kind"] == kind:
            yield citation_value(citation)[field]


def source_refs_of(content: dict[str, Any]) -> list[dict[str, Any]]:
    """Distinct Source refs of the state and next action, first seen first."""
    return list(_refs(content, "source", "source_ref"))


def artifact_refs_of(content: dict[str, Any]) -> list[dict[str, Any]]:
    """Distinct artifact refs of the state and next action, first seen first."""
    return list(_refs(content, "artifact", "artifact_ref"))
