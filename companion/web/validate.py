"""Strict JSON in and out, and the schema every page command is checked against.

A request body is parsed by :func:`parse_json_body` (size and nesting bounded, ``NaN`` /
``Infinity`` refused) and checked by :func:`check_command` against :data:`COMMAND_FIELDS`
(known command names, required and unknown keys, types, string lengths, names from the rules
core's lists) before anything reaches the :class:`~companion.web.service.TableService`, so a
refused request changes nothing. Every error names the field (``report_spell.spell: ...``).

The checks here are about shape only; whether a command is possible now (a spell on display,
a space on this game's track, an open question) is the service's and the rules core's call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn, Protocol

from companion.packs.registry import GAMES
from companion.rules import BASE_SPELLS, COLOURS, DEFAULT_OPTIONS, EXPANSION_SPELLS, MODULES
from companion.rules.observation import MAX_WIZARDS_ON_TOP, TOP_KINDS
from companion.rules.view import MEMORY_AIDS
from companion.web.service import HOST_COMMANDS, CommandError, CommandName

MAX_BODY_BYTES = 16 * 1024
"""Largest request body (bytes); every valid command is far below it."""

MAX_DEPTH = 32
"""Deepest nesting of arrays/objects in a request body; valid commands nest at most 2 deep."""

MAX_TEXT = 64
"""Longest free string (characters) a command field may hold (question / option ids)."""

SPELLS: tuple[str, ...] = (*BASE_SPELLS, *EXPANSION_SPELLS)
"""Every spell name of the rules core (base game and expansion)."""

MAX_SPACE = 64
"""Highest space number a correction may name; the game's own track length is checked later."""

MAX_TOWERS = 10
"""Most towers a corrected space may hold."""

MAX_OPTION_NUMBER = 1000
"""Largest whole number an OPEN option of the setup form may take."""


class RequestError(CommandError):
    """A request body the web layer refuses (400 malformed, 413 too large), naming the problem."""


# ------------------------------------------------------------------------------------------
# JSON in and out


def _refuse_constant(name: str) -> NoReturn:
    raise RequestError(f"JSON: {name} is not a number (NaN and Infinity are refused)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        _refuse_constant(text)
    return value


def nesting_depth(text: str) -> int:
    """Deepest array/object nesting of JSON ``text`` (brackets inside strings do not count);
    counted without parsing, so a hostile body cannot exhaust the parser's recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json_body(
    raw: bytes, max_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_DEPTH
) -> object:
    """Parse a request body strictly.

    :param raw: the body bytes (UTF-8 JSON).
    :returns: the parsed value (``dict`` / ``list`` / ``str`` / ``int`` / ``float`` / ``bool`` /
        ``None``), with every float finite.
    :raises RequestError: 413 over ``max_bytes``; 400 for invalid UTF-8 or JSON, ``NaN`` /
        ``Infinity`` / overflowing numbers, nesting deeper than ``max_depth``, or an integer
        too long to read.
    """
    if len(raw) > max_bytes:
        raise RequestError(f"request body larger than {max_bytes} bytes", 413)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError("JSON: the body is not UTF-8 text") from None
    if nesting_depth(text) > max_depth:
        raise RequestError(f"JSON: nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise RequestError(f"JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer over Python's digit limit
        raise RequestError(f"JSON: unreadable value ({str(exc)[:80]})") from None


def dumps_strict(value: object) -> str:
    """Compact JSON text of ``value``; ``NaN`` / ``Infinity`` refused so every browser can
    parse what the pages receive.

    :raises ValueError: on a non-finite float anywhere in ``value``.
    """
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


# ------------------------------------------------------------------------------------------
# field specs


class FieldSpec(Protocol):
    """Checks one field's value; raises :class:`RequestError` naming ``path``."""

    def check(self, value: object, path: str) -> None: ...


def _suffix(rule: str) -> str:
    return f" ({rule})" if rule else ""


@dataclass(frozen=True, slots=True)
class Text:
    """A string of at most ``max_len`` characters, one of ``choices`` when given."""

    max_len: int = MAX_TEXT
    choices: tuple[str, ...] | None = None
    rule: str = ""

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, str):
            raise RequestError(f"{path}: expected a string{_suffix(self.rule)}")
        if self.choices is not None:
            if value not in self.choices:
                shown = repr(value[:24])
                raise RequestError(
                    f"{path}: {shown} is not one of {', '.join(self.choices)}{_suffix(self.rule)}"
                )
        elif len(value) > self.max_len:
            raise RequestError(f"{path}: longer than {self.max_len} characters")


