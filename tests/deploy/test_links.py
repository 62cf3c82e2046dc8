"""Every link in the documentation resolves inside the repository.

A clone holds only the repository: a link (or a file named in a docstring or
comment) to a file outside it is a dead end for its reader. Links of README.md,
CHANGELOG.md and docs/ must name files of the repository (and, with ``#anchor``,
a heading of the linked page); every file a Python module's docstrings and
comments name exists; no file outside tests/ refers to the internal
``spec/`` or ``../shared/`` documents the service was built from, and no page
speaks of "issue N" or "the seed" (words only the service's authors can look up).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
EXTERNAL = ("http://", "https://", "mailto:")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(title) for title in HEADING.findall(FENCE.sub("", page.read_text()))}


def _links(document: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", document.read_text()))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_link_resolves_inside_the_repository(document: Path) -> None:
    dead = []
    for link in _links(document):
        if link.startswith(EXTERNAL):
            continue
        target, _, anchor = link.partition("#")
        page = (document.parent / target).resolve() if target else document
        inside = page.is_relative_to(ROOT) and page.exists()
        if not inside or (
            anchor and page.suffix == ".md" and anchor not in _anchors(page)
        ):
            dead.append(link)

    assert dead == []


FILE_NAMED = re.compile(
    r"`((?:\.\./)?[\w.-]+(?:/[\w.-]+)+\.(?:md|py|sh|conf|service|toml|lua|json))`"
)
# Where a page names a file: from the root, from the page, or inside the project
# package (``api/errors.py``). Only names that start in the repository count (not
# a host's ``.cursor/mcp.json``); var/ holds what the service and the tests write.
BASES = (ROOT, ROOT / "powercontext")
TOP_LEVEL = {
    path.name for path in (*ROOT.iterdir(), *(ROOT / "powercontext").iterdir())
}
HISTORY = ("decisions", "CHANGELOG.md")


@pytest.mark.parametrize(
    "document",
    [doc for doc in DOCUMENTS if not {doc.parent.name, doc.name} & set(HISTORY)],
    ids=lambda path: path.name,
)
def test_every_file_a_page_names_exists(document: Path) -> None:
    """Decision records and the changelog are left out: they name files that a
    change removed."""
    missing = [
        name
        for name in FILE_NAMED.findall(document.read_text())
        if name.split("/")[0] in TOP_LEVEL - {"var"}
        and "NNNN" not in name
        and not any((base / name).exists() for base in (*BASES, document.parent))
    ]

    assert missing == []


def test_the_documents_have_links() -> None:
    assert sum(len(_links(document)) for document in DOCUMENTS) > 20


INTERNAL_WORDS = re.compile(r"\b(?:issue \d+|the seed\b|seed's)", re.I)


@pytest.mark.parametrize(
    "document",
    [doc for doc in DOCUMENTS if not {doc.parent.name, doc.name} & set(HISTORY)],
    ids=lambda path: path.name,
)
def test_no_page_speaks_of_internal_issues_or_the_seed(document: Path) -> None:
    """A stranger cannot look up "issue 11" or "the seed": say what they stand for.
    (Decision records and the changelog were cleaned once; they are history.)"""
    assert INTERNAL_WORDS.findall(document.read_text()) == []


def test_no_code_comment_or_docstring_speaks_of_internal_issues_or_the_seed() -> None:
    """The same for every file a reader of the code meets (modules, tests, bench/,
    deploy/, the Makefile, the TypeScript client): "issue 30's target" says
    nothing to someone holding only the repository. (This file names the words.)"""
    found = [
        f"{name}: {words}"
        for name in _tracked()
        if not name.startswith("docs/decisions/")
        and name not in ("CHANGELOG.md", "tests/deploy/test_links.py")
        and (ROOT / name).is_file()
        and (words := INTERNAL_WORDS.findall((ROOT / name).read_text(errors="replace")))
    ]

    assert found == []


INTERNAL = re.compile(r"(?<![\w.-])spec/|\.\./shared")


def test_nothing_outside_tests_refers_to_the_internal_documents() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = [
        name
        for name in tracked
        if not name.startswith("tests/")
        and (ROOT / name).is_file()
        and INTERNAL.search((ROOT / name).read_text(errors="replace"))
    ]

    assert found == []


def _tracked() -> list[str]:
    return subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


CODE_NAMES = re.compile(
    r"(?<![\w./:-])((?:\.\./)?[\w.-]+(?:/[\w.-]+)+"
    r"\.(?:md|py|sh|conf|service|toml|lua|json|ya?ml|txt|html))\b"
)
CODE = [
    ROOT / name
    for name in _tracked()
    if name.endswith(".py") and not name.startswith(("tests/", "clients/"))
]


@pytest.mark.parametrize("module", CODE, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_file_a_docstring_or_comment_names_exists(module: Path) -> None:
    """``docs/api.md``, ``sources/signals.py``, ``api/errors.py``: a name that
    starts in the repository (var/ holds what the service writes) is a file of
    it, from the root, the project package or the module's own folder. A path
    with a placeholder in capitals (``bench/results/RUN/...``) is an example."""
    missing = [
        name
        for name in CODE_NAMES.findall(module.read_text())
        if name.split("/")[0] in TOP_LEVEL - {"var"}
        and not any(part.isupper() for part in name.split("/"))  # a placeholder
        and not any((base / name).exists() for base in (*BASES, module.parent))
    ]

    assert missing == []


def test_the_code_names_files() -> None:
    assert sum(len(CODE_NAMES.findall(path.read_text())) for path in CODE) > 50
