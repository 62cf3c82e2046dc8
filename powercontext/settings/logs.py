"""Logging: one plain line per record, with the request's id (docs/operations.md)."""

from typing import Any


def logging_config(level: str) -> dict[str, Any]:
    """The ``LOGGING`` setting, the root logger at ``level``."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "powercontext.api.logging.RequestIdFilter"}},
        "formatters": {
            "plain": {
                "format": (
                    "%(asctime)s %(levelname)s %(name)s "
                    "request_id=%(request_id)s %(message)s"
                ),
            },
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "plain",
                "filters": ["request_id"],
            },
        },
        "root": {
            "handlers": ["console"],
            "level": level,
        },
        "loggers": {
            # Our exception handler logs unexpected errors itself, with the request id.
            "django.request": {
                "handlers": ["console"],
                "level": "ERROR",
                "propagate": False,
            },
            "django.db.backends": {"level": "WARNING"},
        },
    }
