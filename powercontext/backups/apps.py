"""The backups app: ``manage.py backup_sqlite``. It has no models."""

from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "powercontext.backups"
    label = "backups"
    verbose_name = "Backups"
