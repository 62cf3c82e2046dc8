"""``GET /metrics``: Prometheus' scrape, for a token with a ``*`` grant.

Exempt from rate limits (docs/api.md) and outside the OpenAPI document: it
answers Prometheus' text format, not JSON. The numbers add up every granian
worker (``powercontext.metrics``).
"""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from rest_framework.request import Request
from rest_framework.views import APIView

from powercontext import metrics
from powercontext.exceptions import Forbidden
from powercontext.principals import Role

from .permissions import current, principal_of


class MetricsView(APIView):
    throttle_classes: list = []

    @extend_schema(exclude=True)
    def get(self, request: Request) -> HttpResponse:
        principal = principal_of(request)
        if not (
            principal.can_everywhere(Role.VIEWER)
            or current(principal).can_everywhere(Role.VIEWER)
        ):
            raise Forbidden("Metrics are readable with a '*' grant only.")
        return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
