"""The access app: API tokens, their grants, the commands and admin that manage them.

Its label stays ``api`` (where these models were first defined), so its tables
(``api_apitoken``, ``api_tokengrant``) and migration history carry over unchanged.
"""

from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "powercontext.access"
    label = "api"
    verbose_name = "API access"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receiver of sources' scope_created; models are loaded now.
        from . import scopes  # noqa: F401
