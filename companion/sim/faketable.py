"""A :class:`~companion.web.service.TableService` without camera or pins, for tests and development.

:class:`FakeTableService` keeps a real game of the rules core (``companion.rules.setup`` /
``apply`` / ``view``): the host's ``setup`` deals a seeded game, :meth:`FakeTableService.step`
lets a seeded bot make the current player's next move (the development server and the web bench
call it every second), ``end_turn`` and ``undo`` act on the game, the dice are rolled with a
seeded RNG, and questions are posed with :meth:`FakeTableService.ask` the way the tracker would.
Per-audience game data always comes from ``companion.rules.view``.
"""

from __future__ import annotations

import copy
import hashlib
import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from companion import rules
from companion.hardware.dice import BLANK, FACES
from companion.hardware.panel import PanelJson, PanelState, VirtualPanel
from companion.rules import GameState, IllegalAction, SpaceObservation
from companion.sim.bots import RandomBot
from companion.web.gamesetup import SetupChoice, parse_setup
from companion.web.service import (
    HOST_COMMANDS,
    PLAYER_COMMANDS,
    Audience,
    Command,
    CommandError,
    CommandResult,
    HealthReport,
    MemoryAid,
    PartHealth,
    Phase,
    Snapshot,
)
from companion.web.snapshot import SeatTokens, build_snapshot

LOG_LINES = 60
UNDO_DEPTH = 200
HEALTH_PARTS = ("camera", "detector", "tracker", "hardware", "journal", "web")


class DiceJson(TypedDict):
    """The die card in play: how many rolls it allows (None = no card yet), the rolls so far,
    whether the last one is kept, and its value."""

    mode: int | None
    rolls: list[int]
    final: bool
    value: int | None


class _Beat(TypedDict):
    t: float  # clock() of the last heartbeat, s
    ok: bool
    detail: str


def _no_dice() -> DiceJson:
    return {"mode": None, "rolls": [], "final": False, "value": None}


def _colour(wizard_id: object) -> str:
    return str(wizard_id).rsplit("-", 1)[0]