@dataclass(frozen=True, slots=True)
class WholeNumber:
    """An integer ``lo..hi`` (``true`` / ``false`` are not numbers)."""

    lo: int
    hi: int
    rule: str = ""

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or not self.lo <= value <= self.hi:
            raise RequestError(
                f"{path}: expected a whole number {self.lo}..{self.hi}{_suffix(self.rule)}"
            )


@dataclass(frozen=True, slots=True)
class Flag:
    """``true`` or ``false``."""

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, bool):
            raise RequestError(f"{path}: expected true or false")


@dataclass(frozen=True, slots=True)
class Names:
    """A list of at most ``max_items`` names, each one of ``choices`` (repeats allowed: the
    rules core says why a repeat is wrong)."""

    choices: tuple[str, ...]
    max_items: int

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, list):
            raise RequestError(f"{path}: expected a list of names")
        if len(value) > self.max_items:
            raise RequestError(f"{path}: more than {self.max_items} entries")
        for item in value:
            Text(choices=self.choices).check(item, path)


@dataclass(frozen=True, slots=True)
class Counts:
    """An object name -> whole number ``0..hi``, names from ``choices`` (wizards by colour)."""

    choices: tuple[str, ...]
    hi: int

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise RequestError(f"{path}: expected an object of name -> count")
        for key, count in value.items():
            if key not in self.choices:
                raise RequestError(f"{path}.{str(key)[:24]}: not one of {', '.join(self.choices)}")
            WholeNumber(0, self.hi).check(count, f"{path}.{key}")


