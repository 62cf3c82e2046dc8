"""Registry routes under ``/v1/``.

Trailing ``source_id`` segments use the ``path`` converter so ids containing ``/``
(sent as ``%2F``, decoded by the server before routing) round-trip.
"""

from django.urls import path

from . import views

SOURCE = "scopes/<str:scope_id>/sources/<str:source_type>/<path:source_id>"
AUDIT = "scopes/<str:scope_id>/source-audit/<str:source_type>/<path:source_id>"

urlpatterns = [
    path("scopes", views.ScopeCollectionView.as_view(), name="scope-collection"),
    path("scopes/<str:scope_id>", views.ScopeDetailView.as_view(), name="scope-detail"),
    path("sources/content", views.CaptureContentView.as_view(), name="capture-content"),
    path(
        "sources/working-notes",
        views.CaptureWorkingNoteView.as_view(),
        name="capture-working-note",
    ),
    path(
        "scopes/<str:scope_id>/sources",
        views.SourceCollectionView.as_view(),
        name="source-collection",
    ),
    path(
        "scopes/<str:scope_id>/sources/window",
        views.SourceWindowView.as_view(),
        name="source-window",
    ),
    path(
        "scopes/<str:scope_id>/source-audit",
        views.SourceAuditCollectionView.as_view(),
        name="source-audit-collection",
    ),
    # The attempts route must precede the audit detail: ``path`` would swallow it.
    path(
        f"{AUDIT}/attempts", views.SourceAttemptsView.as_view(), name="source-attempts"
    ),
    path(AUDIT, views.SourceAuditDetailView.as_view(), name="source-audit-detail"),
    path(SOURCE, views.SourceDetailView.as_view(), name="source-detail"),
]
