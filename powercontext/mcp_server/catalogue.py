"""A tool as the catalogue describes it: an HTTP operation under a tool name.

A ``Tool`` names a view class and one of its methods; everything else is read
from what the method's ``documented(...)`` recorded (``Operation``): the path,
query and body models give the arguments and the ``inputSchema`` (one flat
object, path parameters first), the success answer's model the
``outputSchema``. So a tool can never accept or promise other than its
operation: the same models validate the HTTP request.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from pydantic import BaseModel
from rest_framework.views import APIView

from powercontext.api.openapi import Operation

# Hints for a tool that only reads (as the reference marks its reads).
READ_ONLY = types.ToolAnnotations(
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


def writes(*, destructive: bool, idempotent: bool) -> types.ToolAnnotations:
    """Hints for a tool that changes something inside this service."""
    return types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


@dataclass(frozen=True)
class Tool:
    """One tool: ``view``'s ``method`` (``"post"``, ``"get"``, ...) as ``name``."""

    name: str
    view: type[APIView]
    method: str
    description: str
    annotations: types.ToolAnnotations | None = None

    @cached_property
    def operation(self) -> Operation:
        operation: Operation = getattr(self.view, self.method).operation
        return operation

    @cached_property
    def handler(self) -> Any:
        """The view function, as the URL conf would call it."""
        return self.view.as_view()

    @cached_property
    def path_fields(self) -> frozenset[str]:
        return _fields(self.operation.path)

    @cached_property
    def query_fields(self) -> frozenset[str]:
        return _fields(self.operation.query)

    @cached_property
    def http_method(self) -> str:
        return self.method.upper()

    def definition(self) -> types.Tool:
        """The tool as ``tools/list`` shows it."""
        answer = self.operation.answer_model()
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema(),
            output_schema=None if answer is None else _answer_schema(answer),
            annotations=self.annotations,
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
