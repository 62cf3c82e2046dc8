"""Stand-ins for the host's systemd and nginx, driven by the files in ``deploy/``.

``SystemdUnit`` runs a unit file's ``ExecStart`` with its ``Environment`` from the
directory systemd would use (``/`` - here a temporary one), ``ExecReload`` with
``$MAINPID``, and stops the service the way ``KillMode=mixed`` does. ``Nginx``
runs a site file in a prefix of its own (free ports, a self-signed certificate),
wrapped in the ``http`` block a distribution's ``nginx.conf`` provides. Both
always stop what they started (``close``), also when the test failed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from tests.deploy.runbook import substitute
from tests.robustness.processes import tail, wait_until

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
TOOLS = {
    NGINX: "nginx",
    "openssl": "openssl",
    "curl": "curl",
    "pg_dump": "postgresql-client-15",
    "/bin/kill": "procps",
}


def tools_check() -> None:
    """Fail with instructions, not a traceback, when a tool of the host is missing."""
    missing = {package for tool, package in TOOLS.items() if shutil.which(tool) is None}
    if missing:
        pytest.fail(
            "docs/deploying.md is followed on this machine and needs: "
            f"apt-get install {' '.join(sorted(missing))} (.ci/run installs them)."
        )


def children(pid: int) -> set[int]:
    """The pids whose parent is ``pid`` (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.add(int(stat.parent.name))
    return found


class SystemdUnit:
    """A ``[Service]`` section, run as systemd would run it (minus the sandbox)."""

    def __init__(
        self,
        unit_file: Path,
        *,
        replacements: dict[str, str],
        base_env: dict[str, str],
        workdir: Path,
        log_path: Path,
    ) -> None:
        text = substitute(unit_file.read_text(), replacements)
        service = text.split("[Service]", 1)[1].split("\n[", 1)[0]
        entries = re.findall(r"^(\w+)=(.*)$", service, re.MULTILINE)
        self.settings = dict(entries)
        self.env = dict(base_env)
        for key, value in entries:
            if key == "Environment":
                name, _, assigned = value.partition("=")
                self.env[name] = assigned
        self.workdir = workdir
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def main_pid(self) -> int:
        assert self.process is not None, "the unit is not running"
        return self.process.pid

    def start(self) -> None:
        assert self.process is None, "already running"
        runtime = self.env.get("XDG_RUNTIME_DIR")
        if runtime:
            Path(runtime).mkdir(parents=True, exist_ok=True)  # RuntimeDirectory=
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                shlex.split(self.settings["ExecStart"]),
                cwd=self.workdir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def reload(self) -> None:
        command = self.settings["ExecReload"].replace("$MAINPID", str(self.main_pid))
        subprocess.run(shlex.split(command), check=True, timeout=10)

    def stop(self) -> None:
        """SIGTERM to the main process, SIGKILL to the group after the timeout."""
        if self.process is None:
            return
        process, self.process = self.process, None
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=int(self.settings.get("TimeoutStopSec", "40")))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if not self.alive():
            pytest.fail("the service exited:\n" + tail(self.log_path, 60))


def certificate(directory: Path, host: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``host`` and 127.0.0.1: (chain, key)."""
    chain, key = directory / "fullchain.pem", directory / "privkey.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            f"/CN={host}",
            "-addext",
            f"subjectAltName=DNS:{host},IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(chain),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return chain, key


def tls_context(chain: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(chain))


class Nginx:
    """nginx with one site file, in ``prefix``; ``start`` waits until it listens."""

    def __init__(self, site: str, prefix: Path) -> None:
        self.prefix = prefix
        for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"):
            (prefix / temp).mkdir(parents=True, exist_ok=True)
        (prefix / "site.conf").write_text(site)
        user = "user root;\n" if os.geteuid() == 0 else ""
        self.config = prefix / "nginx.conf"
        self.config.write_text(
            f"""{user}daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log info;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/site.conf;
}}
"""
        )
        self.process: subprocess.Popen[bytes] | None = None

    def _command(self, *extra: str) -> list[str]:
        return [NGINX, "-p", str(self.prefix), "-c", str(self.config), *extra]

    def test_config(self) -> None:
        completed = subprocess.run(
            self._command("-t"), capture_output=True, text=True, timeout=30
        )
        assert completed.returncode == 0, completed.stderr

    def start(self, port: int) -> None:
        self.test_config()
        with (self.prefix / "logs" / "stderr.log").open("ab") as log:
            self.process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(lambda: self._listening(port), timeout=30, what="nginx")

    def _listening(self, port: int) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            pytest.fail("nginx exited:\n" + tail(self.prefix / "logs" / "error.log"))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    def reload(self, port: int) -> None:
        if self.process is None:
            self.start(port)
            return
        self.test_config()
        self.process.send_signal(signal.SIGHUP)
        time.sleep(0.5)

    def close(self) -> None:
        if self.process is None:
            return
        process, self.process = self.process, None
        process.send_signal(signal.SIGQUIT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
