"""Envelope routes under ``/v1/``.

``session_id`` sits in the middle of these paths and may contain ``/`` (sent
as-is or as ``%2F``; the server sees the decoded path either way). Each route
therefore captures it greedily up to a fixed suffix. The suffixes -
``/envelope``, ``/working-notes``, ``/working-notes/fold``, and the lifecycle's
``/close`` (``lifecycle/urls.py``) - never end one another, so every path names
exactly one (operation, session id) pair:
``.../sessions/a/envelope/envelope`` is the envelope of session ``a/envelope``.
"""

from django.urls import re_path

from . import views

_SESSION = r"^scopes/(?P<scope_id>[^/]+)/sessions/(?P<session_id>[\s\S]+)"

urlpatterns = [
    re_path(
        r"^scopes/(?P<scope_id>[^/]+)/search/envelopes\Z",
        views.EnvelopeSearchView.as_view(),
        name="envelope-search",
    ),
    re_path(
        _SESSION + r"/envelope\Z",
        views.EnvelopeView.as_view(),
        name="session-envelope",
    ),
    re_path(
        _SESSION + r"/working-notes\Z",
        views.WorkingNotesView.as_view(),
        name="session-working-notes",
    ),
    re_path(
        _SESSION + r"/working-notes/fold\Z",
        views.WorkingNotesFoldView.as_view(),
        name="session-working-notes-fold",
    ),
]
