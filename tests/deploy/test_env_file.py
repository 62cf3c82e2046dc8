"""One environment for everything: the env file reaches every entry point.

``manage.py``, the settings and the launcher (``powercontext.serve``) read the file
named by ``POWERCONTEXT_ENV_FILE`` (default ``.env`` at the root); the process
environment wins; a command that falls back to the local settings says so in one
line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from powercontext.settings import envfile
from tests.deploy import settings_walk
from tests.deploy.test_docs_commands import variables_read

ROOT = Path(__file__).resolve().parents[2]
SECRET = "env-file-test-" + "k" * 50
SHOW = (
    "from django.conf import settings; "
    "print(settings.SETTINGS_MODULE, settings.POWERCONTEXT_CURSOR_TTL, "
    "settings.DATABASES['default']['NAME'])"
)


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "powercontext.env"
    path.write_text(
        "# a production env file\n"
        "DJANGO_SETTINGS_MODULE=powercontext.settings.production\n"
        f"DJANGO_SECRET_KEY={SECRET}\n"
        f"DATABASE_URL=sqlite:///{tmp_path / 'from-file.sqlite3'}\n"
        "POWERCONTEXT_CURSOR_TTL=123\n"
    )
    return path


def test_a_command_sees_the_env_file(env_file: Path, tmp_path: Path) -> None:
    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "shell", "-c", SHOW)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"powercontext.settings.production 123 {tmp_path / 'from-file.sqlite3'}"
    )
    assert result.stderr == ""


def test_the_process_environment_wins_over_the_file(env_file: Path) -> None:
    result = manage(
        {"POWERCONTEXT_ENV_FILE": str(env_file), "POWERCONTEXT_CURSOR_TTL": "7"},
        "shell",
        "-c",
        SHOW,
    )

    assert result.stdout.splitlines()[-1].split()[1] == "7"


def test_a_named_env_file_that_is_missing_stops_the_command(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.env"

    result = manage({"POWERCONTEXT_ENV_FILE": str(missing)}, "check")

    assert result.returncode == 1
    assert result.stderr == (
        f"manage.py: Cannot read the env file {missing} (No such file or "
        "directory); set POWERCONTEXT_ENV_FILE to a readable file, or to '' to "
        "read none.\n"
    )


def test_the_local_fallback_is_announced_in_one_line(tmp_path: Path) -> None:
    result = manage({"POWERCONTEXT_ENV_FILE": ""}, "check")

    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        "manage.py: using the local settings and the SQLite database "
        f"{ROOT / 'var' / 'powercontext.sqlite3'}: DJANGO_SETTINGS_MODULE is set "
        "neither in the environment nor in an env file (POWERCONTEXT_ENV_FILE is "
        "empty); on a server set POWERCONTEXT_ENV_FILE (docs/deploying.md).\n"
    )


def test_the_announcement_names_the_env_file_it_read(tmp_path: Path) -> None:
    env_file = tmp_path / "local.env"
    env_file.write_text(f"DATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'}\n")

    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "check")

    assert result.stderr == (
        "manage.py: using the local settings and the DATABASE_URL of the "
        "environment: DJANGO_SETTINGS_MODULE is set neither in the environment "
        f"nor in {env_file}; on a server set POWERCONTEXT_ENV_FILE "
        "(docs/deploying.md).\n"
    )


def test_the_settings_module_from_the_file_means_no_announcement(
    env_file: Path,
) -> None:
    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "check")

    assert (result.returncode, result.stderr) == (0, "")


# --- env_file_read, in this process ----------------------------------------------------


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("PC_TEST_A", "PC_TEST_B", "PC_TEST_C", envfile.FROM_FILE_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_reading_again_follows_the_file_but_not_over_the_environment(
    tmp_path: Path, clean_environ: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env"
    clean_environ.setenv("POWERCONTEXT_ENV_FILE", str(path))
    clean_environ.setenv("PC_TEST_B", "from the environment")
    path.write_text("PC_TEST_A=1\nPC_TEST_B=file\n")
    envfile.env_file_read()
    path.write_text("PC_TEST_A=2\nPC_TEST_B=file\nPC_TEST_C=3\n")
    envfile.env_file_read()
    second = [os.environ.get(name) for name in ("PC_TEST_A", "PC_TEST_B", "PC_TEST_C")]
    path.write_text("PC_TEST_C=4\n")
    envfile.env_file_read()
    third = [os.environ.get(name) for name in ("PC_TEST_A", "PC_TEST_B", "PC_TEST_C")]

    assert second == ["2", "from the environment", "3"]
    assert third == [None, "from the environment", "4"]


@pytest.fixture
def default_env_file(tmp_path: Path, clean_environ: pytest.MonkeyPatch) -> Path:
    """Where the default ``.env`` would be (not created); no file named."""
    default = tmp_path / ".env"
    clean_environ.setattr(envfile, "DEFAULT_ENV_FILE", default)
    clean_environ.delenv("POWERCONTEXT_ENV_FILE", raising=False)
    return default


def test_the_default_is_dotenv_at_the_root_when_it_exists(
    default_env_file: Path,
) -> None:
    default_env_file.write_text("")

    assert envfile.env_file_path() == default_env_file


def test_without_dotenv_no_file_is_read(default_env_file: Path) -> None:
    assert envfile.env_file_path() is None


def test_an_empty_name_reads_no_file_even_with_dotenv(
    default_env_file: Path, clean_environ: pytest.MonkeyPatch
) -> None:
    default_env_file.write_text("")
    clean_environ.setenv("POWERCONTEXT_ENV_FILE", "")

    assert envfile.env_file_path() is None


def test_a_named_file_is_read_instead_of_dotenv(
    default_env_file: Path, clean_environ: pytest.MonkeyPatch
) -> None:
    default_env_file.write_text("")
    clean_environ.setenv("POWERCONTEXT_ENV_FILE", "/etc/powercontext/other.env")

    assert envfile.env_file_path() == Path("/etc/powercontext/other.env")


def test_inline_comments_are_read_as_a_shell_reads_them(
    env_file: Path, tmp_path: Path
) -> None:
    env_file.write_text(
        env_file.read_text().replace(
            "POWERCONTEXT_CURSOR_TTL=123\n",
            "POWERCONTEXT_WORKERS=2 # two workers\n"
            "POWERCONTEXT_CURSOR_TTL=123   # seconds\n"
            "export POWERCONTEXT_ADMIN_PATH='con#sole/'  # quoted: '#' kept\n",
        )
    )
    show = (
        "from django.conf import settings; from powercontext import shape; "
        "print(shape.workers(), settings.POWERCONTEXT_CURSOR_TTL, "
        "settings.POWERCONTEXT_ADMIN_PATH)"
    )

    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "shell", "-c", show)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "2 123 con#sole/"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            "POWERCONTEXT_CURSOR_TTL=an hour",
            "POWERCONTEXT_CURSOR_TTL='an hour' is not valid",
        ),
        ("POWERCONTEXT_WORKERS=two", "POWERCONTEXT_WORKERS='two' is not valid"),
        (
            "POWERCONTEXT_AUTH_MODE=maybe",
            "POWERCONTEXT_AUTH_MODE: must be enforced or disabled.",
        ),
        (
            "POWERCONTEXT_RATE_LIMIT_LEASE_MAX=0",
            "POWERCONTEXT_RATE_LIMIT_LEASE_MAX='0' is not valid: must be 1..1000.",
        ),
        (
            "POWERCONTEXT_MAX_BODY_BYTES=-1",
            "POWERCONTEXT_MAX_BODY_BYTES='-1' is not valid: must be at least 1.",
        ),
        ("POWERCONTEXT_THREADS=0", "POWERCONTEXT_THREADS='0' is not valid"),
        (  # read as Python reads a float, not as 10.0
            "POWERCONTEXT_TOKEN_CACHE_SECONDS=10s",
            "POWERCONTEXT_TOKEN_CACHE_SECONDS='10s' is not valid",
        ),
    ],
)
def test_a_bad_value_names_the_file_the_line_and_the_variable(
    env_file: Path, line: str, problem: str
) -> None:
    env_file.write_text(env_file.read_text() + "\n" + line + "\n")
    number = env_file.read_text().splitlines().index(line) + 1
    check = (
        "from django.conf import settings; from powercontext import shape; "
        "settings.DEBUG; shape.workers()"
    )

    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "shell", "-c", check)

    assert result.returncode == 1
    assert f"{env_file}, line {number}: {problem}" in result.stderr.splitlines()[-1]


def test_a_bad_value_from_the_environment_says_so(env_file: Path) -> None:
    result = manage(
        {"POWERCONTEXT_ENV_FILE": str(env_file), "POWERCONTEXT_CURSOR_TTL": "x"},
        "check",
    )

    assert result.returncode == 1
    assert "the process environment: POWERCONTEXT_CURSOR_TTL='x'" in result.stderr


def test_a_line_that_is_no_assignment_names_the_file_and_the_line(
    env_file: Path,
) -> None:
    env_file.write_text(env_file.read_text() + 'POWERCONTEXT_THREADS="3\n')

    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "check")

    assert result.returncode == 1
    assert result.stderr.startswith(f"manage.py: {env_file}, line 6: not NAME=value")


def test_the_launcher_names_the_file_and_line_of_a_bad_value(env_file: Path) -> None:
    env_file.write_text(env_file.read_text() + "POWERCONTEXT_KEEPALIVE=soon # a typo\n")

    result = launcher_check(env_file)

    assert result.returncode != 0
    assert f"{env_file}, line 6: POWERCONTEXT_KEEPALIVE='soon' is not valid" in (
        result.stdout + result.stderr
    )


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("POWERCONTEXT_KEEPALIVE=0", "must be at least 1."),
        ("POWERCONTEXT_WORKER_MAX_RSS=-5", "must be at least 0."),
        ("POWERCONTEXT_WORKERS=0", "must be at least 1."),
        ("POWERCONTEXT_THREADS=-2", "must be at least 1."),
        ("POWERCONTEXT_MEMORY_BUDGET_BYTES=0", "must be at least 1."),
    ],
)
def test_the_launcher_refuses_an_out_of_range_size_naming_the_file_and_line(
    env_file: Path, line: str, problem: str
) -> None:
    env_file.write_text(env_file.read_text() + line + "\n")
    name, value = line.split("=")

    result = launcher_check(env_file)

    assert result.returncode != 0
    assert (
        f"{env_file}, line 6: {name}={value!r} is not valid: {problem}"
        in result.stdout + result.stderr
    )


def launcher_check(env_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "powercontext.serve", "--check"],
        cwd=env_file.parent,
        env={
            "PATH": os.environ["PATH"],
            "POWERCONTEXT_ENV_FILE": str(env_file),
            "PYTHONPATH": str(ROOT),  # the checkout under test (test_launcher.py)
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_missing_required_value_says_where_to_set_it(tmp_path: Path) -> None:
    env_file = tmp_path / "powercontext.env"
    env_file.write_text("DJANGO_SETTINGS_MODULE=powercontext.settings.production\n")

    result = manage({"POWERCONTEXT_ENV_FILE": str(env_file)}, "check")

    assert result.returncode == 1
    assert f"{env_file} (not set): DJANGO_SECRET_KEY: must be set" in result.stderr


# Read by powercontext/shape.py (the sizes the launcher and the settings share).
SHAPE_VARIABLES = {
    "POWERCONTEXT_WORKERS",
    "POWERCONTEXT_THREADS",
    "POWERCONTEXT_MEMORY_BUDGET_BYTES",
}
NOT_SETTINGS = {
    "POWERCONTEXT_ENV_FILE",  # names the file itself
    "POWERCONTEXT_ENV_FILE_KEYS",  # written by the reader
    "POWERCONTEXT_SERVE",  # written by the launcher
    "DJANGO_SETTINGS_MODULE",  # the module to load
}


def walk(value: str, names: set[str]) -> dict[str, str]:
    """Each of ``names`` set to ``value`` in turn: the refusals, by name."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.deploy.settings_walk", value, *sorted(names)],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    answers = json.loads(done.stdout)
    return {name: text for name, text in answers.items() if text is not None}


