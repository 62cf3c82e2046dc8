"""The server's stop and reload signals, taken by a thread instead of a handler.

granian's main process handles SIGTERM, SIGINT and SIGHUP with Python handlers
that set a ``threading.Event`` its main thread waits on. Two things go wrong with
that, and both were seen as a server that never stopped:

- The kernel gives a signal sent to the process to any of its threads that does
  not block it, and the main process has several (one watching each worker,
  granian's own). Taken by another thread, the signal does not wake the main
  thread from its wait, so the Python handler runs only when something else wakes
  it, if ever.
- What wakes it may be a worker exiting on the same signal (``kill`` of the
  process group, or systemd's default of signalling every process of the unit).
  The main thread then runs the pending handler as it leaves the wait, still
  holding the event's lock, and the handler's ``set()`` waits on that lock
  forever.

Here the Python-level handlers do nothing: the signal's number reaches a thread of
ours through ``signal.set_wakeup_fd`` whichever thread took it, and that thread
calls granian's own handlers (``signal_handler_interrupt``,
``signal_handler_reload``), which then take the event's lock like any other thread.
A worker forked from the main process starts with none of this: SIGTERM and SIGINT
at their defaults until granian sets the worker's own handlers, so a worker stopped
while it loads the application stops at once instead of serving on until it is
killed 30 s later. The forking thread blocks both signals across ``fork()``: a
SIGTERM that reached the new worker before it had reset its handlers would
otherwise be taken by the do-nothing handler it inherited, and lost (a server
stopped in the second it spawned its workers waited 30 s for one of them). Blocked,
the signal waits, and takes the default action the moment the worker unblocks it.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import Any, Protocol

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RELOAD_SIGNAL = signal.SIGHUP


class SignalledServer(Protocol):
    """What the relay needs of granian's server: the handlers it installs itself."""

    def signal_handler_interrupt(self, *args: Any, **kwargs: Any) -> None: ...

    def signal_handler_reload(self, *args: Any, **kwargs: Any) -> None: ...


class SignalRelay:
    """Relays the main process's stop and reload signals to ``server`` from a
    thread. ``install`` runs in the main thread once granian has set its handlers
    (its startup hook); ``forget`` runs in each worker just forked
    (``register_at_fork``)."""

    def __init__(self, server: SignalledServer) -> None:
        self.server = server
        self.reader, self.writer = socket.socketpair()
        # The forking thread's signal mask, blocked across fork().
        self.mask_before_fork: set[int | signal.Signals] = set()

    def install(self) -> None:
        # Never blocks a signal handler: a signal that finds the socket full is
        # one the thread has yet to read anyway.
        self.writer.setblocking(False)
        signal.set_wakeup_fd(self.writer.fileno(), warn_on_full_buffer=False)
        for number in (*STOP_SIGNALS, RELOAD_SIGNAL):
            signal.signal(number, received_only)
        threading.Thread(target=self.relay, name="signal-relay", daemon=True).start()

    def relay(self) -> None:
        while received := self.reader.recv(64):
            for number in received:
                if number in STOP_SIGNALS:
                    self.server.signal_handler_interrupt()
                elif number == RELOAD_SIGNAL:
                    self.server.signal_handler_reload()

    def register_at_fork(self) -> None:
        """Run ``forget`` in every worker forked from now on, with the stop signals
        blocked from just before ``fork()`` until it has run."""
        os.register_at_fork(
            before=self.before_fork,
            after_in_parent=self.after_fork_in_parent,
            after_in_child=self.forget,
        )

    def before_fork(self) -> None:
        self.mask_before_fork = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

    def after_fork_in_parent(self) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask_before_fork)

    def forget(self) -> None:
        """In a worker just forked: the main process's relay is not the worker's.
        A stop signal that arrived since the fork is taken, by default, as the
        forking thread's mask is restored."""
        signal.set_wakeup_fd(-1)
        self.reader.close()
        self.writer.close()
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask_before_fork)


def received_only(number: int, frame: Any) -> None:
    """The Python-level handler: the C-level one has already written ``number``
    to the wakeup socket, which is all that is needed."""
