"""The companion's configuration: one TOML file, validated before anything runs.

Every section and key is documented in ``companion.example.toml`` at the repository root. A file
only needs the keys it changes; everything else takes the default below. Errors name the key::

    >>> load_config(text='[web]\\nport = "eighty"')
    Traceback (most recent call last):
    ConfigError: web.port: expected an integer, got 'eighty'

Sections:

* ``[camera]`` — which frame source: ``auto`` (the Pi camera when present, else the simulated
  table), ``simulated``, or a source spec understood by ``companion.vision.sources.open_source``
  (``picamera2``, ``usb:0``, ``file:PATH``, ``folder:PATH``, ``session:PATH``); frame size, rate.
* ``[calibration]`` — the camera file (intrinsics), board geometry file, colour profile.
* ``[hardware]`` — ``auto`` / ``gpio`` / ``mock`` backend, optional serial LED-ring port, buzzer,
  dice profile (the keys of ``companion.hardware.create_hardware``).
* ``[pins]`` — the BCM pin map (the format of ``raspberry-pi/pins.toml``); passed as-is to the
  hardware facade, which validates it (no pin used twice, no reserved pins).
* ``[web]`` — host and port of the phone page (served by waitress), public base URL for QR codes.
* ``[game]`` — defaults of a new game: players, colours, variant, teams, modules, memory aid,
  OPEN options (the rules core's ``config.options`` names, passed through).
* ``[simulation]`` — the embedded simulated table: seed, bots, pace (seconds per action), speed.
* ``[data]`` — data directory, journal file, recording folder.
* ``[service]`` — heartbeat staleness and the systemd watchdog.

This module reads files only in :func:`load_config`; :func:`parse_config` is pure.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from companion.rules.model import BASE_SPELLS, DEFAULT_OPTIONS, EXPANSION_SPELLS
from companion.rules.model import Config as RulesConfig

COLOURS = ("blue", "yellow", "red", "green", "orange", "purple")
MODULES = ("fountain", "web", "witch", "raven", "magic_tower")
SOURCE_KINDS = ("picamera2", "usb", "file", "folder", "session")

ENV_CONFIG = "COMPANION_CONFIG"
"""Environment variable naming the config file when ``--config`` is not given."""

DEFAULT_CONFIG_PATHS = (Path("/etc/companion/companion.toml"),)
"""Looked at (in order) when neither ``--config`` nor ``$COMPANION_CONFIG`` is given."""

MAX_NESTING = 8
"""Deepest nesting of tables and arrays a config file may have (the documented keys nest at
most 3 deep: ``[game.options]`` values, ``[pins]`` tables)."""

MAX_OPTION_NUMBER = 1000
"""Largest whole number a ``[game.options]`` count may take (the host page's limit too)."""

_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong type or out of range; the message starts
    with the dotted key (``web.port: …``)."""


@dataclass(frozen=True)
class CameraConfig:
    """``[camera]``: ``source`` = ``auto`` | ``simulated`` | a source spec; size in px; rate in
    frames per second (the simulated table renders at most this many)."""

    source: str = "auto"
    width: int = 1536
    height: int = 864
    fps: float = 8.0


@dataclass(frozen=True)
class CalibrationConfig:
    """``[calibration]``: files written by ``companion calibrate``; empty = built-in default
    (the simulated camera's own file for the simulated table). ``learn_colours``: the colour
    profile follows the light from the boards the tracker works out (``docs/vision.md``,
    "Learning from committed boards")."""

    camera: str = ""
    board: str = ""
    profile: str = ""
    learn_colours: bool = True


@dataclass(frozen=True)
class HardwareConfig:
    """``[hardware]`` (the keys of ``companion.hardware.create_hardware``): ``backend`` =
    ``auto`` (gpiozero pins on a Raspberry Pi, virtual panel elsewhere) | ``gpio`` | ``mock``;
    ``serial_port`` = LED-ring peripheral (``none``, ``auto`` = search ``/dev/serial/by-id``, a
    device path or a pyserial URL); ``buzzer`` = beep on a roll; ``profile`` = dice profile."""

    backend: str = "auto"
    serial_port: str = "none"
    buzzer: bool = True
    profile: str = "wandering-towers"


@dataclass(frozen=True)
class WebConfig:
    """``[web]``: bind address and TCP port; ``public_url`` overrides the URL printed and put in
    the QR codes (``""`` = derived from the machine's LAN address and the port)."""

    host: str = "0.0.0.0"
    port: int = 8080
    public_url: str = ""
    threads: int = 32


@dataclass(frozen=True)
class GameConfig:
    """``[game]``: defaults of a new game (the host page can change them at setup).

    ``colours`` empty = the first ``players`` colours allowed by R-COMP-2; ``memory_aid`` =
    ``off`` | ``own`` | ``all`` (what a player's page shows of hidden wizards); ``options`` =
    OPEN-nn switches of the rules core, passed through unchanged; ``spells`` = the spell tiles
    laid out on the table (ids as in ``companion.rules.model``), None = as the rules say (the
    base game's two, R-SETUP-4; with the magic tower or the master variant the players draw
    them, so the tracker must be told which lie on the table)."""

    players: int = 3
    colours: tuple[str, ...] = ()
    variant: str = "base"
    teams: bool = False
    modules: tuple[str, ...] = ()
    memory_aid: str = "own"
    options: Mapping[str, Any] = field(default_factory=dict)
    spells: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SimulationConfig:
    """``[simulation]``: the embedded simulated table.

    ``seed`` fixes the deal, the bots and the renderer; ``bot`` = ``greedy`` | ``random``;
    ``seconds_per_action`` is the human pace at speed 1; ``speed`` divides every delay (tests use
    large factors); ``hands`` draws hands passing over the board between actions; ``games`` = how
    many games to play before stopping (0 = forever, a new seed each game); ``max_actions`` ends
    a game early after so many actions, at the end of the turn then in play (0 = play it to the
    end); ``picture = false`` skips the
    renderer and detector and hands the tracker the camera's ideal view (fast runs on slow
    machines; the camera and detector then report themselves as not running)."""

    seed: int = 1
    bot: str = "greedy"
    seconds_per_action: float = 3.0
    speed: float = 1.0
    hands: bool = True
    games: int = 0
    max_actions: int = 0
    picture: bool = True


@dataclass(frozen=True)
class DataConfig:
    """``[data]``: ``dir`` holds the journal and recordings (created at start); ``journal`` is
    relative to ``dir`` unless absolute."""

    dir: str = "data"
    journal: str = "journal.sqlite3"

    def journal_path(self) -> Path:
        p = Path(os.path.expanduser(self.journal))
        return p if p.is_absolute() else Path(os.path.expanduser(self.dir)) / p


@dataclass(frozen=True)
class ServiceConfig:
    """``[service]``: a heartbeat older than ``heartbeat_stale_s`` seconds marks its part as
    stale in ``/healthz`` and stops feeding the systemd watchdog; ``status_every_s`` = how often
    the terminal status line is printed (0 = never); ``work_ahead`` = the tracker works out a
    board that has stopped moving while the stability gate still waits for it to stay still
    (its result is used when the gate confirms the same reading; the game is the same either
    way, only sooner on the phones); ``detector_process`` = the detector reads the frames in a
    child process of its own, so the tracker's search never slows it (docs/architecture.md,
    "Threads"; off: in the service's process)."""

    heartbeat_stale_s: float = 15.0
    status_every_s: float = 10.0
    work_ahead: bool = True
    detector_process: bool = True


@dataclass(frozen=True)
class Config:
    """The whole validated configuration."""

    camera: CameraConfig = field(default_factory=CameraConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    hardware: HardwareConfig = field(default_factory=HardwareConfig)
    pins: Mapping[str, Any] = field(default_factory=dict)
    web: WebConfig = field(default_factory=WebConfig)
    game: GameConfig = field(default_factory=GameConfig)
    simulation: SimulationConfig = field(default_factory=SimulationConfig)
    data: DataConfig = field(default_factory=DataConfig)
    service: ServiceConfig = field(default_factory=ServiceConfig)
    source_path: str = ""
    """The file this configuration was read from (``""`` = built-in defaults)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (tuples as lists)."""
        d = asdict(self)
        d["pins"] = dict(self.pins)
        return {k: _listify(v) for k, v in d.items()}

    @property
    def simulated(self) -> bool:
        """True when the frame source is explicitly the simulated table."""
        return self.camera.source == "simulated"


def _listify(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _listify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_listify(v) for v in value]
    return value


# ------------------------------------------------------------------------------------------
# validation helpers


def _type_name(value: Any) -> str:
    return repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__


def _int(raw: Mapping[str, Any], where: str, key: str, default: int, lo: int, hi: int) -> int:
    value = raw.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected an integer, got {_type_name(value)}")
    if not lo <= value <= hi:
        raise ConfigError(f"{where}.{key}: {value} is outside {lo}..{hi}")
    return value


def _float(
    raw: Mapping[str, Any], where: str, key: str, default: float, lo: float, hi: float
) -> float:
    value = raw.get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected a number, got {_type_name(value)}")
    if not lo <= value <= hi:
        raise ConfigError(f"{where}.{key}: {value} is outside {lo}..{hi}")
    return float(value)


def _str(raw: Mapping[str, Any], where: str, key: str, default: str) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"{where}.{key}: expected a string, got {_type_name(value)}")
    return value


def _bool(raw: Mapping[str, Any], where: str, key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected true or false, got {_type_name(value)}")
    return value


def _choice(
    raw: Mapping[str, Any], where: str, key: str, default: str, allowed: tuple[str, ...]
) -> str:
    value = _str(raw, where, key, default)
    if value not in allowed:
        raise ConfigError(f"{where}.{key}: {value!r} is not one of {', '.join(allowed)}")
    return value


def _str_list(
    raw: Mapping[str, Any], where: str, key: str, allowed: tuple[str, ...]
) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{key}: expected a list of strings")
    for v in value:
        if v not in allowed:
            raise ConfigError(f"{where}.{key}: {v!r} is not one of {', '.join(allowed)}")
    if len(set(value)) != len(value):
        raise ConfigError(f"{where}.{key}: an entry appears twice")
    return tuple(value)


def _spells(game: Mapping[str, Any]) -> tuple[str, ...] | None:
    """``game.spells``: absent (or None from :meth:`Config.to_dict`) = as the rules say; else
    known spell ids, each once."""
    if game.get("spells") is None:
        return None
    return _str_list(game, "game", "spells", (*BASE_SPELLS, *EXPANSION_SPELLS))


def _table(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a table [{key}]")
    return value


def _no_unknown(raw: Mapping[str, Any], where: str, known: set[str]) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        prefix = f"{where}." if where else ""
        raise ConfigError(f"{prefix}{unknown[0]}: unknown key (known: {', '.join(sorted(known))})")


def _options(game: Mapping[str, Any]) -> dict[str, bool | int]:
    """``[game.options]``: OPEN-nn names of the rules core's ``DEFAULT_OPTIONS``, each value of
    its default's type (true/false for a switch, a whole number 0..1000 for a count)."""
    options = game.get("options", {})
    if not isinstance(options, Mapping):
        raise ConfigError("game.options: expected a table of OPEN option -> value")
    out: dict[str, bool | int] = {}
    for name in options:
        where = f"game.options.{name}"
        if name not in DEFAULT_OPTIONS:
            raise ConfigError(
                f"{where}: unknown option (the rules core's options: see docs/rules.md)"
            )
        if isinstance(DEFAULT_OPTIONS[name], bool):
            out[name] = _bool(options, "game.options", name, False)
        else:
            out[name] = _int(options, "game.options", name, 0, 0, MAX_OPTION_NUMBER)
    return out


def _check_rules(game: GameConfig) -> None:
    """Let the rules core refuse what it would refuse at the first deal (R-COMP-2 colours under
    the chosen options, duplicate spells, ...), naming the ``[game]`` key."""
    try:
        RulesConfig(
            player_count=game.players,
            variant=game.variant,
            teams=game.teams,
            colours=game.colours or None,
            modules=frozenset(game.modules),
            options=dict(game.options),
            spells=game.spells,
        )
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"game: {str(exc).removeprefix('config.')}") from None


def is_host(name: str) -> bool:
    """True for an IPv4/IPv6 address or a host name of letters, digits, hyphens and dots
    (RFC 1123 labels, 253 characters at most); nothing is looked up."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return True
    labels = name.removesuffix(".").split(".")
    return len(name) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels)


def _check_nesting(raw: Mapping[str, Any], where: str) -> None:
    """Refuse tables/arrays nested deeper than :data:`MAX_NESTING`, naming the key."""
    todo: list[tuple[object, str, int]] = [(raw, "", 0)]
    while todo:
        value, key, depth = todo.pop()
        if depth > MAX_NESTING:
            raise ConfigError(f"{key or where}: nested deeper than {MAX_NESTING} levels")
        if isinstance(value, Mapping):
            todo.extend((v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            todo.extend((v, f"{key}[{i}]", depth + 1) for i, v in enumerate(value))


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    """``tomllib.loads`` whose every failure is a :class:`ConfigError` naming ``where``."""
    try:
        raw = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where} is not valid TOML: {exc}") from None
    except ValueError as exc:  # an integer beyond Python's digit limit
        raise ConfigError(f"{where}: a value cannot be read ({str(exc).split(';')[0]})") from None
    _check_nesting(raw, where)
    return raw


def check_data_paths(config: Config) -> None:
    """Check, without creating anything, that ``data.dir`` and ``data.journal`` can be used:
    an existing path must be of the right kind and the nearest existing folder above a missing
    one must be a writable folder.

    :raises ConfigError: naming ``data.dir`` or ``data.journal`` and the path to fix.
    """
    folder = Path(os.path.expanduser(config.data.dir))
    journal = config.data.journal_path()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"data.dir: {folder} exists and is not a folder")
    if journal.exists():
        if not journal.is_file():
            raise ConfigError(f"data.journal: {journal} exists and is not a journal file")
        if not os.access(journal, os.R_OK | os.W_OK):
            raise ConfigError(f"data.journal: {journal} cannot be read and written")
    for key, path in (("data.dir", folder), ("data.journal", journal.parent)):
        above = path
        while not above.exists() and above != above.parent:
            above = above.parent
        if not above.is_dir():
            raise ConfigError(f"{key}: cannot create a folder under {above}: it is not a folder")
        if not os.access(above, os.W_OK | os.X_OK):
            raise ConfigError(f"{key}: {above} is not writable")


def check_source_spec(spec: str, where: str = "camera.source") -> str:
    """Check the form of a frame-source spec (``auto``, ``simulated``, ``picamera2``, ``usb:N``,
    ``usb:URL``, ``file:PATH``, ``folder:PATH``, ``session:PATH``).

    :raises ConfigError: naming ``where`` for an unknown kind or an empty argument.
    """
    if spec in ("auto", "simulated", "picamera2"):
        return spec
    kind, sep, arg = spec.partition(":")
    if not sep or kind not in SOURCE_KINDS:
        raise ConfigError(
            f"{where}: {spec!r} is not a source (auto, simulated, picamera2, usb:N, "
            "file:PATH, folder:PATH, session:PATH)"
        )
    if not arg:
        raise ConfigError(f"{where}: {kind}: needs an argument, e.g. {kind}:0 or {kind}:PATH")
    return spec


def allowed_colours(players: int) -> tuple[str, ...]:
    """R-COMP-2: the colours with enough wizards for ``players`` (2 → blue, yellow; 3–4 → blue,
    yellow, red, green; 5–6 → all six; solo → all six)."""
    if players == 2:
        return COLOURS[:2]
    if players in (3, 4):
        return COLOURS[:4]
    return COLOURS


# ------------------------------------------------------------------------------------------


def parse_config(raw: Mapping[str, Any], source_path: str = "") -> Config:
    """Validate a parsed TOML document into a :class:`Config`.

    :raises ConfigError: naming the first bad key (``section.key: reason``).
    """
    sections = {
        "camera",
        "calibration",
        "hardware",
        "pins",
        "web",
        "game",
        "simulation",
        "data",
        "service",
    }
    _no_unknown(raw, "", sections)

    c = _table(raw, "camera")
    _no_unknown(c, "camera", {"source", "width", "height", "fps"})
    camera = CameraConfig(
        source=check_source_spec(_str(c, "camera", "source", "auto")),
        width=_int(c, "camera", "width", 1536, 160, 8192),
        height=_int(c, "camera", "height", 864, 120, 8192),
        fps=_float(c, "camera", "fps", 8.0, 0.1, 120.0),
    )

    cal = _table(raw, "calibration")
    _no_unknown(cal, "calibration", {"camera", "board", "profile", "learn_colours"})
    calibration = CalibrationConfig(
        camera=_str(cal, "calibration", "camera", ""),
        board=_str(cal, "calibration", "board", ""),
        profile=_str(cal, "calibration", "profile", ""),
        learn_colours=_bool(cal, "calibration", "learn_colours", CalibrationConfig.learn_colours),
    )

    h = _table(raw, "hardware")
    _no_unknown(h, "hardware", {"backend", "serial_port", "buzzer", "profile"})
    hardware = HardwareConfig(
        backend=_choice(h, "hardware", "backend", "auto", ("auto", "gpio", "mock")),
        serial_port=_str(h, "hardware", "serial_port", "none"),
        buzzer=_bool(h, "hardware", "buzzer", True),
        profile=_str(h, "hardware", "profile", "wandering-towers"),
    )
    if not hardware.serial_port:
        raise ConfigError('hardware.serial_port: must not be empty ("none" = no peripheral)')

    pins = _table(raw, "pins")

    w = _table(raw, "web")
    _no_unknown(w, "web", {"host", "port", "public_url", "threads"})
    web = WebConfig(
        host=_str(w, "web", "host", "0.0.0.0"),
        port=_int(w, "web", "port", 8080, 0, 65535),
        public_url=_str(w, "web", "public_url", ""),
        threads=_int(w, "web", "threads", 32, 16, 256),
    )
    if not web.host:
        raise ConfigError("web.host: must not be empty (0.0.0.0 = every interface)")
    if not is_host(web.host):
        raise ConfigError(
            f"web.host: {web.host[:60]!r} is not an IP address or host name "
            "(0.0.0.0 = every interface, 127.0.0.1 = this machine only)"
        )
    if web.public_url and not web.public_url.startswith(("http://", "https://")):
        raise ConfigError("web.public_url: must start with http:// or https://")

    g = _table(raw, "game")
    _no_unknown(
        g,
        "game",
        {"players", "colours", "variant", "teams", "modules", "memory_aid", "options", "spells"},
    )
    players = _int(g, "game", "players", 3, 1, 6)
    colours = _str_list(g, "game", "colours", COLOURS)
    if colours:
        if len(colours) != players:
            raise ConfigError(f"game.colours: {len(colours)} colours for {players} players")
        allowed = allowed_colours(players)
        for colour in colours:
            if colour not in allowed:
                raise ConfigError(
                    f"game.colours: {colour!r} has too few wizards for {players} players "
                    f"(R-COMP-2 allows {', '.join(allowed)})"
                )
    teams = _bool(g, "game", "teams", False)
    if teams and players not in (4, 6):
        raise ConfigError(f"game.teams: the team variant needs 4 or 6 players, not {players}")
    options = _options(g)
    game = GameConfig(
        players=players,
        colours=colours,
        variant=_choice(g, "game", "variant", "base", ("base", "master")),
        teams=teams,
        modules=_str_list(g, "game", "modules", MODULES),
        memory_aid=_choice(g, "game", "memory_aid", "own", ("off", "own", "all")),
        options=options,
        spells=_spells(g),
    )
    _check_rules(game)

    s = _table(raw, "simulation")
    _no_unknown(
        s,
        "simulation",
        {"seed", "bot", "seconds_per_action", "speed", "hands", "games", "max_actions", "picture"},
    )
    simulation = SimulationConfig(
        seed=_int(s, "simulation", "seed", 1, 0, 2**63 - 1),
        bot=_choice(s, "simulation", "bot", "greedy", ("greedy", "random")),
        seconds_per_action=_float(s, "simulation", "seconds_per_action", 3.0, 0.0, 600.0),
        speed=_float(s, "simulation", "speed", 1.0, 0.01, 1e6),
        hands=_bool(s, "simulation", "hands", True),
        games=_int(s, "simulation", "games", 0, 0, 1_000_000),
        max_actions=_int(s, "simulation", "max_actions", 0, 0, 1_000_000),
        picture=_bool(s, "simulation", "picture", True),
    )

    d = _table(raw, "data")
    _no_unknown(d, "data", {"dir", "journal"})
    data = DataConfig(dir=_str(d, "data", "dir", "data"), journal=_str(d, "data", "journal", ""))
    if not data.dir:
        raise ConfigError("data.dir: must not be empty")
    if not data.journal:
        data = DataConfig(dir=data.dir, journal="journal.sqlite3")

    sv = _table(raw, "service")
    _no_unknown(
        sv, "service", {"heartbeat_stale_s", "status_every_s", "work_ahead", "detector_process"}
    )
    service = ServiceConfig(
        heartbeat_stale_s=_float(sv, "service", "heartbeat_stale_s", 15.0, 0.5, 3600.0),
        status_every_s=_float(sv, "service", "status_every_s", 10.0, 0.0, 3600.0),
        work_ahead=_bool(sv, "service", "work_ahead", ServiceConfig.work_ahead),
        detector_process=_bool(sv, "service", "detector_process", ServiceConfig.detector_process),
    )

    return Config(
        camera=camera,
        calibration=calibration,
        hardware=hardware,
        pins=dict(pins),
        web=web,
        game=game,
        simulation=simulation,
        data=data,
        service=service,
        source_path=source_path,
    )


def load_config(path: str | Path | None = None, text: str | None = None) -> Config:
    """Read and validate the configuration.

    :param path: a TOML file; ``None`` = ``$COMPANION_CONFIG``, else the first existing file of
        :data:`DEFAULT_CONFIG_PATHS`, else the built-in defaults.
    :param text: TOML text to parse instead of a file (tests).
    :raises ConfigError: for a missing or unreadable file, a TOML syntax error (with its line),
        nesting deeper than :data:`MAX_NESTING`, an unreadable number, any invalid key, or a
        ``[data]`` path that cannot be used (:func:`check_data_paths`).
    """
    if text is not None:
        return parse_config(_parse_toml(text, "config"))
    if path is None:
        env = os.environ.get(ENV_CONFIG)
        if env:
            path = env
        else:
            path = next((p for p in DEFAULT_CONFIG_PATHS if p.is_file()), None)
            if path is None:
                return Config()
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"config: cannot read {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config: {p} is not valid TOML: {exc}") from None
    config = parse_config(_parse_toml(text, f"config: {p}"), source_path=str(p))
    check_data_paths(config)
    return config


def with_overrides(config: Config, **changes: Mapping[str, Any]) -> Config:
    """A new config with some keys of some sections replaced, validated again.

    ``with_overrides(cfg, web={"port": 0}, simulation={"speed": 50.0})``.

    :raises ConfigError: as :func:`parse_config`.
    """
    raw = config.to_dict()
    raw.pop("source_path", None)
    for section, values in changes.items():
        raw.setdefault(section, {})
        raw[section] = {**raw[section], **values}
    changed = parse_config(raw, source_path=config.source_path)
    if "data" in changes:
        check_data_paths(changed)
    return changed