@dataclass(frozen=True, slots=True)
class AnyOf:
    """The first of ``specs`` that accepts the value (an answer option: an id or its index)."""

    specs: tuple[FieldSpec, ...]
    what: str

    def check(self, value: object, path: str) -> None:
        for spec in self.specs:
            try:
                spec.check(value, path)
            except RequestError:
                continue
            return
        raise RequestError(f"{path}: expected {self.what}")


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The setup form's options: name -> value of the rules core's ``DEFAULT_OPTIONS`` type
    (``true``/``false`` for a flag, a whole number ``0..1000`` or ``null`` for a count)."""

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise RequestError(f"{path}: expected an object of option -> value")
        for name, given in value.items():
            where = f"{path}.{str(name)[:40]}"
            if name not in DEFAULT_OPTIONS:
                raise RequestError(f"{where}: unknown option")
            default = DEFAULT_OPTIONS[name]
            if isinstance(default, bool):
                Flag().check(given, where)
            elif given is not None or default is not None:
                WholeNumber(0, MAX_OPTION_NUMBER).check(given, where)


@dataclass(frozen=True, slots=True)
class PackArgs:
    """A game pack's arguments: an object of name -> a whole number ``-1000..1000``,
    true/false, a short string, or a list / object of those (one level down), at most
    ``max_items`` entries each. Whether a value is right is the pack's call (it names the
    field and the rule)."""

    max_items: int = 16

    def _scalar(self, value: object, path: str) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int):
            WholeNumber(-MAX_OPTION_NUMBER, MAX_OPTION_NUMBER).check(value, path)
            return
        Text(max_len=MAX_TEXT).check(value, path)

    def check(self, value: object, path: str, depth: int = 0) -> None:
        if not isinstance(value, dict):
            raise RequestError(f"{path}: expected an object of name -> value")
        if len(value) > self.max_items:
            raise RequestError(f"{path}: more than {self.max_items} entries")
        for key, item in value.items():
            where = f"{path}.{str(key)[:32]}"
            Text(max_len=32).check(key, where)
            if isinstance(item, dict) and depth < 1:
                self.check(item, where, depth + 1)
            elif isinstance(item, list) and depth < 1:
                if len(item) > self.max_items:
                    raise RequestError(f"{where}: more than {self.max_items} entries")
                for entry in item:
                    if isinstance(entry, dict) and depth < 1:
                        self.check(entry, where, depth + 1)
                    else:
                        self._scalar(entry, where)
            else:
                self._scalar(item, where)


@dataclass(frozen=True, slots=True)
class Field:
    """One key of a command: its spec, whether it must be present, whether ``null`` is allowed."""

    spec: FieldSpec
    required: bool = False
    nullable: bool = False


# ------------------------------------------------------------------------------------------
# the command table

_NOTHING: Mapping[str, Field] = {}
_REPORTER = Field(Text(choices=COLOURS))  # the host may report for a player (by colour)

COMMAND_FIELDS: Mapping[CommandName, Mapping[str, Field]] = {
    "setup": {
        "players": Field(WholeNumber(1, 6)),  # 1 = the solo variant
        "colours": Field(Names(COLOURS, len(COLOURS)), nullable=True),
        "variant": Field(Text(choices=("base", "master"))),
        "teams": Field(Flag()),
        "modules": Field(Names(MODULES, len(MODULES))),
        "spells": Field(Names(SPELLS, len(SPELLS)), nullable=True),
        "memory_aid": Field(Text(choices=MEMORY_AIDS)),
        "options": Field(RuleOptions()),
        "game": Field(Text(choices=GAMES)),  # a game pack, or the Wandering Towers (default)
        "pack": Field(PackArgs()),  # the pack's own settings
    },
    "answer": {
        "question": Field(Text(), required=True),
        "option": Field(
            AnyOf((Text(), WholeNumber(0, 99)), "an option id or its number 0..99"),
            required=True,
        ),
    },
    "correct_space": {
        "space": Field(WholeNumber(1, MAX_SPACE), required=True),
        "towers": Field(WholeNumber(0, MAX_TOWERS), required=True),
        "top": Field(Text(choices=tuple(sorted(TOP_KINDS))), required=True),
        "wizards": Field(Counts(COLOURS, MAX_WIZARDS_ON_TOP)),
        "castle": Field(Flag()),
    },
    "undo": _NOTHING,
    "dice_mode": {"dice": Field(WholeNumber(1, 3, "R-CARD-4"), required=True)},
    "roll": _NOTHING,
    "keep": _NOTHING,
    "end_turn": _NOTHING,
    "report_spell": {"spell": Field(Text(choices=SPELLS), required=True), "player": _REPORTER},
    "report_page_card": {"player": _REPORTER},
    "calibrate_board": _NOTHING,
    "calibrate_profile": _NOTHING,
    "calibrate_reset": _NOTHING,
    "reissue_tokens": {"who": Field(Text(choices=("players", "host", *COLOURS)), required=True)},
    "accept_journal": _NOTHING,
    "pack": {"action": Field(Text(max_len=32), required=True), "args": Field(PackArgs())},
    "calibrate_check": _NOTHING,
}
"""Command name -> its fields (besides ``"command"``); a key not listed is refused."""


def command_name(body: object) -> CommandName:
    """The known command a parsed body names.

    :raises RequestError: 400 when ``body`` is not an object or names no known command.
    """
    if not isinstance(body, dict):
        raise RequestError('expected a JSON object like {"command": "roll"}')
    name = body.get("command")
    for known in COMMAND_FIELDS:
        if name == known:
            return known
    shown = repr(name[:24]) if isinstance(name, str) else type(name).__name__
    raise RequestError(
        f"command: {shown} is not a command (known: {', '.join(sorted(HOST_COMMANDS))})"
    )


def check_command(body: object) -> dict[str, object]:
    """Check a parsed command against :data:`COMMAND_FIELDS`.

    :returns: the command as a fresh ``dict`` (``{"command": NAME, ...}``, only known keys).
    :raises RequestError: 400 naming the command and field (``setup.players: ...``): not an
        object, unknown command, unknown or missing key, wrong type, too long, not one of the
        rules core's names.
    """
    name = command_name(body)
    if not isinstance(body, dict):  # command_name refused it already; this narrows the type
        raise RequestError('expected a JSON object like {"command": "roll"}')
    fields = COMMAND_FIELDS[name]
    for key in body:
        if key != "command" and key not in fields:
            raise RequestError(f"{name}.{str(key)[:40]}: unknown field")
    for key, field in fields.items():
        if key not in body:
            if field.required:
                raise RequestError(f"{name}.{key}: missing")
            continue
        value = body[key]
        if value is None and field.nullable:
            continue
        field.spec.check(value, f"{name}.{key}")
    return dict(body)
