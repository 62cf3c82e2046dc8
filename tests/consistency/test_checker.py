"""The linearizability checker against hand-written histories: ones it must
accept (including indeterminate operations that did or did not take effect) and
ones it must reject (including ones where every single answer is plausible on
its own and only the order of operations gives them away)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.consistency import checker

ENV = "env:scp_1/s0"
SRC_A = "src:scp_1/a"
SRC_B = "src:scp_1/b"
JOURNAL = "journal:scp_1"


def history(*ops: tuple[Any, ...]) -> list[dict[str, Any]]:
    """``(process, key, f, input, called, returned, type, output)`` each; an
    ``info`` operation with ``returned`` None is never answered. Sorted by time."""
    events: list[dict[str, Any]] = []
    for process, key, f, value, called, returned, kind, output in ops:
        events.append(
            {"type": "invoke", "f": f, "key": key, "value": value,
             "process": process, "time": called}
        )  # fmt: skip
        if returned is not None:
            events.append(
                {"type": kind, "f": f, "key": key, "value": output,
                 "process": process, "time": returned}
            )  # fmt: skip
    return sorted(events, key=lambda e: e["time"])


def put(p, t0, t1, meta, out, *, kind="ok", if_match=None, status=200, version=1):
    value = {"meta": meta, "if_match": if_match}
    answer = {"status": status, "version": version, "meta": out}
    if kind == "fail":
        answer = {"status": 412}
    return (p, ENV, "env_put", value, t0, t1, kind, answer)


def read(p, t0, t1, version, meta):
    answer = {"status": 404} if version is None else {"version": version, "meta": meta}
    return (
        p,
        ENV,
        "env_read",
        None,
        t0,
        t1,
        "fail" if version is None else "ok",
        answer,
    )


def notes(p, t0, t1, text, *, if_match=None, status=200, version=1):
    """Working notes ``PUT`` of ``text``, or ``DELETE`` when ``text`` is None."""
    value = {"if_match": if_match}
    if text is not None:
        value["notes"] = text
    f = "notes_delete" if text is None else "notes_put"
    answer = {"status": status, "version": version, "notes": text}
    return (p, ENV, f, value, t0, t1, "ok", answer)


def capture(p, t0, t1, key, content, position=None, *, replayed=False, kind="ok"):
    source_id = key.rsplit("/", 1)[1]
    value = {"source_id": source_id, "content": content, "journal": JOURNAL}
    answer = (
        {"position": position, "replayed": replayed}
        if kind == "ok"
        else {"status": 409}
    )
    return (p, key, "capture", value, t0, t1, kind, answer)


def listing(p, t0, t1, items, limit=100):
    return (p, JOURNAL, "list_read", {"limit": limit}, t0, t1, "ok", {"items": items})


def verdict(events: list[dict[str, Any]]) -> bool:
    report = checker.check(events)
    assert report.unknown == []
    return report.anomalies == []


LINEARIZABLE = {
    "sequential create, read, conditional write, read": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        read(1, 2, 3, 1, {"x-a": 1}),
        put(1, 4, 5, {"x-a": 2}, {"x-a": 2}, if_match=1, version=2),
        read(2, 6, 7, 2, {"x-a": 2}),
    ),
    "a read overlapping a write may see the old value": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 10, {"x-a": 2}, {"x-a": 2}, version=2),
        read(2, 3, 4, 1, {"x-a": 1}),
        read(3, 5, 6, 2, {"x-a": 2}),
    ),
    "two racing conditional writes: one wins, the other 412": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 6, {"x-a": 2}, {"x-a": 2}, if_match=1, version=2),
        put(2, 3, 5, {"x-a": 3}, None, if_match=1, kind="fail"),
    ),
    "an unanswered write that took effect": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, None, {"x-a": 2}, None, kind="info"),
        read(2, 8, 9, 2, {"x-a": 2}),
    ),
    "an unanswered write that never took effect": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, None, {"x-a": 2}, None, kind="info"),
        read(2, 8, 9, 1, {"x-a": 1}),
    ),
    "an unanswered write that took effect after a later write": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, None, {"x-a": 2}, None, kind="info"),
        put(2, 4, 5, {"x-a": 3}, {"x-a": 3}, version=2),
        read(3, 8, 9, 3, {"x-a": 2}),
    ),
    "a write that changes nothing keeps the version": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 3, {"x-a": 1, "x-b": None}, {"x-a": 1}, if_match=1, version=1),
    ),
    "deleting notes of a missing envelope creates nothing": history(
        notes(0, 0, 1, None, version=None),
        read(1, 2, 3, None, None),
    ),
    "notes and the host's keys live side by side": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        notes(1, 2, 3, "n", if_match=1, version=2),
        put(2, 4, 5, {"x-a": 5}, {"x-a": 5, "workingNotes": "n"}, version=3),
    ),
    "capture, replay, conflict": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        capture(1, 2, 3, SRC_A, "one", 1, replayed=True),
        capture(2, 4, 5, SRC_A, "two", kind="fail"),
        listing(3, 6, 7, [[1, "a", "one"]]),
    ),
    "an unanswered capture resolved by its replay": history(
        capture(0, 0, None, SRC_A, "one", kind="info"),
        capture(1, 5, 6, SRC_A, "one", 1, replayed=True),
    ),
    "a conflict explained by an unanswered capture of the other value": history(
        capture(0, 0, None, SRC_A, "one", kind="info"),
        capture(1, 5, 6, SRC_A, "two", kind="fail"),
    ),
    "concurrent first captures take positions in either order": history(
        capture(0, 0, 5, SRC_A, "one", 2),
        capture(1, 1, 4, SRC_B, "uno", 1),
        listing(2, 2, 3, [[1, "b", "uno"]]),
    ),
    "an unanswered capture takes the position before a later one": history(
        capture(0, 0, None, SRC_A, "one", kind="info"),
        capture(1, 2, 3, SRC_B, "uno", 2),
        listing(2, 4, 5, [[1, "a", "one"], [2, "b", "uno"]], limit=3),
    ),
}

NOT_LINEARIZABLE = {
    "a stale read after the write was answered": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        read(1, 2, 3, None, None),
    ),
    "If-Match ignored: two writers on version 1 both win": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 5, {"x-a": 2}, {"x-a": 2}, if_match=1, version=2),
        put(2, 3, 6, {"x-a": 3}, {"x-a": 3}, if_match=1, version=3),
    ),
    "a 412 although the tag matched": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 3, {"x-a": 2}, None, if_match=1, kind="fail"),
    ),
    "a version skipped": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 3, {"x-a": 2}, {"x-a": 2}, version=3),
    ),
    "a new value read, then the old one (each read alone is plausible)": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, 20, {"x-a": 2}, {"x-a": 2}, version=2),
        read(2, 3, 4, 2, {"x-a": 2}),
        read(3, 5, 6, 1, {"x-a": 1}),
    ),
    "an unanswered write seen, then unseen": history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        put(1, 2, None, {"x-a": 2}, None, kind="info"),
        read(2, 3, 4, 2, {"x-a": 2}),
        read(3, 5, 6, 1, {"x-a": 1}),
    ),
    "the host's write drops the worker's notes": history(
        notes(1, 0, 1, "n", status=201, version=1),
        put(2, 2, 3, {"x-a": 5}, {"x-a": 5}, version=2),
    ),
    "a replay answered with a new position": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        capture(1, 2, 3, SRC_A, "one", 2, replayed=True),
    ),
    "two first captures of one identity": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        capture(1, 2, 3, SRC_A, "one", 2),
    ),
    "a conflict with nothing captured": history(
        capture(0, 0, 1, SRC_A, "two", kind="fail"),
    ),
    "a conflicting value accepted": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        capture(1, 2, 3, SRC_A, "two", 1, replayed=True),
    ),
    "a gap in the journal": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        capture(1, 2, 3, SRC_B, "uno", 3),
    ),
    "a position given twice": history(
        capture(0, 0, 3, SRC_A, "one", 1),
        capture(1, 1, 2, SRC_B, "uno", 1),
    ),
    "a list page missing an acknowledged capture": history(
        capture(0, 0, 1, SRC_A, "one", 1),
        listing(1, 2, 3, []),
    ),
    "a list page showing position 2 without position 1": history(
        capture(0, 0, None, SRC_A, "one", kind="info"),
        capture(1, 1, 2, SRC_B, "uno", 2),
        listing(2, 3, 4, [[2, "b", "uno"]]),
    ),
    "an unanswered capture that took position 1, then a list without it": history(
        capture(0, 0, None, SRC_A, "one", kind="info"),
        capture(1, 1, 2, SRC_B, "uno", 2),
        listing(2, 3, 4, [[1, "b", "uno"]]),
    ),
}


@pytest.mark.parametrize("name", LINEARIZABLE)
def test_accepts_linearizable_histories(name: str) -> None:
    assert verdict(LINEARIZABLE[name])


@pytest.mark.parametrize("name", NOT_LINEARIZABLE)
def test_rejects_histories_no_order_explains(name: str) -> None:
    assert not verdict(NOT_LINEARIZABLE[name])


def test_the_failing_window_is_the_shortest_failing_prefix() -> None:
    events = history(
        put(0, 0, 1, {"x-a": 1}, {"x-a": 1}, status=201),
        read(1, 2, 3, 1, {"x-a": 1}),
        put(1, 4, 5, {"x-a": 2}, {"x-a": 2}, version=2),
        read(2, 6, 7, 1, {"x-a": 1}),
        read(3, 8, 9, 2, {"x-a": 2}),
        read(4, 10, 11, 2, {"x-a": 2}),
    )

    window = checker.smallest_failing_window(events, ENV)

    assert [e["time"] for e in window] == [0, 1, 2, 3, 4, 5, 6, 7]


def test_the_search_memoizes_instead_of_trying_every_order() -> None:
    """Twelve unanswered writes of one value and a read after them: without the
    cache of (linearized, state) the search would try 12! orders."""
    ops = [put(p, p, None, {"x-a": 1}, None, kind="info") for p in range(12)]
    ops.append(read(99, 50, 51, 3, {"x-a": 2}))

    report = checker.check(history(*ops))

    assert len(report.anomalies) == 1
    assert next(iter(report.verdicts.values())).explored < 100_000
