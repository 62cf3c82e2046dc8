"""JSON answers that carry stored Source content without decoding it.

A Source's content is stored as canonical JSON text. Decoding it into Python
objects only to encode it again cost the worker many times its size (a 2 MiB
``[{},{},...]`` becomes 700,000 dicts), so answers carry it as ``RawJSON``: the
text is written into the answer as it is (``jsonvalues.wire_json_text`` only
rewrites integer literals a client could not send back).

- ``JSONRenderer`` (DRF's renderer for every API answer) encodes with the C
  encoder and splices ``RawJSON`` values in one pass.
- ``StreamedJSONResponse`` writes a page item by item, so an answer of many
  large Sources never sits in the worker twice (docs/operations.md).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from powercontext.jsonvalues import RawJSON

# Stored text never holds NUL (the API refuses it), so a JSON string literal that
# starts with an escaped NUL can only be a placeholder this module wrote.
_PLACEHOLDER = re.compile(r'"\\u0000raw:([0-9]+)"')
_CHUNK = 256 * 1024


def dumps(data: Any) -> str:
    """``data`` as compact JSON text (non-ASCII as is), ``RawJSON`` spliced in."""
    raws: list[str] = []

    def collect(value: Any) -> str:
        if isinstance(value, RawJSON):
            raws.append(value.text)
            return f"\x00raw:{len(raws) - 1}"
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=collect)
    if not raws:
        return text
    return _PLACEHOLDER.sub(lambda match: raws[int(match.group(1))], text)


class JSONRenderer(BaseRenderer):
    """DRF's renderer for the API: compact UTF-8 JSON with ``RawJSON`` spliced."""

    media_type = "application/json"
    format = "json"
    charset = None

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Any = None,
    ) -> bytes:
        if data is None:
            return b""
        return dumps(data).encode("utf-8")


class StreamedJSONResponse(StreamingHttpResponse):
    """``{"items": [...], <tail>}`` written item by item.

    ``items`` are rendered one at a time by ``render``; ``tail`` is called once
    they are all written and returns the other members of the object (a cursor
    that depends on where the items stopped).

    The first chunk is made here, before the view returns: its rows are read
    now, so a database that fails before anything is sent is the API's error
    (``503 unavailable``) rather than the server's bare 500. A failure in a later
    chunk, after the status went out, can only cut the answer short: the client
    sees an unterminated body, never a complete wrong one.
    """

    def __init__(
        self,
        items: Iterable[Any],
        render: Callable[[Any], Any],
        tail: Callable[[], dict[str, Any]],
        *,
        status: int = 200,
    ) -> None:
        chunks = _stream(items, render, tail)
        first = next(chunks)  # _stream yields at least once
        super().__init__(
            itertools.chain((first,), chunks),
            status=status,
            content_type="application/json",
        )


def _stream(
    items: Iterable[Any],
    render: Callable[[Any], Any],
    tail: Callable[[], dict[str, Any]],
) -> Iterator[bytes]:
    buffer: list[str] = ['{"items":[']
    size = 0
    for index, item in enumerate(items):
        text = dumps(render(item))
        buffer.append(text if index == 0 else "," + text)
        size += len(text)
        if size >= _CHUNK:
            yield "".join(buffer).encode("utf-8")
            buffer, size = [], 0
    rest = dumps(tail())
    buffer.append("]" + ("," + rest[1:] if rest != "{}" else "}"))
    yield "".join(buffer).encode("utf-8")
