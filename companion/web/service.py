"""The contract between the phone pages and the companion's service.

The web layer renders what a :class:`TableService` publishes and forwards what players and the
host ask for; it holds no game logic and never filters game data itself. The running companion
implements this protocol in ``companion.service``;
:class:`~companion.sim.faketable.FakeTableService` implements it on top of the rules core for tests
and development.

Snapshot (``snapshot(audience)``), JSON-ready, one per audience::

    {"version": 41,                       # increments on every change (SSE id, ETag),
                                          # across restarts too
     "epoch": "3f9c01aa",                  # another epoch: take the snapshot whatever its version
     "audience": {"role": "player", "colour": "blue"},
     "phase": "setup" | "playing" | "over",
     "memory_aid": "off" | "own" | "all",  # what a player's page shows of trapped wizards
     "state": {...} | None,                # neutral state JSON (docs/state-model.md §1-§2) as
                                           # returned by companion.rules.view for this audience:
                                           # wizards the audience may not see are absent
     "dice": {"mode": 1, "rolls": [4], "final": true, "value": 4} | None,
     "panel": {...},                       # the LED panel as companion.hardware.panel.
                                           # VirtualPanel.snapshot() gives it: "pips" (name ->
                                           # lit), "seats" [{"colour", "on"}], "attention" {"on"}
     "question": {"id": "q7", "to": "blue" | None, "text": "...",
                  "options": [{"id": "a", "label": "..."}]} | None,
     "health": {"ok": true, "line": "camera 8.0 fps · tracker in step"},
     "log": ["a blue wizard moved from 4 to 7", ...],  # newest last; no wizard ids
     "reports": [...],                     # spells / page cards reported by players
     "camera": "8.0 fps, board found",     # camera/calibration status line
     "checking": false,                    # true: the board below is the camera's, the tracker
     "seen": {"frame": 812, "spaces": {"7": {"towers": 2, "top": "crest",  # is still checking it
              "wizards": {"blue": 1}, "castle": false, "witch": false, "raven": false}, ...}}
             | None,                       # (companion.web.snapshot.seen_json); None when not
     "host": {                             # only for Audience.host()
        "settings": {"players": 4, "colours": [...], "variant": "base", "teams": false,
                     "modules": [], "spells": None, "memory_aid": "own", "options": {}},
        "calibration": {"board": "markers 0-3 found", ...}},  # optional, name -> status
     "pack": {"game": "siege", ...}        # only in a game pack: its view for this audience
    }

The host's new-game form takes its choices from ``GET /api/setup-choices``
(:func:`companion.web.gamesetup.setup_choices`); :func:`companion.web.gamesetup.parse_setup`
checks a ``setup`` command the same way for every service. Log lines and question texts must
not name a wizard by id (``blue-2``): once it is trapped that would tell where it is; what a
page may show of trapped wizards comes from ``companion.rules.view`` alone.

Commands (``submit(command, audience)``) are JSON objects ``{"command": NAME, ...}``; the names
are :data:`HOST_COMMANDS` and :data:`PLAYER_COMMANDS`. A bad or forbidden command raises
:class:`CommandError` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NotRequired, Protocol, TypedDict, get_args, runtime_checkable

Role = Literal["public", "player", "host"]
"""Who looks at a page: the table view, one player's phone or the host's."""

ROLES: tuple[Role, ...] = get_args(Role)

Phase = Literal["setup", "playing", "over"]
"""Where the game is: no game dealt yet, under way, or finished."""

MemoryAid = Literal["off", "own", "all"]
"""What a player's page shows of trapped wizards: nothing, their own, everyone's."""

CommandName = Literal[
    "setup",
    "answer",
    "correct_space",
    "undo",
    "dice_mode",
    "roll",
    "keep",
    "end_turn",
    "report_spell",
    "report_page_card",
    "calibrate_board",
    "calibrate_profile",
    "calibrate_reset",
    "reissue_tokens",
    "accept_journal",
    "pack",
    "calibrate_check",
]
"""Every command name a page may send (``{"command": NAME, ...}``)."""

PLAYER_COMMANDS: frozenset[CommandName] = frozenset(
    {"answer", "report_spell", "report_page_card", "pack"}
)
"""Commands a player's own page may send (answers addressed to that player, reports, a game
pack's commands: the pack decides what a player may do)."""

HOST_COMMANDS: frozenset[CommandName] = frozenset(get_args(CommandName))
"""Commands the host page may send (everything a player may, plus setup and corrections)."""

Command = Mapping[str, object]
"""A command as the page sent it (parsed JSON): ``{"command": NAME, ...}``, not yet checked."""

CommandResult = Mapping[str, object]
"""A carried-out command: ``{"ok": True, "version": n, ...}`` plus what the command reports
(a message, calibration figures, ...)."""


class AudienceJson(TypedDict):
    """:meth:`Audience.to_json`: ``{"role": ..., "colour": "blue" | None}``."""

    role: Role
    colour: str | None


