"""The OpenAPI document's component names are the ones generated clients use.

``clients/typescript`` generates its types from this document, so a component's
name is part of the client's API: one component per model and direction, named
``<Model>`` for answers and ``<Model>Request`` for request bodies - never a doubled
suffix, never a second ``Patched...`` copy of a body that PUT and PATCH share.
"""

from __future__ import annotations

import json
import re

import pytest

from powercontext.api.openapi import OpenApiDocumentView
from powercontext.inputs import StrictInput

DOCUMENT = OpenApiDocumentView.document()
NAMES = set(DOCUMENT["components"]["schemas"])
OPERATIONS = {
    operation["operationId"]: operation
    for path in DOCUMENT["paths"].values()
    for operation in path.values()
}


def body_component(operation_id: str) -> str:
    body = OPERATIONS[operation_id]["requestBody"]["content"]["application/json"]
    return str(body["schema"]["$ref"].rsplit("/", 1)[1])


def test_no_component_name_doubles_the_request_suffix() -> None:
    """Only a model whose own name ends in ``Request`` (``PurgeRequest``) gives one."""
    models = {model.__name__ for model in _subclasses(StrictInput)}
    doubled = {name for name in NAMES if name.endswith("RequestRequest")}
    assert {name for name in doubled if name.removesuffix("Request") not in models} == (
        set()
    )
    assert (
        sorted(name for name in NAMES if name.endswith("RequestRequestRequest")) == []
    )


def test_no_component_is_a_patched_copy() -> None:
    assert sorted(name for name in NAMES if name.startswith("Patched")) == []


@pytest.mark.parametrize(
    ("operation_id", "component"),
    [
        ("capture_content_source", "CaptureContentRequest"),
        ("capture_working_note", "CaptureWorkingNoteRequest"),
        ("create_scope", "ScopeCreateRequest"),
        ("put_working_notes", "WorkingNotesPutRequest"),
        ("replace_session_envelope", "EnvelopeWriteRequest"),
        ("patch_session_envelope", "EnvelopeWriteRequest"),
        ("add_token_grant", "GrantInputRequest"),
        ("purge_working_notes", "PurgeRequestRequest"),
    ],
)
def test_a_request_body_is_named_after_its_model(
    operation_id: str, component: str
) -> None:
    assert body_component(operation_id) == component


def test_a_model_used_as_a_body_and_nested_is_one_component() -> None:
    """``GrantInput`` is ``add_token_grant``'s body and an item of ``mint_token``'s."""
    mint = DOCUMENT["components"]["schemas"][body_component("mint_token")]
    nested = set(re.findall(r"#/components/schemas/(\w+)", json.dumps(mint)))
    assert nested == {body_component("add_token_grant")}


def test_every_reference_names_a_component() -> None:
    referenced = set(re.findall(r"#/components/schemas/(\w+)", json.dumps(DOCUMENT)))
    assert referenced - NAMES == set()


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found
