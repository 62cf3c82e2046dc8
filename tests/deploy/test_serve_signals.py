"""A stop signal that reaches a worker in the instant after ``fork()``, before it
has dropped the main process's relay (``powercontext/serve_signals.py``), still
stops it.

The worker inherits the main process's do-nothing Python handler; a SIGTERM taken
by it before ``forget`` sets the default back is lost, and the worker serves on
until the main process kills it 30 s later. Seen once in a clean-clone CI run: a
server stopped in the second it spawned its workers did not stop within 10 s
(``tests/deploy/test_server_http.py``). The relay blocks the stop signals across
``fork()``; the child unblocks them once the default is back.

Each case runs in a process of its own (signal handlers and at-fork hooks are
process-wide). The signal is sent by an at-fork hook registered before the
relay's, so it arrives exactly in that instant: ``os.register_at_fork`` runs the
children's hooks in the order they were registered.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from powercontext.serve_signals import SignalRelay

    class Server:
        def signal_handler_interrupt(self, *args, **kwargs): pass
        def signal_handler_reload(self, *args, **kwargs): pass

    relay = SignalRelay(Server())
    relay.install()  # as in the main process: Python-level handlers do nothing
    signal_number = getattr(signal, sys.argv[1])
    os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal_number))
    relay.register_at_fork()
    pid = os.fork()
    if pid == 0:
        for _ in range(1000):  # bytecode, where a Python-level handler would run
            pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exited")
    # The parent's own mask is as it was: the signal reaches it again.
    print(sorted(int(n) for n in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
    """
)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_stop_signal_right_after_fork_stops_the_worker(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, name],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    died_of, parent_mask = result.stdout.split("\n")[:2]
    assert died_of == str(int(getattr(signal, name))), result.stderr
    assert parent_mask == "[]"
