"""gunicorn's own log lines (start, workers, signals, errors) as one JSON object
per line, like the application's (docs/operations.md, "Logs")."""

from typing import Any

from gunicorn.glogging import Logger

from powercontext.logformat import gunicorn_formatter


class JsonLogger(Logger):
    """gunicorn's logger with every handler it sets up writing JSON."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        formatter = gunicorn_formatter()
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(formatter)
