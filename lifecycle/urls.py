"""Lifecycle routes under ``/v1/``, derived from the declarations in
``operations.py``; included before the registry's and the envelopes' routes."""

from powercontext.api.operations import routes

from .operations import OPERATIONS

urlpatterns = routes(OPERATIONS)
