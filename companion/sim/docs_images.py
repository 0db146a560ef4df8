"""The README's two pictures, made by the code as it is (never by hand).

    python -m companion.sim.docs_images [DIR]      (default: docs/ of the repository)

* ``player-page.png``: a player's page on a phone-sized screen (412 px wide, the whole page),
  taken in Debian's Chromium (``/usr/bin/chromium``, driven by Playwright) against the real web
  app. The position is a seeded bots' game with trapped wizards (memory aid ``own``: the player
  sees where their own trapped wizards are) while the tracker asks that player which tower moved.
* ``detected-frame.jpg``: a rendered frame of the simulated table (the same seed and position)
  with the detector's reading of every space drawn on it — the host page's calibration view
  (``7:0p b`` = space 7, no tower, plain track space, one blue wizard).

Exit status 2 with the reason when Chromium, Playwright or a vision part is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the vision parts load OpenCV: imported where used
    import numpy as np

    from companion.rules import GameState
    from companion.vision.detector import Detection
    from companion.vision.geometry import BoardGeometry

SEED = 3
PLAYERS = 4
ACTIONS = 24
"""The position: seed 3, 4 players, the greedy bots' game after at least 24 actions."""

CHROMIUM = Path("/usr/bin/chromium")
PHONE_WIDTH, PHONE_HEIGHT = 412, 915
"""The phone's screen, CSS px."""
FRAME_SIZE = (1536, 864)


def played_position() -> tuple[GameState, GameState, int]:
    """``(setup state, state, actions played)``: the seeded bots' game after at least
    ``ACTIONS`` actions, at the first position where the player to move has a trapped wizard
    (so the page shows the memory aid at work)."""
    from companion.rules import Config, dump_state
    from companion.sim.simtable import SimTiming, SimulatedGame

    game = SimulatedGame(Config(player_count=PLAYERS), SEED, "greedy", SimTiming())
    game.advance(ACTIONS)
    while not game.over:
        data = dump_state(game.state)
        mover = str(game.state.current_player)
        if any(
            wid.startswith(mover + "-")
            and isinstance(pos, dict)
            and pos["tier"] < len(data["stacks"].get(str(pos["space"]), []))
            for wid, pos in data["wizards"].items()
        ):
            break
        game.advance(1)
    return game.initial_state, game.state, len(game.record.actions)


def _question(state: GameState) -> tuple[str, str, list[tuple[str, str]]]:
    """``(to, text, options)``: the current player is asked which tower moved onto the tallest
    stack (the two neighbouring spaces as options)."""
    colour = str(state.current_player)
    length = state.table.length
    space = max(range(1, length + 1), key=lambda s: (len(state.stacks[s - 1]), -s))
    before = (space - 2) % length + 1
    after = space % length + 1
    options = [("a", f"the one from space {before}"), ("b", f"the one from space {after}")]
    return colour, f"Which tower moved onto space {space}?", options


def player_page(state: GameState, out: Path) -> None:
    """Screenshot the asked player's page of ``state`` into ``out`` (PNG)."""
    from playwright.sync_api import sync_playwright

    from companion.sim.faketable import FakeTableService
    from companion.web import BackgroundServer, create_app

    svc = FakeTableService(seed=SEED)
    svc.load(state, memory_aid="own")
    to, text, options = _question(state)
    svc.ask(text, options, to=to)
    server = BackgroundServer(create_app({}, svc), "127.0.0.1", 0).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
            )
            context = browser.new_context(
                viewport={"width": PHONE_WIDTH, "height": PHONE_HEIGHT}, device_scale_factor=1
            )
            page = context.new_page()
            page.goto(f"{server.url}/join/{svc.player_tokens()[to]}")
            page.wait_for_selector("#mine li")
            page.locator("[data-option='b']").wait_for(timeout=5000)
            page.screenshot(path=str(out), full_page=True)
            browser.close()
    finally:
        svc.close()  # ends the page's event stream before the server stops
        server.close()


def read_frame(
    setup: GameState, state: GameState, number: int
) -> tuple[np.ndarray, Detection, BoardGeometry]:
    """``(frame, detection, geometry)``: ``state`` rendered on the simulated table of ``SEED``
    (scene ``number``, no hand) and read by the detector, calibrated on the ``setup`` frame."""
    from companion.sim.simrender import SimCamera
    from companion.sim.simtable import Scene
    from companion.vision.detector import Detector

    cam = SimCamera(SEED, FRAME_SIZE)
    profile = cam.profile_from_setup(setup, list(setup.table.colours))
    detector = Detector(cam.camera_model, cam.geometry, profile)
    frame = cam.render_scene(Scene(state, None, 1), number)
    return frame, detector.detect(frame, 0.0, 0), cam.geometry


def detected_frame(setup: GameState, state: GameState, number: int, out: Path) -> None:
    """Write the overlay of :func:`read_frame` into ``out`` (JPEG)."""
    from companion.service.vision import overlay_jpeg

    frame, detection, geometry = read_frame(setup, state, number)
    jpeg = overlay_jpeg(frame, detection, geometry, quality=85)
    if jpeg is None:
        raise RuntimeError("the overlay could not be encoded")
    out.write_bytes(jpeg)


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "docs"
    if not CHROMIUM.exists():
        print(f"docs images: Debian's Chromium ({CHROMIUM}) is not installed", file=sys.stderr)
        return 2
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("docs images: Playwright is not installed (pip install -e .[dev])", file=sys.stderr)
        return 2
    target.mkdir(parents=True, exist_ok=True)
    setup, state, actions = played_position()
    player_page(state, target / "player-page.png")
    detected_frame(setup, state, actions, target / "detected-frame.jpg")
    print(f"wrote {target / 'player-page.png'} and {target / 'detected-frame.jpg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
