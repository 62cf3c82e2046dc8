"""A ``ByteStream`` answer (``powercontext.operations``): raw bytes of a declared
media type, written chunk by chunk and never held whole - the export's bundle
(``GET /v1/scopes/{scope_id}/export``) is one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.http import StreamingHttpResponse

from powercontext.api.openapi import OpenApiDocumentView
from powercontext.api.operations import respond
from powercontext.operations import (
    ANY_TOKEN,
    ByteStream,
    Context,
    Given,
    Operation,
    Route,
)
from tests.conftest import ApiClient

# Closing an answer sends ``request_finished``, which closes old connections.
pytestmark = pytest.mark.django_db


class Chunks:
    """Yields ``count`` chunks, recording how far it was read and whether closed."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.read = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            while self.read < self.count:
                self.read += 1
                yield b'{"n": %d}\n' % self.read
        finally:
            self.closed = True


def _operation(chunks: Chunks) -> Operation:
    def call(given: Given, context: Context) -> Chunks:
        return chunks

    return Operation(
        "stream_bytes",
        "GET",
        Route("stream-bytes", "stream"),
        ANY_TOKEN,
        call,
        lambda result: ByteStream(iter(result), "application/x-ndjson"),
        ("test",),
    )


def test_a_byte_stream_is_written_as_it_is_read() -> None:
    chunks = Chunks(3)
    operation = _operation(chunks)

    response: Any = respond(operation, chunks, None)

    assert isinstance(response, StreamingHttpResponse)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert chunks.read == 0  # nothing read before the server writes
    body = iter(response.streaming_content)
    assert next(body) == b'{"n": 1}\n'
    assert chunks.read == 1
    response.close()  # the client went away
    assert chunks.closed
    assert chunks.read == 1


def test_the_export_documents_its_media_type() -> None:
    document = OpenApiDocumentView.document()
    ok = document["paths"]["/v1/scopes/{scope_id}/export"]["get"]["responses"]["200"]

    assert ok["content"] == {"application/x-ndjson": {"schema": {"type": "string"}}}
    assert ok["description"].startswith("The bundle: JSON Lines")


def test_the_export_is_streamed(api: ApiClient, scope_id: str) -> None:
    response = api.get(f"/v1/scopes/{scope_id}/export")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert getattr(response, "streamed", False)
    assert len(response.content.splitlines()) >= 3  # manifest, scope, trailer
