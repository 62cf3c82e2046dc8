"""Schemathesis's stateful testing against the live service: sequences of calls.

Where ``test_fuzz_api.py`` sends each operation on its own, this walks the
OpenAPI document's links (powercontext/api/openapi_links.py): a created scope's
id goes into captures, envelope writes and handoffs; a receipt's Source id into
reads and the audit; a finalized handoff into commit, a commit into continue.
Every call is authenticated with an admin token, so the sequences reach the
domain code. Every answer must be below 500 (the two generation operations
answer 503 by contract), every error the envelope, and every answer conform to
the document.

``make test`` makes at least 150 calls; ``PC_FUZZ_STATEFUL_CALLS`` (and
``PC_FUZZ_STATEFUL_STEPS``, calls per walk) make it a campaign, and
``PC_FUZZ_REPORT`` names a file that receives the count of calls
(docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky

from tests.robustness.conftest import Service, serving_production, suite_database
from tests.robustness.test_fuzz_api import (
    CHECKS,
    DOCUMENT,
    GENERATION_OPERATIONS,
    transport_refusal,
)

CALLS = int(os.environ.get("PC_FUZZ_STATEFUL_CALLS", "150"))
STEPS = int(os.environ.get("PC_FUZZ_STATEFUL_STEPS", "12"))

# A copy: schemathesis adds the links it infers to the document it is given, and
# test_fuzz_api.py compares DOCUMENT with what the live server serves.
schema = schemathesis.openapi.from_dict(copy.deepcopy(DOCUMENT))


@pytest.fixture(scope="module")
def stateful_service(
    tmp_path_factory: pytest.TempPathFactory, static_root: Path
) -> Iterator[Service]:
    directory = tmp_path_factory.mktemp("fuzz-stateful")
    with (
        suite_database(directory) as database_url,
        serving_production(database_url, directory, static_root) as service,
    ):
        yield service


@pytest.fixture
def scope_is_a_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let walks start by creating a scope.

    schemathesis 4.32 starts walks only at operations it expects to succeed with
    random data; it reads ``parent_scope_id`` as a reference to a "ParentScope"
    that no operation creates and so never starts at ``create_scope`` - every
    walk then began with a capture into a scope that does not exist (404).
    """
    stateful = importlib.import_module("schemathesis.specs.openapi.stateful")
    likely = stateful.is_likely_root_transition
    monkeypatch.setattr(
        stateful,
        "is_likely_root_transition",
        lambda operation, *args: (
            operation.label == "POST /v1/scopes" or likely(operation, *args)
        ),
    )


def own_token_ids(service: Service) -> set[str]:
    """The ids of the tokens that exist before the walks: the walks' own."""
    answer = httpx.get(
        f"{service.url}/v1/tokens",
        headers={"Authorization": f"Bearer {service.token}"},
        params={"limit": 100},
        timeout=30,
    )
    answer.raise_for_status()
    return {item["token_id"] for item in answer.json()["items"]}


def decoy_token_id(service: Service) -> str:
    """A token the walks may revoke, rotate, expire or strip in place of their own."""
    answer = httpx.post(
        f"{service.url}/v1/tokens",
        headers={"Authorization": f"Bearer {service.token}"},
        json={"name": "fuzz-decoy", "grants": [{"scope": "*", "role": "admin"}]},
        timeout=30,
    )
    answer.raise_for_status()
    return str(answer.json()["token_id"])


def workflow(
    service: Service, calls: Counter[tuple[str, int]], failures: list[str]
) -> type:
    """The document's state machine, calling ``service`` with its admin token.

    The walks follow ``list_tokens`` into ``revoke_token`` and the other calls on
    one token; a call naming the walks' own token is sent to a decoy instead, or
    one revocation would leave every later call a 401.

    A failing call is kept in ``failures`` (as a curl command, the answer and the
    error) and the walk goes on; the test fails at the end with all of them. Walks
    depend on the live server's answers (new ids every time), so hypothesis could
    not replay one to shrink it: it would report only that the replay was flaky.
    """

    own = own_token_ids(service)
    decoy = decoy_token_id(service)

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Any) -> None:
            if (case.path_parameters or {}).get("token_id") in own:
                case.path_parameters = {**case.path_parameters, "token_id": decoy}
            case.headers = {
                **(case.headers or {}),
                "Authorization": f"Bearer {service.token}",
            }

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": service.url, "timeout": 60}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            operation = case.operation.definition.raw.get("operationId")
            calls[operation, response.status_code] += 1
            try:
                check(case, response, operation)
            except Exception as error:
                answer = f"{response.status_code} {response.text[:500]}"
                failures.append(f"{case.as_curl_command()}\n-> {answer}\n{error}")

    return Workflow


def check(case: Any, response: Any, operation: str) -> None:
    refusal = transport_refusal(response.request)
    if refusal is not None:
        assert response.status_code == refusal, response.text
        return
    limit = 504 if operation in GENERATION_OPERATIONS else 500
    assert response.status_code < limit, (operation, response.text)
    case.validate_response(response, checks=CHECKS)


@pytest.mark.usefixtures("scope_is_a_root")
def test_sequences_of_linked_calls_get_no_5xx_and_conform(
    stateful_service: Service,
) -> None:
    calls: Counter[tuple[str, int]] = Counter()
    failures: list[str] = []
    machine = workflow(stateful_service, calls, failures)
    rounds = 0
    try:
        while sum(calls.values()) < CALLS:
            rounds += 1
            walk(machine)
    finally:
        report(calls, failures, rounds)
    assert not failures, "\n\n".join(failures[:5])
    succeeded = {operation for (operation, status) in calls if status < 300}
    assert "create_scope" in succeeded
    assert succeeded - {"create_scope", "get_liveness", "get_readiness"}, (
        "no call on a created scope succeeded: the links were not followed"
    )


def walk(machine: Any) -> None:
    """One round of up to 15 walks. A walk's values come from the live server, so
    hypothesis may find its choices no longer lead where they did and end the
    round with ``Flaky``; schemathesis's own runner starts a new round then too.
    Failed checks are not lost: they are in ``failures``."""
    with contextlib.suppress(Flaky):
        machine.run(
            settings=settings(
                max_examples=15,
                stateful_step_count=STEPS,
                phases=[Phase.generate],
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
        )


def report(calls: Counter[tuple[str, int]], failures: list[str], rounds: int) -> None:
    total = sum(calls.values())
    by_operation = Counter()
    for (operation, status), count in calls.items():
        by_operation[f"{operation} {status}"] += count
    print(f"stateful fuzz: {total} calls in {rounds} rounds, {len(failures)} failed")
    print("\n\n".join(failures[:5]))
    target = os.environ.get("PC_FUZZ_REPORT")
    if target:
        Path(target).write_text(
            json.dumps(
                {
                    "calls": total,
                    "rounds": rounds,
                    "failures": failures[:20],
                    "by_status": dict(by_operation),
                },
                indent=1,
            )
        )