@pytest.mark.parametrize("value", ["bogus value", "-1", "postgres://x:y@h:port/db"])
def test_every_refused_value_names_the_file_the_line_and_the_variable(
    value: str,
) -> None:
    """Every variable the settings read, set to a bad value in the env file: each
    one refused says ``FILE, line N: NAME...`` in an ``ImproperlyConfigured``
    (no bare ``KeyError`` or ``ValueError`` from a parser, no refusal deferred to
    Django's setup where the variable's name is lost)."""
    refused = walk(value, (variables_read() | SHAPE_VARIABLES) - NOT_SETTINGS)

    unnamed = {
        name: text
        for name, text in refused.items()
        if not text.startswith("ImproperlyConfigured: ")
        or f".env, line {settings_walk.LINE}: {name}" not in text
    }
    assert unnamed == {}
    assert len(refused) >= 5  # the walk reaches the settings


# --- Ranges: every number the settings read has one -----------------------------------

_NUMBER_READ = re.compile(r'env\.(int|float)\(\s*"([A-Z][A-Z0-9_]+)"')
SETTINGS_SOURCES = [
    *sorted((ROOT / "powercontext" / "settings").glob("*.py")),
    ROOT / "powercontext" / "shape.py",
]


def numbers_read(kind: str | None = None) -> set[str]:
    """The variables the settings read as numbers (``int`` or ``float``: only
    those), with the shape's sizes; the launcher's are tested with the launcher."""
    read = {
        (found.group(1), found.group(2))
        for path in SETTINGS_SOURCES
        for found in _NUMBER_READ.finditer(path.read_text())
    } | {("int", name) for name in SHAPE_VARIABLES}
    return {name for found, name in read if kind in (None, found)}


