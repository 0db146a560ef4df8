"""``companion record`` and ``companion replay``: a session on disk, and running it again.

A recording folder::

    recording.json   {"format": "companion-recording", "version": 1, "settings": {...},
                      "game": {...}, "source": "simulated", "created_unix_s": ...}
                     ("game": the first game as a replay starts it: its "settings" and, for a
                     pack game, "record" — a pack_start record with the positions in force —
                     and "shown", what every page and the LEDs showed)
    session.json, frames.jsonl, frames/
                     every stable frame (``--all-frames``: every frame; ``--png``: lossless) in
                     the recorded-session
                     format of ``companion.vision.sources`` (SessionRecorder); each index line
                     also carries "observation" (the stable reading, Observation JSON) or "gate"
    camera.json, geometry.json, profile.json
                     the calibration the detector used (camera model, board geometry, colour
                     profile), so a replay detects with exactly the same inputs
    inputs.jsonl     every input of the service in order:
                     {"n": 7, "kind": "observation", "frame": 212, "payload": {...}}
                     ("frame" is the index in frames.jsonl of the stored frame on which the
                     gate reported this reading; the payload's own "frame" is the frame of
                     the reading itself, earlier in the same still period)
                     {"n": 8, "kind": "dice", "payload": {"rolls": [4], "used": 4, ...}}
                     {"n": 9, "kind": "done"} / "undo" /
                     {"n": 10, "kind": "command", "audience": {...}, "payload": {...}}
    results.jsonl    what each input committed: {"n": 7, "committed": [...], "health": "ok",
                     "question": null, "state": <state JSON after it, when it changed>}
                     and, when it applies: "new_game" (the input went to a new game, e.g. the
                     host's setup: as "game" above), "carried_out" (a pack game's change with
                     chance drawn, its journal record: {"kind": "pack_input", "command":
                     {...}, "by": {...}} or {"kind": "pack_undo"}), "shown" (a pack game's pages
                     and LEDs after it, when they changed)

Lines are appended and flushed one at a time; a recording cut short loses at most its last line.

:func:`replay` runs the recording again with a detector built from the saved calibration and a
fresh tracker. A recording of every frame (``companion record --all-frames --png``; a frame the
source repeated is stored once) goes through detector and stability gate in order, exactly as it
did live, so the replay must be identical; a recording of the stable frames only re-reads each
of them (the live gate had voted over the whole still period, so a reading may differ — reported
per input, and the tracker then gets the new reading; an equal reading keeps the confidences of
the still period). Without stored frames or calibration only the inputs are replayed, and the
verdict says so ("inputs only, detector not re-run") instead of IDENTICAL. Then every input
goes in the recorded order through the tracker, and the committed actions and the final state
— hidden wizards included — are compared with the recording. A pack game's inputs are replayed
from their carried-out changes and its pages compared after each
(:mod:`companion.service.packreplay`). An input without a results line (dropped for a new game,
or after the recording was cut) is not replayed.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from companion.config import Config
from companion.packs.registry import GAMES, PACKS, WANDERING_TOWERS
from companion.rules import GameState, Observation, dump_state
from companion.service.detector_process import AnyDetector
from companion.service.driver import GameDriver, RecordedGame
from companion.service.game import GameSettings
from companion.service.inputs import (
    CommandInput,
    ObservationInput,
    Outcome,
    ServiceInput,
    payload_json,
)
from companion.service.packreplay import PackReplay, PackTally, shown_json
from companion.service.pipeline import EarlyReading, TakenFrame, reading_of
from companion.tracking import Committed, Tracker, TrackerUpdate, board_key, state_key
from companion.vision.camera import CameraModel
from companion.vision.detector import Detection, Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.sources import Frame, SessionRecorder, read_image_file
from companion.vision.stability import GateDecision, StabilityGate
from companion.web.service import CommandError

log = logging.getLogger(__name__)

FORMAT = "companion-recording"
VERSION = 1


class RecordedService(Protocol):
    """What a :class:`Recorder` needs of the service: its game, and where it reports inputs
    (``companion.service.core.CompanionService``)."""

    on_input: Callable[[ServiceInput], None] | None
    on_result: Callable[[ServiceInput, Outcome], None] | None

    @property
    def settings(self) -> GameSettings: ...

    @property
    def driver(self) -> GameDriver | None: ...


class RecordError(ValueError):
    """A recording folder that cannot be written or read; the message names the file."""


class Recorder:
    """Writes a recording folder while the companion runs (see the module doc).

    :param path: the folder (created; must not hold a recording already).
    :param all_frames: record every frame, not only the stable ones.
    :param lossless: PNG frames instead of JPEG (quality 95), so a replay detects on exactly
        the pixels the companion saw (larger files).
    :raises RecordError: the folder already holds a recording.
    """

    def __init__(self, path: Path, all_frames: bool = False, lossless: bool = False) -> None:
        self.path = Path(path)
        if (self.path / "recording.json").exists():
            raise RecordError(f"{self.path} already holds a recording")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._inputs = open(self.path / "inputs.jsonl", "a", encoding="utf-8")  # noqa: SIM115
            self._results = open(self.path / "results.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise RecordError(f"{self.path}: {exc}") from None
        self.all_frames = all_frames
        self.lossless = lossless
        self._sessions: SessionRecorder | None = None
        self._lock = threading.Lock()
        self._n = 0
        self._current: dict[int, int] = {}
        # reading's frame -> index of the stored frame on which the gate reported it
        self._stored_at: dict[int, int] = {}
        self.frames = 0
        self.inputs = 0
        self.commits = 0
        self._source_spec = ""
        self._detector: Callable[[], AnyDetector | None] = lambda: None
        self._last_state: dict[str, Any] | None = None
        self._service: RecordedService | None = None
        self._driver_seen: object = None  # the game driver the last line was written for
        self._last_shown: dict[str, Any] | None = None
        self._last_image: object = None
        self._last_file = ""

    def attach(
        self,
        service: RecordedService,
        config: Config,
        mode: str,
        detector: Callable[[], AnyDetector | None],
    ) -> None:
        """Start the recording of a companion's service once its first game is set up (or
        restored), before the threads start: the service then calls :meth:`on_input` and
        :meth:`on_result`, the camera's threads :meth:`on_frame` and :meth:`on_decision`.

        :param service: the service (its game, and where its inputs are reported).
        :param mode: ``camera`` or ``simulated``.
        :param detector: the detector in use, once there is one (its calibration is saved).
        """
        self._source_spec = config.camera.source
        self._detector = detector
        self._service = service
        header = {
            "format": FORMAT,
            "version": VERSION,
            "settings": service.settings.to_json(),
            "game": self._game_start(),
            "source": config.camera.source,
            "mode": mode,
            "created_unix_s": time.time(),
            "all_frames": self.all_frames,
            "lossless": self.lossless,
        }
        (self.path / "recording.json").write_text(json.dumps(header, indent=1) + "\n")
        service.on_input = self.on_input
        service.on_result = self.on_result

    def _game_start(self) -> dict[str, Any]:
        """The service's game as a replay starts it: its ``settings`` and, for a game that draws
        chance itself (a pack), its positions (``record``) and what its pages show (``shown``)."""
        service = self._service
        assert service is not None
        driver = self._driver_seen = service.driver
        out: dict[str, Any] = {"settings": service.settings.to_json()}
        self._last_state = None
        if isinstance(driver, RecordedGame):
            out["record"] = driver.start_record()
            out["shown"] = self._last_shown = shown_json(driver.published.pack)
        return out

    def _save_calibration(self, detector: AnyDetector) -> None:
        for name, save in (
            ("camera.json", detector.camera.save),
            ("geometry.json", detector.geometry.save),
            ("profile.json", detector.profile.save),
        ):
            try:
                save(self.path / name)
            except OSError as exc:  # the recording goes on; a replay then says what is missing
                log.warning("recording: %s not saved: %s", name, exc)

    def _session(self) -> SessionRecorder:
        if self._sessions is None:
            self._sessions = SessionRecorder(
                self.path,
                source_spec=self._source_spec,
                image_ext=".png" if self.lossless else ".jpg",
            )
            detector = self._detector()
            if detector is not None:
                self._save_calibration(detector)
        return self._sessions

    # camera thread
    def on_frame(self, frame: TakenFrame) -> None:
        return None

    # vision thread
    def on_decision(self, frame: TakenFrame, detection: Detection, decision: GateDecision) -> None:
        obs = decision.observation
        if obs is None and not self.all_frames:
            return
        extra: dict[str, Any] = {"gate": decision.state}
        if obs is not None:
            extra["observation"] = obs.to_json()
        with self._lock:
            if obs is not None:
                if len(self._stored_at) > 64:  # readings never posted (service stopping)
                    self._stored_at.clear()
                self._stored_at[obs.frame] = frame.index
            session = self._session()
            if self.all_frames and frame.image is self._last_image and self._last_file:
                # the source repeated the very same frame (the simulated table over a still
                # board): one more index line for the same image file, in the session format
                line = {
                    "index": frame.index,
                    "time_s": round(frame.time_s, 6),
                    "file": self._last_file,
                    "size": [int(frame.image.shape[1]), int(frame.image.shape[0])],
                    **extra,
                }
                session._index_fh.write(json.dumps(line) + "\n")
                session._index_fh.flush()
            else:
                written = session.write(Frame(frame.image, frame.index, frame.time_s), **extra)
                self._last_file = written.relative_to(self.path).as_posix()
                self._last_image = frame.image
            self.frames += 1

    # service thread
    def on_input(self, item: ServiceInput) -> None:
        with self._lock:
            self._n += 1
            self._current[id(item)] = self._n
            line: dict[str, Any] = {"n": self._n, "kind": item.kind}
            if isinstance(item, ObservationInput):
                seen = item.observation.frame
                line["frame"] = self._stored_at.pop(seen, seen)
            payload = payload_json(item)
            if payload is not None:
                line["payload"] = payload
            if isinstance(item, CommandInput):
                line["audience"] = item.audience.to_json()
            self._write(self._inputs, line)
            self.inputs += 1

    def _write(self, fh: IO[str], line: dict[str, Any]) -> None:
        try:
            fh.write(json.dumps(line) + "\n")
            fh.flush()
        except OSError as exc:  # a full disk ends the recording, never the game
            log.error("recording %s: %s", self.path, exc)

    def on_result(self, item: ServiceInput, outcome: Outcome) -> None:
        with self._lock:
            n = self._current.pop(id(item), None)
            if n is None:
                return
            line: dict[str, Any] = {"n": n, "committed": [], "health": None, "question": None}
            service = self._service
            if service is not None and service.driver is not self._driver_seen:
                line["new_game"] = self._game_start()  # the host set up another game
            if outcome.record is not None:
                line["carried_out"] = outcome.record
            if outcome.shown is not None:
                shown = shown_json(outcome.shown)
                if shown != self._last_shown:
                    line["shown"] = self._last_shown = shown
            update = outcome.update
            if update is not None:
                line["committed"] = update.committed_json()
                line["health"] = update.health
                line["question"] = None if update.question is None else update.question.to_json()
                self.commits += len(update.committed)
                state = dump_state(update.state)
                if state != self._last_state:  # the tracker's best state changed
                    line["state"] = state
                    self._last_state = state
            self._write(self._results, line)

    def summary(self) -> str:
        return f"{self.inputs} inputs, {self.frames} frames, {self.commits} committed actions"

    def close(self) -> None:
        with self._lock:
            for fh in (self._inputs, self._results):
                if not fh.closed:
                    fh.flush()
                    fh.close()
            if self._sessions is not None:
                self._sessions.close()


# ----------------------------------------------------------------------------------------------
# replay


@dataclass
class ReplayResult:
    """The comparison of a replay with its recording."""

    inputs: int = 0
    frames_detected: int = 0
    readings: int = 0  # observation inputs
    readings_detected: int = 0  # of them, read again by the detector from their stored frame
    readings_differing: list[int] = field(default_factory=list)  # input numbers
    commits_recorded: int = 0
    commits_replayed: int = 0
    commit_mismatches: list[int] = field(default_factory=list)  # input numbers
    final_state_equal: bool = False  # the tracker's best state (a pack: its pages) at the end
    final_hidden: list[list[object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    packs: PackTally = field(default_factory=PackTally)  # the pack games' comparison

    @property
    def detector_rerun(self) -> bool:
        """Every recorded reading was made again by the detector from its stored frame."""
        return self.readings_detected == self.readings

    @property
    def verdict(self) -> str:
        """``IDENTICAL``, ``DIFFERENT``, or ``SAME COMMITS (inputs only, detector not re-run …)``
        when the recorded readings were fed as they are."""
        if not self.identical:
            return "DIFFERENT"
        if self.detector_rerun:
            return "IDENTICAL"
        return (
            "SAME COMMITS (inputs only, detector not re-run on "
            f"{self.readings - self.readings_detected} of {self.readings} readings)"
        )

    @property
    def identical(self) -> bool:
        return (
            not self.readings_differing
            and not self.commit_mismatches
            and self.commits_recorded == self.commits_replayed
            and self.packs.same
            and self.final_state_equal
        )

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["identical"] = self.identical
        d["detector_rerun"] = self.detector_rerun
        d["verdict"] = self.verdict
        return d

    def text(self) -> str:
        what = "every page and the LEDs" if self.packs.games else "incl. hidden wizards"
        lines = [
            f"inputs replayed: {self.inputs}; frames detected again: {self.frames_detected}; "
            f"readings made again by the detector: {self.readings_detected} of {self.readings}",
            f"readings that differ from the recording: {len(self.readings_differing)}"
            + (f" (inputs {self.readings_differing[:10]})" if self.readings_differing else ""),
            f"committed actions: recorded {self.commits_recorded}, replayed "
            f"{self.commits_replayed}; inputs whose commits differ: "
            f"{len(self.commit_mismatches)}",
            *self.packs.lines(),
            f"final state ({what}) equal: {self.final_state_equal}",
            *self.notes,
            self.verdict,
        ]
        return "\n".join(lines)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: {exc}") from None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if i == len(lines) - 1:
                break  # a recording cut short: its last line may be partial
            raise RecordError(f"{path.name}: line {i + 1} is not JSON") from None
        if not isinstance(row, dict):
            raise RecordError(f"{path.name}: line {i + 1} is not a JSON object")
        out.append(row)
    return out


def hidden_positions(state: GameState) -> list[list[object]]:
    """``[colour, space, tier]`` of every trapped wizard of a state, sorted. Wizards of one colour
    are identical wooden pieces, so their ids are left out."""
    out: list[tuple[str, int, int]] = []
    for space in state.spaces():
        for wid, tier in state.hidden_wizards(space):
            out.append((wid.rsplit("-", 1)[0], space, tier))
    return [list(t) for t in sorted(out)]


def same_table(a: GameState, b: GameState) -> bool:
    """Two states show the same table: towers per stack by kind, wizards of each colour (hidden
    ones with their tier), the castle, potions, turn and game progress."""
    return bool(state_key(a) == state_key(b))


def commit_check(
    history: Iterable[Committed], truths: Sequence[GameState]
) -> tuple[int, int | None]:
    """``(wrong commits, index of the true action after which the first wrong one came)``.

    A wrong commit is a committed state (``history``: the tracker's ``Committed`` entries) that
    is not in the true game's history (``truths``: the states after the setup and after each
    true action, in order), compared as a player sees the table: the board with hidden wizards
    and their tiers, the castle, and the potions (any of an entry's potion alternatives, when
    it shows them as uncertain). The true history is walked in order, so a
    commit matching a state from before the previous commit's is wrong too. The index is -1
    for the setup; None when no commit is wrong.
    """
    keys = [(board_key(t), t.potions) for t in truths]
    pointer, wrong, first = 0, 0, None
    for c in history:
        # potions shown as "one of these" (Committed.potions) are wrong only when none is
        bk = board_key(c.state)
        ks = {(bk, p) for p in c.potions} or {(bk, c.state.potions)}
        j = pointer
        while j < len(keys) and keys[j] not in ks:
            j += 1
        if j < len(keys):
            pointer = j
        else:
            wrong += 1
            first = pointer - 1 if first is None else first
    return wrong, first


def replay(path: Path, detect: bool = True) -> ReplayResult:
    """Run a recording again and compare (see the module doc).

    :param detect: run the detector again on the recorded frames (when calibration files and
        frames are there); otherwise feed the recorded observations.
    :raises RecordError: not a recording folder, a game the companion does not know, or a
        file that cannot be read (the message names the file and the line or input).
    """
    path = Path(path)
    try:
        header = json.loads((path / "recording.json").read_text())
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path}: not a recording ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise RecordError(f"{path}/recording.json: format is not {FORMAT}")
    first = header.get("game") or {"settings": header.get("settings")}
    result = ReplayResult()
    game = _Game.start(first, f"{path.name}/recording.json", result)
    inputs = _read_jsonl(path / "inputs.jsonl")
    results = {}
    for i, r in enumerate(_read_jsonl(path / "results.jsonl")):
        if not isinstance(r.get("n"), int):
            raise RecordError(f"results.jsonl: line {i + 1} has no input number")
        results[r["n"]] = r
    frames: dict[int, dict[str, Any]] = {}
    by_reading: dict[int, dict[str, Any]] = {}  # a reading's own frame -> its stored frame
    detector = None
    emitted: list[Observation] | None = None
    if detect and (path / "frames.jsonl").exists():
        entries = _read_jsonl(path / "frames.jsonl")
        try:
            frames = {int(e["index"]): e for e in entries}
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"frames.jsonl: a frame without its index ({exc})") from None
        for e in entries:
            seen = e.get("observation")
            if isinstance(seen, dict) and isinstance(seen.get("frame"), int):
                by_reading.setdefault(seen["frame"], e)
        detector = _detector_from(path, result)
        if detector is not None and header.get("all_frames"):
            # every frame was recorded: run detector and stability gate over all of them, in
            # order, as the live pipeline did
            emitted = _pipeline_again(detector, path, entries, result)
    for i, line in enumerate(inputs):
        n, kind = line.get("n"), line.get("kind")
        if not isinstance(n, int) or not isinstance(kind, str):
            raise RecordError(f"inputs.jsonl: line {i + 1} has no input number or kind")
        payload: Any = line.get("payload")  # JSON as recorded: checked by what reads it
        recorded = results.get(n)
        if recorded is None:  # dropped for a new game, or the recording was cut before it
            result.notes.append(f"input {n} ({kind}): no result recorded, not replayed")
            continue
        result.inputs += 1
        if recorded.get("new_game") is not None:  # it went to a new game (the host's setup)
            game = _Game.start(recorded["new_game"], f"results.jsonl: input {n}", result)
        if game.pack is not None:
            try:
                game.pack.step(n, line, recorded, result.notes)
            except ValueError as exc:  # a carried-out change of the wrong shape
                raise RecordError(f"results.jsonl: input {n}: {exc}") from None
        else:
            assert game.tracker is not None
            try:
                update = _track_again(
                    game.tracker,
                    n,
                    kind,
                    payload,
                    line,
                    result,
                    (frames, by_reading, detector, emitted, path),
                )
            except (KeyError, TypeError, AttributeError) as exc:
                raise RecordError(
                    f"inputs.jsonl: input {n} ({kind}): malformed ({type(exc).__name__}: {exc})"
                ) from None
            rec_commits = recorded.get("committed", [])
            got = update.committed_json() if update is not None else []
            result.commits_recorded += len(rec_commits)
            result.commits_replayed += len(got)
            if got != rec_commits:
                result.commit_mismatches.append(n)
            if recorded.get("state") is not None:
                game.last_state = recorded["state"]
    if game.pack is not None:
        result.final_state_equal = game.pack.final_equal()
        return result
    assert game.tracker is not None
    final = game.tracker.state
    result.final_hidden = hidden_positions(final)
    if game.last_state is None:
        result.final_state_equal = not result.commits_recorded
        result.notes.append("the recording holds no committed state")
    else:
        result.final_state_equal = dump_state(final) == game.last_state
    return result


def _track_again(
    tracker: Tracker,
    n: int,
    kind: str,
    payload: Any,
    line: dict[str, Any],
    result: ReplayResult,
    seen: tuple[
        dict[int, dict[str, Any]],
        dict[int, dict[str, Any]],
        Detector | None,
        list[Observation] | None,
        Path,
    ],
) -> TrackerUpdate | None:
    """One recorded input through the replay's tracker (a reading detected again when its
    frame is stored); a refusal is noted. :raises KeyError, TypeError: a malformed input."""
    frames, by_reading, detector, emitted, path = seen
    try:
        match kind:
            case "observation":
                obs = Observation.from_json(payload)
                result.readings += 1
                # recordings made before inputs named the stored frame name the reading's
                entry = frames.get(int(line.get("frame", -1))) or by_reading.get(obs.frame)
                if emitted is not None:
                    again = emitted.pop(0) if emitted else None
                    if again is None or reading_of(again) != reading_of(obs):
                        result.readings_differing.append(n)
                    if again is not None:
                        result.readings_detected += 1
                        obs = again
                elif detector is not None and entry is not None:
                    again = _detect_again(detector, path, entry, obs)
                    result.frames_detected += 1
                    result.readings_detected += 1
                    if again is None or reading_of(again) != reading_of(obs):
                        result.readings_differing.append(n)
                        if again is not None:
                            obs = again  # the tracker sees what the detector reads now
                    # an equal reading keeps its recorded confidences: they came from the
                    # whole still period, of which one frame is stored
                return tracker.observe(obs)
            case "dice":
                return tracker.dice(payload["rolls"], payload.get("dice_allowed", 1))
            case "done":
                return tracker.end_turn()
            case "undo":
                return tracker.undo()
            case "command":
                return _replay_command(tracker, payload)
    except ValueError as exc:
        result.notes.append(f"input {n} ({kind}) refused again: {exc}")
    return None


class _Game:
    """The game a replay is in: the tracker's, or a pack's."""

    def __init__(self, tracker: Tracker | None, pack: PackReplay | None) -> None:
        self.tracker = tracker
        self.pack = pack
        self.last_state: object = None  # the tracker's last recorded state

    @classmethod
    def start(cls, start: object, where: str, result: ReplayResult) -> _Game:
        """The game a recording's ``game`` / ``new_game`` entry starts.

        :raises RecordError: naming ``where``: unreadable settings, a game the companion does
            not know, or a pack game without its first position.
        """
        if not isinstance(start, dict):
            raise RecordError(f"{where}: no game settings")
        try:
            settings = GameSettings.from_json(start["settings"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"{where}: settings unreadable ({exc})") from None
        if settings.game not in GAMES:
            raise RecordError(
                f"{where}: game {settings.game[:24]!r} is not one of {', '.join(GAMES)}"
            )
        if settings.game == WANDERING_TOWERS:
            try:
                return cls(Tracker.new(settings.rules_config()), None)
            except CommandError as exc:
                raise RecordError(f"{where}: {exc.message}") from None
        try:
            pack = PackReplay(PACKS[settings.game], settings, start, result.packs)
        except ValueError as exc:
            raise RecordError(f"{where}: {exc}") from None
        return cls(None, pack)


def _replay_command(tracker: Tracker, payload: dict[str, Any]) -> TrackerUpdate | None:
    match payload.get("command"):
        case "answer":
            return tracker.answer(payload["question"], int(payload["option"]))
        case "end_turn":
            return tracker.end_turn()
        case "undo":
            return tracker.undo()
    return None


def _detector_from(path: Path, result: ReplayResult) -> Detector | None:
    try:
        camera = CameraModel.load(path / "camera.json")
        geometry = BoardGeometry.load(path / "geometry.json")
        profile = ColourProfile.load(path / "profile.json")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        result.notes.append(f"frames not detected again (calibration files: {exc})")
        return None
    return Detector(camera, geometry, profile)


def _pipeline_again(
    detector: Detector, path: Path, entries: list[dict[str, Any]], result: ReplayResult
) -> list[Observation]:
    """Observations the detector + stability gate emit over every recorded frame, in order."""
    gate = StabilityGate(geometry=detector.geometry)
    early = EarlyReading()  # as the live pipeline reports a still board
    out: list[Observation] = []
    cached: tuple[str, Detection] | None = None  # the last file read and its detection
    for e in entries:
        t, i = float(e.get("time_s", 0.0)), int(e["index"])
        if cached is not None and e["file"] == cached[0]:
            det = cached[1]
            if det.observation is not None:
                det = dataclasses.replace(
                    det, observation=dataclasses.replace(det.observation, time=t, frame=i)
                )
        else:
            image, _ = read_image_file(path / e["file"])
            if image is None:
                result.notes.append(f"frame {i}: unreadable image {e['file']}")
                continue
            det = detector.detect(image, t, i)
            result.frames_detected += 1
            cached = (e["file"], det)
        reading = det.observation if det.ok else None
        decision = gate.update(
            t, det.board_view, reading, det.white_bgr, det.frame_view, pose=det.pose
        )
        _, report = early.frame(reading, decision)
        if report is not None:
            out.append(report)
    return out


def _detect_again(
    detector: Detector, path: Path, entry: dict[str, Any], recorded: Observation
) -> Observation | None:
    image, _ = read_image_file(path / entry["file"])
    if image is None:
        return None
    detection = detector.detect(image, float(entry.get("time_s", 0.0)), int(entry["index"]))
    if not detection.ok or detection.observation is None:
        return None
    return dataclasses.replace(
        detection.observation, time=recorded.time, frame=recorded.frame, unstable=False
    )
