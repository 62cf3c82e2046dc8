"""A linearizability checker for histories recorded against the service.

A history is a list of events in the shape Jepsen uses (``type`` is ``invoke``,
``ok``, ``fail`` or ``info``; ``f``, ``value``, ``process``, ``time``) plus ``key``:
the object the operation acts on. An ``info`` completion is indeterminate - a
timeout, a reset connection, a 5xx - and the operation may or may not have taken
effect, at any time after it was invoked. A process that saw ``info`` is never
reused (the recorder gives its thread a new process number).

The history is split per key (P-compositionality: a history is linearizable when
each key's subhistory is) and each subhistory is searched with the Wing & Gong
algorithm as improved by Lowe ("Testing for linearizability", 2017): operations
are lifted out of a doubly linked list of call and return entries in an order the
model accepts, backtracking at a return entry whose call is not yet linearized,
and every (linearized set, model state) pair already explored is cached so the
search never explores it twice (just-in-time linearization with memoization, as
Porcupine does). An ``info`` operation's return entry sits at infinity, after
every other entry: linearizing it last is the same as its never having happened.

Three models (``ENVELOPE``, ``IDENTITY``, ``JOURNAL``), each a function from
(state, operation) to the next state, or ``REJECT`` when the operation's observed
result is impossible in that state. States are hashable.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

State = Any
Step = Callable[[State, "Operation"], State]


class _Reject:
    """What a model's step returns when the observed result is impossible."""

    def __repr__(self) -> str:
        return "REJECT"


REJECT: Any = _Reject()

HOST_KEYS = frozenset({"selectedModel", "x-a", "x-b"})
WORKER_KEYS = frozenset({"turnCursor", "workingNotes", "statusSlot"})


@dataclass(frozen=True)
class Operation:
    """One operation of one key: its call, its completion (``info``: never seen)."""

    index: int
    key: str
    f: str
    process: int
    call: float
    ret: float
    type: str  # ok, fail or info
    input: Any
    output: Any

    @property
    def indeterminate(self) -> bool:
        return self.type == "info"


@dataclass
class Model:
    name: str
    init: State
    step: Step


# --- The envelope: a versioned register with compare-and-set -------------------------


def _meta(state: State) -> dict[str, Any]:
    return dict(state[1]) if state is not None else {}


def _frozen(version: int, meta: Mapping[str, Any]) -> State:
    return (version, tuple(sorted(meta.items())))


