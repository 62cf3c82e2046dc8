"""OpenAPI helpers: the error envelope and the statuses each operation documents."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField(allow_null=True)


class ErrorResponseSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


_DESCRIPTIONS = {
    400: "Invalid query parameter or cursor (`invalid_request`, `invalid_cursor`).",
    401: "Missing, unknown, revoked or expired bearer token (`unauthorized`).",
    403: "The token holds no grant for this action on the scope (`forbidden`).",
    404: "The named thing does not exist.",
    405: "Method not allowed (`method_not_allowed`).",
    409: "Conflict with stored state.",
    410: "The cursor has expired (`cursor_expired`).",
    412: "If-Match did not match (`precondition_failed`).",
    413: "Body over the size limit, or holding more JSON nodes than its size allows "
    "(`request_too_large`).",
    415: "Body is not JSON (`unsupported_media_type`).",
    422: "Schema violation or domain rule (`invalid_request`).",
    500: "Unexpected failure (`internal_error`).",
    503: (
        "Database unreachable, outcome unknown, retry (`unavailable`); or a large "
        "body while the worker has no large-body slot free, nothing done, retry "
        "after `Retry-After` (`server_busy`)."
    ),
}

COMMON = (401, 403, 413, 415, 422, 500, 503)


def error_responses(*statuses: int) -> dict[int, Any]:
    """Response entries for ``statuses`` plus the ones every operation can return."""
    return {
        status: OpenApiResponse(
            ErrorResponseSerializer, description=_DESCRIPTIONS[status]
        )
        for status in sorted({*statuses, *COMMON})
    }
