"""The OpenAPI document's links name operations, answers and parameters it has.

Links (powercontext/api/openapi_links.py) drive schemathesis's stateful testing
and tell clients where an answer's values go next; a link to a renamed operation
or parameter would silently stop both.
"""

from __future__ import annotations

from typing import Any

import pytest

from powercontext.api.openapi import OpenApiDocumentView

DOCUMENT = OpenApiDocumentView.document()
OPERATIONS = {
    operation["operationId"]: operation
    for path in DOCUMENT["paths"].values()
    for operation in path.values()
}
LINKS = [
    (source, status, name, link)
    for source, operation in OPERATIONS.items()
    for status, answer in operation["responses"].items()
    for name, link in answer.get("links", {}).items()
]


def body_properties(operation: dict[str, Any]) -> set[str]:
    if "requestBody" not in operation:
        return set()
    reference = operation["requestBody"]["content"]["application/json"]["schema"]
    name = reference["$ref"].rsplit("/", 1)[1]
    return set(DOCUMENT["components"]["schemas"][name]["properties"])


def test_the_scope_links_reach_every_operation_on_a_scope() -> None:
    linked = {name for source, _, name, _ in LINKS if source == "create_scope"}
    assert len(linked) == 14
    assert {
        "capture_content_source",
        "resolve_evidence",
        "fold_working_notes",
    } <= linked


@pytest.mark.parametrize(
    ("source", "status", "name", "link"),
    LINKS,
    ids=[f"{s}-{c}-{n}" for s, c, n, _ in LINKS],
)
def test_a_link_names_a_real_operation_and_its_parameters(
    source: str, status: str, name: str, link: dict[str, Any]
) -> None:
    target = OPERATIONS[link["operationId"]]
    in_path = {p["name"] for p in target.get("parameters", []) if p["in"] == "path"}

    assert name == link["operationId"]
    assert status.startswith("2")
    assert {key.removeprefix("path.") for key in link.get("parameters", {})} == in_path
    assert (
        set(link.get("requestBody", {})) <= body_properties(target)
        if "requestBody" in link
        else True
    )
