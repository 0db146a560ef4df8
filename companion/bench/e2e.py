"""``companion bench e2e``: the whole companion on the simulated table, measured from outside.

    companion bench e2e [--players 3] [--seed 2] [--actions 40] [--modules all] [--no-picture]
                        [--json]

Runs the simulated table (renderer -> detector -> stability gate -> tracker -> journal -> web)
with a phone connected to the table page's event stream (Server-Sent Events over loopback HTTP),
and prints:

* ``still_to_page_ms`` p50 / p99 / max: from the moment the camera took the first frame of a
  still board after a move, to the moment the phone received a snapshot whose **visible board**
  (towers and the top roof's kind per space, visible wizards, castle) shows that move — the
  camera's reading while the tracker is still ``checking`` it (the spaces it withheld as unsure
  drawn from the tracker's board, as the page draws them), else the tracker's. Boards the page
  never showed count as ``missed_boards``.
* ``still_to_agreement_ms`` p50 / p99 / max: the same to the snapshot in which the tracker has
  worked the move out (``checking`` clear; towers by kind in every stack), and
  ``missed_agreements``. ``boards_first_shown_by``: how many boards the page first showed
  right from the camera's reading and how many only from the tracker's (the reading was wrong,
  or the tracker was first); ``slowest_boards``: the three slowest, with both times.
* ``detector_fps``: frames analysed per second of detector time (the detector alone), and the
  median / p95 ms per frame; ``frames``, ``observations``.
* ``rss_mb``: resident memory of the service process (VmRSS now and the peak, VmHWM) — camera,
  detector, tracker, journal, web; ``detector_process_rss_mb``: the same for the detector's
  child process (``[service] detector_process``, None when the detector runs in the service);
  ``service_rss_peak_mb``: the two peaks added (the service's memory, an upper bound: the two
  peaks need not fall together, and the libraries both map count twice); ``service_pss_mb``:
  the two processes' proportional set size at the end (shared pages counted once);
  ``camera_process_rss_mb``: the same for the simulated camera's
  child process (the renderer: the stand-in for a camera, outside the service as a real one is).
* ``still_to_page_parts_ms``: where that time went, per board: ``gate`` (first still frame to
  the stability gate putting the board on the service queue: the gate's stillness wait and the
  detector), ``to_page`` (from there to the phone's event stream receiving the board) and, for
  the agreement, ``queue_and_tracker`` (from the gate to the tracker's result, journalled).
* ``tracker_observe_ms`` p50 / p99 / max: the tracker's time for one still board (the service
  thread's share of still-to-page); ``slowest_observe``: its board (``true_action``, the index
  of the true action whose still board it was, and ``true_action_text``), the tracker's
  ``hypotheses_before`` and ``uncommitted_actions_before``, and ``journal`` /
  ``journal_observation`` to replay it (the data directory is left in place).
  ``service_thread_ms``: the service thread's time per queue item kind (``candidate``: a still
  board worked out ahead; ``command answer``: a phone's answer), all of which an observation
  queued behind them waits for; ``slowest_candidate``: the board of the slowest ``candidate``.
* ``prepared_boards``: still boards the tracker worked out ahead, while the stability gate still
  waited (``worked_out_ahead``), and how many of them were then taken as they were (``used``).
* ``questions``: the tracker's questions (``asked``) and what the host's phone did with them: a
  player who knows the truth answers each one through the web API (``POST /api/command``,
  as the host) ``--answer-delay`` seconds of table time after the phone received it (reading it;
  the game goes on meanwhile): ``seen`` (by the phone: a question decided within moments may
  come and go between two of its updates), ``answered``, ``withdrawn`` (a later frame or press
  decided it first), ``unanswerable`` (no option shows the truth), ``still_open`` at the end.
* ``tracked_equals_truth``: the tracked table (the tracker's best story: board with trapped
  wizards, potions, turn, the expansion's hidden counts) equals the true one at the end.
* ``end_state``: what makes that figure honest: ``wrong_commits`` (committed states that are not
  in the true game's history, and ``first_wrong_after_action``), ``wrong_board_commits``
  (committed states whose board, hidden wizards included, the true history does not have there,
  as ``companion bench tracking`` counts them: the other wrong commits are wrong only in the
  potions), ``committed_actions`` and
  ``uncommitted_actions`` (the best story's actions since the last commit) against
  ``true_actions``, ``board_equals_truth`` (towers, visible and trapped wizards, castle and
  tokens) and ``done_pending``: DONE presses at the very end whose turn the tracked table has
  not closed. The tracker closes a turn on the next still board after its DONE (moves may still
  come), and when the game stops right after a DONE no new still board comes;
  ``equals_truth_before_pending_done`` then compares with the true table before those presses.

``--modules all`` (or a comma list) plays the expansion modules (issue: a 4-player game with all
modules: ``--players 4 --modules all``).

Targets: still-to-page p99 <= 0.6 s, RSS peak <= 200 MB. ``--no-picture`` skips the
renderer and detector (the tracker gets the camera's ideal view) to measure the rest of the path.
The run uses the camera's frame rate (``--fps``, default 8) in real time at ``--speed`` (default
4: scenes pass four times faster than at a real table, frames are taken at 32 per second of wall
time at most — the renderer and detector decide the real rate). The stability gate's stillness
wait is counted in frame time, so at ``--speed 4`` its 0.4 s take 0.1 s of wall time; ``--speed
1`` gives a real table's pace (``still_to_page_parts_ms.gate`` shows the difference).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from companion.config import ServiceConfig
from companion.rules import GameState, Observation
from companion.rules.model import MODULES
from companion.service.app import Companion
from companion.service.child import pss_mb
from companion.service.core import CompanionService
from companion.service.detector_process import DetectorProcess
from companion.service.inputs import (
    CandidateInput,
    CommandInput,
    ObservationInput,
    ServiceInput,
)
from companion.service.pipeline import TakenFrame
from companion.service.record import commit_check, hidden_positions, same_table
from companion.service.tracked import TrackedDriver
from companion.sim.answering import TruthWalk
from companion.sim.simtable import Scene
from companion.sim.simulation import SimulatedTable
from companion.sim.testing import (
    HostPhoneAnswerer,
    finish_game,
    settle,
    sim_config,
    simulated_companion,
    table_of,
    wait_until,
)
from companion.tracking import Committed, board_key, describe


def _rss_mb() -> tuple[float, float]:
    now = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return round(now, 1), round(peak, 1)


def _child_rss_mb(table: SimulatedTable) -> dict[str, float] | None:
    cam = table.sim_camera
    if cam is None:
        return None
    now, peak = cam.rss_mb()
    return {"now": now, "peak": peak}


def _detector_process(companion: Companion) -> DetectorProcess | None:
    vision = companion.vision
    det = vision.detector if vision is not None else None
    return det if isinstance(det, DetectorProcess) else None


def _service_pss_mb(det: DetectorProcess | None) -> float:
    child = det.pid if det is not None else None
    return round(pss_mb() + (pss_mb(child) if child is not None else 0.0), 1)


def _detector_rss_mb(det: DetectorProcess | None) -> dict[str, float] | None:
    if det is None:
        return None
    now, peak = det.rss_mb()
    return {"now": now, "peak": peak}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(round(q * (len(s) - 1))))], 1)


class EventPhone(threading.Thread):
    """A phone on the table page: reads ``/events`` and timestamps every snapshot."""

    def __init__(self, url: str) -> None:
        super().__init__(name="bench-phone", daemon=True)
        self.url = url
        # (time, visible board shown, the tracker's board once it agrees or None)
        self.received: list[tuple[float, tuple[Any, ...], tuple[Any, ...] | None]] = []
        self.stop = threading.Event()
        self.error = ""

    def run(self) -> None:
        try:
            with urllib.request.urlopen(self.url + "/events?as=public", timeout=30) as resp:
                data: list[str] = []
                for raw in resp:
                    if self.stop.is_set():
                        break
                    line = raw.decode("utf-8").rstrip("\n")
                    if line.startswith("data: "):
                        data.append(line[6:])
                    elif not line and data:
                        t = time.monotonic()
                        snap = json.loads("".join(data))
                        data = []
                        if snap.get("state"):  # keep only the board, not the whole snapshot
                            tracked = _board_of_view(snap["state"])
                            seen = snap.get("seen") if snap.get("checking") else None
                            shown = (
                                _visible(tracked) if seen is None else _board_of_seen(seen, tracked)
                            )
                            agreed = None if snap.get("checking") else tracked
                            self.received.append((t, shown, agreed))
        except Exception as exc:  # the thread's top: the server closing the stream ends it
            if not self.stop.is_set():
                self.error = f"{type(exc).__name__}: {exc}"


def _board_of_view(state_json: dict[str, Any]) -> tuple[Any, ...]:
    """Towers by kind per space, visible wizards by colour per space, castle: from a view JSON."""
    kinds = {tid: t["kind"] for tid, t in state_json["towers"].items()}
    stacks = {int(s): tuple(kinds[t] for t in ids) for s, ids in state_json["stacks"].items()}
    visible: dict[int, list[str]] = {}
    for wid, pos in state_json["wizards"].items():
        if pos == "castle":
            continue
        if pos["tier"] == len(stacks.get(pos["space"], ())):
            visible.setdefault(pos["space"], []).append(wid.rsplit("-", 1)[0])
    castle = state_json["castle"]["space"] if isinstance(state_json["castle"], dict) else None
    return (
        tuple(sorted((s, k) for s, k in stacks.items() if k)),
        tuple(sorted((s, tuple(sorted(v))) for s, v in visible.items())),
        castle,
    )


def _board_of_seen(seen: dict[str, Any], tracked: tuple[Any, ...]) -> tuple[Any, ...]:
    """:func:`_visible` of the board a page draws while ``checking``: the camera's reading
    (``seen``) where it read a space, the tracker's board (``tracked``, :func:`_board_of_view`)
    on the spaces it withheld as unsure (``common.js``, ``boardState``: a space not read keeps
    the tracker's belief, never drawn empty)."""
    read = {int(key) for key in seen["spaces"]}
    t_stacks, t_visible, t_castle = _visible(tracked)
    stacks = [(s, k) for s, k in t_stacks if s not in read]
    visible = [(s, v) for s, v in t_visible if s not in read]
    castle = t_castle if t_castle is not None and t_castle not in read else None
    for key, sp in seen["spaces"].items():
        space = int(key)
        if sp["towers"]:
            stacks.append((space, (sp["towers"], sp["top"])))
        colours = tuple(sorted(c for c, n in sp["wizards"].items() for _ in range(n)))
        if colours:
            visible.append((space, colours))
        if sp["castle"]:
            castle = space
    return (tuple(sorted(stacks)), tuple(sorted(visible)), castle)


def _visible(board: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a camera can see of a board key: per space the number of towers and the top roof's
    kind (not the kinds below), the visible wizards, the castle."""
    stacks, visible, castle = board
    return (tuple((s, (len(k), k[-1])) for s, k in stacks), visible, castle)


def _board_of_state(state: GameState) -> tuple[Any, ...]:
    stacks = {}
    visible = {}
    for space in state.spaces():
        kinds = tuple(state.table.towers[t].kind for t in state.stacks[space - 1])
        if kinds:
            stacks[space] = kinds
        vis = [w.rsplit("-", 1)[0] for w in state.visible_wizards(space)]
        if vis:
            visible[space] = tuple(sorted(vis))
    return (tuple(sorted(stacks.items())), tuple(sorted(visible.items())), state.castle)


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="companion-bench-e2e-"))
    cfg = sim_config(
        tmp / "data",
        seed=args.seed,
        players=args.players,
        game={"modules": list(args.modules)},
        camera={"fps": args.fps},
        simulation={
            "speed": args.speed,
            "max_actions": args.actions,
            "picture": not args.no_picture,
            "seconds_per_action": args.seconds_per_action,
        },
        service={
            "status_every_s": 0.0,
            "work_ahead": ServiceConfig.work_ahead if args.work_ahead is None else args.work_ahead,
            "detector_process": ServiceConfig.detector_process
            if args.detector_process is None
            else args.detector_process,
        },
    )
    # the questions are answered on the host's phone (below), not by the simulated players
    companion = simulated_companion(cfg, out=io.StringIO(), answer_questions=False)
    stills: list[tuple[float, tuple[Any, ...]]] = []  # (time the board became still, board)
    companion.start()
    table = table_of(companion)
    picture = bool(table.vision_ok)
    game = table.game
    assert game is not None

    def on_still(scene: Scene, taken_at: float) -> None:
        if scene.hand is None:
            stills.append((taken_at, _board_of_state(scene.state)))

    camera = companion.camera
    if picture and camera is not None and table.source is not None and table.cursor is not None:
        orig = camera.on_frame
        src = table.source
        cursor = table.cursor
        last_scene = [-1]

        def on_frame(frame: TakenFrame) -> None:
            if orig is not None:
                orig(frame)
            n = src.scene_number
            if n != last_scene[0]:
                last_scene[0] = n
                scene = cursor.current()
                if scene is not None:
                    on_still(scene, frame.taken_at)

        camera.on_frame = on_frame
    else:
        orig_scene = table._on_scene

        def on_scene(scene: Scene, frame_index: int) -> None:
            orig_scene(scene, frame_index)
            on_still(scene, time.monotonic())

        # the bench watches the table from outside: its scenes, its service's queue and tracker
        table._on_scene = on_scene  # type: ignore[method-assign]
    observe_ms: list[float] = []
    slowest: dict[str, Any] = {}  # the slowest observe: which board, the tracker before it
    observed: list[tuple[float, float]] = []  # (tracker started, tracker done), monotonic s
    posted: list[float] = []  # when the stability gate put a still board on the service queue
    orig_post = companion.service.post

    def timed_post(item: ServiceInput) -> None:
        if isinstance(item, ObservationInput):
            posted.append(time.monotonic())
        orig_post(item)

    companion.service.post = timed_post  # type: ignore[method-assign]
    busy: dict[str, list[float]] = {}  # the service thread's time per queue item kind, ms
    slowest_candidate: dict[str, Any] = {}
    orig_handle = companion.service._handle

    def timed_handle(item: ServiceInput) -> None:
        t = time.perf_counter()
        try:
            orig_handle(item)
        finally:
            ms = (time.perf_counter() - t) * 1000.0
            kind = item.kind
            if isinstance(item, CommandInput):
                kind = f"command {item.command.get('command')}"
            if isinstance(item, CandidateInput) and ms > max(busy.get(kind, ()), default=-1.0):
                frame = item.observation.frame
                slowest_candidate.clear()
                slowest_candidate.update(ms=round(ms, 1), true_action=_true_action(table, frame))
            busy.setdefault(kind, []).append(ms)

    companion.service._handle = timed_handle  # type: ignore[method-assign]
    driver = companion.service.driver
    if isinstance(driver, TrackedDriver):
        orig_observe = driver.observe
        tracker = driver.tracker
        journal = driver.journal

        def timed_observe(obs: Observation) -> list[str]:
            hyps = len(tracker.hypotheses)
            lag = len(tracker.uncommitted)
            t = time.perf_counter()
            start = time.monotonic()
            try:
                return orig_observe(obs)
            finally:
                ms = (time.perf_counter() - t) * 1000.0
                if ms > max(observe_ms, default=-1.0):
                    slowest.clear()
                    slowest.update(
                        ms=round(ms, 1),
                        true_action=_true_action(table, obs.frame),
                        hypotheses_before=hyps,
                        uncommitted_actions_before=lag,
                        journal_observation=journal.count("observation"),
                    )
                observe_ms.append(ms)
                observed.append((start, time.monotonic()))

        driver.observe = timed_observe  # type: ignore[method-assign]
    asked: list[str] = []  # ids of the questions the tracker asked, as published

    def on_publish(svc: CompanionService) -> None:
        q = svc.question
        if q is not None and (not asked or asked[-1] != q["id"]):
            asked.append(str(q["id"]))

    companion.service.add_listener(on_publish)
    phone = EventPhone(companion.url)
    phone.start()
    answerer = HostPhoneAnswerer(companion, delay_s=args.answer_delay / args.speed).start()
    t0 = time.monotonic()
    try:
        finish_game(companion, timeout_s=args.timeout)

        # a question still open at the end: the host's phone answers it first (or gives up on
        # it: unanswerable), then whatever the answer commits is published
        def answered_or_given_up() -> bool:
            q = companion.service.question
            return q is None or (q["id"] in answerer.seen and q["id"] not in answerer.unhandled())

        with contextlib.suppress(TimeoutError):
            wait_until(
                answered_or_given_up,
                args.answer_delay / args.speed + 10.0,
                "the host's answer",
            )
        settle(companion, timeout_s=args.timeout)
    finally:
        elapsed = time.monotonic() - t0
        answerer.stop()
        phone.stop.set()
        rss_now, rss_peak = _rss_mb()
        child_rss = _child_rss_mb(table)
        det_process = _detector_process(companion)
        detector_rss = _detector_rss_mb(det_process)
        service_pss = _service_pss_mb(det_process)
        truth = game.state
        tracked = companion.service.state
        assert tracked is not None
        vision = companion.vision
        detect_ms = list(vision.detect_ms) if vision is not None else []
        frames = vision.frames if vision is not None else 0
        observations = vision.observations if vision is not None else 0
        detected = vision.detected if vision is not None else 0
        final_driver = companion.service.driver
        jt = final_driver.jt if isinstance(final_driver, TrackedDriver) else None
        end = _end_state(companion, tracked, truth)
        _name_the_board(companion, slowest)
        _name_the_board(companion, slowest_candidate)
        slowest_candidate.pop("journal", None)
        still_open = companion.service.question
        companion.stop()
    received = phone.received
    agreement: list[float] = []
    missed_agreements = 0
    shown_by = {"camera": 0, "tracker": 0}  # whose board the page first showed right
    slow: list[dict[str, Any]] = []
    latencies: list[float] = []
    parts: dict[str, list[float]] = {"gate": [], "queue_and_tracker": [], "to_page": []}
    missed = 0
    previous = None
    for t_still, board in stills:
        if board == previous:
            continue
        previous = board
        agreed = next((t for t, _, b in received if t >= t_still - 1e-6 and b == board), None)
        if agreed is None:
            missed_agreements += 1
        else:
            agreement.append((agreed - t_still) * 1000.0)
        shown = _visible(board)
        first = next((r for r in received if r[0] >= t_still - 1e-6 and r[1] == shown), None)
        if first is None:
            missed += 1
            continue
        hit = first[0]
        latencies.append((hit - t_still) * 1000.0)
        shown_by["tracker" if first[2] is not None else "camera"] += 1
        slow.append(
            {
                "ms": round((hit - t_still) * 1000.0, 1),
                "shown_by": "tracker" if first[2] is not None else "camera",
                "agreed_ms": None if agreed is None else round((agreed - t_still) * 1000.0, 1),
            }
        )
        # where the time went: the last still board posted before the page showed this one
        t_post = max((t for t in posted if t_still <= t <= hit), default=None)
        if t_post is not None:
            parts["gate"].append((t_post - t_still) * 1000.0)
            parts["to_page"].append((hit - t_post) * 1000.0)
        if agreed is None:
            continue
        t_post = max((t for t in posted if t_still <= t <= agreed), default=None)
        done = max(
            (d for s, d in observed if t_post is not None and s >= t_post and d <= agreed),
            default=None,
        )
        if t_post is not None and done is not None:
            parts["queue_and_tracker"].append((done - t_post) * 1000.0)
    total_detect_s = sum(detect_ms) / 1000.0
    return {
        "mode": "rendered frames through the detector" if picture else "ideal view (no picture)",
        "players": args.players,
        "modules": list(args.modules),
        "seed": args.seed,
        "actions": len(game.record.actions),
        "wall_s": round(elapsed, 1),
        "boards": len(latencies) + missed,
        "missed_boards": missed,
        "still_to_page_ms": {
            "p50": _pct(latencies, 0.50),
            "p99": _pct(latencies, 0.99),
            "max": round(max(latencies), 1) if latencies else None,
        },
        "still_to_agreement_ms": {
            "p50": _pct(agreement, 0.50),
            "p99": _pct(agreement, 0.99),
            "max": round(max(agreement), 1) if agreement else None,
        },
        "missed_agreements": missed_agreements,
        "boards_first_shown_by": shown_by,
        "slowest_boards": sorted(slow, key=lambda b: -float(b["ms"]))[:3],
        "still_to_page_parts_ms": {
            name: {"p50": _pct(v, 0.5), "p99": _pct(v, 0.99), "max": round(max(v), 1)}
            for name, v in parts.items()
            if v
        },
        "prepared_boards": {
            "worked_out_ahead": getattr(jt, "prepared", 0),
            "used": getattr(jt, "prepared_used", 0),
        },
        "tracker_observe_ms": {
            "p50": _pct(observe_ms, 0.5),
            "p99": _pct(observe_ms, 0.99),
            "max": round(max(observe_ms), 1) if observe_ms else None,
        },
        "slowest_observe": slowest or None,
        "slowest_candidate": slowest_candidate or None,
        "service_thread_ms": {
            kind: {"n": len(v), "p50": _pct(v, 0.5), "max": round(max(v), 1)}
            for kind, v in sorted(busy.items())
        },
        "frames": frames,
        "detections": detected,
        "observations": observations,
        "detector_ms": {"p50": _pct(detect_ms, 0.5), "p95": _pct(detect_ms, 0.95)},
        "detector_fps": round(detected / total_detect_s, 2) if total_detect_s else None,
        "rss_mb": {"now": rss_now, "peak": rss_peak},
        "detector_process_rss_mb": detector_rss,
        "service_rss_peak_mb": round(rss_peak + (detector_rss or {}).get("peak", 0.0), 1),
        "service_pss_mb": service_pss,
        "camera_process_rss_mb": child_rss,
        "questions": {
            "asked": len(dict.fromkeys(asked)),
            **answerer.counts(),
            "still_open": still_open is not None,
            "answer_delay_s": args.answer_delay,
        },
        "tracked_equals_truth": bool(
            same_table(tracked, truth) and hidden_positions(tracked) == hidden_positions(truth)
        ),
        "end_state": end,
        "health": companion.service.health_line,
        "phone_error": phone.error,
        "median_check": statistics.median(latencies) if latencies else None,
    }


def _wrong_boards(history: Iterable[Committed], truths: Sequence[GameState]) -> int:
    """Committed states whose board the true history does not have there, counted as
    ``companion bench tracking`` counts them (:class:`~companion.sim.answering.TruthWalk`)."""
    walk = TruthWalk(truths)
    for c in history:
        walk.check(c.state, c.potions)
    return walk.wrong_board


def _end_state(companion: Companion, tracked: GameState, truth: GameState) -> dict[str, Any]:
    """What the tracker committed and holds at the end, against the simulated truth (see the
    module doc, ``end_state``)."""
    game = table_of(companion).game
    assert game is not None
    record = game.record
    driver = companion.service.driver
    tracker = driver.tracker if isinstance(driver, TrackedDriver) else None
    history = tracker.history if tracker is not None else ()
    wrong, first = commit_check(history, record.states)
    pending = 0
    for action in reversed(record.actions):
        if type(action).__name__ != "EndTurn":
            break
        pending += 1
    if pending and tracked.turn == truth.turn:
        pending = 0  # the tracked turn is closed already
    before = record.states[-1 - pending]
    return {
        "true_actions": len(record.actions),
        "committed_actions": sum(1 for c in history if c.action is not None),
        "uncommitted_actions": len(tracker.uncommitted) if tracker is not None else 0,
        "wrong_commits": wrong,
        "wrong_board_commits": _wrong_boards(history, record.states),
        "first_wrong_after_action": first,
        "board_equals_truth": bool(
            board_key(tracked) == board_key(truth)
            and hidden_positions(tracked) == hidden_positions(truth)
        ),
        "differs_from_truth_in": _differences(tracked, truth),
        "done_pending": pending,
        "equals_truth_before_pending_done": (
            bool(
                same_table(tracked, before)
                and hidden_positions(tracked) == hidden_positions(before)
            )
            if pending
            else None
        ),
        "differs_before_pending_done_in": _differences(tracked, before) if pending else None,
    }


def _true_action(table: SimulatedTable, frame: int | None) -> int | None:
    """The index of the true action whose scene the camera's frame ``frame`` showed (None
    without a picture, or for a frame too old to be looked up)."""
    source = table.source
    scene = source.scene_at(frame) if source is not None and frame is not None else None
    return int(scene.step) if scene is not None else None


def _name_the_board(companion: Companion, slowest: dict[str, Any]) -> None:
    """Add to the slowest observe's entry the true action its board showed (in players' words)
    and where to find its input again: the game's journal, in which it is the
    ``journal_observation``-th observation (replay the inputs before it into a tracker made
    from the journal's start record, then time that one)."""
    if not slowest:
        return
    driver = companion.service.driver
    path = driver.journal_path if isinstance(driver, TrackedDriver) else None
    slowest["journal"] = str(path) if path is not None else None
    step = slowest.get("true_action")
    game = table_of(companion).game
    if step is None or game is None:
        return
    record = game.record
    if 0 <= step < len(record.actions):
        slowest["true_action_text"] = describe(record.actions[step], record.states[step])


def _differences(a: GameState, b: GameState) -> list[str]:
    """What differs between two states, in players' words: ``board``, ``hidden wizards``,
    ``potions``, ``turn``, ``game`` (end trigger, turns left, over) and, with the expansion, its
    counts the camera cannot see (``witch_vials``, ``feathers``, ``armed``, ``free_casts``, …)."""
    out = []
    if board_key(a) != board_key(b):
        out.append("board")
    if hidden_positions(a) != hidden_positions(b):
        out.append("hidden wizards")
    for name in ("potions", "turn", "game"):
        if getattr(a, name) != getattr(b, name):
            out.append(name)
    ma, mb = a.modules, b.modules
    if ma is not None and mb is not None:
        for name in ("witch_vials", "witch_vial_supply", "feathers", "armed", "free_casts"):
            if getattr(ma, name, None) != getattr(mb, name, None):
                out.append(name)
    return out


def _modules(text: str) -> tuple[str, ...]:
    if text == "all":
        return MODULES
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown module {unknown[0]!r} (one of {', '.join(MODULES)} or 'all')"
        )
    return names


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="companion bench e2e", description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--actions", type=int, default=40, help="actions to play (0 = whole game)")
    p.add_argument("--fps", type=float, default=8.0)
    p.add_argument("--speed", type=float, default=4.0)
    p.add_argument("--seconds-per-action", type=float, default=3.0)
    p.add_argument(
        "--modules",
        type=_modules,
        default=(),
        help="expansion modules: 'all' or a comma list (fountain,web,witch,raven,magic_tower)",
    )
    p.add_argument("--no-picture", action="store_true", help="ideal view instead of frames")
    p.add_argument(
        "--work-ahead",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the tracker works on a board while the stability gate still waits "
        "(default: the config's service.work_ahead)",
    )
    p.add_argument(
        "--detector-process",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the detector reads the frames in a child process of its own "
        "(default: the config's service.detector_process)",
    )
    p.add_argument(
        "--answer-delay",
        type=float,
        default=3.0,
        help="seconds of table time the host takes to answer a question on the phone",
    )
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    out = run(args)
    out.pop("median_check", None)
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")
    return 0
