"""The companion's child processes (the detector's, the simulated camera's): how they start,
talk to the service and end with it.

:func:`start_child` runs ``python -m MODULE FD`` on one end of a socket pair; the child's
:func:`run_child` serves the parent's :func:`requests` (pickled tuples; a failure goes back as
``("error", text)``, :func:`send_error`). A child must never outlive the service that started
it: not when the service stops, not when it is killed (``kill -9``, a brown-out restarting it
under systemd): :func:`watch_parent` starts a thread that ends the child the moment its parent
has gone, also while the child's main thread is in the middle of a frame. :func:`rss_mb` and
:func:`pss_mb` measure a child's memory (the e2e bench).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from companion.service.memory import return_big_buffers_to_the_system

PARENT_POLL_S = 0.2
"""How often the watcher checks the parent where the system cannot wait on it (no pidfd)."""


def exit_with_parent(parent_pid: int) -> None:
    """Block until the process ``parent_pid`` has ended, then end this process at once.

    Waits on a pidfd (Linux 5.3+: readable when the process exits, no polling); elsewhere
    checks every :data:`PARENT_POLL_S` s whether this process was re-parented. ``os._exit``:
    the child holds nothing to flush, and the main thread may be in the middle of a frame.
    """
    try:
        fd = os.pidfd_open(parent_pid)
    except (AttributeError, OSError):  # no pidfd here, or the parent is already gone
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
    else:
        # the parent may have died before the pidfd was opened: then the pid is not our parent
        if os.getppid() == parent_pid:
            select.select([fd], [], [])
    os._exit(0)


def watch_parent() -> int:
    """Start the daemon thread running :func:`exit_with_parent` on this process's parent;
    returns the parent's pid."""
    parent_pid = os.getppid()
    threading.Thread(
        target=exit_with_parent, args=(parent_pid,), name="parent-watch", daemon=True
    ).start()
    return parent_pid


def start_child(module: str) -> tuple[subprocess.Popen[bytes], Connection]:
    """Start ``python -m MODULE FD`` with this package importable, on one end of a socket pair.

    :returns: the child process and the parent's end of the pair (``send``/``recv`` of pickled
        objects, ``send_bytes``/``recv_bytes_into`` for frames).
    :raises OSError: the process could not be started.
    """
    parent, child = socket.socketpair()
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        parent.close()
        raise
    finally:
        child.close()
    return proc, Connection(parent.detach())


def rss_mb(pid: int) -> tuple[float, float]:
    """The resident memory ``(now, peak)`` in MB (VmRSS, VmHWM) of process ``pid``; zeros once
    it is gone (or where ``/proc`` is not there)."""
    now = peak = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024.0
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return round(now, 1), round(peak, 1)


def pss_mb(pid: int | str = "self") -> float:
    """The proportional set size of process ``pid`` in MB (``/proc/PID/smaps_rollup``): its
    own pages plus its share of pages it shares with other processes (the libraries a parent
    and its child both map count once between them, unlike RSS). 0 where not available."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def requests(conn: Connection, parent_pid: int) -> Iterator[tuple[Any, ...]]:
    """The parent's requests on ``conn``, one by one (the child's side), until ``("stop",)``,
    the socket closes, or the parent ``parent_pid`` is gone (the child was re-parented)."""
    while True:
        try:
            if not conn.poll(1.0):
                if os.getppid() != parent_pid:
                    return
                continue
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request[0] == "stop":
            return
        yield request


def send_error(conn: Connection, exc: Exception) -> bool:
    """Answer the parent's request with the failure ``exc`` (``("error", text)``); False when
    the socket is gone."""
    try:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except OSError:
        return False
    return True


def run_child(argv: list[str], serve: Callable[[Connection, int], None]) -> int:
    """A child's ``main``: ``serve(conn, parent_pid)`` on the socket whose descriptor is
    ``argv[0]`` (from :func:`start_child`), the process ending with its parent. Ctrl-C is
    ignored (it reaches the whole process group; the parent stops its children itself), and
    big freed buffers go back to the system. Returns the exit code."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return_big_buffers_to_the_system()
    conn = Connection(int(argv[0]))
    parent_pid = watch_parent()
    try:
        serve(conn, parent_pid)
    finally:
        conn.close()
    return 0
