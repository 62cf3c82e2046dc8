#!/usr/bin/env python
"""Django's command-line utility for administrative tasks.

Reads the env file first (``POWERCONTEXT_ENV_FILE``, default ``.env`` here), so a
command sees the configuration the server sees. Without ``DJANGO_SETTINGS_MODULE``
it uses the local settings and says so in one line on stderr. ``--version``
prints the service's version (``pyproject.toml``), not Django's.
"""

import os
import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from powercontext.version import VERSION

        print(VERSION)
        return
    from django.core.exceptions import ImproperlyConfigured

    from powercontext.settings.envfile import (
        LOCAL_SETTINGS,
        env_file_read,
        local_default_notice,
    )

    try:
        env_file = env_file_read()
    except ImproperlyConfigured as exc:
        sys.exit(f"manage.py: {exc}")
    if "DJANGO_SETTINGS_MODULE" not in os.environ:
        sys.stderr.write(local_default_notice(env_file))
        os.environ["DJANGO_SETTINGS_MODULE"] = LOCAL_SETTINGS
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
