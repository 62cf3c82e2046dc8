"""Request models of the lifecycle operations: shape and field rules only."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, model_validator

from powercontext.inputs import NOT_BLANK, Identity, StrictInput
from sources.inputs import PageQuery, ScopePath, SourcePath
from sources.search import Match, SearchQuery

__all__ = [
    "ExportQuery",
    "HoldCreate",
    "HoldListQuery",
    "HoldPath",
    "HoldRelease",
    "PurgeRequest",
    "Redact",
    "RedactMatching",
    "ScopePath",
    "SessionClose",
    "SourcePath",
]

Reason = Annotated[str, StringConstraints(min_length=1, max_length=2000), NOT_BLANK]
# A hundred years: far enough back for any retention, near enough that the
# cutoff stays a valid date.
OLDER_THAN_MAX_SECONDS = 100 * 366 * 24 * 3600


class SessionClose(StrictInput):
    """The body of a close: ``{}``."""


class HoldCreate(StrictInput):
    session_id: Identity | None = Field(
        default=None, description="null or omitted: the whole scope."
    )
    reason: Reason


class HoldRelease(StrictInput):
    reason: Reason


class HoldPath(StrictInput):
    scope_id: Identity
    hold_id: Annotated[str, StringConstraints(min_length=1, max_length=40)]


class HoldListQuery(PageQuery):
    pass


class PurgeRequest(StrictInput):
    older_than_seconds: int = Field(ge=0, le=OLDER_THAN_MAX_SECONDS)
    dry_run: bool


class Redact(StrictInput):
    reason: Reason


class ExportQuery(StrictInput):
    session_id: Identity | None = Field(
        default=None, description="Export this session only (omitted: the scope)."
    )


class RedactMatching(StrictInput):
    """``POST /v1/scopes/{scope_id}/redactions``: ``q`` and ``match`` as in the
    search (checked by ``sources.search.SearchQuery``)."""

    q: str
    match: Literal["words", "substring"] = "words"
    reason: Reason
    dry_run: bool

    def search_query(self) -> SearchQuery:
        return SearchQuery.of(self.q, Match(self.match))

    @model_validator(mode="after")
    def check_query(self) -> Self:
        """Refuses the text (422, field ``q``) with the inputs, before the grant."""
        self.search_query()
        return self
