"""Evidence and handoff routes under ``/v1/``, derived from the declarations in
``operations.py``."""

from powercontext.api.operations import routes

from .operations import OPERATIONS

urlpatterns = routes(OPERATIONS)
