"""What a working-notes PUT asks to capture as a Source-backed Working Note.

A value the request model builds (``inputs.NotesCaptureInput.capture``) and the
notes service takes (``services.working_notes_put``): it lives beside neither,
so request models import no service (docs/architecture.md, "What may import
what").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

# The note kind of a capture that names none (the reference's default).
DEFAULT_NOTE_KIND: Final = "host_context"


@dataclass(frozen=True)
class NotesCapture:
    """What a notes PUT asks to capture; ``source_id`` None means the default."""

    note_kind: str = DEFAULT_NOTE_KIND
    expires_at: datetime | None = None
    source_id: str | None = None