def _names(value: object) -> list[str]:
    """The list an event field holds, as text (an absent field is an empty list)."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _count(event: Mapping[str, object]) -> str:
    n = len(_names(event.get("wizards", [])))
    return "1 wizard" if n == 1 else f"{n} wizards"


def describe_event(event: Mapping[str, object]) -> str | None:
    """One line for the table's log from a rules event (its JSON, docs/state-model.md §5);
    None = not shown."""
    k = event.get("kind")
    if k == "wizard_moved":
        # colours only, never wizard ids: the log must not help to follow a wizard once it is
        # trapped (what a page may show of hidden wizards is decided by rules.view alone)
        who = f"a {_colour(event['wizard'])} wizard"
        if event.get("into_castle"):
            return f"{who} moved from space {event['from']} into the raven castle"
        return f"{who} moved from space {event['from']} to {event['to']}"
    if k == "tower_moved":
        n = len(_names(event.get("towers", [])))
        what = "a tower" if n == 1 else f"a stack of {n} towers"
        return f"{what} moved from space {event['from']} to {event['to']}"
    if k == "wizards_trapped":
        return f"{_count(event)} trapped on space {event['space']}"
    if k == "wizards_revealed":
        return f"{_count(event)} set free on space {event['space']}"
    if k == "potion_filled":
        return f"{event['player']} filled a potion"
    if k == "potions_spent":
        spent = event["count"]
        return f"{event['player']} spent {spent} potion{'s' if spent != 1 else ''}"
    if k == "spell_cast":
        return f"{event['player']} cast {str(event['spell']).replace('_', ' ')}"
    if k == "castle_moved":
        return f"the raven castle moved from space {event['from']} to {event['to']}"
    if k == "dice_rolled":
        return f"die: {', '.join(_names(event.get('rolls', [])))}"
    if k == "hand_discarded_and_redrawn":
        return "hand discarded, 3 new cards drawn"
    if k == "card_discarded_without_effect":
        return "a card was discarded without effect"
    if k == "next_player":
        return f"{event.get('player', 'next player')}'s turn"
    if k == "game_end_triggered":
        who = str(event.get("player") or event.get("team"))
        return f"{who} reached the goal: last round"
    if k == "game_over":
        winners = _names(event.get("winners") or [])
        return "game over: " + (", ".join(winners) + " won" if winners else "no winner")
    return None


@dataclass
class _Saved:
    """Everything undo restores."""

    game: GameState | None
    dice: DiceJson
    corrections: dict[str, dict[str, object]]
    setup: SetupChoice | None
    log: list[str]


@dataclass
class _Question:
    id: str
    text: str
    to: str | None
    options: list[dict[str, str]]
    on_answer: Callable[[str], None] | None = None
    answered: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "to": self.to, "text": self.text, "options": list(self.options)}


class FakeTableService(SeatTokens):
    """A thread-safe in-memory table: a seeded rules-core game behind the service protocol.

    :param seed: seeds the deal, the bot and the die.
    :param clock: seconds (monotonic), injected for heartbeat ages.
    :param setup: a ``setup`` command to start with (None = no game until the host sets one up).
    """

    def __init__(
        self,
        seed: int = 1,
        clock: Callable[[], float] = time.monotonic,
        setup: Mapping[str, object] | None = None,
    ) -> None:
        self._cond = threading.Condition()
        self._seed = seed
        self._games = 0
        self._rng = random.Random(seed)
        self._clock = clock
        self._version = 1
        self._host_token = secrets.token_urlsafe(16)
        self._tokens: dict[str, str] = {}
        self._game: GameState | None = None
        self._setup: SetupChoice | None = None
        self._dice: DiceJson = _no_dice()
        self._corrections: dict[str, dict[str, object]] = {}
        self._question: _Question | None = None
        self._questions = 0
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._reports: deque[dict[str, object]] = deque(maxlen=20)
        self._history: deque[_Saved] = deque(maxlen=UNDO_DEPTH)
        self._calibration = {"board": "not calibrated", "profile": "default colours"}
        self._jpeg: bytes | None = None
        now = clock()
        self._beats: dict[str, _Beat] = {
            p: {"t": now, "ok": True, "detail": "simulated"} for p in HEALTH_PARTS
        }
        self._cache: dict[Audience, Snapshot] = {}
        self._bot = RandomBot(seed)
        self._answers: list[tuple[str, str, str]] = []
        self._driver: threading.Thread | None = None
        self.change_log: list[tuple[int, float]] | None = None
        """Set to a list to record ``(version, clock())`` of every change (the web bench)."""
        self._stop = threading.Event()
        if setup is not None:
            self.submit(dict(setup, command="setup"), Audience.host())

    # -- the protocol ----------------------------------------------------------------------

    def wait_for_change(self, since: int, timeout_s: float) -> int:
        with self._cond:
            self._cond.wait_for(lambda: self._version != since or self._stop.is_set(), timeout_s)
            return self._version

    def camera_jpeg(self) -> bytes | None:
        with self._cond:
            return self._jpeg

    def health(self) -> HealthReport:
        with self._cond:
            now = self._clock()
            parts: dict[str, PartHealth] = {
                p: {"ok": b["ok"], "age_s": round(now - b["t"], 2), "detail": b["detail"]}
                for p, b in self._beats.items()
            }
        return {"ok": all(p["ok"] for p in parts.values()), "parts": parts}

    def snapshot(self, audience: Audience) -> Snapshot:
        with self._cond:
            cached = self._cache.get(audience)
            if cached is None:
                cached = self._build(audience)
                self._cache[audience] = cached
            return copy.deepcopy(cached)

    def snapshots_since(self, since: int, audience: Audience) -> list[Snapshot]:
        return [self.snapshot(audience)]  # a stand-in: it keeps no older versions

    def submit(self, command: Command, audience: Audience) -> CommandResult:
        if not isinstance(command, Mapping):
            raise CommandError('expected a JSON object like {"command": "roll"}')
        name = command.get("command")
        if not isinstance(name, str) or name not in HOST_COMMANDS:
            raise CommandError(f"command: {name!r} is not a command")
        if audience.role == "public":
            raise CommandError("the table view cannot send commands", 403)
        if audience.role == "player" and name not in PLAYER_COMMANDS:
            raise CommandError(f"command {name!r} is for the host only", 403)
        if name == "calibrate_check":
            # the camera check reads a rendered frame (slow): outside the lock
            figures = self._calibrate_check()
            with self._cond:
                self._changed()
                return {"ok": True, "version": self._version, **figures}
        handler: Callable[[Command, Audience], str] = getattr(self, f"_cmd_{name}")
        with self._cond:
            message = handler(command, audience)
            self._changed()
            return {"ok": True, "version": self._version, "message": message}

    # -- development and test controls ------------------------------------------------------

    def ask(
        self,
        text: str,
        options: Sequence[tuple[str, str]],
        to: str | None = None,
        on_answer: Callable[[str], None] | None = None,
    ) -> str:
        """Pose a question as the tracker would (the host may always answer; ``to`` names the
        player whose page shows the buttons). Returns the question id.

        :raises ValueError: fewer than two options, or ``to`` is not a seated player.
        """
        if len(options) < 2:
            raise ValueError("a question needs at least two options")
        with self._cond:
            if to is not None and to not in self._tokens:
                raise ValueError(f"to: {to!r} is not a seated player")
            self._questions += 1
            qid = f"q{self._questions}"
            self._question = _Question(
                qid, text, to, [{"id": i, "label": lab} for i, lab in options], on_answer
            )
            self._changed()
            return qid

    @property
    def answers(self) -> list[tuple[str, str, str]]:
        """Every answer given: ``(question id, option id, who)``."""
        with self._cond:
            return list(self._answers)

    def game(self) -> GameState | None:
        """The full current state (tests only: the web never sees it)."""
        with self._cond:
            return self._game

    def memory_aid(self) -> MemoryAid:
        with self._cond:
            return self._setup.memory_aid if self._setup else "own"

    def set_camera_jpeg(self, jpeg: bytes | None) -> None:
        with self._cond:
            self._jpeg = jpeg
            self._beats["camera"]["t"] = self._clock()

    def beat(self, part: str, ok: bool = True, detail: str = "") -> None:
        """Record a heartbeat of ``part`` (one of camera, detector, tracker, hardware, web)."""
        if part not in self._beats:
            raise ValueError(f"part: {part!r} is not one of {', '.join(HEALTH_PARTS)}")
        with self._cond:
            self._beats[part] = {"t": self._clock(), "ok": ok, "detail": detail or "ok"}
            self._changed()

    def load(self, state: GameState, memory_aid: MemoryAid = "own") -> None:
        """Replace the game by ``state`` (tests: positions with trapped wizards)."""
        with self._cond:
            self._save()
            cfg = state.table.config
            self._setup = SetupChoice(cfg, memory_aid)
            self._game = state
            self._seat_tokens(state.table.colours)
            self._log.append("position loaded")
            self._changed()

    def step(self) -> list[str]:
        """Let a seeded bot make the current player's next action (a new game after the last).

        :returns: the log lines the action produced.
        """
        with self._cond:
            if self._game is None:
                return []
            if self._game.game.over:
                self._games += 1
                assert self._setup is not None
                self._game = rules.setup(self._setup.config, self._seed + self._games)
                self._log.append("new game dealt")
                self._changed()
                return ["new game dealt"]
            action = self._bot.choose(self._game)
            self._save()
            before = len(self._log)
            self._apply(action)
            self._changed()
            return list(self._log)[before:] if len(self._log) > before else []

    def start_driver(self, period_s: float = 1.0) -> None:
        """Call :meth:`step` every ``period_s`` seconds on a daemon thread until :meth:`close`."""
        if self._driver is not None:
            return

        def run() -> None:
            while not self._stop.wait(period_s):
                self.step()

        self._driver = threading.Thread(target=run, name="fake-table-driver", daemon=True)
        self._driver.start()

    @property
    def closed(self) -> threading.Event:
        """Set by :meth:`close` (background helpers wait on it)."""
        return self._stop

    def close(self) -> None:
        """Stop the driver and wake every waiting event stream."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._driver is not None:
            self._driver.join(timeout=5)
            self._driver = None

    # -- internals ----------------------------------------------------------------------------

    def _changed(self) -> None:
        self._version += 1
        if self.change_log is not None:
            self.change_log.append((self._version, self._clock()))
        self._cache.clear()
        self._beats["tracker"]["t"] = self._clock()
        self._cond.notify_all()

    def _save(self) -> None:
        self._history.append(
            _Saved(
                self._game,
                copy.deepcopy(self._dice),
                copy.deepcopy(self._corrections),
                self._setup,
                list(self._log),
            )
        )

    def _seat_tokens(self, colours: Sequence[str]) -> None:
        # a colour that stays at the table keeps its join link; new colours get new tokens
        self._tokens = {c: self._tokens.get(c) or secrets.token_urlsafe(16) for c in colours}

    def _apply(self, action: rules.Action) -> None:
        assert self._game is not None
        state, events = rules.apply(self._game, action)
        self._game = state
        for ev in events:
            line = describe_event(ev.to_json())
            if line:
                self._log.append(line)

    def _panel(self) -> PanelJson:
        # the same virtual LED panel the hardware layer publishes without a Pi
        seats: tuple[str, ...] = ()
        current = None
        if self._game is not None:
            seats = self._game.table.colours
            current = None if self._game.game.over else self._game.turn.player
        value = self._dice["value"] if self._dice["rolls"] else None
        state = PanelState(
            pips=FACES[value] if value else BLANK,
            seats=seats,
            current=current,
            attention=self._question is not None,
            dice={"dice_allowed": self._dice["mode"], "rolls": list(self._dice["rolls"])},
        )
        return VirtualPanel(state).snapshot()

    def _build(self, audience: Audience) -> Snapshot:
        aid: MemoryAid = self._setup.memory_aid if self._setup else "own"
        phase: Phase = "setup"
        if self._game is not None:
            phase = "over" if self._game.game.over else "playing"
        health = self.health()
        bad = [p for p, h in health["parts"].items() if not h["ok"]]
        line = (
            "all parts working (simulated table)"
            if not bad
            else "check: " + ", ".join(f"{p} ({health['parts'][p]['detail']})" for p in bad)
        )
        host: dict[str, object] | None = None
        if audience.role == "host":
            choice: dict[str, object] = (
                self._setup.to_json()
                if self._setup
                else {
                    "players": 3,
                    "colours": [],
                    "variant": "base",
                    "teams": False,
                    "modules": [],
                    "spells": None,
                    "memory_aid": "own",
                    "options": {},
                }
            )
            host = {
                "settings": choice,
                "calibration": dict(self._calibration),
                "corrections": copy.deepcopy(self._corrections),
                "undo_depth": len(self._history),
            }
        return build_snapshot(
            version=self._version,
            audience=audience,
            phase=phase,
            memory_aid=aid,
            state=self._game,
            dice=dict(copy.deepcopy(self._dice)),
            panel=self._panel(),
            question=self._question.to_json() if self._question else None,
            health_ok=not bad,
            health_line=line,
            log=self._log,
            reports=self._reports,
            camera="simulated table" if self._jpeg is not None else "no camera frame yet",
            host=host,
        )

    def _need_game(self) -> GameState:
        if self._game is None:
            raise CommandError("no game yet: the host sets one up first", 409)
        return self._game

    # -- commands (called with the lock held; raise before changing anything) ---------------

    def _cmd_setup(self, command: Command, audience: Audience) -> str:
        choice = parse_setup(command)
        try:
            game = rules.setup(choice.config, self._seed + self._games)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self._save()
        self._games += 1
        self._setup = choice
        self._game = game
        self._seat_tokens(game.table.colours)
        self._dice = _no_dice()
        self._corrections = {}
        self._question = None
        n = game.table.n
        self._log.append(f"new game: {n} player(s), {', '.join(game.table.colours)}")
        return "new game dealt"

    def _cmd_answer(self, command: Command, audience: Audience) -> str:
        q = self._question
        if q is None:
            raise CommandError("there is no open question", 409)
        if command.get("question") != q.id:
            raise CommandError("that question has already been answered", 409)
        option = command.get("option")
        labels = {o["id"]: o["label"] for o in q.options}
        if not isinstance(option, str) or option not in labels:
            raise CommandError(f"option: {option!r} is not one of {', '.join(labels)}")
        if audience.role == "player" and audience.colour != q.to:
            raise CommandError("this question is for another player", 403)
        if q.on_answer is not None:
            q.on_answer(option)
        who = audience.colour or "host"
        self._answers = [*self._answers, (q.id, option, who)]
        self._question = None
        self._log.append(f"{who} answered: {labels[option]}")
        return f"answered: {labels[option]}"

    def _cmd_correct_space(self, command: Command, audience: Audience) -> str:
        game = self._need_game()
        space = command.get("space")
        if not isinstance(space, int) or isinstance(space, bool):
            raise CommandError("space: expected a space number")
        if not 1 <= space <= game.table.length:
            raise CommandError(f"space: {space} is not on the track (1..{game.table.length})")
        wizards = command.get("wizards", {})
        if not isinstance(wizards, Mapping):
            raise CommandError("wizards: expected an object of colour -> count")
        for colour in wizards:
            if colour not in game.table.seat_of:
                raise CommandError(f"wizards.{colour}: not a colour of this game")
        towers = command.get("towers")
        top = command.get("top")
        castle = command.get("castle", False)
        if not isinstance(castle, bool):
            raise CommandError("castle: expected true or false")
        if not isinstance(towers, int) or isinstance(towers, bool):
            raise CommandError("towers: expected a whole number 0..10")
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in wizards.values()):
            raise CommandError("wizards: counts are whole numbers")
        try:
            seen = SpaceObservation(
                towers=towers, top=str(top), wizards=dict(wizards), castle=castle
            )
        except (ValueError, TypeError) as exc:
            raise CommandError(str(exc)) from None
        self._save()
        self._corrections[str(space)] = seen.to_json()
        self._log.append(f"host corrected space {space}: the tracker re-checks it")
        return f"space {space} corrected"

    def _cmd_undo(self, command: Command, audience: Audience) -> str:
        if not self._history:
            raise CommandError("nothing to undo", 409)
        saved = self._history.pop()
        self._game = saved.game
        self._dice = saved.dice
        self._corrections = saved.corrections
        self._setup = saved.setup
        self._log = deque(saved.log, maxlen=LOG_LINES)
        self._log.append("host undid the last change")
        if self._game is not None:
            self._seat_tokens(self._game.table.colours)
        return "undone"

    def _cmd_dice_mode(self, command: Command, audience: Audience) -> str:
        self._need_game()
        dice = command.get("dice")
        mode = next((n for n in (1, 2, 3) if dice == n and not isinstance(dice, bool)), None)
        if mode is None:
            raise CommandError("dice: a die card shows 1, 2 or 3 dice (R-CARD-4)")
        self._dice = {"mode": mode, "rolls": [], "final": False, "value": None}
        return f"die card with {dice} dice: up to {dice} roll(s)"

    def _cmd_roll(self, command: Command, audience: Audience) -> str:
        self._need_game()
        d = self._dice
        mode = d["mode"]
        if d["final"] or mode is None:
            # a roll after a finished one is a new card: one die unless dice_mode said more
            mode = 1
            d = {"mode": mode, "rolls": [], "final": False, "value": None}
        if len(d["rolls"]) >= mode:
            raise CommandError("no reroll left for this card (R-CARD-4)", 409)
        value = self._rng.randint(1, 6)
        rolls = [*d["rolls"], value]
        self._save()
        self._dice = {
            "mode": mode,
            "rolls": rolls,
            "final": len(rolls) >= mode,
            "value": value,
        }
        self._log.append(f"die rolled: {value}" + (" (final)" if self._dice["final"] else ""))
        return f"rolled {value}"

    def _cmd_keep(self, command: Command, audience: Audience) -> str:
        d = self._dice
        if not d["rolls"] or d["final"]:
            raise CommandError("there is no roll to keep", 409)
        self._save()
        self._dice = {**d, "final": True}
        self._log.append(f"die kept: {d['value']}")
        return f"kept {d['value']}"

    def _cmd_end_turn(self, command: Command, audience: Audience) -> str:
        self._need_game()
        self._save()
        try:
            self._apply(rules.EndTurn())
        except IllegalAction as exc:
            self._history.pop()
            raise CommandError(str(exc), 409) from None
        self._dice = _no_dice()
        return "turn ended"

    def _cmd_report_spell(self, command: Command, audience: Audience) -> str:
        game = self._need_game()
        spell = command.get("spell")
        if not isinstance(spell, str) or spell not in game.table.spells:
            shown = ", ".join(game.table.spells) or "none"
            raise CommandError(f"spell: {spell!r} is not on display (on display: {shown})")
        who = audience.colour or game.current_player
        self._reports.append({"player": who, "spell": spell})
        self._log.append(f"{who} reports casting {spell.replace('_', ' ')}")
        return "spell reported"

    def _cmd_report_page_card(self, command: Command, audience: Audience) -> str:
        game = self._need_game()
        if "witch" not in game.table.config.modules:
            raise CommandError("page cards belong to the witch module, which is not in play", 409)
        who = audience.colour or game.current_player
        self._reports.append({"player": who, "page_card": True})
        self._log.append(f"{who} reports a page card (R-DECK-2)")
        return "page card reported"

    def _cmd_calibrate_board(self, command: Command, audience: Audience) -> str:
        self._calibration["board"] = "markers 0-3 found (simulated camera)"
        self._log.append("board calibrated")
        return "board markers found"

    def _cmd_pack(self, command: Command, audience: Audience) -> str:
        raise CommandError("pack: the fake table plays no game pack", 409)

    def _cmd_calibrate_profile(self, command: Command, audience: Audience) -> str:
        self._need_game()
        self._calibration["profile"] = "sampled from the setup position"
        self._log.append("wizard colours learned")
        return "wizard colours learned"

    def _calibrate_check(self) -> dict[str, object]:
        """The camera check on a rendered frame of the setup position (the simulated camera:
        a random table of this service's seed, its markers small in the frame)."""
        import base64

        import numpy as np

        from companion.rules import Config, observe, setup
        from companion.sim.render import random_setup, render
        from companion.vision.detector import Detector
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import build_profile
        from companion.vision.setupcheck import setup_check

        geometry = BoardGeometry.default()
        rng = np.random.default_rng(self._seed)
        table = random_setup(rng, geometry, tilt_range=(5.0, 15.0))
        config = Config(player_count=3)
        state = setup(config, seed=None)
        frame = render(state, rng, setup=table, hand=False).frame
        colours = list(config.colours or ())
        profile = build_profile(frame, table.camera, geometry, colours, expected=observe(state))
        det = Detector(table.camera, geometry, profile)
        check = setup_check(frame, det.detect(frame), geometry, det.limits)
        self._log.append("camera checked")
        return {
            "image": "data:image/png;base64," + base64.b64encode(check.png).decode("ascii"),
            "advice": list(check.advice),
            "figures": check.figures,
            "message": "camera checked: " + ("; ".join(check.advice) or "all good"),
        }

    def _cmd_calibrate_reset(self, command: Command, audience: Audience) -> str:
        self._calibration = {"board": "not calibrated", "profile": "default colours"}
        self._log.append("calibration forgotten")
        return "calibration forgotten"

    def _cmd_reissue_tokens(self, command: Command, audience: Audience) -> str:
        who = command.get("who")
        if who != "host" and who != "players" and who not in self._tokens:
            raise CommandError(f"reissue_tokens.who: {who!r} is not a seat of this game")
        revoked = set(self._revoked)
        if who == "host":
            revoked.add(hashlib.sha256(self._host_token.encode()).hexdigest())
            self._host_token = secrets.token_urlsafe(16)
        for colour in list(self._tokens):
            if who in ("players", colour):
                revoked.add(hashlib.sha256(self._tokens[colour].encode()).hexdigest())
                self._tokens[colour] = secrets.token_urlsafe(16)
        self._revoked = revoked
        self._log.append(f"host issued new join links: {who}")
        return f"new join links for {who}"

    def _cmd_accept_journal(self, command: Command, audience: Audience) -> str:
        raise CommandError("the journal is not damaged", 409)
