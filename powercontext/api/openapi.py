"""The OpenAPI document (``/openapi.json``), generated from the request models.

Operations document their path, query, body and answers with the same pydantic
models that validate them (``<app>/inputs.py``) and describe them
(``<app>/schemas.py``): ``PydanticSchema`` maps a model to a component (request
bodies in pydantic's validation mode, answers in its serialization mode), and
``documented`` turns a view method's models into drf-spectacular's
``extend_schema``. The document is OpenAPI 3.1 (pydantic writes JSON Schema
2020-12), generated once per process and then served from memory: generation is
slow and not safe to run concurrently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
)
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from typing_extensions import TypeAliasType

from powercontext.inputs import StrictInput
from powercontext.operations import Described, Header

from .schema import ErrorResponseSerializer, error_responses


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "powercontext.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer"}


class PydanticSchema(OpenApiSerializerExtension):
    """Any pydantic model as a schema component; requests named ``<Model>Request``
    (validation mode: defaults make fields optional), answers ``<Model>``.

    drf-spectacular appends the ``Request`` suffix to a top-level request body itself
    (``COMPONENT_SPLIT_REQUEST``), so ``get_name`` gives the bare model name; nested
    models are registered here with the suffix. Either way a model has one request
    component, named as the generated client types (``clients/typescript``) show it.
    """

    target_class = "pydantic.BaseModel"
    match_subclasses = True
    priority = 1  # above drf-spectacular's own contrib extension

    def get_name(self, auto_schema: Any, direction: str) -> str:
        return self.target.__name__

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        mode = "validation" if direction == "request" else "serialization"
        schema = self.target.model_json_schema(
            mode=mode,
            ref_template="#/components/schemas/{model}"
            + ("Request" if direction == "request" else ""),
        )
        nested = _nested_models(self.target)
        for name, sub_schema in schema.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(
                ResolvedComponent(
                    name=_component_name(name, direction),
                    type=ResolvedComponent.SCHEMA,
                    # The class itself, as drf-spectacular identifies a model used
                    # at the top level, so both registrations are one component.
                    object=nested.get(name, name),
                    schema=sub_schema,
                )
            )
        return schema


def _nested_models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model class reachable from ``model``'s fields, by class name."""
    found: dict[str, type[BaseModel]] = {}
    pending: list[Any] = [field.annotation for field in model.model_fields.values()]
    while pending:
        annotation = pending.pop()
        if isinstance(annotation, TypeAliasType):  # a named union, e.g. a citation
            pending.append(annotation.__value__)
            continue
        is_model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        if is_model and annotation.__name__ not in found:
            found[annotation.__name__] = annotation
            pending.extend(f.annotation for f in annotation.model_fields.values())
        pending.extend(get_args(annotation))
    return found


def _component_name(name: str, direction: str) -> str:
    return f"{name}Request" if direction == "request" else name


def parameters(
    model: type[BaseModel], location: Literal["path", "query"]
) -> list[OpenApiParameter]:
    """One parameter per field of ``model`` (``OpenApiParameter.PATH``/``QUERY``)."""
    schema = model.model_json_schema(mode="validation")
    required = set(schema.get("required", ()))
    return [
        OpenApiParameter(
            name,
            type=field_schema,
            location=location,
            required=location == OpenApiParameter.PATH or name in required,
            description=field_schema.get("description", ""),
        )
        for name, field_schema in schema["properties"].items()
    ]


def documented(
    operation_id: str,
    *,
    tags: list[str],
    path: type[StrictInput] | None = None,
    query: type[StrictInput] | None = None,
    body: type[StrictInput] | None = None,
    answers: dict[Any, Any],
    errors: Iterable[int] = (),
    headers: Iterable[Header] = (),
    description: str | None = None,
) -> Callable[[Any], Any]:
    """``extend_schema`` for an operation described by pydantic models.

    ``answers`` map a status (or a ``(status, media type)`` pair) to a model, to
    ``str`` (a text answer) or to ``Described`` (no model of its own; the error
    envelope with ``error=True``).
    """
    found: list[OpenApiParameter] = []
    if path is not None:
        found += parameters(path, OpenApiParameter.PATH)
    if query is not None:
        found += parameters(query, OpenApiParameter.QUERY)
    # An answer given for a status (e.g. a specific 503) wins over the generic one.
    generic = {s: r for s, r in error_responses(*errors).items() if s not in answers}
    return extend_schema(
        operation_id=operation_id,
        parameters=[*found, *(_header(header) for header in headers)],
        request=body,
        responses={**{s: _answer(a) for s, a in answers.items()}, **generic},
        tags=tags,
        description=description,
    )


def _answer(answer: Any) -> Any:
    if answer is str:
        return OpenApiTypes.STR
    if isinstance(answer, Described):
        serializer = ErrorResponseSerializer if answer.error else None
        return OpenApiResponse(serializer, description=answer.description)
    return answer


def _header(header: Header) -> OpenApiParameter:
    return OpenApiParameter(
        header.name,
        str,
        OpenApiParameter.HEADER,
        response=list(header.response) if header.response else False,
        description=header.description,
    )


class PlainJsonOpenApiRenderer(OpenApiJsonRenderer):
    media_type = "application/json"


class OpenApiDocumentView(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    renderer_classes = [PlainJsonOpenApiRenderer]
    _document: dict[str, Any] | None = None
    _lock = threading.Lock()

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response(self.document())

    @classmethod
    def document(cls) -> dict[str, Any]:
        with cls._lock:
            if cls._document is None:
                cls._document = SchemaGenerator().get_schema(request=None, public=True)
            return cls._document
