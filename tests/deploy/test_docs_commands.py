"""The commands and settings the documentation names exist, and run as written.

- Every ``manage.py`` line in a ``sh`` block of README.md, docs/deploying.md,
  docs/operations.md and docs/migrating.md names a command ``manage.py help`` lists, with arguments its
  parser accepts; every ``manage.py NAME`` in their prose names a command.
- The ``manage.py`` lines of operations.md run, in order, against a fresh database
  with an env file (the placeholders they contain are refused, by name).
- Every ``make`` line of README.md names a target (``make -n``).
- Every variable the settings, the launcher (``powercontext.serve``) and the WSGI
  entry point read, and every variable of
  ``.env.example``, is in operations.md's configuration table.
- docs/api.md's evidence example answers as the page says.
- No document shows a bare ``manage.py X ...`` command (a bare ``python`` or
  ``manage.py`` has no Django): every command names the virtual environment's Python.
- deploying.md and operations.md name one minimum PostgreSQL version, and the test
  server is at least that.
(docs/deploying.md runs whole in test_deploying.py, docs/migrating.md's first three
sections in test_migrating.py.)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from tests.conftest import ApiClient
from tests.deploy.runbook import sh_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    ROOT / "docs" / "deploying.md",
    ROOT / "docs" / "operations.md",
    ROOT / "docs" / "migrating.md",
]
MANAGE_LINE = re.compile(r"manage\.py ([^|)#]*)")


def manage_lines() -> list[tuple[str, str]]:
    """(document, the arguments after ``manage.py``) for every sh line."""
    return [
        (doc.name, match.group(1).strip())
        for doc in DOCS
        for block in sh_blocks(doc)
        for line in block.lines
        for match in MANAGE_LINE.finditer(line)
        # manage.py's own option (tests/api/test_version.py runs it), not a command.
        if match.group(1).strip() != "--version"
    ]


def test_the_documents_have_manage_py_lines() -> None:
    assert {doc for doc, _ in manage_lines()} == {
        "deploying.md",
        "operations.md",
        "migrating.md",
    }


@pytest.mark.parametrize(("document", "arguments"), manage_lines())
def test_each_manage_py_line_names_a_command_and_parses(
    document: str, arguments: str
) -> None:
    name, *args = shlex.split(arguments)
    command = load_command_class(get_commands()[name], name)

    command.create_parser("manage.py", name).parse_args(args)


def test_each_manage_py_command_in_the_prose_exists() -> None:
    named = {
        name
        for doc in DOCS
        for name in re.findall(r"manage\.py ([a-z_]+)", doc.read_text())
    }
    listed = subprocess.run(
        [sys.executable, "manage.py", "help", "--commands"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "powercontext.settings.test"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    assert named
    assert named <= set(listed), named - set(listed)


OPERATIONS_OUTCOMES = {
    "createtoken --name ci-bot --grant '*:contributor'": "",
    "createtoken --name reader --grant scp_0123...:viewer --expires-in-days 30": (
        "CommandError: No scope 'scp_0123...': grant an existing scope id, or '*' "
        "for every scope."
    ),
    "revoketoken pct_AbCdEfGh": "CommandError: No token has the prefix 'pct_AbCdEfGh'.",
    "prune_envelope_revisions": "",
    "purge_working_notes --older-than 30d --dry-run": "",
    "purge_working_notes --older-than 30d": "",
    "export_scope scp_0123... --output /srv/backup/scope.ndjson": (
        "CommandError: No scope 'scp_0123...' here."
    ),
    "verify_bundle /srv/backup/scope.ndjson": (
        "CommandError: /srv/backup/scope.ndjson cannot be read "
        "(No such file or directory)."
    ),
    "import_bundle /srv/backup/scope.ndjson --dry-run": (
        "CommandError: /srv/backup/scope.ndjson cannot be read "
        "(No such file or directory)."
    ),
    "import_bundle /srv/backup/scope.ndjson": (
        "CommandError: /srv/backup/scope.ndjson cannot be read "
        "(No such file or directory)."
    ),
}


def test_the_manage_py_lines_of_operations_md_run(tmp_path: Path) -> None:
    """Run in a shell as written, with the env file of a server exported."""
    env_file = tmp_path / "powercontext.env"
    env_file.write_text(
        "DJANGO_SETTINGS_MODULE=powercontext.settings.production\n"
        f"DJANGO_SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"DATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'}\n"
    )
    env = {"PATH": os.environ["PATH"], "POWERCONTEXT_ENV_FILE": str(env_file)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    lines = [
        line
        for block in sh_blocks(ROOT / "docs" / "operations.md")
        for line in block.lines
        if "manage.py" in line
    ]
    outcomes = {}
    for line in lines:
        result = subprocess.run(
            ["/bin/bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True
        )
        arguments = MANAGE_LINE.search(line).group(1).strip()  # type: ignore[union-attr]
        outcomes[arguments] = (
            result.stderr.strip().splitlines()[-1] if result.returncode else ""
        )

    assert outcomes == OPERATIONS_OUTCOMES


def test_each_make_line_of_the_readme_names_a_target() -> None:
    targets = [
        shlex.split(line)[1]
        for block in sh_blocks(ROOT / "README.md")
        for line in block.lines
        if line.startswith("make ")
    ]
    dry_runs = [
        subprocess.run(
            ["make", "-n", target], cwd=ROOT, capture_output=True, text=True
        ).returncode
        for target in targets
    ]

    assert targets == ["run", "test", "test-browser"]
    assert dry_runs == [0, 0, 0]


def documented_variables() -> set[str]:
    text = (ROOT / "docs" / "operations.md").read_text()
    table = text[text.index("| variable | default | meaning |") :]
    table = table[: table.index("\n\n")]
    return set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))


def variables_read() -> set[str]:
    sources = [
        *sorted((ROOT / "powercontext" / "settings").glob("*.py")),
        ROOT / "powercontext" / "shape.py",
        ROOT / "powercontext" / "serve.py",
        ROOT / "powercontext" / "wsgi.py",
    ]
    pattern = re.compile(
        r"""(?:env\.\w+|environ\.get|environ\.setdefault|os\.environ\.get)\(\s*"([A-Z][A-Z0-9_]+)"|"""
        r"""^[A-Z_]+(?:VARIABLE|MARKER) = "([A-Z][A-Z0-9_]+)"$""",
        re.MULTILINE,
    )
    return {
        name
        for path in sources
        for match in pattern.finditer(path.read_text())
        for name in match.groups()
        if name
    }


def test_every_variable_the_code_reads_is_documented() -> None:
    read = variables_read()

    assert {"DATABASE_URL", "POWERCONTEXT_BIND", "POWERCONTEXT_ENV_FILE"} <= read
    assert read <= documented_variables(), read - documented_variables()


def test_every_variable_of_the_env_example_is_documented() -> None:
    example = set(
        re.findall(
            r"^#? ?([A-Z][A-Z0-9_]+)=",
            (ROOT / ".env.example").read_text(),
            re.MULTILINE,
        )
    )

    assert "DJANGO_SECRET_KEY" in example
    assert example <= documented_variables(), example - documented_variables()


@pytest.mark.django_db
def test_the_evidence_example_of_api_md_answers_as_documented(api: ApiClient) -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    section = text[text.index("### `POST /v1/scopes/{scope_id}/evidence/resolve`") :]
    request = json.loads(section.split("```json\n")[1].split("```")[0])
    scope_id = api.post(
        "/v1/scopes", {"title": "t", "summary": "s", "idempotency_key": "k"}
    ).json()["scope_id"]
    api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": scope_id,
            "source_id": "wn-1",
            "content": "a note",
            "session_id": "s",
            "note_kind": "inspection",
        },
    )
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "c-9", "content": "the text of c-9 today"},
    )

    response = api.post(f"/v1/scopes/{scope_id}/evidence/resolve", request)

    assert response.status_code == 200, response.content
    assert [
        (item["status"], item["reason"], item["working_note"])
        for item in response.json()["items"]
    ] == [("available", None, True), ("unavailable", "digest_mismatch", False)]


EVERY_DOC = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BARE_COMMAND = re.compile(r"(?<![\w/.])(?:`|^)(manage\.py [^`\n]+\s[^`\n]*)`?", re.M)


@pytest.mark.parametrize("doc", EVERY_DOC, ids=lambda doc: doc.name)
def test_no_document_shows_a_bare_manage_py_command(doc: Path) -> None:
    """``manage.py NAME ARGS`` to type must read ``.venv/bin/python manage.py ...``;
    ``manage.py NAME`` alone names a command and may stay bare."""
    bare = [match.group(1) for match in BARE_COMMAND.finditer(doc.read_text())]

    assert bare == []


MINIMUM_POSTGRESQL = re.compile(r"(?:PostgreSQL|Version) (\d+) or newer")


@pytest.mark.django_db
def test_one_minimum_postgresql_version_and_the_tests_run_on_it() -> None:
    from django.db import connection

    stated = {
        doc.name: MINIMUM_POSTGRESQL.findall(doc.read_text())
        for doc in (ROOT / "docs" / "deploying.md", ROOT / "docs" / "operations.md")
    }
    [[minimum], [also]] = stated.values()

    assert minimum == also, stated
    assert connection.vendor != "postgresql" or (
        connection.pg_version // 10000 >= int(minimum)
    )
