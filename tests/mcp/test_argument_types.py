"""Tool arguments have the JSON types of their ``inputSchema``: nothing is coerced.

Over HTTP a path or query value is text the operation parses; a tool gets JSON,
where ``"3"`` is a string and not the integer ``limit`` takes. The table below is
built from every tool's ``inputSchema``: each argument of a single JSON type is
given a value of another type and must be refused as a body field would be, a
``422`` tool error whose ``loc`` names it.
"""

from __future__ import annotations

from typing import Any

import pytest

from powercontext.access.models import ApiToken
from powercontext.mcp_server.tools import TOOLS, Tool
from tests.conftest import ApiClient
from tests.mcp.helpers import result_of, rpc, tool_error

pytestmark = pytest.mark.django_db

# A value of another JSON type than the schema's, for each type.
WRONG = {"integer": "1", "boolean": "true", "string": 5}


def _typed_arguments() -> list[tuple[str, str, str, str]]:
    """``(tool, argument, JSON type, where)`` for every single-typed argument."""
    cases = []
    for tool in TOOLS:
        for where, model in _models(tool):
            for name, schema in model.model_json_schema()["properties"].items():
                types = {v.get("type") for v in schema.get("anyOf", [schema])}
                types.discard("null")
                if len(types) == 1 and (kind := types.pop()) in WRONG:
                    cases.append((tool.name, name, kind, where))
    return cases


def _models(tool: Tool) -> list[tuple[str, Any]]:
    operation = tool.operation
    parts = [("path", operation.path), ("query", operation.query)]
    return [(where, m) for where, m in [*parts, ("body", operation.body)] if m]


CASES = _typed_arguments()


def _call(api: ApiClient, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # Not ``helpers.call``: an argument may itself be called ``name``.
    return result_of(rpc(api, "tools/call", {"name": tool, "arguments": arguments}))


def _valid_path(scope_id: str, token_id: int) -> dict[str, Any]:
    return {
        "scope_id": scope_id,
        "session_id": "sess-1",
        "source_type": "content",
        "source_id": "s-1",
        "hold_id": "1",
        "token_id": token_id,
        "scope": scope_id,
    }


def _path_of(name: str, scope_id: str, token_id: int) -> dict[str, Any]:
    tool = next(tool for tool in TOOLS if tool.name == name)
    valid = _valid_path(scope_id, token_id)
    return {field: valid[field] for field in tool.path_fields}


def test_every_tool_with_typed_arguments_is_in_the_table() -> None:
    tools = {name for name, _, _, _ in CASES}

    assert {"list_sources", "list_scopes", "list_legal_holds", "list_tokens"} <= tools
    assert ("get_token", "token_id", "integer", "path") in CASES
    assert ("purge_working_notes", "dry_run", "boolean", "body") in CASES


@pytest.mark.parametrize(
    ("name", "argument", "kind", "where"),
    CASES,
    ids=[f"{name}.{argument}" for name, argument, _, _ in CASES],
)
def test_an_argument_of_another_json_type_is_refused(
    api: ApiClient, scope_id: str, name: str, argument: str, kind: str, where: str
) -> None:
    token_id = ApiToken.objects.filter(principal="root").earliest("id").pk
    arguments = {**_path_of(name, scope_id, token_id), argument: WRONG[kind]}

    error = tool_error(_call(api, name, arguments), 422)

    assert error["code"] == "invalid_request"
    assert [where, argument] in [item["loc"] for item in error["details"]["errors"]]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("list_sources", {"limit": 3}),
        ("list_scopes", {"limit": 3}),
        ("list_legal_holds", {"limit": 3}),
        ("list_tokens", {"limit": 3}),
        ("get_token", {}),
        ("purge_working_notes", {"older_than_seconds": 60, "dry_run": True}),
    ],
)
def test_the_right_json_types_succeed(
    api: ApiClient, scope_id: str, name: str, arguments: dict[str, Any]
) -> None:
    token_id = ApiToken.objects.filter(principal="root").earliest("id").pk

    result = _call(api, name, {**_path_of(name, scope_id, token_id), **arguments})

    assert result["isError"] is False, result


@pytest.mark.parametrize("name", ["list_sources", "list_scopes", "list_tokens"])
def test_null_is_refused_where_the_schema_has_no_null(
    api: ApiClient, scope_id: str, name: str
) -> None:
    arguments = {**_path_of(name, scope_id, 0), "limit": None}

    error = tool_error(_call(api, name, arguments), 422)

    # null where an integer belongs: pydantic's int_type, as the reference answers
    assert {"type": "int_type", "loc": ["query", "limit"]} in [
        {"type": item["type"], "loc": item["loc"]}
        for item in error["details"]["errors"]
    ]
