"""A worker's garbage collection, as ``powercontext.wsgi`` sets it up.

Loading the application freezes what was loaded (full collections skip it) and
raises the youngest generation's threshold, so that parsing a body at the limit
no longer runs about ten full collections with the interpreter lock held
(docs/operations.md, "Memory"; the effect on other requests is measured by
tests/robustness/test_memory_bounds.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.robustness.processes import manage, service_env

REPORT = (
    "import gc, json, powercontext.wsgi; "
    "print(json.dumps([gc.get_threshold(), gc.get_freeze_count()]))"
)


def test_loading_the_application_freezes_it_and_raises_the_thresholds(
    tmp_path: Path,
) -> None:
    env = service_env(f"sqlite:///{tmp_path}/db.sqlite3", "powercontext.settings.test")
    out = manage(env, "shell", "-c", REPORT)
    thresholds, frozen = json.loads(out.splitlines()[-1])

    assert thresholds == [50_000, 10, 10]
    # Django, DRF, pydantic and the service's modules: well over 100,000 objects.
    assert frozen > 100_000
