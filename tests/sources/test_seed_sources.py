"""``manage.py seed_sources``: seeded rows are indistinguishable from captured ones."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from sources.management.commands import seed_sources
from sources.models import CaptureAttempt, ContentSource, Scope, SourceJournalHead
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command(
        "seed_sources", *args, "--no-progress", stdout=out, stderr=io.StringIO()
    )
    return out.getvalue().strip().splitlines()[-1]


def capture_note(
    api: ApiClient, scope_id: str, source_id: str, **fields: str
) -> object:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "captured first",
        "session_id": "sess-1",
        "note_kind": "inspection",
        **fields,
    }
    return api.post("/v1/sources/working-notes", body)


def registry_rows() -> tuple[list[tuple[str, str, int]], int, list[int]]:
    """Every Source (scope, id, position), attempt count, and journal heads."""
    sources = list(
        ContentSource.objects.order_by("scope_id", "position").values_list(
            "scope_id", "source_id", "position"
        )
    )
    heads = list(
        SourceJournalHead.objects.order_by("scope_id").values_list(
            "last_position", flat=True
        )
    )
    return sources, CaptureAttempt.objects.count(), heads


def note_numbers(scope_id: str, prefix: str) -> list[int]:
    ids = ContentSource.objects.filter(
        scope_id=scope_id, source_id__startswith=prefix, is_working_note=True
    ).values_list("source_id", flat=True)
    return sorted(int(source_id.removeprefix(prefix)) for source_id in ids)


def test_seeding_continues_the_journal_without_gaps(
    api: ApiClient, scope_id: str
) -> None:
    assert capture_note(api, scope_id, "before").status_code == 202

    seed("30", "--scope", scope_id, "--prefix", "s-", "--batch", "7")

    positions = list(
        ContentSource.objects.filter(scope_id=scope_id)
        .order_by("position")
        .values_list("position", flat=True)
    )
    assert positions == list(range(1, 32))
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 31
    seeded = ContentSource.objects.filter(scope_id=scope_id, source_id__startswith="s-")
    assert seeded.filter(is_working_note=True).count() == 8  # round(30 * 0.25)
    assert (
        CaptureAttempt.objects.filter(
            scope_id=scope_id, source_id__startswith="s-", outcome="accepted"
        ).count()
        == 30
    )
    assert capture_note(api, scope_id, "after").json()["position"] == 32


def test_seeded_note_replays_and_conflicts_like_a_captured_one(
    api: ApiClient, scope_id: str
) -> None:
    seed("8", "--scope", scope_id, "--prefix", "s-")
    stored = ContentSource.objects.get(scope_id=scope_id, source_id="s-4")
    body = {
        "content": (
            "Seeded note 4: inspected the module behind it; the cache is "
            "rebuilt on every call, which explains the slow first page."
        ),
        "session_id": stored.session_id,
        "note_kind": stored.note_kind,
    }

    replay = capture_note(api, scope_id, "s-4", **body)
    conflict = capture_note(api, scope_id, "s-4", **{**body, "content": "other"})

    assert replay.status_code == 202
    assert replay.json()["position"] == stored.position
    assert replay["Idempotent-Replayed"] == "true"
    assert conflict.status_code == 409
    assert error_of(conflict)["code"] == "source_conflict"


def test_seeded_plain_source_replays_with_its_metadata(
    api: ApiClient, scope_id: str
) -> None:
    seed("3", "--scope", scope_id, "--prefix", "s-", "--notes", "0")
    content = (
        "Seeded source 2: design notes for the journal, positions are "
        "handed out by the head row of the scope in the capture transaction."
    )

    response = api.post(
        "/v1/sources/content",
        {
            "scope_id": scope_id,
            "source_id": "s-2",
            "content": content,
            "metadata": {"n": 2.0, "origin": "seed"},  # 2.0 == 2 canonically
        },
    )

    assert response.status_code == 202
    assert response.json()["position"] == 2
    assert response["Idempotent-Replayed"] == "true"


def test_create_scope_prints_the_new_scope_id(db: None) -> None:
    scope_id = seed("5", "--create-scope", "Seeded")

    assert Scope.objects.get(scope_id=scope_id).title == "Seeded"
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 5


def test_unknown_scope_is_refused(db: None) -> None:
    with pytest.raises(CommandError, match="No scope"):
        seed("5", "--scope", "scp_missing")


@pytest.mark.parametrize(
    ("count", "share", "notes"),
    [
        (10, "0.7", 7),  # was 10: round(1 / 0.7) = 1 made every row a note
        (10, "0.25", 2),  # round(2.5): halves go to even
        (30, "0.25", 8),  # round(7.5)
        (9, "0.3333", 3),
        (7, "0", 0),
        (7, "1", 7),
        (7, "1.0", 7),
        (3, ".5", 2),
        (1000, "0.001", 1),
        (1000, "0.0004", 0),
        (1000, "0.9", 900),
        (1000, "0.6", 600),  # was 500: every 2nd
    ],
)
def test_notes_are_exactly_the_share_of_the_count(
    scope_id: str, count: int, share: str, notes: int
) -> None:
    seed(str(count), "--scope", scope_id, "--prefix", "s-", "--notes", share)

    seeded = ContentSource.objects.filter(scope_id=scope_id)
    assert seeded.count() == count
    assert seeded.filter(is_working_note=True).count() == notes


def test_notes_are_spread_evenly_whatever_the_batch_size(scope_id: str) -> None:
    seed("10", "--scope", scope_id, "--prefix", "a-", "--notes", "0.7")
    seed("10", "--scope", scope_id, "--prefix", "b-", "--notes", "0.7", "--batch", "3")

    # Source n is a note when floor(n * 7 / 10) steps up.
    assert note_numbers(scope_id, "a-") == [2, 3, 5, 6, 8, 9, 10]
    assert note_numbers(scope_id, "b-") == [2, 3, 5, 6, 8, 9, 10]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0"], "at least 1"),
        (["-3"], "at least 1"),
        (["\u0665"], "ASCII digits"),
        (["1_000"], "ASCII digits"),
        (["5", "--batch", "0"], "at least 1"),
        (["5", "--batch", "\uff12"], "ASCII digits"),
        (["5", "--sessions", "0"], "at least 1"),
        (["5", "--notes", "1.5"], "within 0..1"),
        (["5", "--notes", "-0.1"], "within 0..1"),
        (["5", "--notes", "nan"], "decimal number"),
        (["5", "--notes", "inf"], "decimal number"),
        (["5", "--notes", "1e-1"], "decimal number"),
        (["5", "--notes", "0,5"], "decimal number"),
        (["5", "--notes", "\u0660.5"], "decimal number"),
        (["5", "--prefix", " s-"], "must not start with whitespace"),
        (["5", "--prefix", "s\x00"], "NUL"),
        (["5", "--prefix", "s\udcff"], "unpaired surrogates"),
        (["10", "--prefix", "p" * 255], "too long"),
    ],
)
def test_bad_options_are_refused_and_nothing_is_written(
    scope_id: str, args: list[str], message: str
) -> None:
    before = registry_rows()

    with pytest.raises(CommandError, match=message):
        seed(*args, "--scope", scope_id)

    assert registry_rows() == before


def test_the_longest_prefix_is_taken(scope_id: str) -> None:
    seed("10", "--scope", scope_id, "--prefix", "p" * 254)

    assert ContentSource.objects.filter(source_id="p" * 254 + "10").exists()


@pytest.mark.parametrize("scope", ["scp_\x00", "scp_\udcff", "s" * 257, ""])
def test_a_scope_that_cannot_exist_is_refused(db: None, scope: str) -> None:
    with pytest.raises(CommandError, match="No scope"):
        seed("5", "--scope", scope)

    assert registry_rows() == ([], 0, [])


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("", "title"),
        ("   ", "title"),
        ("t" * 257, "title"),
        ("a\x00b", "title"),
        ("a\udcffb", "title"),
    ],
)
def test_a_bad_new_scope_title_is_refused(db: None, title: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        seed("5", "--create-scope", title)

    assert not Scope.objects.exists()
    assert registry_rows() == ([], 0, [])


@pytest.mark.parametrize(
    ("first", "second", "colliding"),
    [
        (["5", "--prefix", "s-"], ["3", "--prefix", "s-"], "'s-1', 's-2', 's-3'"),
        (["5", "--prefix", "s-"], ["9", "--prefix", "s-"], "'s-1', 's-2', 's-3'"),
        (["12", "--prefix", "s-"], ["2", "--prefix", "s-1"], "'s-11', 's-12'"),
        (["3", "--prefix", "s-"], ["30", "--prefix", "s-"], "'s-1', 's-2', 's-3'"),
    ],
)
def test_a_prefix_that_collides_is_refused_and_nothing_is_written(
    scope_id: str, first: list[str], second: list[str], colliding: str
) -> None:
    seed(*first, "--scope", scope_id)
    before = registry_rows()

    with pytest.raises(CommandError, match="already holds") as refused:
        seed(*second, "--scope", scope_id)

    assert colliding in str(refused.value)
    assert registry_rows() == before


def test_ids_that_only_look_alike_do_not_collide(api: ApiClient, scope_id: str) -> None:
    for source_id in ["S-1", "s-01", "s-0", "s-1a", "s-4", "s-\u0662", "s_1"]:
        assert capture_note(api, scope_id, source_id).status_code == 202

    seed("3", "--scope", scope_id, "--prefix", "s-")

    assert (
        ContentSource.objects.filter(
            scope_id=scope_id, source_id__in=["s-1", "s-2", "s-3"], created_by="seed"
        ).count()
        == 3
    )


def test_a_capture_racing_the_seeding_costs_only_its_batch(
    api: ApiClient, scope_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_batch = seed_sources.seed_batch
    # Before the second batch (s-3, s-4), a client captures s-4.
    captures_before_batch = iter([[], ["s-4"]])

    def racing_batch(plan: Any, *, offset: int, size: int) -> int:
        for source_id in next(captures_before_batch):
            assert capture_note(api, scope_id, source_id).status_code == 202
        return real_batch(plan, offset=offset, size=size)

    monkeypatch.setattr(seed_sources, "seed_batch", racing_batch)

    with pytest.raises(CommandError, match="2 of the 6 Sources were written"):
        seed("6", "--scope", scope_id, "--prefix", "s-", "--batch", "2")

    rows = ContentSource.objects.filter(scope_id=scope_id).order_by("position")
    assert list(rows.values_list("source_id", "position", "created_by")) == [
        ("s-1", 1, "seed"),
        ("s-2", 2, "seed"),
        ("s-4", 3, "root"),
    ]
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 3
    assert CaptureAttempt.objects.filter(scope_id=scope_id).count() == 3
