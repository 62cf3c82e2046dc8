"""App config for session envelopes."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Session envelopes"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .guards import install_append_only_guards

        post_migrate.connect(
            install_append_only_guards,
            sender=self,
            dispatch_uid="sessions_app.install_append_only_guards",
        )
