"""A companion for the pack games without camera: the real service with its journal, the
virtual button panel on gpiozero mock pins (seeded dice) and, when asked, the web pages."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.config import Config
from companion.hardware import Hardware, create_hardware
from companion.service.core import CompanionService
from companion.service.heartbeat import Heartbeats
from companion.service.packs import game_driver
from companion.sim.testing import sim_config
from companion.web import BackgroundServer, create_app
from companion.web.service import Audience, CommandError


class PackTable:
    """The service (seeded chance), optionally its service thread, panel and pages.

    :param data: the data directory (journal).
    :param seed: seeds the packs' chance and the dice button.
    """

    def __init__(
        self,
        data: Path,
        seed: int = 7,
        *,
        threaded: bool = False,
        web: bool = False,
        panel: bool = False,
    ) -> None:
        self.config: Config = sim_config(data)
        heartbeats = Heartbeats(stale_s=3600.0)
        for part in ("camera", "detector", "web"):  # no camera in these games
            heartbeats.beat(part, "not needed")
        self.svc = CompanionService(
            self.config,
            heartbeats,
            driver_factory=functools.partial(game_driver, rng=random.Random(seed)),
        )
        self.hw: Hardware | None = None
        if panel:
            self.hw = create_hardware(
                {"hardware": {"backend": "mock", "profile": "wandering-towers"}},
                self.svc.hardware_event,
                rng=random.Random(seed),
            )
            self.svc.hardware = self.hw
        self.svc.start_game(restore=True)
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if threaded:
            self.thread = threading.Thread(target=self.svc.run, args=(self.stop, 0.05), daemon=True)
            self.thread.start()
        self.server: BackgroundServer | None = None
        self.url = ""
        if web:
            self.server = BackgroundServer(
                create_app({"SSE_HEARTBEAT_S": 1.0}, self.svc), "127.0.0.1", 0
            ).start()
            self.url = self.server.url

    def send(self, cmd: Mapping[str, Any], audience: Audience | None = None) -> Any:
        """Submit a command and, without the service thread, handle it at once; returns the
        result, or the :class:`CommandError` raised."""
        audience = audience or Audience.host()
        if self.thread is not None:
            try:
                return self.svc.submit(cmd, audience)
            except CommandError as exc:
                return exc
        out: dict[str, Any] = {}

        def go() -> None:
            try:
                out["r"] = self.svc.submit(cmd, audience)
            except CommandError as exc:
                out["r"] = exc

        t = threading.Thread(target=go)
        t.start()
        while t.is_alive():
            self.svc.step(0.02)
        t.join()
        return out["r"]

    def pack(self, action: str, audience: Audience | None = None, **args: Any) -> Any:
        return self.send({"command": "pack", "action": action, "args": args}, audience)

    def view(self, audience: Audience | None = None) -> dict[str, Any]:
        snap = self.svc.snapshot(audience or Audience.host())
        return dict(snap.get("pack") or {})

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        if self.thread is not None:
            self.svc.stop()
            self.thread.join(timeout=5)
        if self.hw is not None:
            self.hw.close()
        self.svc.close()
