"""A WSGI application for test_gunicorn_worker.py: ``/exit`` raises SystemExit
(as a library calling ``sys.exit()`` would), anything else answers 200."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ["PATH_INFO"] == "/exit":
        sys.exit(3)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
