"""The documented limits of what one request may hold (docs/operations.md).

Every list a request body may carry has a maximum length here, refused with 422
(``too_long``) above it - never a database error - and listed in docs/api.md.
Sizes that operators may tune are settings, read at call time
(``POWERCONTEXT_MAX_BODY_BYTES``, ``POWERCONTEXT_MAX_SOURCE_BYTES``,
``POWERCONTEXT_MAX_RESPONSE_BYTES``).
"""

from __future__ import annotations

from django.conf import settings

# Lists and pages.
LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
CURSOR_MAX = 4096

# Text (characters).
CONTENT_MAX_LENGTH = 200_000
HANDOFF_TEXT_MAX_LENGTH = 8192

# Lists in request bodies (items).
SCOPE_CONTEXT_REFERENCES_MAX = 64
SCOPE_EXTERNAL_REFERENCES_MAX = 64
EVIDENCE_REFS_MAX = 256
HANDOFF_STATE_MAX = 64
HANDOFF_CITATIONS_MAX = 32
HANDOFF_OMISSIONS_MAX = 64
HANDOFF_EVIDENCE_MAX = 32
HANDOFF_ROLLOVER_REASONS_MAX = 6


def max_source_bytes() -> int:
    """The cap on one Source's stored content (canonical JSON, UTF-8 bytes)."""
    value: int = settings.POWERCONTEXT_MAX_SOURCE_BYTES
    return value


def max_response_bytes() -> int:
    """The budget of one answer's bytes, decided before content is loaded."""
    value: int = settings.POWERCONTEXT_MAX_RESPONSE_BYTES
    return value
