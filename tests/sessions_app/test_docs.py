"""The documentation states the rules the code enforces: the reserved-key table, the
settings, and the exact fold text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from sessions_app.fold import FOLD_FRAMING, FOLD_HEADING
from sessions_app.meta_keys import RESERVED_KEYS, KeyRule

DOCS = Path(settings.BASE_DIR) / "docs"
UNITS = {"B": 1, "KiB": 1024}


def meta_table() -> dict[str, dict[str, str]]:
    text = (DOCS / "sessions-meta.md").read_text()
    rows = re.findall(
        r"^\| `([^`]+)` \| (.+?) \| (.+?) \| (host|worker) \|$", text, re.M
    )
    return {
        key: {"type": kind, "cap": cap, "owner": owner}
        for key, kind, cap, owner in rows
    }


def test_the_table_lists_exactly_the_reserved_keys_and_x() -> None:
    assert set(meta_table()) == {*RESERVED_KEYS, "x-..."}


@pytest.mark.parametrize("rule", RESERVED_KEYS.values(), ids=list(RESERVED_KEYS))
def test_each_row_states_the_owner_and_the_choices(rule: KeyRule) -> None:
    row = meta_table()[rule.key]

    assert row["owner"] == rule.owner.value
    assert all(f"`{choice}`" in row["type"] for choice in rule.choices)


CAPPED = [rule for rule in RESERVED_KEYS.values() if rule.cap_setting]


@pytest.mark.parametrize("rule", CAPPED, ids=[rule.key for rule in CAPPED])
def test_each_cap_names_its_setting_and_default(rule: KeyRule) -> None:
    match = re.fullmatch(
        r"`(\w+)`, (\d+) (B|KiB)(?: after trimming)?", meta_table()[rule.key]["cap"]
    )

    assert match is not None, meta_table()[rule.key]["cap"]
    setting, amount, unit = match.groups()
    assert setting == rule.cap_setting
    assert int(amount) * UNITS[unit] == getattr(settings, setting)


@pytest.mark.parametrize(
    "setting",
    sorted(
        {rule.cap_setting for rule in CAPPED}
        | {"SESSION_META_MAX_BYTES", "SESSION_REVISION_RETENTION"}
    ),
)
def test_operations_lists_every_setting(setting: str) -> None:
    assert f"`{setting}`" in (DOCS / "operations.md").read_text()


def test_api_docs_show_the_fold_text_verbatim() -> None:
    api = (DOCS / "api.md").read_text()

    assert f"{FOLD_HEADING}\n{FOLD_FRAMING}\n\n---\n" in api


@pytest.mark.parametrize(
    "code",
    [
        "session_not_found",
        "precondition_failed",
        "unknown_meta_key",
        "not_host_key",
        "not_worker_key",
        "working_notes_too_large",
    ],
)
def test_the_error_catalogue_lists_the_envelope_codes(code: str) -> None:
    catalogue = (
        (DOCS / "api.md").read_text().split("## Errors", 1)[1].split("\n## ", 1)[0]
    )

    assert f"| `{code}` |" in catalogue
