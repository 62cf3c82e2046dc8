"""Canonical JSON (RFC 8785) and the digests built on it.

RFC 8785 fixes key order, whitespace and number formatting, so ``{"a": 1.0}`` and
``{"a":1}`` canonicalise to the same bytes while ``true`` and ``1`` stay distinct.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value`` (already validated: finite, safe integers)."""
    return rfc8785.dumps(value)


def canonical_sha256(value: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
