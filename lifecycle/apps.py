"""App config for the lifecycle: closes, holds, purges, redactions."""

from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    name = "lifecycle"
    verbose_name = "Lifecycle: holds, purges, redactions"
    default_auto_field = "django.db.models.BigAutoField"
