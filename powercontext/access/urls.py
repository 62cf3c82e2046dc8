"""Token and grant management routes under ``/v1/`` (docs/api.md), derived from
the declarations in ``operations.py``."""

from powercontext.api.operations import routes

from .operations import OPERATIONS

urlpatterns = routes(OPERATIONS)
