"""The env file: one configuration for the server, every command and every make target.

``manage.py``, the WSGI and ASGI modules, the server's launcher
(``powercontext.serve``) and the local and production settings call
``env_file_read`` before anything reads a variable. The
file is ``POWERCONTEXT_ENV_FILE`` (an empty value reads none), by default ``.env``
at the repository root when it exists. Variables already in the process
environment win over the file, so ``VAR=... manage.py ...`` still overrides it.

The file is read as a shell reads assignments: ``NAME=value`` (``export`` allowed),
blank lines and ``#`` lines skipped, a ``#`` after whitespace outside quotes starts a
comment (``POWERCONTEXT_WORKERS=2 # two workers`` is ``2``), and a value in single
or double quotes is taken whole (``#`` included). A line that is none of these is
refused with its file and line. ``SettingsEnv`` is the settings' reader: a value
that does not parse, or a number outside the range its reader states (``minimum``,
``maximum``, ``above``), names the variable and where it came from (the file and
line, or the process environment).

This module imports nothing of Django's settings: it runs before they exist.
"""

from __future__ import annotations

import builtins
import math
import os
import re
from pathlib import Path
from typing import Any, TypeVar

import environ
from django.core.exceptions import ImproperlyConfigured

from powercontext import shape

ENV_FILE_VARIABLE = "POWERCONTEXT_ENV_FILE"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ENV_FILE = ROOT / ".env"
FROM_FILE_VARIABLE = "POWERCONTEXT_ENV_FILE_KEYS"
LOCAL_SETTINGS = "powercontext.settings.local"
# Set by the launcher (powercontext.serve) before its workers start; they inherit
# it (powercontext.wsgi).
SERVE_MARKER = "POWERCONTEXT_SERVE"


def env_file_path() -> Path | None:
    """The env file to read, or None: none named and no ``.env`` at the root."""
    named = os.environ.get(ENV_FILE_VARIABLE)
    if named is None:
        return DEFAULT_ENV_FILE if DEFAULT_ENV_FILE.exists() else None
    return Path(named) if named else None


def env_file_read() -> Path | None:
    """Load the env file into ``os.environ``; return the file read (None: none).

    A variable the process environment set before the first read wins over the
    file. A variable an earlier read took from the file follows the file: reading
    again (the launcher does on ``HUP``) picks up edits and drops what
    left the file. Which variables came from the file is kept in the environment
    itself (``POWERCONTEXT_ENV_FILE_KEYS``), so it survives fresh imports of this
    module. A named file that is missing or unreadable is
    ``ImproperlyConfigured``: silently falling back to defaults is how a token
    lands in the wrong database.
    """
    path = env_file_path()
    values = _parse(path) if path is not None else {}
    from_file = set(filter(None, os.environ.get(FROM_FILE_VARIABLE, "").split(",")))
    for key in from_file - set(values):
        os.environ.pop(key, None)
    taken = set()
    for key, value in values.items():
        if key in from_file or key not in os.environ:
            os.environ[key] = value
            taken.add(key)
    os.environ[FROM_FILE_VARIABLE] = ",".join(sorted(taken))
    return path


_ASSIGNMENT = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z_0-9]*)=(.*)")
# A value: single-quoted, double-quoted (backslash escapes a quote or a
# backslash), or bare up to whitespace before a ``#``; then only a comment.
_VALUE = re.compile(
    r"""'(?P<single>[^']*)'|"(?P<double>(?:[^"\\]|\\.)*)"|(?P<bare>(?:[^\s#'"](?:\S|\s+(?=[^\s#]))*)?)"""
)
_REST = re.compile(r"\s*(?:#.*)?")


def _parse(path: Path) -> dict[str, str]:
    """The variables of ``path``, with the last assignment of each winning."""
    return {name: value for name, (value, _line) in _assignments(path).items()}


