"""Helpers to drive a companion on the simulated table from tests and benchmarks.

``sim_config(data_dir, seed=4, players=3)`` is a configuration that runs the simulated table flat
out (speed 1e6), one game, web on a free loopback port; :func:`finish_game` waits until the
simulated game is over and the service has handled every input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.config import Config, with_overrides


def sim_config(data_dir: Path, seed: int = 4, players: int = 3, **sections: Any) -> Config:
    """A validated config for a flat-out simulated game in ``data_dir`` (``sections`` override
    keys per section, e.g. ``simulation={"speed": 50.0}``)."""
    changes: dict[str, dict[str, Any]] = {
        "camera": {"source": "simulated"},
        "web": {"host": "127.0.0.1", "port": 0},
        "simulation": {"speed": 1e6, "seed": seed, "games": 1},
        "data": {"dir": str(data_dir)},
        "game": {"players": players, "colours": []},
        "service": {"status_every_s": 0.0},
    }
    for k, v in sections.items():
        changes[k] = {**changes.get(k, {}), **v}
    return with_overrides(Config(), **changes)


def wait_until(cond: Callable[[], bool], timeout_s: float = 60.0, what: str = "it") -> None:
    """Poll ``cond`` every 20 ms. :raises TimeoutError: naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.02)


def settle(companion: Any, quiet_s: float = 0.2, timeout_s: float = 60.0) -> None:
    """Wait until the vision worker has no frame left and the service queue is empty and the
    published version stayed the same for ``quiet_s``."""
    svc = companion.service
    deadline = time.monotonic() + timeout_s
    v = -1
    while time.monotonic() < deadline:
        cam = companion.camera
        busy = svc.queue_size() > 0 or (
            cam is not None and getattr(cam, "_buffer", None) and len(cam._buffer) > 0
        )
        if not busy and v == svc.version:
            return
        v = svc.version
        time.sleep(quiet_s)
    raise TimeoutError("the service did not settle")


def finish_game(companion: Any, timeout_s: float = 120.0) -> None:
    """Wait until the simulated game is over and everything it produced is handled."""
    wait_until(
        lambda: companion.table.cursor is not None and companion.table.cursor.finished,
        timeout_s,
        "the end of the simulated game",
    )
    settle(companion, timeout_s=timeout_s)
