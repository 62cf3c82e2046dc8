"""URL routing. Every path not matched here answers the 404 envelope, whatever the
method: the catch-all is the last route, and CSRF runs for the admin only."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerView

from powercontext.api import errors, health, scrape
from powercontext.api.openapi import OpenApiDocumentView
from powercontext.mcp_server.views import McpView
from sources.urls import first_urlpatterns

urlpatterns = [
    # MCP clients are configured with either spelling; neither redirects. First:
    # an MCP host's every call resolves it, and routes are tried in order.
    re_path(r"^mcp/?\Z", McpView.as_view(), name="mcp"),
    path("v1/", include(first_urlpatterns)),
    path("health/live", health.LivenessView.as_view(), name="health-live"),
    path("health/ready", health.ReadinessView.as_view(), name="health-ready"),
    path("metrics", scrape.MetricsView.as_view(), name="metrics"),
    path("openapi.json", OpenApiDocumentView.as_view(), name="openapi"),
    path(
        "docs",
        SpectacularSwaggerView.as_view(
            url_name="openapi", authentication_classes=[], permission_classes=[]
        ),
        name="docs",
    ),
    path("v1/", include("lifecycle.urls")),
    path("v1/", include("sources.urls")),
    path("v1/", include("sessions_app.urls")),
    path("v1/", include("handoffs.urls")),
    path("v1/", include("powercontext.access.urls")),
    re_path(r"^.*$", errors.not_found_view),
]
if settings.POWERCONTEXT_ADMIN_ENABLED:
    urlpatterns.insert(-1, path(settings.POWERCONTEXT_ADMIN_PATH, admin.site.urls))

handler400 = "powercontext.api.errors.bad_request_view"
handler403 = "powercontext.api.errors.permission_denied_view"
handler404 = "powercontext.api.errors.not_found_view"
handler500 = "powercontext.api.errors.server_error_view"