def _assignments(path: Path) -> dict[str, tuple[str, int]]:
    """Each variable of ``path`` with its value and the line it was set on."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise ImproperlyConfigured(
            f"Cannot read the env file {path} ({reason}); set "
            f"{ENV_FILE_VARIABLE} to a readable file, or to '' to read none."
        ) from None
    found: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found.update(_assignment(stripped, path, number))
    return found


def _assignment(line: str, path: Path, number: int) -> dict[str, tuple[str, int]]:
    assignment = _ASSIGNMENT.fullmatch(line)
    value = assignment and _VALUE.match(assignment.group(2))
    if not assignment or not value or not _REST.fullmatch(value.string, value.end()):
        raise ImproperlyConfigured(
            f"{path}, line {number}: not NAME=value (a value with spaces or a "
            f"'#' right after one needs quotes): {line[:80]!r}"
        )
    double = value.group("double")
    text = (
        re.sub(r"\\([\\\"])", r"\1", double)
        if double is not None
        else value.group("single") or value.group("bare") or ""
    )
    return {assignment.group(1): (text, number)}


def variable_origin(name: str) -> str:
    """Where ``name``'s value came from: the env file and line, or the environment;
    for a variable that is not set, where to set it."""
    taken = os.environ.get(FROM_FILE_VARIABLE, "").split(",")
    path = env_file_path()
    if name not in os.environ:
        return f"{path or 'the environment (no env file)'} (not set)"
    if name in taken and path is not None:
        line = _assignments(path).get(name, ("", 0))[1]
        return f"{path}, line {line}"
    return "the process environment"


def settings_error(name: str, problem: str) -> ImproperlyConfigured:
    """The refusal of ``name``'s value, naming the variable and where it was set."""
    return ImproperlyConfigured(f"{variable_origin(name)}: {name}: {problem}")


class SettingsEnv(environ.Env):
    """django-environ's reader whose refusals name the variable and its origin.

    Its number readers take the range a value must be in: ``minimum`` and
    ``maximum`` (inclusive), and for ``float`` also ``above`` (exclusive: ``0`` for
    a duration that must be positive). A float is read as Python reads one, and
    must be finite.
    """

    def int(
        self,
        var: str,
        default: Any = environ.Env.NOTSET,
        *,
        minimum: builtins.int | None = None,
        maximum: builtins.int | None = None,
    ) -> builtins.int:
        value: builtins.int = super().int(var, default=default)
        return _in_range(var, value, minimum=minimum, maximum=maximum)

    def float(
        self,
        var: str,
        default: Any = environ.Env.NOTSET,
        *,
        minimum: builtins.float | None = None,
        maximum: builtins.float | None = None,
        above: builtins.float | None = None,
    ) -> builtins.float:
        # Python's own parse: django-environ's drops what is not a digit, a sign,
        # a dot or a comma first, reading "1e3" as 13.0 and "10s" as 10.0.
        value: builtins.float = self.get_value(var, cast=_float, default=default)
        if not math.isfinite(value):
            raise _refusal(var, "must be a finite number.")
        if above is not None and not value > above:
            raise _refusal(var, f"must be more than {above}.")
        return _in_range(var, value, minimum=minimum, maximum=maximum)

    def shape_check(self) -> None:
        """Refuse a variable the server's shape is read from (``powercontext.shape``)
        that is no integer or below its least value, naming where it was set: the
        shape itself reads them without knowing where they came from."""
        for name, minimum in shape.VARIABLES.items():
            if name in self:
                self.int(name, minimum=minimum)

    def get_value(
        self,
        var: str,
        cast: Any = None,
        default: Any = environ.Env.NOTSET,
        parse_default: bool = False,
    ) -> Any:
        try:
            return super().get_value(
                var, cast=cast, default=default, parse_default=parse_default
            )
        except (ValueError, TypeError) as exc:
            raise _refusal(var, str(exc)) from None


_Number = TypeVar("_Number", int, float)


def _float(text: str) -> float:
    return float(text)


def _in_range(
    var: str, value: _Number, *, minimum: _Number | None, maximum: _Number | None
) -> _Number:
    """``value``, or the refusal of ``var`` when it is outside ``minimum..maximum``."""
    if (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return value
    if maximum is None:
        raise _refusal(var, f"must be at least {minimum}.")
    if minimum is None:
        raise _refusal(var, f"must be at most {maximum}.")
    raise _refusal(var, f"must be {minimum}..{maximum}.")


def _refusal(var: str, problem: str) -> ImproperlyConfigured:
    """``var``'s value refused: where it was set, the value as given, the problem."""
    return ImproperlyConfigured(
        f"{variable_origin(var)}: {var}={os.environ.get(var, '')!r} is not valid: "
        f"{problem}"
    )


def local_default_notice(env_file: Path | None) -> str:
    """The one line ``manage.py`` prints when it falls back to the local settings."""
    if env_file is not None:
        source = str(env_file)
    elif os.environ.get(ENV_FILE_VARIABLE) == "":
        source = f"an env file ({ENV_FILE_VARIABLE} is empty)"
    else:
        source = f"an env file ({DEFAULT_ENV_FILE} does not exist)"
    where = (
        "the DATABASE_URL of the environment"
        if os.environ.get("DATABASE_URL")
        else f"the SQLite database {ROOT / 'var' / 'powercontext.sqlite3'}"
    )
    return (
        f"manage.py: using the local settings and {where}: DJANGO_SETTINGS_MODULE "
        f"is set neither in the environment nor in {source}; on a server set "
        f"{ENV_FILE_VARIABLE} (docs/deploying.md).\n"
    )
