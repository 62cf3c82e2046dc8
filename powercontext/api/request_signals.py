"""Django's receivers of the request signals, kept to those that can do something here.

Around every request Django sends ``request_started`` (``reset_queries``,
``close_old_connections``) and ``request_finished`` (``close_old_connections``,
``close_caches``, ``reset_urlconf``). In the served process, four of them can do
nothing, yet each walks every database or cache handler, or a context-local, per
request: the first three about 5% of a new note's CPU, ``reset_urlconf`` another
1.4% under cProfile (docs/performance.md, decision 0028):

- ``reset_queries`` empties the query log, which is kept only under ``DEBUG``;
- ``close_old_connections`` at the start closes connections past ``CONN_MAX_AGE``,
  and with ``CONN_MAX_AGE = 0`` (the pool's setting) the end of the previous
  request closed them already - the receiver at the end stays;
- ``close_caches`` calls each cache's ``close()``, a no-op for Django's local
  memory and Redis backends (a backend whose ``close()`` does something keeps it);
- ``reset_urlconf`` clears the thread's URLconf for ``reverse()``, which Django's
  ``get_response`` sets to ``ROOT_URLCONF`` before anything of the next request
  runs, and a serving thread runs nothing between requests.

``powercontext.wsgi`` calls this once per process; the test client and
``manage.py`` keep Django's defaults.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import caches, close_caches
from django.core.cache.backends.base import BaseCache
from django.core.handlers.base import reset_urlconf
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections, reset_queries


def lean_request_signals() -> list[str]:
    """Disconnect the receivers that can do nothing; return their names."""
    dropped = []
    if not settings.DEBUG:
        request_started.disconnect(reset_queries)
        dropped.append("reset_queries")
    if all(connections.settings[alias]["CONN_MAX_AGE"] == 0 for alias in connections):
        request_started.disconnect(close_old_connections)
        dropped.append("close_old_connections at the start")
    if all(type(caches[alias]).close is BaseCache.close for alias in caches):
        request_finished.disconnect(close_caches)
        dropped.append("close_caches")
    if request_finished.disconnect(reset_urlconf):
        dropped.append("reset_urlconf")
    return dropped
