"""Every management command of the project explains itself in ``--help``.

Management commands print progress for long work and have ``--help`` text that
explains them. Each command of the project's own apps is an
``ExplainedCommand``: a one-line summary, an explanation after the options (what
it does and changes, what it prints, how it fails), and a help text on every
option it adds. A new command without them fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import get_commands, load_command_class

from powercontext.cli import ExplainedCommand, ProgressLines

ROOT = Path(__file__).resolve().parents[2]
# Options every Django command has (with Django's own help texts).
DJANGO_OPTIONS = {
    "help",
    "version",
    "verbosity",
    "settings",
    "pythonpath",
    "traceback",
    "no_color",
    "force_color",
    "skip_checks",
}


def project_commands() -> list[tuple[str, str]]:
    own = {
        config.name
        for config in apps.get_app_configs()
        if Path(config.path).is_relative_to(ROOT)
        and not Path(config.path).is_relative_to(ROOT / ".venv")
    }
    return sorted((name, app) for name, app in get_commands().items() if app in own)


def test_the_project_has_its_commands() -> None:
    assert {name for name, _ in project_commands()} >= {
        "backup_sqlite",
        "createtoken",
        "localsetup",
        "prune_envelope_revisions",
        "revoketoken",
        "seed_sources",
    }


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_help_explains_the_command_and_every_option(name: str, app: str) -> None:
    command = load_command_class(app, name)
    parser = command.create_parser("manage.py", name)
    text = parser.format_help()
    unexplained = [
        action.dest
        for action in parser._actions
        if action.dest not in DJANGO_OPTIONS and not (action.help or "").strip()
    ]

    assert isinstance(command, ExplainedCommand)
    assert command.help.strip()
    assert text.index(command.help[:40]) < text.index("options:")
    explanation = text[text.index("--skip-checks") :].split("\n\n", 1)[1]
    assert len(explanation.split()) >= 40, explanation
    assert unexplained == []


def test_progress_lines_mark_the_start_about_every_five_percent_and_the_end() -> None:
    written: list[str] = []
    progress = ProgressLines(type("S", (), {"write": written.append})(), unit="rows")

    for done in range(101):
        progress(done, 100)
    progress(0, 0)

    assert written[0] == "  0 of 100 rows (0%)"
    assert written[1] == "  5 of 100 rows (5%)"
    assert written[-2] == "  100 of 100 rows (100%)"
    assert len(written) == 22
    assert written[-1] == "  0 of 0 rows (100%)"
