"""WSGI entry point (gunicorn serves ``powercontext.wsgi:application``).

The env file is read before the settings module is chosen. Under gunicorn the
application refuses to load unless ``gunicorn.conf.py`` configured the server.
"""

import os
import sys

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from powercontext.api.wsgi_input import RequestBodies
from powercontext.settings.envfile import GUNICORN_CONFIG_MARKER, ROOT, env_file_read


def gunicorn_config_check() -> None:
    """Refuse to serve under gunicorn without our ``gunicorn.conf.py``.

    gunicorn reads ``./gunicorn.conf.py`` only from the directory it starts in;
    elsewhere it runs silently with one sync worker and every ``POWERCONTEXT_*``
    sizing variable ignored. Other WSGI servers are not affected.
    """
    if "gunicorn.arbiter" in sys.modules and not os.environ.get(GUNICORN_CONFIG_MARKER):
        raise ImproperlyConfigured(
            "gunicorn was started without powercontext's gunicorn.conf.py; start "
            f"it with -c {ROOT / 'gunicorn.conf.py'} (docs/deploying.md)."
        )


env_file_read()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.production")
gunicorn_config_check()

# A chunked body is read (up to the limit) and given a length before Django runs.
application = RequestBodies(get_wsgi_application())

# The URL conf - every view, and through /mcp the MCP types - is loaded now, as the
# worker starts, not inside its first request: imported there, its long-lived
# objects land among the first request's short-lived ones, and a worker whose first
# request had a large body then kept ~60 MiB it had freed
# (tests/robustness/test_memory_bounds.py).
get_resolver().url_patterns  # noqa: B018
