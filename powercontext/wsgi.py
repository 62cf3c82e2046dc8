"""WSGI entry point (granian serves ``powercontext.wsgi:application``, started by
``python -m powercontext.serve``).

The env file is read before the settings module is chosen. Under granian the
application refuses to load unless the launcher configured the server.
"""

import gc
import os
import sys

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from powercontext.api.wsgi_head import served
from powercontext.api.wsgi_input import RequestBodies
from powercontext.metrics import forget_dead_workers
from powercontext.settings.envfile import SERVE_MARKER, env_file_read


def launcher_check() -> None:
    """Refuse to serve under granian started without ``powercontext.serve``.

    Started by hand (``granian --interface wsgi powercontext.wsgi:application``),
    granian runs one worker with its own defaults, every ``POWERCONTEXT_*`` sizing
    variable ignored and no metrics directory. Other WSGI servers are not
    affected.
    """
    if "granian" in sys.modules and not os.environ.get(SERVE_MARKER):
        raise ImproperlyConfigured(
            "granian was started without powercontext's launcher; start the "
            "server with python -m powercontext.serve (docs/deploying.md)."
        )


env_file_read()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.production")
launcher_check()
# The worker this one replaces, if it died, leaves its gauges behind.
forget_dead_workers()

# A chunked body is read (up to the limit) and given a length before Django runs;
# before that, the request's head is checked and its environ cleaned.
application = served(
    RequestBodies(get_wsgi_application()),
    # The proxies whose X-Forwarded-Proto counts (docs/deploying.md, step 6).
    allowed_proxies=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
)

# The URL conf - every view, and through /mcp the MCP types - is loaded now, as the
# worker starts, not inside its first request: imported there, its long-lived
# objects land among the first request's short-lived ones, and a worker whose first
# request had a large body then kept ~60 MiB it had freed
# (tests/robustness/test_memory_bounds.py).
get_resolver().url_patterns  # noqa: B018

# What is loaded now lives as long as the worker: frozen, it is left out of the
# cyclic garbage collector's full passes, which otherwise walk all of Django on
# every one of them. And a collection of the youngest objects every 50,000
# allocations instead of 700: a body at the limit allocates up to a million
# containers, and with the defaults its parse ran about ten full collections, up
# to 0.15 s each with the GIL held, stalling the worker's other threads (0.8 s of
# collection per body; 0.07 s with these). A request's own cyclic garbage (DRF's
# request and view refer to each other) holds its body, so collecting by
# allocations alone could keep many bodies: the body size limit's middleware also
# collects by the bytes of the bodies read (powercontext.heap.RequestGarbage;
# docs/operations.md, "Memory").
GARBAGE_COLLECTION_THRESHOLDS = (50_000, 10, 10)
gc.freeze()
gc.set_threshold(*GARBAGE_COLLECTION_THRESHOLDS)
