"""Runs reference-client calls; executed by ``.venv-ref/bin/python``, never imported.

The reference distribution's package is also called ``powercontext``, so it lives in
its own virtual environment and this script talks to the tests only through JSON:

    driver.py BASE_URL TOKEN < steps.json > results.json

``steps`` is a list of ``{"op": client_method, "args": [...], "request": {...}}``.
``request`` is validated into the method's request model. Any string value
``"$N.path.to.field"`` is replaced by that field of step N's result. Each result is
``{"ok": <model as JSON>}`` or ``{"error": {"type", "status_code", "code",
"request_id", "details"}}``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
import typing
from typing import Any

from powercontext.client import PowerContextClient
from powercontext.client.errors import ClientError

REFERENCE = re.compile(r"^\$(\d+)\.(.+)$")


def resolve(value: Any, results: list[dict[str, Any]]) -> Any:
    if isinstance(value, str) and (match := REFERENCE.match(value)):
        node: Any = results[int(match.group(1))]["ok"]
        for part in match.group(2).split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node
    if isinstance(value, list):
        return [resolve(item, results) for item in value]
    if isinstance(value, dict):
        return {key: resolve(item, results) for key, item in value.items()}
    return value


def request_model(method: Any) -> Any:
    hints = typing.get_type_hints(method)
    for name in inspect.signature(method).parameters:
        if name == "request":
            annotation = hints[name]
            for candidate in typing.get_args(annotation) or (annotation,):
                if hasattr(candidate, "model_validate"):
                    return candidate
    raise TypeError(f"{method.__name__} takes no request model")


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    return value


async def run(
    base_url: str, token: str | None, steps: list[dict[str, Any]]
) -> list[Any]:
    results: list[dict[str, Any]] = []
    async with PowerContextClient(base_url, token=token or None, timeout=60) as client:
        for step in steps:
            method = getattr(client, step["op"])
            args = resolve(step.get("args", []), results)
            kwargs = resolve(step.get("kwargs", {}), results)
            if "request" in step:
                kwargs["request"] = request_model(method).model_validate(
                    resolve(step["request"], results)
                )
            try:
                results.append({"ok": dump(await method(*args, **kwargs))})
            except ClientError as error:
                results.append(
                    {
                        "error": {
                            "type": type(error).__name__,
                            "status_code": getattr(error, "status_code", None),
                            "code": getattr(error, "code", None),
                            "request_id": getattr(error, "request_id", None),
                            "details": getattr(error, "details", None),
                        }
                    }
                )
    return results


def main() -> None:
    base_url, token = sys.argv[1], sys.argv[2]
    steps = json.load(sys.stdin)
    json.dump(asyncio.run(run(base_url, token, steps)), sys.stdout)


if __name__ == "__main__":
    main()
