"""Lifecycle routes under ``/v1/``, included before the registry's and the
envelopes' routes.

The close route captures ``session_id`` greedily up to ``/close``, like the
envelope routes do up to their suffixes, none of which ends another. The redact
route captures ``source_id`` up to ``/redact``; a GET on such a path is the Source
whose id ends in ``/redact`` (``views.RedactView``; decision 0015).
"""

from django.urls import path, re_path

from sources.urls import SCOPE

from . import views

urlpatterns = [
    re_path(
        r"^scopes/(?P<scope_id>[^/]+)/sessions/(?P<session_id>[\s\S]+)/close\Z",
        views.SessionCloseView.as_view(),
        name="session-close",
    ),
    path(
        f"{SCOPE}/legal-holds",
        views.HoldCollectionView.as_view(),
        name="legal-hold-collection",
    ),
    path(
        f"{SCOPE}/legal-holds/<str:hold_id>/release",
        views.HoldReleaseView.as_view(),
        name="legal-hold-release",
    ),
    path(f"{SCOPE}/purge", views.PurgeView.as_view(), name="scope-purge"),
    path(
        f"{SCOPE}/redactions",
        views.RedactMatchingView.as_view(),
        name="scope-redactions",
    ),
    re_path(
        r"^scopes/(?P<scope_id>[^/]+)/sources/(?P<source_type>[^/]+)/"
        r"(?P<source_id>[\s\S]+)/redact\Z",
        views.RedactView.as_view(),
        name="source-redact",
    ),
]
