"""Settings for ``make run``: the embedded SQLite default, loopback only.

DEBUG stays off so that what a newcomer sees is what production serves; the secret
key is generated once and kept under ``var/`` so cursors and admin sessions survive
restarts. The env file is read first (``envfile``), as in production.
"""

import secrets

from .envfile import env_file_read

env_file_read()

from .base import *  # noqa: E402, F403
from .base import VAR_DIR, env  # noqa: E402
from .logs import default_log_format, logging_config  # noqa: E402

VAR_DIR.mkdir(exist_ok=True)


def _local_secret_key() -> str:
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or _local_secret_key()

# Plain lines on a terminal, JSON elsewhere, as the server's own lines
# (powercontext.serve); POWERCONTEXT_LOG_FORMAT chooses for both.
POWERCONTEXT_LOG_FORMAT = env.str(
    "POWERCONTEXT_LOG_FORMAT", default=default_log_format()
)
LOGGING = logging_config(
    env.str("POWERCONTEXT_LOG_LEVEL", default="INFO"), POWERCONTEXT_LOG_FORMAT
)
