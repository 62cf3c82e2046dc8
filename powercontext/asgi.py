"""ASGI entry point (the service is served over WSGI; this exists for tools)."""

import os

from django.core.asgi import get_asgi_application

from powercontext.settings.envfile import env_file_read

env_file_read()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.production")

application = get_asgi_application()
