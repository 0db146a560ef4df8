"""Work on the phone pages without camera, pins or the full service.

``python -m companion.sim.webdev [--port 8080] [--players 4] [--period 3] [--seed 1]`` serves the
pages with waitress on a :class:`~companion.sim.faketable.FakeTableService` whose seeded bots play a
game (one action every ``--period`` seconds) and prints the join codes in the terminal.
``flask --app companion.sim.webdev run`` works too (Flask's development server, same fake table).
"""

from __future__ import annotations

import argparse
import sys
import threading

from flask import Flask

from companion.sim.faketable import FakeTableService
from companion.web import app as web_app
from companion.web.server import MIN_THREADS, base_url, print_join_codes, serve


def start_camera(service: FakeTableService, period_s: float = 2.0, seed: int = 1) -> bool:
    """Render the fake game as camera frames for the host's camera tab (needs the vision
    renderer and OpenCV); returns False when they are not available."""
    try:
        import cv2
        import numpy as np

        from companion.sim import render
    except ImportError:
        return False
    rng = np.random.default_rng(seed)
    size = (960, 540)
    setup = render.random_setup(rng, size=size)

    def run() -> None:
        while not service.closed.wait(period_s):
            game = service.game()
            if game is None:
                continue
            result = render.render(game, rng, setup=setup, size=size, jpeg_quality=None)
            ok, buf = cv2.imencode(".jpg", result.frame, [cv2.IMWRITE_JPEG_QUALITY, 80])
            if ok:
                service.set_camera_jpeg(buf.tobytes())

    threading.Thread(target=run, name="fake-camera", daemon=True).start()
    return True


def create_app(players: int = 4, seed: int = 1, period_s: float = 3.0) -> Flask:
    """An app on a fake table that plays itself (the factory ``flask --app companion.sim.webdev
    run`` finds)."""
    service = FakeTableService(seed=seed, setup={"players": players})
    service.start_driver(period_s)
    start_camera(service, seed=seed)
    app = web_app.create_app({}, service)
    print(f"host page: /join/{service.host_token}", file=sys.stderr)
    return app


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.sim.webdev", description=__doc__)
    parser.add_argument("--host", default="0.0.0.0", help="interface (0.0.0.0 = all)")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--players", type=int, default=4, choices=range(1, 7))
    parser.add_argument("--period", type=float, default=3.0, help="s between bot actions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=MIN_THREADS)
    args = parser.parse_args(argv)
    service = FakeTableService(seed=args.seed, setup={"players": args.players})
    service.start_driver(args.period)
    start_camera(service, seed=args.seed)
    app = web_app.create_app({}, service)
    print_join_codes(service, base_url("", args.host, args.port))
    try:
        serve(app, args.host, args.port, args.threads)
    finally:
        service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