# The numbers for which 0 means nothing useful: a size, a count of workers, threads
# or slots, a timeout where 0 would mean none at all (PostgreSQL's statement_timeout,
# libpq's connect_timeout) or an immediate failure (the pool's, the replica's).
ZERO_REFUSED = {
    "ACTIVE_SANDBOX_ID_MAX_BYTES",
    "ATTACHED_SKILLS_MAX_BYTES",
    "CWD_MAX_BYTES",
    "MODEL_MESSAGES_POINTER_MAX_BYTES",
    "PERSONA_ID_MAX_BYTES",
    "PERSONA_SNAPSHOT_MAX_BYTES",
    "POWERCONTEXT_CURSOR_TTL",
    "POWERCONTEXT_DB_CONNECT_TIMEOUT",
    "POWERCONTEXT_DB_POOL_MAX",
    "POWERCONTEXT_DB_POOL_TIMEOUT",
    "POWERCONTEXT_LARGE_BODY_BYTES",
    "POWERCONTEXT_LARGE_BODY_CONCURRENCY",
    "POWERCONTEXT_MAX_BODY_BYTES",
    "POWERCONTEXT_MAX_RESPONSE_BYTES",
    "POWERCONTEXT_MAX_SOURCE_BYTES",
    "POWERCONTEXT_MEMORY_BUDGET_BYTES",
    "POWERCONTEXT_RATE_LIMIT_LEASE_MAX",
    "POWERCONTEXT_REPLICA_TIMEOUT",
    "POWERCONTEXT_SEARCH_TIMEOUT_MS",
    "POWERCONTEXT_THREADS",
    "POWERCONTEXT_WORKERS",
    "SELECTED_MODEL_MAX_BYTES",
    "SESSION_META_MAX_BYTES",
    "STATUS_SLOT_MAX_BYTES",
    "TURN_RUN_ID_MAX_BYTES",
    "USAGE_MAX_BYTES",
    "WORKING_NOTES_MAX_BYTES",
}


