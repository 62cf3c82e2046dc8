"""App config for the Source registry."""

from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "sources"
    verbose_name = "Source registry"
    default_auto_field = "django.db.models.BigAutoField"
