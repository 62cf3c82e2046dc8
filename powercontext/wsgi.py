"""WSGI entry point (gunicorn serves ``powercontext.wsgi:application``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.production")

application = get_wsgi_application()
