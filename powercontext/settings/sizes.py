"""Request and answer sizes (docs/api.md; docs/operations.md, "Memory").

Imported by ``base.py``; kept apart because the numbers depend on each other.
"""

from powercontext import shape
from powercontext.settings.envfile import SettingsEnv, settings_error

env = SettingsEnv()
env.shape_check()  # before the shape is read below

# Sized so every thread of every worker can hold a worst-case body at once within
# POWERCONTEXT_MEMORY_BUDGET_BYTES (powercontext/shape.py; docs/operations.md).
POWERCONTEXT_MAX_BODY_BYTES = env.int(
    "POWERCONTEXT_MAX_BODY_BYTES",
    default=shape.default_body_limit(
        workers=shape.workers(), threads=shape.threads(), budget=shape.memory_budget()
    ),
    minimum=1,
)
# One Source's stored content (canonical JSON, UTF-8 bytes), on every capture path.
POWERCONTEXT_MAX_SOURCE_BYTES = env.int(
    "POWERCONTEXT_MAX_SOURCE_BYTES", default=2 * 1024 * 1024, minimum=1
)
# No answer carries more bytes of content than this; lists stop early.
POWERCONTEXT_MAX_RESPONSE_BYTES = env.int(
    "POWERCONTEXT_MAX_RESPONSE_BYTES", default=16 * 1024 * 1024, minimum=1
)
# A handoff is held to one Source's cap and an answer carries it, with its checks, at
# most about twice (handoffs/content.py); the budget keeps room for four.
if POWERCONTEXT_MAX_RESPONSE_BYTES < 4 * POWERCONTEXT_MAX_SOURCE_BYTES:
    raise settings_error(
        "POWERCONTEXT_MAX_RESPONSE_BYTES",
        "must be at least 4 x POWERCONTEXT_MAX_SOURCE_BYTES "
        "(docs/operations.md, Memory).",
    )
# Bodies this large are handled at most this many at once per worker, so that a thread
# stays free for small requests and health probes (docs/operations.md, "Memory").
POWERCONTEXT_LARGE_BODY_BYTES = env.int(
    "POWERCONTEXT_LARGE_BODY_BYTES", default=256 * 1024, minimum=1
)
POWERCONTEXT_LARGE_BODY_CONCURRENCY = env.int(
    "POWERCONTEXT_LARGE_BODY_CONCURRENCY",
    default=max(1, shape.threads() - 1),
    minimum=1,
)
# Django's own guards stay consistent with ours; ours answers first with the envelope.
DATA_UPLOAD_MAX_MEMORY_SIZE = POWERCONTEXT_MAX_BODY_BYTES
DATA_UPLOAD_MAX_NUMBER_FIELDS = 10_000
