"""A pack game in ``companion replay``: its carried-out changes applied again and its pages
compared (docs/architecture.md, "Game packs"; the recording's files are described in
:mod:`companion.service.record`).

A pack game draws its chance live (dice faces, the siege race's face-down cards, the start
order), so a recording cannot run the phones' commands again and expect the same game. The
recorder keeps, for each input, the change the driver carried out with chance drawn (its
journal record, ``carried_out`` in ``results.jsonl``), and what every page and the LEDs showed
after it (``shown``, when it changed). :class:`PackReplay` checks each carried-out change
against the input that was sent (:func:`~companion.service.packs.pack_change`: the same
arguments, chance only added), applies it with the code that replays a journal after a restart
(:func:`~companion.service.packs.apply_change`), and compares the views after every input.
Nothing here knows one pack from another.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.packs import PackError
from companion.packs.base import Game, PackGame
from companion.service.driver import PackShown
from companion.service.game import GameSettings
from companion.service.packs import apply_change, pack_change, pack_shown


@dataclass
class PackTally:
    """What the replay of the pack games in a recording found (input numbers in lists)."""

    games: list[str] = field(default_factory=list)  # the pack games, in the recorded order
    changes_replayed: int = 0  # carried-out changes applied again
    changes_refused: list[int] = field(default_factory=list)  # the pack refuses them now
    changes_unlike_input: list[int] = field(default_factory=list)  # carried out ≠ sent
    views_compared: int = 0  # times every page's view and the LEDs were compared
    views_differing: list[int] = field(default_factory=list)  # inputs after which they differ

    @property
    def same(self) -> bool:
        """No change refused or unlike its input, and the pages the same every time."""
        return not (self.changes_refused or self.changes_unlike_input or self.views_differing)

    def lines(self) -> list[str]:
        """The replay's report lines about the pack games (none without one)."""
        if not self.games:
            return []

        def some(inputs: list[int]) -> str:
            return f"{len(inputs)}" + (f" (inputs {inputs[:10]})" if inputs else "")

        return [
            f"pack games: {', '.join(self.games)}; changes carried out again: "
            f"{self.changes_replayed}, refused now: {some(self.changes_refused)}",
            f"changes unlike the input that was sent: {some(self.changes_unlike_input)}",
            f"pages and LEDs compared {self.views_compared} times; differing after: "
            f"{some(self.views_differing)}",
        ]


def shown_json(shown: PackShown | None) -> dict[str, Any] | None:
    """What a pack game's pages and LEDs show, as plain JSON (the recording keeps it)."""
    if shown is None:
        return None
    data = {
        "game": shown.game,
        "views": shown.views,
        "seat": shown.seat,
        "attention": shown.attention,
    }
    out: dict[str, Any] = json.loads(json.dumps(data))
    return out


def carried_as_sent(sent: Mapping[str, Any], done: Mapping[str, Any]) -> bool:
    """A carried-out change is the sent one with chance drawn: the same kind and sender, and
    every argument sent kept (``PackGame.resolve`` only adds)."""
    if sent["kind"] != done["kind"]:
        return False
    if sent["kind"] != "pack_input":
        return True
    command = done.get("command")
    return (
        isinstance(command, Mapping)
        and sent["by"] == done.get("by")
        and all(k in command and command[k] == v for k, v in sent["command"].items())
    )


class PackReplay:
    """One pack game of a recording, replayed (see the module doc).

    :param pack: the game's pack; ``settings``: its settings (seats, the pack's choices).
    :param start: the recording's start of the game: ``record`` (a ``pack_start`` record with
        the positions in force) and ``shown`` (what the pages showed then).
    :param tally: where the comparison is counted.
    :raises ValueError: the start has no positions, or the pack cannot read them.
    """

    def __init__(
        self,
        pack: PackGame,
        settings: GameSettings,
        start: Mapping[str, Any],
        tally: PackTally,
    ) -> None:
        self.pack = pack
        self.settings = settings
        self.tally = tally
        self.history: list[Game] = []
        record = start.get("record")
        if not isinstance(record, Mapping) or record.get("kind") != "pack_start":
            raise ValueError(f"a {settings.game} game without its first position")
        try:
            apply_change(pack, self.history, record)
            self.now()
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"the first position is unreadable ({exc})") from None
        tally.games.append(settings.game)
        self.expected = start.get("shown")
        self._compare(0)

    def now(self) -> dict[str, Any] | None:
        """What the pages and the LEDs show now (JSON, as the recorder keeps it)."""
        return shown_json(pack_shown(self.pack, self.history[-1], self.settings))

    def _compare(self, n: int) -> None:
        self.tally.views_compared += 1
        if self.now() != self.expected:
            self.tally.views_differing.append(n)

    def step(
        self, n: int, line: Mapping[str, Any], rec: Mapping[str, Any], notes: list[str]
    ) -> None:
        """Input ``n`` again: ``line`` as in ``inputs.jsonl``, ``rec`` its ``results.jsonl``
        line (empty when the recording was cut before it); a refusal goes to ``notes``.

        :raises ValueError: a carried-out change of the wrong shape.
        """
        kind = str(line["kind"])
        sent = pack_change(kind, line.get("payload"), line.get("audience"))
        done = rec.get("carried_out")
        if done is not None:
            if not isinstance(done, Mapping) or done.get("kind") not in ("pack_input", "pack_undo"):
                raise ValueError("carried_out is not a pack_input or pack_undo record")
            if sent is None or not carried_as_sent(sent, done):
                self.tally.changes_unlike_input.append(n)
            try:
                apply_change(self.pack, self.history, done)
                self.tally.changes_replayed += 1
            except PackError as exc:
                self.tally.changes_refused.append(n)
                notes.append(f"input {n} ({kind}) refused again: {exc}")
            except (KeyError, TypeError) as exc:
                raise ValueError(f"carried_out malformed ({exc})") from None
        if "shown" in rec:
            self.expected = rec["shown"]
        if rec:
            self._compare(n)

    def final_equal(self) -> bool:
        """The pages and the LEDs after the last input are what the recording showed."""
        return self.now() == self.expected
