"""Entity tags and the conditional headers of envelope requests (RFC 9110 13.1).

An envelope's ETag is the strong validator ``"<version>"``. ``If-Match`` on a write
uses the strong comparison (a weak ``W/"3"`` never matches); ``*`` means "the
envelope exists". ``If-None-Match`` on a read uses the weak comparison. A header
that is not a valid entity-tag list matches nothing: a write with an unparseable
``If-Match`` is refused (412) rather than applied unconditionally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Optional whitespace in HTTP is space and tab only (RFC 9110 5.6.3); ``\s`` in a
# ``str`` pattern, like ``str.strip()``, would also take NBSP or NEL.
_OWS = " \t"
_ENTITY_TAG = re.compile(
    r'[ \t]*(W/)?"([\x21\x23-\x7e\x80-\U0010ffff]*)"[ \t]*(?:,|\Z)'
)


def etag_for(version: int) -> str:
    return f'"{version}"'


@dataclass(frozen=True)
class EntityTag:
    opaque: str
    weak: bool


def parse_entity_tags(header: str) -> tuple[EntityTag, ...] | None:
    """The tags of a comma-separated entity-tag list, or None when malformed."""
    tags: list[EntityTag] = []
    position = 0
    while position < len(header):
        match = _ENTITY_TAG.match(header, position)
        if match is None:
            return None
        tags.append(EntityTag(opaque=match.group(2), weak=match.group(1) is not None))
        position = match.end()
    return tuple(tags) or None


@dataclass(frozen=True)
class IfMatch:
    """A parsed ``If-Match`` header: ``*``, strong tags, or a malformed value."""

    any_version: bool
    tags: tuple[EntityTag, ...]

    @classmethod
    def from_header(cls, header: str | None) -> IfMatch | None:
        """None when the request sent no ``If-Match``."""
        if header is None:
            return None
        if header.strip(_OWS) == "*":
            return cls(any_version=True, tags=())
        return cls(any_version=False, tags=parse_entity_tags(header) or ())

    def admits(self, version: int | None) -> bool:
        """Whether a write may proceed on an envelope at ``version`` (None: missing)."""
        if version is None:
            return False
        if self.any_version:
            return True
        current = str(version)
        return any(not tag.weak and tag.opaque == current for tag in self.tags)


def if_none_match_hits(header: str | None, version: int) -> bool:
    """Whether ``If-None-Match`` names the current version (weak comparison)."""
    if header is None:
        return False
    if header.strip(_OWS) == "*":
        return True
    current = str(version)
    return any(tag.opaque == current for tag in parse_entity_tags(header) or ())
