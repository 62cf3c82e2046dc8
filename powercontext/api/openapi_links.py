"""OpenAPI links: how an answer's values feed the next operation.

A drf-spectacular postprocessing hook adds ``links`` to the success answers of the
operations that create or name something - a scope, a Source, an envelope, a
handoff revision - pointing at the operations that read or use it. Clients may
follow them; schemathesis's stateful testing walks them to build sequences of
calls (docs/decisions/0024-reliability-proofs.md). A link naming an operation or a
parameter the document does not have fails ``tests/api/test_openapi_links.py``.
"""

from __future__ import annotations

from typing import Any

SCOPE_FROM_BODY = "$response.body#/scope_id"

# Operations that take the scope in their path, or in their body.
SCOPE_IN_PATH = (
    "get_scope",
    "list_sources",
    "create_source",
    "read_generation_window",
    "list_source_audit",
    "resolve_evidence",
)
SCOPE_IN_BODY = (
    "capture_content_source",
    "capture_working_note",
    "finalize_handoff",
    "continue_handoff",
    "prepare_handoff_hint",
)
SOURCE_READS = ("get_source", "get_source_audit", "list_capture_attempts")
SESSION_READS = ("get_session_envelope", "get_working_notes", "fold_working_notes")


def _path_link(operation: str, **parameters: str) -> dict[str, Any]:
    return {
        "operationId": operation,
        "parameters": {f"path.{name}": value for name, value in parameters.items()},
    }


def _body_link(operation: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"operationId": operation, "requestBody": body}


def _source_links(scope: str, source_id: str) -> dict[str, Any]:
    return {
        name: _path_link(
            name, scope_id=scope, source_type="content", source_id=source_id
        )
        for name in SOURCE_READS
    }


def _session_links(scope: str, session: str) -> dict[str, Any]:
    return {
        name: _path_link(name, scope_id=scope, session_id=session)
        for name in SESSION_READS
    }


def _links() -> dict[tuple[str, str], dict[str, Any]]:
    """``{(operationId, status): {link name: link}}``."""
    receipt = _source_links(
        "$request.body#/scope_id", "$response.body#/source/source_id"
    )
    envelope = _session_links(SCOPE_FROM_BODY, "$response.body#/session_id")
    notes = _session_links("$request.path.scope_id", "$request.path.session_id")
    scope = {
        **{name: _path_link(name, scope_id=SCOPE_FROM_BODY) for name in SCOPE_IN_PATH},
        **{
            name: _body_link(name, {"scope_id": SCOPE_FROM_BODY})
            for name in SCOPE_IN_BODY
        },
        **_session_links(SCOPE_FROM_BODY, "session-1"),
    }
    committed = {
        "continue_handoff": _body_link(
            "continue_handoff",
            {
                "scope_id": "$request.body#/scope_id",
                "selection": "exact",
                "revision": "$response.body#/reference",
                "prepared": None,
            },
        )
    }
    prepared = {
        "commit_handoff": _body_link(
            "commit_handoff",
            {"scope_id": SCOPE_FROM_BODY, "handoff": "$response.body"},
        )
    }
    return {
        ("create_scope", "201"): scope,
        ("capture_content_source", "202"): receipt,
        ("capture_working_note", "202"): receipt,
        ("create_source", "201"): _source_links(
            SCOPE_FROM_BODY, "$response.body#/source_id"
        ),
        ("replace_session_envelope", "200"): envelope,
        ("replace_session_envelope", "201"): envelope,
        ("patch_session_envelope", "200"): envelope,
        ("patch_session_envelope", "201"): envelope,
        ("put_working_notes", "200"): notes,
        ("put_working_notes", "201"): notes,
        ("finalize_handoff", "200"): prepared,
        ("commit_handoff", "200"): committed,
    }


def add_links(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the links above, on their answers."""
    links = _links()
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for (operation_id, status), named in links.items():
                if operation.get("operationId") == operation_id:
                    operation["responses"][status]["links"] = named
    return result
