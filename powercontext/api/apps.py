"""App config for the API plumbing (it owns the token and grant models)."""

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "powercontext.api"
    label = "api"
    verbose_name = "API access"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import openapi  # noqa: F401 - registers the drf-spectacular extensions