def _apply(meta: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """Set each named key; ``None`` or ``""`` clears it (notes are trimmed)."""
    result = dict(meta)
    for key, value in changes.items():
        if key == "workingNotes" and isinstance(value, str):
            value = value.strip()
        if value is None or value == "":
            result.pop(key, None)
        else:
            result[key] = value
    return result


def _envelope_write(state: State, op: Operation) -> tuple[int, State] | None:
    """(status, next state) of a write, or ``None`` for a failed precondition."""
    if_match = op.input.get("if_match")
    if if_match is not None and (state is None or state[0] != if_match):
        return None
    old = _meta(state)
    if op.f == "env_put":
        kept = {k: v for k, v in old.items() if k not in HOST_KEYS}
        new = _apply(kept, op.input["meta"])
    elif op.f == "env_patch":
        new = _apply(old, op.input["meta"])
    elif op.f == "notes_put":
        new = _apply(old, {"workingNotes": op.input["notes"]})
    else:  # notes_delete: creates nothing on a missing envelope
        if state is None:
            return 200, None
        new = _apply(old, {"workingNotes": None})
    if state is None:
        return 201, _frozen(1, new)
    if new == old:
        return 200, state
    return 200, _frozen(state[0] + 1, new)


def envelope_step(state: State, op: Operation) -> State:
    """``None`` (no envelope) or ``(version, meta items)``."""
    if op.f == "env_read":
        if op.indeterminate:
            return state
        if op.type == "fail":
            return state if state is None and op.output["status"] == 404 else REJECT
        observed = _frozen(op.output["version"], op.output["meta"])
        return state if observed == state else REJECT
    outcome = _envelope_write(state, op)
    if op.indeterminate:
        return state if outcome is None else outcome[1]
    if outcome is None:
        return state if op.type == "fail" and op.output["status"] == 412 else REJECT
    status, after = outcome
    if op.type != "ok" or op.output["status"] != status:
        return REJECT
    if op.f in ("notes_put", "notes_delete"):
        version = after[0] if after is not None else None
        notes = _meta(after).get("workingNotes")
        return (
            after
            if (op.output["version"], op.output["notes"])
            == (
                version,
                notes,
            )
            else REJECT
        )
    observed = _frozen(op.output["version"], op.output["meta"])
    return after if observed == after else REJECT


ENVELOPE = Model("envelope", None, envelope_step)


# --- A Source identity: a write-once register, replays answer the first receipt ------


def identity_step(state: State, op: Operation) -> State:
    """``None`` (never captured) or ``(content, position)``."""
    if op.f == "source_read":
        if op.indeterminate:
            return state
        if op.type == "fail":
            return state if state is None and op.output["status"] == 404 else REJECT
        observed = (op.output["content"], op.output["position"])
        if state is not None and state[1] is None and observed[0] == state[0]:
            return observed
        return state if observed == state else REJECT
    content = op.input["content"]
    if op.indeterminate:
        if state is not None:
            return state
        # Only the journal knows the position; the next read or replay tells it.
        return (content, None)
    if state is None:
        if op.type != "ok" or op.output["replayed"]:
            return REJECT
        return (content, op.output["position"])
    stored, position = state
    if stored != content:
        return state if op.type == "fail" and op.output["status"] == 409 else REJECT
    if op.type != "ok" or not op.output["replayed"]:
        return REJECT
    if position is None:  # first captured by an operation nobody saw answered
        return (stored, op.output["position"])
    return state if op.output["position"] == position else REJECT


IDENTITY = Model("identity", None, identity_step)


# --- A scope's journal: positions 1, 2, 3 ... with no gap ------------------------------


def journal_step(state: State, op: Operation) -> State:
    """A tuple of ``(source_id, content)`` in position order."""
    found = {item[0]: (number, item[1]) for number, item in enumerate(state, 1)}
    if op.f == "list_read":
        if op.indeterminate:
            return state
        expected = [[n, s, c] for n, (s, c) in enumerate(state, 1)]
        return state if op.output["items"] == expected[: op.input["limit"]] else REJECT
    source_id = op.input["source_id"]
    if op.f == "source_read":
        if op.indeterminate:
            return state
        if op.type == "fail":
            return state if source_id not in found else REJECT
        return (
            state
            if found.get(source_id) == (op.output["position"], op.output["content"])
            else REJECT
        )
    content = op.input["content"]
    if op.indeterminate:
        return state if source_id in found else (*state, (source_id, content))
    if source_id not in found:
        if op.type != "ok" or op.output["replayed"]:
            return REJECT
        if op.output["position"] != len(state) + 1:
            return REJECT
        return (*state, (source_id, content))
    position, stored = found[source_id]
    if stored != content:
        return state if op.type == "fail" and op.output["status"] == 409 else REJECT
    if op.type != "ok" or not op.output["replayed"]:
        return REJECT
    return state if op.output["position"] == position else REJECT


JOURNAL = Model("journal", (), journal_step)


# --- Histories -------------------------------------------------------------------------


def operations(events: Iterable[Mapping[str, Any]]) -> list[Operation]:
    """Pair each invoke with its completion (by process); an invoke never completed
    is ``info``. Fails on a completion without its invoke."""
    open_calls: dict[int, Mapping[str, Any]] = {}
    paired: list[Operation] = []
    for event in events:
        process = event["process"]
        if process == "nemesis":
            continue
        if event["type"] == "invoke":
            if process in open_calls:
                raise ValueError(f"process {process} invoked twice: {event}")
            open_calls[process] = event
            continue
        call = open_calls.pop(process, None)
        if call is None:
            raise ValueError(f"completion without an invoke: {event}")
        paired.append(_operation(len(paired), call, event))
    for call in open_calls.values():
        paired.append(_operation(len(paired), call, None))
    return paired


def _operation(
    index: int, call: Mapping[str, Any], done: Mapping[str, Any] | None
) -> Operation:
    kind = "info" if done is None else done["type"]
    return Operation(
        index=index,
        key=call["key"],
        f=call["f"],
        process=call["process"],
        call=float(call["time"]),
        ret=math.inf if kind == "info" else float(done["time"]),  # type: ignore[index]
        type=kind,
        input=call["value"],
        output=None if done is None else done.get("value"),
    )


def model_for(key: str) -> Model:
    """Keys are ``env:...``, ``src:...`` and ``journal:...``."""
    return {"env": ENVELOPE, "src": IDENTITY, "journal": JOURNAL}[key.split(":", 1)[0]]


def by_key(ops: Iterable[Operation]) -> dict[str, list[Operation]]:
    """Each key's operations; a capture or Source read also belongs to its scope's
    journal (``journal`` in its input names it)."""
    keyed: dict[str, list[Operation]] = defaultdict(list)
    for op in ops:
        keyed[op.key].append(op)
        if isinstance(op.input, dict) and "journal" in op.input:
            keyed[op.input["journal"]].append(op)
    return dict(keyed)


# --- The search ------------------------------------------------------------------------


@dataclass
class _Entry:
    op: Operation
    is_call: bool
    time: float
    match: _Entry | None = None
    prev: _Entry | None = None
    next: _Entry | None = None


def _entry_list(ops: list[Operation]) -> _Entry:
    """A head sentinel followed by call and return entries in time order (a call
    before a return at the same instant, so touching operations overlap)."""
    entries: list[_Entry] = []
    for op in ops:
        call = _Entry(op, True, op.call)
        done = _Entry(op, False, op.ret)
        call.match = done
        entries += [call, done]
    entries.sort(key=lambda e: (e.time, 0 if e.is_call else 1, e.op.index))
    head = _Entry(ops[0] if ops else None, False, -math.inf)  # type: ignore[arg-type]
    previous = head
    for entry in entries:
        previous.next, entry.prev = entry, previous
        previous = entry
    return head


def _lift(entry: _Entry) -> None:
    for part in (entry, entry.match):
        assert part is not None
        part.prev.next = part.next  # type: ignore[union-attr]
        if part.next is not None:
            part.next.prev = part.prev


def _unlift(entry: _Entry) -> None:
    for part in (entry.match, entry):
        assert part is not None
        part.prev.next = part  # type: ignore[union-attr]
        if part.next is not None:
            part.next.prev = part


@dataclass
class Verdict:
    """``linearizable`` is True, False, or None when the search hit its budget."""

    key: str
    linearizable: bool | None
    operations: int
    explored: int
    order: list[int] = field(default_factory=list)


def check_key(
    key: str, ops: list[Operation], model: Model, *, budget: int = 2_000_000
) -> Verdict:
    """Is ``ops`` (one key's) linearizable with respect to ``model``?"""
    ops = sorted(ops, key=lambda op: op.index)
    local = {op.index: position for position, op in enumerate(ops)}
    head = _entry_list(ops)
    state, linearized, explored = model.init, 0, 0
    cache: set[tuple[int, State]] = set()
    calls: list[tuple[_Entry, State]] = []
    entry = head.next
    while head.next is not None:
        explored += 1
        if explored > budget:
            return Verdict(key, None, len(ops), explored)
        assert entry is not None
        if entry.is_call:
            after = model.step(state, entry.op)
            if after is not REJECT:
                bit = 1 << local[entry.op.index]
                seen = (linearized | bit, after)
                if seen not in cache:
                    cache.add(seen)
                    calls.append((entry, state))
                    state, linearized = after, linearized | bit
                    _lift(entry)
                    entry = head.next
                    continue
            entry = entry.next
            continue
        if not calls:
            return Verdict(key, False, len(ops), explored)
        top, state = calls.pop()
        linearized &= ~(1 << local[top.op.index])
        _unlift(top)
        entry = top.next
    order = [top.op.index for top, _ in calls]
    return Verdict(key, True, len(ops), explored, order)


@dataclass
class Report:
    keys: int
    operations: int
    anomalies: list[Verdict]
    unknown: list[Verdict]
    verdicts: dict[str, Verdict]


def check(events: Iterable[Mapping[str, Any]], *, budget: int = 2_000_000) -> Report:
    """Check a whole history, key by key."""
    ops = operations(events)
    verdicts = {
        key: check_key(key, keyed, model_for(key), budget=budget)
        for key, keyed in by_key(ops).items()
    }
    return Report(
        keys=len(verdicts),
        operations=len(ops),
        anomalies=[v for v in verdicts.values() if v.linearizable is False],
        unknown=[v for v in verdicts.values() if v.linearizable is None],
        verdicts=verdicts,
    )


def smallest_failing_window(
    events: list[Mapping[str, Any]], key: str, *, budget: int = 2_000_000
) -> list[Mapping[str, Any]]:
    """The shortest prefix of ``key``'s events that is already not linearizable
    (an operation still open at the cut counts as indeterminate); found by
    bisection, since a prefix of a linearizable history is linearizable."""
    model = model_for(key)
    mine = _events_of(events, key)

    def fails(count: int) -> bool:
        ops = [replace(op, key=key) for op in operations(mine[:count])]
        return check_key(key, ops, model, budget=budget).linearizable is False

    low, high = 1, len(mine)
    while low < high:
        middle = (low + high) // 2
        if fails(middle):
            high = middle
        else:
            low = middle + 1
    return list(mine[:high])


def _events_of(events: list[Mapping[str, Any]], key: str) -> list[Mapping[str, Any]]:
    """The invokes of ``key`` (or of its journal) and their completions."""
    open_calls: dict[int, bool] = {}
    mine: list[Mapping[str, Any]] = []
    for event in events:
        if event["process"] == "nemesis":
            continue
        if event["type"] == "invoke":
            value = event.get("value")
            belongs = event["key"] == key or (
                isinstance(value, dict) and value.get("journal") == key
            )
            open_calls[event["process"]] = belongs
        else:
            belongs = open_calls.pop(event["process"], False)
        if belongs:
            mine.append(event)
    return mine


def dumps(events: Iterable[Mapping[str, Any]]) -> str:
    """JSON Lines, one event a line."""
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)


def read_history(path: Path) -> list[dict[str, Any]]:
    """The events of a JSON Lines history; a last line cut short (the recorder
    was killed mid-write) is left out."""
    lines = path.read_text().splitlines()
    events = [json.loads(line) for line in lines[:-1] if line.strip()]
    with contextlib.suppress(json.JSONDecodeError, IndexError):
        events.append(json.loads(lines[-1]))
    return events


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.consistency.checker HISTORY.jsonl``: check a recorded
    history again; prints one line and each anomalous key; exit 1 on an anomaly."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("history", type=Path)
    args = parser.parse_args(argv)
    events = read_history(args.history)
    report = check(events)
    print(
        f"{report.operations} operations, {report.keys} keys checked, "
        f"{len(report.anomalies)} anomalies, {len(report.unknown)} undecided"
    )
    for verdict in report.anomalies:
        print(f"anomaly: {verdict.key} ({verdict.operations} operations)")
    return 1 if report.anomalies else 0


if __name__ == "__main__":
    sys.exit(main())
