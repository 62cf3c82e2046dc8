"""Envelope routes under ``/v1/``, derived from the declarations in ``operations.py``.

``session_id`` sits in the middle of these paths and may contain ``/`` (sent
as-is or as ``%2F``; the server sees the decoded path either way). Each route
therefore captures it greedily up to a fixed suffix. The suffixes -
``/envelope``, ``/working-notes``, ``/working-notes/fold``, and the lifecycle's
``/close`` (``lifecycle/operations.py``) - never end one another, so every path
names exactly one (operation, session id) pair:
``.../sessions/a/envelope/envelope`` is the envelope of session ``a/envelope``.
"""

from powercontext.api.operations import routes

from .operations import OPERATIONS

urlpatterns = routes(OPERATIONS)
