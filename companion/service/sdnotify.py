"""systemd's notify protocol: ``READY=1``, ``STATUS=…``, ``WATCHDOG=1``, ``STOPPING=1``.

A datagram to the unix socket named by ``$NOTIFY_SOCKET`` (``@name`` = abstract namespace), as
described in sd_notify(3). Outside systemd (no ``$NOTIFY_SOCKET``) every call does nothing.
``$WATCHDOG_USEC`` (and ``$WATCHDOG_PID`` when set) give the watchdog period; the service pings at
half of it, and only while all heartbeats are fresh.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


class SystemdNotifier:
    """Sends sd_notify messages; a no-op without ``$NOTIFY_SOCKET``.

    :param env: the environment to read (``os.environ`` by default; tests pass a dict).
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self._address: str | None = None
        path = env.get("NOTIFY_SOCKET", "")
        if path:
            self._address = "\0" + path[1:] if path.startswith("@") else path
        self.watchdog_interval_s: float | None = None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.watchdog_interval_s = int(usec) / 1e6 / 2.0
        self._sock: socket.socket | None = None
        self._closed = False
        self.last_error = ""

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def notify(self, message: str) -> bool:
        """Send one message (``KEY=value`` lines); False when not under systemd or it failed
        (the reason is kept in :attr:`last_error`; never raises)."""
        if self._address is None or self._closed:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message.encode("utf-8"), self._address)
            return True
        except OSError as exc:
            self.last_error = f"sd_notify failed: {exc}"
            return False

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        """Close the socket; later messages are dropped (a late one would open a socket that
        nobody closes)."""
        self._closed = True
        if self._sock is not None:
            self._sock.close()
            self._sock = None
