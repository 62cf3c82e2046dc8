"""Opaque ids of lifecycle records: a prefix and 24 lowercase hex characters."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """``hold_``, ``run_`` or ``red_`` + 24 hex characters."""
    return f"{prefix}_{secrets.token_hex(12)}"
