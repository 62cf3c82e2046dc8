"""A tool as the catalogue describes it: a declared operation under a tool name.

Everything is read from the operation's declaration (``powercontext.operations``):
its ``ToolSpec`` gives the name, description and hints; the path, query and body
models give the arguments and the ``inputSchema`` (one flat object, path
parameters first); the success answer's model the ``outputSchema``. So a tool can
never accept or promise other than its operation: the same models validate the
HTTP request and the tool's arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from powercontext.operations import Operation, ToolHints, ToolSpec


def tool_annotations(hints: ToolHints | None) -> types.ToolAnnotations | None:
    """The SDK's annotations for ``hints`` (none of this service's tools reach
    outside it)."""
    if hints is None:
        return None
    return types.ToolAnnotations(
        read_only_hint=hints.read_only,
        destructive_hint=hints.destructive,
        idempotent_hint=hints.idempotent,
        open_world_hint=False,
    )


@dataclass(frozen=True)
class Tool:
    """One tool: ``operation``, called as its ``ToolSpec`` names it."""

    operation: Operation

    @cached_property
    def spec(self) -> ToolSpec:
        assert self.operation.tool is not None, "an operation offered as a tool"
        return self.operation.tool

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @cached_property
    def path_fields(self) -> frozenset[str]:
        return _fields(self.operation.path)

    @cached_property
    def query_fields(self) -> frozenset[str]:
        return _fields(self.operation.query)

    def definition(self) -> types.Tool:
        """The tool as ``tools/list`` shows it."""
        answer = self.operation.answer_model()
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema(),
            output_schema=None if answer is None else _answer_schema(answer),
            annotations=tool_annotations(self.spec.hints),
        )

    def input_schema(self) -> dict[str, Any]:
        """The path, query and body models' fields as one object schema."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        definitions: dict[str, Any] = {}
        operation = self.operation
        for model in (operation.path, operation.query, operation.body):
            if model is None:
                continue
            schema = model.model_json_schema(mode="validation")
            clash = properties.keys() & schema["properties"].keys()
            assert not clash, f"{self.name}: {sorted(clash)} named twice"
            definitions.update(schema.get("$defs", {}))
            properties.update(schema["properties"])
            required += schema.get("required", [])
        merged: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        if definitions:
            merged["$defs"] = definitions
        return merged


def _fields(model: type[BaseModel] | None) -> frozenset[str]:
    return frozenset() if model is None else frozenset(model.model_fields)


def _answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(mode="serialization")
    schema.pop("title", None)
    schema.pop("description", None)
    return schema
