"""Serving the phone pages: waitress in production and tests, join codes in the terminal.

Each open page holds one Server-Sent Events stream, which occupies one waitress worker thread
while it is open; all threads but :data:`~companion.web.streams.REQUEST_THREADS` may hold
streams (:func:`fit_streams`), and :data:`MIN_THREADS` keeps enough for a full table of phones.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from typing import Protocol, TextIO

from flask import Flask

from companion.web.service import TableService

MIN_THREADS = 16
"""Waitress worker threads at least (6 players + table + host streams, plus requests)."""


def _threads(threads: int) -> int:
    if threads < MIN_THREADS:
        raise ValueError(f"threads: at least {MIN_THREADS} so event streams don't starve requests")
    return threads


LOOKAHEAD = 1
"""Requests waitress reads ahead on a connection while one runs: it keeps reading, so a phone
that closes its page is seen at once and its event stream's thread is freed
(``channel_request_lookahead``)."""


def fit_streams(app: Flask, threads: int) -> None:
    """Bound the app's open event streams by the waitress ``threads``: ``SSE_MAX_STREAMS`` when
    set (and smaller), else :func:`~companion.web.streams.stream_capacity` of the threads."""
    from companion.web.streams import StreamRegistry, stream_capacity

    registry = app.extensions.get("companion.streams")
    if isinstance(registry, StreamRegistry):
        configured = int(app.config.get("SSE_MAX_STREAMS") or 0)
        fit = stream_capacity(threads)
        registry.capacity = min(configured, fit) if configured else fit


def serve(app: Flask, host: str = "0.0.0.0", port: int = 8080, threads: int = MIN_THREADS) -> None:
    """Serve ``app`` with waitress until interrupted (blocks).

    :param host: interface to listen on (``0.0.0.0`` = every interface of the Pi).
    :param port: TCP port.
    :param threads: worker threads, at least :data:`MIN_THREADS`.
    :raises ValueError: too few threads. :raises OSError: the port is taken.
    """
    import waitress

    fit_streams(app, _threads(threads))
    waitress.serve(
        app,
        host=host,
        port=port,
        threads=threads,
        ident="companion",
        channel_request_lookahead=LOOKAHEAD,
    )


class _Listening(Protocol):
    """What this module uses of a waitress server (``waitress.create_server``)."""

    effective_port: int
    _map: dict[int, object]
    """The server's socket map (fd -> dispatcher): the listener and every open connection."""

    def run(self) -> None: ...

    def close(self) -> None: ...


class BackgroundServer:
    """A waitress server on a thread (tests, the bench, the development runner).

    ``with BackgroundServer(app) as srv: urlopen(srv.url + "/")``; port 0 picks a free port.
    """

    def __init__(
        self, app: Flask, host: str = "127.0.0.1", port: int = 0, threads: int = MIN_THREADS
    ) -> None:
        import waitress

        fit_streams(app, _threads(threads))
        self._server: _Listening = waitress.create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            ident="companion",
            channel_request_lookahead=LOOKAHEAD,
        )
        self._app = app
        # the server's own socket map (waitress keeps one per server): listener and connections
        self._server_map: dict[int, object] = self._server._map
        self.host = host
        self.port: int = int(self._server.effective_port)
        self.url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._run, name="waitress", daemon=True)

    def _run(self) -> None:
        # OSError/ValueError: the listening socket was closed by close(); nothing left to serve
        with contextlib.suppress(OSError, ValueError):
            self._server.run()

    def start(self) -> BackgroundServer:
        self._thread.start()
        return self

    def close(self, timeout_s: float = 5.0) -> None:
        """End the open event streams, let the worker threads finish, stop listening.

        Streams notice the stop when the service reports a change or at their next heartbeat,
        so close the service first (``FakeTableService.close`` wakes them at once).
        """
        stopping = self._app.extensions.get("companion.stopping")
        if stopping is not None:
            stopping.set()
        streams = self._app.extensions.get("companion.streams")
        if streams is not None:
            streams.end_all()
        dispatcher = getattr(self._server, "task_dispatcher", None)
        if dispatcher is not None:
            dispatcher.shutdown(cancel_pending=True, timeout=timeout_s)
        self._server.close()
        # Connections still open (a phone's keep-alive or a stalled stream) are closed here: the
        # serving loop runs until its socket map is empty, and a socket left in it would only be
        # closed by the garbage collector, with a ResourceWarning at some later moment.
        from waitress import wasyncore

        wasyncore.close_all(self._server_map, ignore_all=True)
        self._thread.join(timeout=timeout_s)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def lan_address() -> str:
    """This machine's address on the local network (the one a phone reaches), or 127.0.0.1.

    No packet is sent: connecting a UDP socket only selects the outgoing interface.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        addr = str(s.getsockname()[0])
    except OSError:
        addr = "127.0.0.1"
    finally:
        s.close()
    return addr


def base_url(public_url: str, host: str, port: int) -> str:
    """The URL phones open: ``public_url`` when configured, else ``http://<LAN address>:port``."""
    if public_url:
        return public_url.rstrip("/")
    addr = lan_address() if host in ("0.0.0.0", "", "::") else host
    return f"http://{addr}:{port}"


def join_links(service: TableService, base: str) -> dict[str, str]:
    """``{"table": url, "host": url, "<colour>": url, …}`` for the QR codes."""
    links = {"table": f"{base}/", "host": f"{base}/join/{service.host_token}"}
    for colour, token in service.player_tokens().items():
        links[colour] = f"{base}/join/{token}"
    return links


def print_join_codes(
    service: TableService, base: str, out: TextIO | None = None, players: bool = True
) -> None:
    """Print the table page's and the host's QR codes (and each player's with ``players``) to
    the terminal with segno's terminal output, each under its URL."""
    from companion.web.qr import print_terminal_qr

    stream = out if out is not None else sys.stdout
    for label, url in join_links(service, base).items():
        if not players and label not in ("table", "host"):
            continue
        title = {"table": "table page (everyone)", "host": "host page (keep private)"}.get(
            label, f"{label} player's page"
        )
        stream.write(f"\n{title}: {url}\n")
        print_terminal_qr(url, stream)
    stream.flush()
