"""Liveness and readiness probes (public, exempt from the HTTPS redirect).

Liveness names the running version in ``X-PowerContext-Version`` (a header, not a
body key: the reference client reads the body into a closed model). Readiness runs a
real query; its 503 body is the one error body that is not the
envelope, because load balancers and the reference client expect this shape.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.version import VERSION

logger = logging.getLogger("powercontext.health")

_Liveness = inline_serializer("HealthResponse", {"status": serializers.CharField()})
_Readiness = inline_serializer(
    "ReadinessResponse",
    {
        "status": serializers.ChoiceField(choices=["ready", "not_ready"]),
        "checks": serializers.DictField(child=serializers.CharField()),
    },
)


class PublicView(APIView):
    authentication_classes: list = []
    permission_classes: list = []


VERSION_HEADER = "X-PowerContext-Version"


class LivenessView(PublicView):
    @extend_schema(
        operation_id="get_liveness",
        responses={200: _Liveness},
        tags=["health"],
        description=f"The running version is in the `{VERSION_HEADER}` header.",
    )
    def get(self, request: Request) -> Response:
        return Response({"status": "ok"}, headers={VERSION_HEADER: VERSION})


class ReadinessView(PublicView):
    @extend_schema(
        operation_id="get_readiness",
        responses={200: _Readiness, 503: _Readiness},
        tags=["health"],
    )
    def get(self, request: Request) -> Response:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()
        except DatabaseError as exc:
            logger.warning("readiness: database not reachable: %s", exc)
            return Response(
                {"status": "not_ready", "checks": {"database": "unavailable"}},
                status=503,
            )
        return Response({"status": "ready", "checks": {"database": "ready"}})
