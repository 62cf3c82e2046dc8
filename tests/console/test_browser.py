"""The admin audit console in a real browser (Chromium driven by Playwright).

A staff user logs in to a live server and does what an operator does: filters
Sources by scope, working note and state; finds an exact source id (one with a
``/``, one with non-ASCII characters); opens a Source and reads its note fields
and attempt history; walks an envelope's revisions and a scope's handoff
revisions; finds no control that adds, changes or deletes anything, and sees a POST
to a change URL refused. A long content wraps inside the page. Every page visited
is saved under ``var/screenshots/``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.utils import timezone

from sessions_app.models import SessionEnvelope
from sources.models import CaptureAttempt, ContentSource
from tests.conftest import ApiClient, create_scope
from tests.handoffs.helpers import committed, draft, sc
from tests.sessions_app.conftest import session_path

pytestmark = [pytest.mark.console, pytest.mark.django_db(transaction=True)]

SLASHED = "src/parser/lexer.py"
UNICODE = "naïve-Ünïcode-源"
NOTE = "note/expiring"
LONG = "long-note"
PASSWORD = "console-Pa55word"
UNBROKEN = "x" * 600
LONG_CONTENT = (
    "A long working note that an operator must read in full. " * 60
) + UNBROKEN
Shot = Callable[[Any, str], Path]


def _capture(api: ApiClient, scope_id: str, source_id: str, content: str) -> int:
    body = {"scope_id": scope_id, "source_id": source_id, "content": content}
    return int(api.post("/v1/sources/content", body).status_code)


def _note(
    api: ApiClient, scope_id: str, source_id: str, content: str, expires_at: Any
) -> int:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": content,
        "session_id": "sess-console",
        "note_kind": "validation",
        "expires_at": expires_at and expires_at.isoformat(),
    }
    return int(api.post("/v1/sources/working-notes", body).status_code)


@pytest.fixture
def registry(api: ApiClient, django_user_model: Any) -> dict[str, str]:
    django_user_model.objects.create_user(
        "auditor", password=PASSWORD, is_staff=True, is_superuser=True
    )
    scope_id = create_scope(api, key="console")
    other = create_scope(api, key="other")
    soon = timezone.now() + timedelta(seconds=2)
    statuses = [
        _capture(api, scope_id, SLASHED, "first version"),
        _capture(api, scope_id, SLASHED, "first version"),  # replayed
        _capture(api, scope_id, SLASHED, "a different text"),  # conflict
        _capture(api, scope_id, UNICODE, "ünïcödé content"),
        _capture(api, other, "only-in-other", "elsewhere"),
        _note(api, scope_id, NOTE, "expires in two seconds", soon),
        _note(api, scope_id, LONG, LONG_CONTENT, None),
        _note(api, scope_id, "rejected-note", "already expired", timezone.now()),
    ]
    assert statuses == [202, 202, 409, 202, 202, 202, 202, 422]
    for turn in range(3):
        response = api.put(
            session_path(scope_id, "sess-console"), {"meta": {"x-turn": turn}}
        )
        assert response.status_code in {200, 201}, response.content
    committed(api, scope_id, draft([sc(SLASHED)], objective="First handoff"))
    committed(api, scope_id, draft([sc(UNICODE)], objective="Second handoff"))
    return {"scope": scope_id, "other": other}


def _login(page: Any, base: str) -> None:
    page.goto(f"{base}/admin/")
    page.fill("#id_username", "auditor")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")


def _opening(page: Any, action: Callable[[], None]) -> None:
    """Do what opens another page, and wait until that page has loaded.

    A click on a link or an Enter in a form starts the navigation and returns: a read
    right after it may still see the page before (an empty list where the next page
    has rows). Waiting for the next ``load`` event, armed before the action, cannot
    miss it.
    """
    with page.expect_event("load"):
        action()


def _listed(page: Any, column: str = "source_id") -> list[str]:
    return sorted(page.locator(f"#result_list td.field-{column}").all_inner_texts())


def _no_write_controls(page: Any) -> None:
    """No visible add link, save or delete button or bulk action on this page (the
    navigation sidebar is checked on the index: it links other apps' models)."""
    for selector in (
        "a.addlink",
        "a.deletelink",
        "input[type=submit][name^=_save]",
        "input[name=_continue]",
        "input[name=_addanother]",
        "select[name=action]",
        "input[type=checkbox].action-select",
    ):
        found = page.locator(f"#content {selector} >> visible=true")
        assert found.count() == 0, (
            page.url,
            [found.nth(i).evaluate("e => e.outerHTML") for i in range(found.count())],
        )
    assert page.locator("form#contentsource_form input:not([type=hidden])").count() == 0


def _filter(page: Any, title: str, choice: str) -> None:
    link = page.locator(f'details[data-filter-title="{title}"] a', has_text=choice)
    _opening(page, link.first.click)


def test_operator_filters_sources_by_scope_working_note_and_state(
    live_server: Any, page: Any, screenshot: Shot, registry: dict[str, str]
) -> None:
    _login(page, live_server.url)
    screenshot(page, "01-index")
    for app in ("sources", "sessions_app", "handoffs"):
        rows = page.locator(f"#content-main .app-{app} tbody tr")
        assert rows.count() > 1
        assert rows.locator("a.addlink, a.changelink").count() == 0
        assert rows.locator("a.viewlink").count() == rows.count()
    page.goto(
        f"{live_server.url}/admin/sources/scope/{quote(registry['scope'])}/change/"
    )
    screenshot(page, "02-scope")
    _opening(page, lambda: page.click("text=Sources of this scope"))
    assert _listed(page) == sorted([SLASHED, UNICODE, NOTE, LONG])
    _no_write_controls(page)

    _filter(page, "is working note", "Yes")
    assert _listed(page) == sorted([NOTE, LONG])
    page.wait_for_timeout(2_500)  # NOTE's expiry passes
    _filter(page, "state", "expired")
    screenshot(page, "03-sources-notes-expired")

    assert _listed(page) == [NOTE]
    assert "scope__exact" in page.url
    assert "is_working_note__exact=1" in page.url
    _filter(page, "state", "active")
    assert _listed(page) == [LONG]


@pytest.mark.parametrize(
    ("term", "shot"), [(SLASHED, "04-slash"), (UNICODE, "05-unicode")]
)
def test_operator_finds_an_exact_source_id_and_reads_its_history(
    live_server: Any,
    page: Any,
    screenshot: Shot,
    registry: dict[str, str],
    term: str,
    shot: str,
) -> None:
    _login(page, live_server.url)
    page.goto(f"{live_server.url}/admin/sources/contentsource/")
    page.fill("#searchbar", term[:-1])  # exact: a prefix finds nothing
    _opening(page, lambda: page.press("#searchbar", "Enter"))
    assert _listed(page) == []
    page.fill("#searchbar", term)
    _opening(page, lambda: page.press("#searchbar", "Enter"))
    screenshot(page, f"{shot}-search")
    assert _listed(page) == [term]

    page.locator("#result_list tbody th a").first.click()
    page.wait_for_selector("div.field-attempt_history")
    screenshot(page, f"{shot}-detail")
    _no_write_controls(page)
    history = page.locator(
        "table.attempt-history tbody tr td:nth-child(2)"
    ).all_inner_texts()
    expected = CaptureAttempt.objects.filter(scope_id=registry["scope"], source_id=term)
    assert history == list(expected.order_by("-id").values_list("outcome", flat=True))
    assert history[-1] == "accepted"

    _opening(page, lambda: page.click("text=every attempt on this identity"))
    assert _listed(page) == [term] * len(history)


def test_operator_reads_note_fields_and_a_long_content_wraps(
    live_server: Any, page: Any, screenshot: Shot, registry: dict[str, str]
) -> None:
    _login(page, live_server.url)
    pk = ContentSource.objects.get(source_id=LONG).pk
    page.goto(f"{live_server.url}/admin/sources/contentsource/{pk}/change/")
    screenshot(page, "06-long-note")

    fields = {
        name: page.locator(f"div.field-{name} div.readonly").inner_text()
        for name in ("session_id", "note_kind", "source_id")
    }
    assert fields == {
        "session_id": "sess-console",
        "note_kind": "Validation",
        "source_id": LONG,
    }
    assert page.locator("div.field-is_working_note img[alt=True]").count() == 1
    content = page.locator("div.field-pretty_content pre")
    assert UNBROKEN in content.inner_text()
    box = content.bounding_box()
    width = page.evaluate("document.documentElement.clientWidth")
    assert box["x"] + box["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert box["height"] > 100  # wrapped onto many lines, not cut off


def test_operator_walks_envelope_and_handoff_revisions(
    live_server: Any, page: Any, screenshot: Shot, registry: dict[str, str]
) -> None:
    _login(page, live_server.url)
    page.goto(f"{live_server.url}/admin/sessions_app/sessionenvelope/")
    page.locator("#result_list tbody th a").first.click()
    page.wait_for_selector("div.field-stored_meta")
    assert '"x-turn": 2' in page.locator("div.field-stored_meta").inner_text()
    screenshot(page, "07-envelope")
    _no_write_controls(page)
    _opening(page, lambda: page.click("text=revisions of this envelope"))
    screenshot(page, "08-envelope-revisions")
    assert _listed(page, "version") == ["1", "2", "3"]
    page.locator("#result_list tbody th a").last.click()
    assert '"x-turn": 0' in page.locator("div.field-meta").inner_text()

    page.goto(f"{live_server.url}/admin/handoffs/handoffrevision/")
    assert _listed(page, "short_objective") == ["First handoff", "Second handoff"]
    _no_write_controls(page)
    page.locator("#result_list tbody th a").first.click()
    screenshot(page, "09-handoff-revision")
    assert "Second handoff" in page.locator("div.field-objective").inner_text()
    _no_write_controls(page)


@pytest.mark.parametrize("action", ["change", "delete"])
def test_a_post_to_a_change_url_is_refused(
    live_server: Any, page: Any, registry: dict[str, str], action: str
) -> None:
    _login(page, live_server.url)
    source = ContentSource.objects.get(source_id=SLASHED)
    envelope = SessionEnvelope.objects.get()
    urls = [
        f"/admin/sources/contentsource/{source.pk}/{action}/",
        f"/admin/sessions_app/sessionenvelope/{envelope.pk}/{action}/",
    ]
    page.goto(f"{live_server.url}{urls[0]}")
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")

    statuses = [
        page.request.post(
            f"{live_server.url}{url}",
            form={"csrfmiddlewaretoken": token, "post": "yes", "source_id": "changed"},
            headers={"Referer": f"{live_server.url}{url}"},
        ).status
        for url in urls
    ]

    assert statuses == [403, 403]
    assert ContentSource.objects.filter(pk=source.pk, source_id=SLASHED).exists()
    assert SessionEnvelope.objects.filter(pk=envelope.pk, version=3).exists()
