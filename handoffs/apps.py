"""App config for evidence resolution and handoff artifacts."""

from django.apps import AppConfig


class HandoffsConfig(AppConfig):
    name = "handoffs"
    verbose_name = "Handoffs and evidence"
    default_auto_field = "django.db.models.BigAutoField"
