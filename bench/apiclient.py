"""The few API calls the bench makes outside wrk, with the standard library.

bench/drive.py creates a fresh scope per run and captures the note the "replays"
workload replays; bench/scale.py prepares envelopes and checks the first request
of each prepared file. Proxies are ignored: every target is on loopback.
"""

from __future__ import annotations

import json
import secrets
import sys
import urllib.error
import urllib.request


def http_json(base_url: str, token: str, method: str, path: str, body: bytes | None):
    """One request with the stdlib client; returns (status, parsed body).

    The body is parsed as JSON when the answer is a success with a JSON body, and
    returned as text otherwise (errors, ``text/plain`` answers such as the fold).
    """
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        base_url + path, data=body, headers=headers, method=method
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            raw = response.read().decode("utf-8", "replace")
            if response.headers.get_content_type() == "application/json":
                return response.status, json.loads(raw)
            return response.status, raw
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def scope_create(base_url: str, token: str, label: str) -> str:
    """A new scope for one measured run; exits unless the server answers 201."""
    body = json.dumps(
        {
            "title": f"bench {label}",
            "summary": "Scope created by bench/drive.py for one measured run.",
            "idempotency_key": f"bench-{label}-{secrets.token_hex(8)}",
        }
    ).encode()
    status, answer = http_json(base_url, token, "POST", "/v1/scopes", body)
    if status != 201:
        sys.exit(f"drive.py: creating a scope answered {status}: {answer}")
    return answer["scope_id"]


def replay_body(scope_id: str, nonce: str) -> bytes:
    """The one note the "replays" workload sends again and again."""
    return json.dumps(
        {
            "scope_id": scope_id,
            "source_id": f"wn-replay-{nonce}",
            "content": f"Replayed note of run {nonce}: the same identity and value.",
            "session_id": "bench-session-replay",
            "note_kind": "validation",
        }
    ).encode()
