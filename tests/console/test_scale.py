"""Every console page answers within 300 ms with a million Sources (PostgreSQL).

The registry is seeded and committed (``seed.py``: a million Sources in one scope
and their attempts, one to two minutes on a small machine), a few envelopes,
revisions and a committed handoff are written through the API, and then every
page the console has (``pages.py``) is fetched over HTTP from a live server as a
logged-in staff user: once to warm up, then five times, the best compared with
the budget. The figures (best and median) are written to
``var/console-timings.txt``. A page whose query runs past the database's
statement timeout (set for this test) counts as that long.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection, transaction
from django.test import Client

from sources.models import ContentSource
from tests.conftest import ApiClient
from tests.handoffs.helpers import capture, committed, draft, note, sc
from tests.sessions_app.conftest import session_path

from .pages import console_pages
from .seed import registry_seed

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.console,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(1200),
]

SOURCES = 1_000_000
BUDGET_SECONDS = 0.300
SCOPE = "scp_scale0000000000000000"
STATEMENT_TIMEOUT_SECONDS = 5
REPORT = Path(__file__).resolve().parents[2] / "var" / "console-timings.txt"


@pytest.fixture
def registry(api: ApiClient) -> str:
    with transaction.atomic():
        registry_seed(scope_id=SCOPE, count=SOURCES)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE sources_contentsource, sources_captureattempt")
    capture(api, SCOPE, "fresh/one")
    note(api, SCOPE, "fresh-note")
    for session in ("sess-a", "sess-b"):
        for turn in range(3):
            response = api.put(session_path(SCOPE, session), {"meta": {"x-turn": turn}})
            assert response.status_code in {200, 201}, response.content
    committed(
        api,
        SCOPE,
        draft([sc("fresh/one"), sc("src-5")], next_action=[sc("fresh-note")]),
    )
    return SCOPE


@pytest.fixture
def statement_timeout() -> Iterator[None]:
    """New connections of the test database (the live server's) time out."""
    name = connection.ops.quote_name(connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute(
            f"ALTER DATABASE {name} SET statement_timeout = "
            f"'{STATEMENT_TIMEOUT_SECONDS}s'"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER DATABASE {name} RESET statement_timeout")


def _timings(browser: httpx.Client, url: str) -> list[float]:
    """Five fetches after a warm-up, in seconds."""
    timings = []
    for attempt in range(6):
        started = time.perf_counter()
        response = browser.get(url)
        elapsed = time.perf_counter() - started
        if response.status_code != 200 and elapsed >= STATEMENT_TIMEOUT_SECONDS:
            return [elapsed]
        assert response.status_code == 200, (url, response.status_code)
        if attempt:
            timings.append(elapsed)
    return timings


def test_every_console_page_answers_within_budget_at_a_million_sources(
    live_server: Any, admin_user: Any, registry: str, statement_timeout: None
) -> None:
    assert connection.vendor == "postgresql"
    middle = ContentSource.objects.get(
        scope_id=registry, source_id=f"src-{SOURCES // 2}"
    )
    pages = console_pages(admin_user, {ContentSource: middle})
    # A scope's Sources and attempts, as the scope's page links them.
    pages += [
        f"/admin/sources/contentsource/?scope__exact={registry}",
        f"/admin/sources/contentsource/?scope__exact={registry}"
        "&is_working_note__exact=1&state=expired",
        f"/admin/sources/captureattempt/?scope__exact={registry}",
        f"/admin/sources/captureattempt/?scope__exact={registry}"
        f"&source_type__exact=content&source_id__exact=src-{SOURCES // 2}",
    ]
    login = Client()
    login.force_login(admin_user)
    session = {"sessionid": login.cookies["sessionid"].value}

    with httpx.Client(base_url=live_server.url, cookies=session, timeout=60) as browser:
        timings = {url: _timings(browser, url) for url in pages}

    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(
        "   best  median  page\n"
        + "".join(
            f"{min(t) * 1000:7.1f} {statistics.median(t) * 1000:7.1f}  {url}\n"
            for url, t in timings.items()
        )
    )
    # The best of five is the page's own cost; on a shared machine the others
    # add waiting for a CPU, never take away work.
    slow = {
        url: round(min(t) * 1000)
        for url, t in timings.items()
        if min(t) > BUDGET_SECONDS
    }
    assert len(pages) > 40
    assert not slow, f"over {BUDGET_SECONDS * 1000:.0f} ms (see {REPORT}): {slow}"