class HealthLine(TypedDict):
    """The snapshot's one-line health: ``{"ok": true, "line": "camera 8.0 fps · ..."}``."""

    ok: bool
    line: str


class Snapshot(TypedDict):
    """What one audience's page shows (JSON-ready; the module docstring gives an example).

    ``state`` is ``companion.rules.view`` for this audience (state JSON, docs/state-model.md);
    ``dice``, ``panel``, ``question``, ``reports`` and ``host`` pass through as the service
    published them. Only the host's snapshot has ``host``. While ``checking``, ``seen`` is the
    camera's still board that the tracker has not worked out yet (the pages draw the board from
    it, everything else from ``state``).
    """

    version: int
    epoch: str
    audience: AudienceJson
    phase: Phase
    memory_aid: MemoryAid
    state: Mapping[str, object] | None
    dice: Mapping[str, object] | None
    panel: Mapping[str, object]
    question: dict[str, object] | None
    health: HealthLine
    log: list[str]
    reports: list[Mapping[str, object]]
    camera: str
    checking: bool
    seen: Mapping[str, object] | None
    host: NotRequired[dict[str, object]]
    pack: NotRequired[dict[str, object]]


class PartHealth(TypedDict):
    """One part's heartbeat: fresh or not, seconds since it beat (None = never), why."""

    ok: bool
    age_s: float | None
    detail: str


class HealthReport(TypedDict):
    """``GET /healthz``: every part's heartbeat and whether all are fresh.

    The running companion adds its health line, camera status, version and the parts it could
    not start (name -> reason).
    """

    ok: bool
    parts: dict[str, PartHealth]
    line: NotRequired[str]
    camera_status: NotRequired[str]
    version: NotRequired[int]
    missing_parts: NotRequired[dict[str, object]]
    journal: NotRequired[dict[str, object]]


class CommandError(ValueError):
    """A command is malformed, not allowed for its sender, or impossible right now.

    The service raises it before changing anything. ``status`` is the HTTP status the web
    answers with: 400 malformed, 403 forbidden for this audience, 409 not possible now.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Audience:
    """Who is looking: the public table view, one player (by colour) or the host.

    Build with :meth:`public`, :meth:`player` or :meth:`host`.
    """

    role: Role
    colour: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"audience.role: {self.role!r} is not one of {', '.join(ROLES)}")
        if (self.role == "player") != (self.colour is not None):
            raise ValueError("audience.colour: a player audience needs a colour, no other does")

    @classmethod
    def public(cls) -> Audience:
        return cls("public")

    @classmethod
    def player(cls, colour: str) -> Audience:
        return cls("player", colour)

    @classmethod
    def host(cls) -> Audience:
        return cls("host")

    def to_json(self) -> AudienceJson:
        return {"role": self.role, "colour": self.colour}

    def __str__(self) -> str:
        return self.role if self.colour is None else f"{self.role}:{self.colour}"


@runtime_checkable
class TableService(Protocol):
    """What the phone pages need from the running companion.

    Every method may be called from many web threads at once; implementations are thread-safe.
    """

    @property
    def version(self) -> int:
        """The current version; increments on every change of any snapshot."""
        ...

    @property
    def host_token(self) -> str:
        """The host's join token (``secrets.token_urlsafe(16)``)."""
        ...

    def snapshot(self, audience: Audience) -> Snapshot:
        """The JSON-ready view for ``audience`` (shape in the module docstring); per-player game
        data comes from ``companion.rules.view(state, player, memory_aid)``."""
        ...

    def snapshots_since(self, since: int, audience: Audience) -> list[Snapshot]:
        """The snapshots for ``audience`` of the versions after ``since`` that are still kept,
        oldest first, ending with the current one (an event stream sends each in order)."""
        ...

    def wait_for_change(self, since: int, timeout_s: float) -> int:
        """Block until :attr:`version` differs from ``since`` or ``timeout_s`` seconds passed;
        returns the version then (equal to ``since`` on a timeout)."""
        ...

    def submit(self, command: Command, audience: Audience) -> CommandResult:
        """Carry out a host or player command and return ``{"ok": True, "version": n, ...}``.

        :raises CommandError: malformed, forbidden for ``audience`` or impossible now; nothing
            changed.
        """
        ...

    def camera_jpeg(self) -> bytes | None:
        """The current camera frame with the detected overlay as JPEG bytes, None without one."""
        ...

    def health(self) -> HealthReport:
        """Heartbeats: ``{"ok": bool, "parts": {"camera": {"ok": bool, "age_s": float,
        "detail": str}, "detector": …, "tracker": …, "hardware": …, "web": …}}``
        (:class:`HealthReport`)."""
        ...

    def player_for_token(self, token: str) -> str | None:
        """The colour a player's join token belongs to, None for an unknown token."""
        ...

    def token_revoked(self, token: str) -> bool:
        """True when the host revoked this once valid join token (its phone is told so)."""
        ...

    def player_tokens(self) -> Mapping[str, str]:
        """Colour -> join token of every seated player (for the host's QR codes only)."""
        ...
