"""``companion run | demo | record | replay``.

``companion run [--config FILE] [--speed X] [--seed N] [--port P] [--source SPEC] …``
    The companion: the real camera, pins and calibration when present (config + detection),
    otherwise the simulated table. Prints the table URL and QR codes; stops on Ctrl-C / SIGTERM.
``companion demo …``
    The same with the simulated table forced (``--source simulated``).
``companion record DIR [run options]``
    Runs and records the session to DIR: every stable frame (recorded-session format of
    ``companion.vision.sources``), the observations, dice, answers and committed actions. The
    game is chosen as with ``companion run`` (the host page's setup, or the journal's game);
    for a pack game the changes carried out (chance drawn) and what the pages showed.
``companion replay DIR [--json]``
    Runs a recorded session through the detector and tracker (a pack game: its recorded
    changes) again and compares with what was recorded; exit code 0 when the commits, the
    pages of a pack game and the final state are the same (the last line says IDENTICAL, or
    "inputs only, detector not re-run" when frames or calibration were not recorded), 1 when
    not, 2 when DIR is not a readable recording or names a game the companion does not know.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from companion.config import Config, ConfigError, load_config, with_overrides
from companion.service.app import Companion, SimulationFactory, StartError
from companion.service.record import Recorder, RecordError, replay


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--config", help="TOML config file (default: $COMPANION_CONFIG)")
    p.add_argument("--source", help="frame source: auto, simulated, picamera2, usb:0, file:…")
    p.add_argument("--host", help="web: address to listen on")
    p.add_argument("--port", type=int, help="web: TCP port (0 = any free port)")
    p.add_argument("--data-dir", help="data directory (journal, progress)")
    p.add_argument("--players", type=int, help="players of the first game (1-6)")
    p.add_argument("--seed", type=int, help="simulated table: seed of the game")
    p.add_argument("--speed", type=float, help="simulated table: time factor (e.g. 10)")
    p.add_argument("--games", type=int, help="simulated table: games before stopping (0 = ∞)")
    p.add_argument("--no-qr", action="store_true", help="do not print QR codes")
    p.add_argument("--no-web", action="store_true", help="do not serve the phone pages")
    p.add_argument(
        "--exit-when-over", action="store_true", help="stop when the (last) simulated game is over"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    return p


def config_from_args(args: argparse.Namespace, force_simulated: bool = False) -> Config:
    """The config file with the command line's overrides applied (validated again).

    :raises ConfigError: naming the key.
    """
    config = load_config(args.config)
    changes: dict[str, dict[str, object]] = {}

    def put(section: str, key: str, value: object) -> None:
        if value is not None:
            changes.setdefault(section, {})[key] = value

    put("camera", "source", "simulated" if force_simulated else args.source)
    put("web", "host", args.host)
    put("web", "port", args.port)
    put("data", "dir", args.data_dir)
    put("game", "players", args.players)
    if args.players is not None:
        put("game", "colours", [])
    put("simulation", "seed", args.seed)
    put("simulation", "speed", args.speed)
    put("simulation", "games", args.games)
    return with_overrides(config, **changes) if changes else config


def _run(
    args: argparse.Namespace,
    config: Config,
    simulation: SimulationFactory | None,
    recorder: Recorder | None = None,
) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    companion = Companion(
        config,
        simulation=simulation,
        web=not args.no_web,
        recorder=recorder,
        print_qr=not args.no_qr,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            companion.start()
        except StartError as exc:
            print(f"companion: {exc}", file=sys.stderr)
            return 2
        while not stop.wait(0.5):
            table = companion.table
            if args.exit_when_over and table is not None and table.finished:
                companion.say("the simulated game is over")
                break
    finally:
        companion.say("stopping …")
        companion.stop()
        for s, h in previous.items():
            signal.signal(s, h)
    return 0


def _config_error(exc: ConfigError) -> None:
    """``companion: config: <key>: <why>`` on stderr, the key named once (an error about the
    file itself already starts with ``config:``)."""
    text = str(exc)
    print(
        f"companion: {text if text.startswith('config:') else 'config: ' + text}", file=sys.stderr
    )


def run_main(argv: list[str], simulation: SimulationFactory | None = None) -> int:
    """``companion run``: see the module doc. ``simulation`` builds the simulated table used
    when there is no camera."""
    p = _parser("companion run", "Run the table companion (simulated table without a camera).")
    args = p.parse_args(argv)
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        _config_error(exc)
        return 2
    return _run(args, config, simulation)


def demo_main(argv: list[str], simulation: SimulationFactory | None = None) -> int:
    """``companion demo``: the simulated table, whatever the config says about the camera."""
    p = _parser("companion demo", "Run the companion on the embedded simulated table.")
    args = p.parse_args(argv)
    try:
        config = config_from_args(args, force_simulated=True)
    except ConfigError as exc:
        _config_error(exc)
        return 2
    return _run(args, config, simulation)


def record_main(argv: list[str], simulation: SimulationFactory | None = None) -> int:
    """``companion record DIR``: run and record the session (see the module doc)."""
    p = _parser("companion record", "Run the companion and record the session to a folder.")
    p.add_argument("dir", help="folder to record into (created; must not hold a session)")
    p.add_argument(
        "--all-frames", action="store_true", help="record every frame, not only the stable ones"
    )
    p.add_argument("--png", action="store_true", help="lossless PNG frames instead of JPEG")
    args = p.parse_args(argv)
    try:
        config = config_from_args(args)
        recorder = Recorder(Path(args.dir), all_frames=args.all_frames, lossless=args.png)
    except ConfigError as exc:
        _config_error(exc)
        return 2
    except RecordError as exc:
        print(f"companion record: {exc}", file=sys.stderr)
        return 2
    rc = _run(args, config, simulation, recorder)
    print(f"recorded {recorder.summary()} to {args.dir}")
    return rc


def replay_main(argv: list[str]) -> int:
    """``companion replay DIR``: replay a recorded session and compare."""
    p = argparse.ArgumentParser(
        prog="companion replay",
        description="Run a recorded session through the detector and tracker again and compare.",
    )
    p.add_argument("dir", help="a folder written by `companion record`")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = p.parse_args(argv)
    try:
        result = replay(Path(args.dir))
    except RecordError as exc:
        print(f"companion replay: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(result.text())
    return 0 if result.identical else 1
