"""docs/deploying.md, "2. The database": a password with URL characters, percent-
encoded by the page's command, reaches PostgreSQL as it was written."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from powercontext.settings.databases import database_from_env
from tests.deploy.deployment import DOC

# The page's one-liner, as printed (its interpreter path replaced by ours).
ENCODE = re.compile(
    r"^/srv/powercontext/\.venv/bin/python (-c '[^']+') 'p@ss/word'$", re.M
)


def _encoded(password: str) -> str:
    match = ENCODE.search(DOC.read_text())
    assert match, "deploying.md no longer shows the encoding command"
    code = match.group(1).removeprefix("-c '").removesuffix("'")
    done = subprocess.run(
        [sys.executable, "-c", code, password],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.rstrip("\n")


def test_the_page_s_example_encodes_as_it_says() -> None:
    assert _encoded("p@ss/word") == "p%40ss%2Fword"
    assert "(`p@ss/word` is `p%40ss%2Fword`)" in DOC.read_text()


@pytest.mark.parametrize(
    "password", ["p@ss/word", "a:b%c#d?e f", "p%40ss", "+plus&amp=eq", "ünï©ode"]
)
def test_an_encoded_password_is_read_back_whole(password: str) -> None:
    url = f"postgres://powercontext:{_encoded(password)}@db.example.net:5432/pc"

    config = database_from_env(url)

    assert (config["USER"], config["PASSWORD"]) == ("powercontext", password)
    assert (config["HOST"], config["PORT"], config["NAME"]) == (
        "db.example.net",
        5432,
        "pc",
    )
