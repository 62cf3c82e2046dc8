"""Content negotiation: bodies must be JSON; responses are always JSON.

The API has a single representation, so the ``Accept`` header is ignored instead of
producing 406 for clients that send browser defaults.
"""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation


class JSONOnlyNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Any, renderers: Any, format_suffix: Any = None
    ) -> Any:
        renderer = renderers[0]
        return renderer, renderer.media_type
