"""Input serializers (shape only) and the wire shapes of envelopes and notes.

The meta rules (reserved keys, owners, types, caps) are domain rules and live in
``meta.py``; here ``meta`` only has to be a JSON object and ``notes`` a string.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from powercontext.api.validation import (
    IdentityField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictJSONObjectField,
    StrictSerializer,
    format_datetime,
)
from sources.models import WorkingNoteKind
from sources.serializers import CaptureReceiptSerializer, receipt_body

from .selectors import EnvelopeState, WorkingNotesState
from .services import DEFAULT_NOTE_KIND, NotesCapture, WorkingNotesWrite


class EnvelopeWriteInput(StrictSerializer):
    meta = StrictJSONObjectField(
        help_text="PUT: every host-owned and x- key (absent ones are cleared). "
        "PATCH: worker-owned keys only; null or an empty string clears a key."
    )


class NotesCaptureInput(StrictSerializer):
    note_kind = StrictChoiceField(
        choices=WorkingNoteKind.values, required=False, default=DEFAULT_NOTE_KIND
    )
    expires_at = StrictDateTimeField(required=False, allow_null=True, default=None)
    source_id = IdentityField(
        reject_padding=True,
        required=False,
        default=None,
        help_text="Default: session-notes:{session_id}:v{version of the notes}.",
    )


class WorkingNotesPutInput(StrictSerializer):
    notes = StrictCharField(
        allow_blank=True,
        help_text="Trimmed; at most WORKING_NOTES_MAX_BYTES UTF-8 bytes after "
        "trimming; empty clears the notes.",
    )
    capture = NotesCaptureInput(
        required=False,
        allow_null=True,
        default=None,
        help_text="Also capture the notes as a Source-backed Working Note, in the "
        "same transaction.",
    )


class EnvelopeSerializer(serializers.Serializer):
    """The wire shape of an envelope (documentation; ``envelope_body`` renders it)."""

    scope_id = serializers.CharField()
    session_id = serializers.CharField()
    meta = serializers.DictField(child=serializers.JSONField())
    version = serializers.IntegerField(min_value=1)
    clock = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WorkingNotesSerializer(serializers.Serializer):
    notes = serializers.CharField(allow_null=True)
    bytes = serializers.IntegerField(min_value=0)
    max_bytes = serializers.IntegerField(min_value=0)
    version = serializers.IntegerField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class WorkingNotesWriteSerializer(WorkingNotesSerializer):
    # DRF's metaclass moves declared fields off the class, so the wire name
    # ``source`` does not shadow ``Field.source``; the stubs cannot know that.
    source = CaptureReceiptSerializer(  # type: ignore[assignment]
        allow_null=True, help_text="The capture receipt; null without a capture."
    )


def envelope_body(state: EnvelopeState) -> dict[str, Any]:
    return {
        "scope_id": state.scope_id,
        "session_id": state.session_id,
        "meta": state.meta,
        "version": state.version,
        "clock": state.clock,
        "created_at": format_datetime(state.created_at),
        "updated_at": format_datetime(state.updated_at),
    }


def working_notes_body(state: WorkingNotesState) -> dict[str, Any]:
    return {
        "notes": state.notes,
        "bytes": state.bytes,
        "max_bytes": state.max_bytes,
        "version": state.version,
        "updated_at": (
            format_datetime(state.updated_at) if state.updated_at is not None else None
        ),
    }


def notes_capture(data: dict[str, Any] | None) -> NotesCapture | None:
    """The capture a validated ``capture`` object asks for (None: no capture)."""
    return NotesCapture(**data) if data is not None else None


def working_notes_write_body(written: WorkingNotesWrite) -> dict[str, Any]:
    receipt = written.receipt
    return {
        **working_notes_body(written.notes),
        "source": receipt_body(receipt) if receipt is not None else None,
    }
