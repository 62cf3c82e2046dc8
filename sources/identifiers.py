"""Server-generated identifiers."""

from __future__ import annotations

import re
import secrets
import time

_CROCKFORD = (
    "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase: no i l o u
)

# A scope id as this service and the reference server generate them.
SCOPE_ID = re.compile(r"scp_[0-9a-hjkmnp-tv-z]{26}")


def is_scope_id(text: str) -> bool:
    """Whether ``text`` has the generated form (``scp_`` + 26 Crockford digits)."""
    return SCOPE_ID.fullmatch(text) is not None


def new_scope_id() -> str:
    """``scp_`` + 26 Crockford base32 characters: a ULID (48-bit ms time + 80 bits).

    Time-ordered ids keep primary-key inserts at the right edge of the index.
    """
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "scp_" + "".join(reversed(chars))


def new_source_id() -> str:
    """``src_`` + 32 lowercase hex characters."""
    return "src_" + secrets.token_hex(16)
