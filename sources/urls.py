"""Registry routes under ``/v1/``.

A trailing ``source_id`` may hold any character an identity may: ``/`` (sent as
``%2F``, decoded by the server before routing), ``%``, ``?``, ``#``, spaces,
control characters and line feeds. It is captured by the ``identity`` converter
(``[\\s\\S]+``: Django's ``path`` converter stops at a line feed), and it is always
the **last** segment of its route: no route puts a fixed suffix after an id, so
an id ending in ``/attempts`` or ``/window`` can never be read as another route
(docs/decisions/0005-trailing-identity-routes.md).
"""

from django.urls import path, register_converter

from . import views


class IdentityConverter:
    """Any non-empty text, line feeds included (the rest of the path)."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IdentityConverter, "identity")

SCOPE = "scopes/<str:scope_id>"
SOURCE = f"{SCOPE}/sources/<str:source_type>/<identity:source_id>"
AUDIT = f"{SCOPE}/source-audit/<str:source_type>/<identity:source_id>"
ATTEMPTS = f"{SCOPE}/source-attempts/<str:source_type>/<identity:source_id>"

# Routed before every other route (powercontext/urls.py): the busiest requests,
# on paths no other route can match - fixed text, or one segment after
# ``scopes/`` where every other scope route has more. URL resolution tries routes
# in order, and each miss costs about as much as a regular expression search.
first_urlpatterns = [
    path(
        "sources/working-notes",
        views.CaptureWorkingNoteView.as_view(),
        name="capture-working-note",
    ),
    path("sources/content", views.CaptureContentView.as_view(), name="capture-content"),
    # Before SCOPE, which would read ``default`` as a scope id (no scope id is).
    path("scopes/default", views.DefaultScopeView.as_view(), name="scope-default"),
    path(SCOPE, views.ScopeDetailView.as_view(), name="scope-detail"),
    path("scopes", views.ScopeCollectionView.as_view(), name="scope-collection"),
]

urlpatterns = [
    *(
        path(f"memory/{route}", view.as_view(), name=f"memory-{name}")
        for route, name, view in views.MEMORY_ROUTE_VIEWS
    ),
    path(
        f"{SCOPE}/sources",
        views.SourceCollectionView.as_view(),
        name="source-collection",
    ),
    path(
        f"{SCOPE}/sources/window",
        views.SourceWindowView.as_view(),
        name="source-window",
    ),
    path(
        f"{SCOPE}/source-audit",
        views.SourceAuditCollectionView.as_view(),
        name="source-audit-collection",
    ),
    path(f"{SCOPE}/search", views.SourceSearchView.as_view(), name="source-search"),
    path(AUDIT, views.SourceAuditDetailView.as_view(), name="source-audit-detail"),
    path(ATTEMPTS, views.SourceAttemptsView.as_view(), name="source-attempts"),
    path(SOURCE, views.SourceDetailView.as_view(), name="source-detail"),
]
