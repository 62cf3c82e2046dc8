"""The OpenAPI document (``/openapi.json``) and the pieces drf-spectacular needs.

The document is generated once per process from the code and then served from
memory: generation is slow and not safe to run concurrently.
"""

from __future__ import annotations

import threading
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "powercontext.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer"}


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
