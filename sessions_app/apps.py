"""App config for session envelopes."""

from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Session envelopes"
    default_auto_field = "django.db.models.BigAutoField"