@pytest.mark.parametrize(
    ("value", "kind", "problem"),
    [
        ("-1", None, "must be"),
        ("-0.5", "float", "must be"),
        ("nan", "float", "must be a finite number."),
        ("inf", "float", "must be a finite number."),
    ],
)
def test_every_number_refuses_a_value_out_of_its_range(
    value: str, kind: str | None, problem: str
) -> None:
    """No number the settings read takes a negative value (nor a float that is not
    finite): each is refused at start-up, naming the variable, the file and line."""
    names = numbers_read(kind)

    refused = walk(value, names)

    assert len(names) >= 30 if kind is None else len(names) >= 5
    assert {
        name: text
        for name, text in refused.items()
        if f".env, line {settings_walk.LINE}: {name}={value!r} is not valid: "
        f"{problem}" not in text
    } == {}
    assert set(refused) == names


def test_zero_is_refused_exactly_where_it_means_nothing() -> None:
    refused = walk("0", numbers_read())

    assert set(refused) == ZERO_REFUSED
    assert all(text.startswith("ImproperlyConfigured: ") for text in refused.values())


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        (
            "POWERCONTEXT_SEARCH_TIMEOUT_MS",
            "2147483648",
            "POWERCONTEXT_SEARCH_TIMEOUT_MS='2147483648' is not valid: must be "
            "1..2147483647.",
        ),
        (
            "SESSION_REVISION_RETENTION",
            "36501",
            "SESSION_REVISION_RETENTION='36501' is not valid: must be 0..36500.",
        ),
        (
            "POWERCONTEXT_RATE_LIMIT_LEASE_MAX",
            "1001",
            "POWERCONTEXT_RATE_LIMIT_LEASE_MAX='1001' is not valid: must be 1..1000.",
        ),
        (
            "POWERCONTEXT_DB_POOL_MAX",
            "1",  # below POWERCONTEXT_DB_POOL_MIN's default, 2
            "POWERCONTEXT_DB_POOL_MAX: must be at least POWERCONTEXT_DB_POOL_MIN.",
        ),
    ],
)
def test_a_number_over_its_range_is_refused(
    name: str, value: str, problem: str
) -> None:
    refused = walk(value, {name})

    assert f".env, line {settings_walk.LINE}: {problem}" in refused[name]
