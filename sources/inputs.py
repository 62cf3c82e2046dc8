"""Request models of the registry's operations: shape and field rules only.

One strict model per operation (``powercontext.inputs``); the services decide
everything else (scope existence, reserved kinds and schemas, replay or
conflict). Path and query parameters have models too, so every value a view
takes is validated the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from powercontext import limits
from powercontext.inputs import (
    NOT_BLANK,
    DateTime,
    Identity,
    Loc,
    QueryBoolean,
    QueryInteger,
    SourceId,
    StrictInput,
    bounded,
    unique_items,
)

from .availability import Availability
from .filters import AuditFilters, SearchFilters
from .search import Match, SearchQuery

SCOPE_QUERY_FIELDS = ("scope_id", "title", "summary", "external_reference_value")
NoteKind = Literal[
    "inspection", "abandoned_approach", "validation", "unresolved", "host_context"
]
SourceType = Literal["content"]
Cursor = Annotated[str, StringConstraints(min_length=1, max_length=limits.CURSOR_MAX)]
Limit = Annotated[QueryInteger, AfterValidator(bounded(1, limits.LIST_LIMIT_MAX))]
Offset = Annotated[QueryInteger, AfterValidator(bounded(0))]
Title = Annotated[str, StringConstraints(min_length=1, max_length=256), NOT_BLANK]
Summary = Annotated[str, StringConstraints(min_length=1, max_length=2000), NOT_BLANK]
ReferenceKind = Annotated[
    str, StringConstraints(min_length=1, max_length=128), NOT_BLANK
]
ReferenceValue = Annotated[
    str, StringConstraints(min_length=1, max_length=2000), NOT_BLANK
]
BindingKind = Annotated[str, StringConstraints(min_length=1, max_length=64), NOT_BLANK]
Content = Annotated[
    str,
    StringConstraints(min_length=1, max_length=limits.CONTENT_MAX_LENGTH),
    NOT_BLANK,
]


# --- Scopes ---------------------------------------------------------------------------


class ExternalReference(StrictInput):
    """A pointer from a scope to something outside (a ticket, a repository...)."""

    kind: ReferenceKind
    value: ReferenceValue


class ScopeCreate(StrictInput):
    """Create a scope; the same ``idempotency_key`` and parameters replay it."""

    title: Title
    summary: Summary
    parent_scope_id: Identity | None = None
    context_references: list[Identity] = Field(
        default_factory=list, max_length=limits.SCOPE_CONTEXT_REFERENCES_MAX
    )
    external_references: list[ExternalReference] = Field(
        default_factory=list, max_length=limits.SCOPE_EXTERNAL_REFERENCES_MAX
    )
    idempotency_key: Identity

    def reference_pairs(self) -> list[tuple[str, str]]:
        """The external references as ``(kind, value)`` pairs, in order."""
        return [(ref.kind, ref.value) for ref in self.external_references]

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        yield from unique_items("context_references", self.context_references)
        yield from unique_items("external_references", self.reference_pairs())


class ScopePath(StrictInput):
    scope_id: Identity


class ScopeListQuery(StrictInput):
    """Filters of the scope list. The reference's ``binding_*`` filters are named
    here only to be refused: this service keeps no scope bindings."""

    query: Annotated[str, StringConstraints(max_length=256)] | None = None
    query_field: (
        Literal[
            "scope_id",
            "title",
            "summary",
            "external_reference_value",
            "binding_external_id",
        ]
        | None
    ) = None
    parent_scope_id: Identity | None = None
    external_reference_kind: ReferenceKind | None = None
    binding_integration: ReferenceKind | None = None
    binding_kind: BindingKind | None = None
    limit: Limit = limits.LIST_LIMIT_DEFAULT
    cursor: Cursor | None = None

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        unsupported = {
            name
            for name in ("binding_integration", "binding_kind")
            if getattr(self, name) is not None
        }
        if self.query_field == "binding_external_id":
            unsupported.add("query_field")
        for name in sorted(unsupported):
            yield (
                (name,),
                "unsupported_filter",
                "This service has no scope bindings; this filter is not supported.",
            )
        if self.query is not None and self.query_field is None:
            yield (("query_field",), "missing", "Required with query.")

    def filters(self) -> dict[str, str | None]:
        """The filters a walk is bound to (and the scope list selector takes)."""
        return {
            "query": self.query,
            "query_field": self.query_field,
            "parent_scope_id": self.parent_scope_id,
            "external_reference_kind": self.external_reference_kind,
        }


# --- Capture and creation -------------------------------------------------------------


class CaptureContent(StrictInput):
    """Capture a Source of generic content under a caller-chosen id."""

    scope_id: Identity
    source_id: SourceId
    content: Content
    metadata: dict[str, Any] | None = None


class CaptureWorkingNote(StrictInput):
    """Capture a Working Note: a Source the server flags as a note."""

    scope_id: Identity
    source_id: SourceId
    content: Content
    session_id: Identity
    note_kind: NoteKind
    expires_at: DateTime | None = None


def _not_blank_text(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise PydanticCustomError(
            "string_pattern_mismatch", "Content text must not be blank."
        )
    return value


class CreateSource(StrictInput):
    """Create a Source with a server-assigned id; ``content`` is any JSON value."""

    source_type: SourceType = "content"
    content: Annotated[Any, AfterValidator(_not_blank_text)]


# --- Reads ----------------------------------------------------------------------------


class SourcePath(StrictInput):
    scope_id: Identity
    source_type: SourceType
    source_id: SourceId


class PageQuery(StrictInput):
    limit: Limit = limits.LIST_LIMIT_DEFAULT
    cursor: Cursor | None = None


class SourceWindowQuery(StrictInput):
    after: Offset = 0
    limit: Limit = limits.LIST_LIMIT_DEFAULT


class SourceAuditQuery(PageQuery):
    working_note: QueryBoolean | None = None
    session_id: Identity | None = None
    note_kind: NoteKind | None = None
    state: Literal["active", "expired", "closed", "purged"] | None = None
    after_position: Offset = 0

    def filters(self) -> AuditFilters:
        return AuditFilters(
            working_note=self.working_note,
            session_id=self.session_id,
            note_kind=self.note_kind,
            state=None if self.state is None else Availability(self.state),
        )


class SearchQueryParameters(PageQuery):
    """``GET /v1/scopes/{scope_id}/search``: the query text is checked by
    ``sources.search.SearchQuery`` (empty, too short, too long, no words)."""

    q: str
    match: Literal["words", "substring"] = "words"
    working_note: QueryBoolean | None = None
    session_id: Identity | None = None

    def search_query(self) -> SearchQuery:
        return SearchQuery.of(self.q, Match(self.match))

    @model_validator(mode="after")
    def check_query(self) -> Self:
        """Refuses the text (422, field ``q``) with the inputs, before the grant."""
        self.search_query()
        return self

    def filters(self) -> SearchFilters:
        return SearchFilters(working_note=self.working_note, session_id=self.session_id)


# --- Memory (the reference client's legacy operations) --------------------------------
# The reference's request models, field for field, so a malformed request gets the
# same error items; ``sources.memory`` refuses the legacy ones.

MemoryKind = Annotated[str, StringConstraints(min_length=1, max_length=128)]
MemoryText = Annotated[str, StringConstraints(min_length=1)]
MemoryReason = Annotated[str, StringConstraints(max_length=512)]
MemoryTag = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class TagFilter(StrictInput):
    """Records holding all (or any) of ``tags``."""

    tags: Annotated[list[MemoryTag], Field(min_length=1, max_length=16)]
    match: Literal["all", "any"] = "all"


class LegacyMemoryTarget(StrictInput):
    """An entry of a legacy Memory collection, by its logical identity."""

    type: Literal["memory_entry"]
    family: Literal["memory"]
    artifact_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    entry_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]


class MemoryScope(StrictInput):
    """``flush_memory``, ``get_memory_capacity``."""

    scope_id: Identity


class RememberMemory(StrictInput):
    scope_id: Identity
    kind: MemoryKind
    text: MemoryText
    reason: MemoryReason | None = None
    expected_revision: Annotated[int, Field(ge=1)] | None = None


class SearchMemory(StrictInput):
    tag_filter: TagFilter | None = None
    scope_id: Identity
    query: Annotated[str, StringConstraints(min_length=1, max_length=8192)]
    limit: Annotated[int, Field(ge=1, le=50)] = 10
    mode: Literal["auto", "fts", "vector", "hybrid"] = "auto"


class ListMemoryEntries(StrictInput):
    tag_filter: TagFilter | None = None
    scope_id: Identity
    include_inactive: bool = False
    limit: Annotated[int, Field(ge=1, le=100)] = 50
    cursor: Annotated[str, StringConstraints(min_length=1)] | None = None


class GetMemoryEntry(StrictInput):
    scope_id: Identity
    citation: dict[str, Any] | None = None
    target: LegacyMemoryTarget | None = None

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        present = [
            name for name in ("citation", "target") if name in self.model_fields_set
        ]
        if len(present) != 1 or getattr(self, present[0]) is None:
            yield (
                (),
                "value_error",
                "Value error, exactly one non-null address is required",
            )


class ReviseMemoryEntry(StrictInput):
    scope_id: Identity
    citation: dict[str, Any]
    kind: MemoryKind
    text: MemoryText
    reason: MemoryReason | None = None


class RetireMemoryEntry(StrictInput):
    scope_id: Identity
    citation: dict[str, Any]
    reason: MemoryReason | None = None


class ListMemoryChanges(StrictInput):
    scope_id: Identity
    since_revision: Annotated[int, Field(ge=0)] | None = None
