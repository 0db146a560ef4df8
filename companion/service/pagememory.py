"""What the phone pages keep across a restart, and the host's join links.

:class:`PageMemory` is the part of :class:`~companion.service.core.CompanionService` that keeps,
with the game's journal (a :class:`~companion.service.driver.TableMemory` driver), the join
tokens, the pages' epoch and version, the log lines, the players' reports and the dice display:
a restart takes them back, so every phone that had joined keeps working, its page takes the
restored game's snapshots (versions only go up) and shows what it showed before
(docs/architecture.md, "Restart"). The host re-issues join links here; a revoked link's phone
is told so (its token's hash is kept, never the token).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import sqlite3
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from companion.journal import JournalError
from companion.service.driver import GameDriver, TableMemory
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import CommandResult
from companion.service.journal_check import JournalDamage
from companion.service.publish import Publications
from companion.web.service import CommandError
from companion.web.snapshot import SeatTokens

log = logging.getLogger(__name__)


REVOKED_KEPT = 64
"""Revoked join tokens remembered (as hashes) to tell their phones why they are refused."""

MEMORY_ERRORS = (OSError, ValueError, sqlite3.Error, JournalError)
"""What keeping the pages' memory in the journal can raise (logged; the game goes on)."""


class PageMemory(SeatTokens, Publications):
    """The pages' memory and the join links of a ``CompanionService`` (see the module doc).
    The service creates the attributes declared here; methods named ``_…_locked`` or said to
    run under ``_cond`` expect the service's condition held."""

    _cond: threading.Condition
    _version: int
    _version_reserved: int
    _epoch: str
    _host_token: str
    _tokens: dict[str, str]
    _revoked: set[str]
    _damage: JournalDamage | None
    _memory: TableMemory | None
    _driver: GameDriver | None
    _log: deque[str]
    _reports: deque[dict[str, object]]
    _dice: dict[str, object] | None
    heartbeats: Heartbeats

    def _take_kept(self, kept: Mapping[str, Any], colours: list[str]) -> None:
        """Take the tokens, epoch, version and page memory a restored journal kept (under
        ``_cond``); what it lacks is made anew (player tokens) or kept (host token, epoch)."""
        tokens = kept.get("tokens")
        players = tokens.get("players") if isinstance(tokens, dict) else None
        if isinstance(tokens, dict) and isinstance(tokens.get("host"), str):
            self._host_token = tokens["host"]
        if isinstance(players, dict) and sorted(players) == sorted(colours):
            self._tokens = {c: str(players[c]) for c in colours}
        else:
            self._tokens = {c: secrets.token_urlsafe(16) for c in colours}
        epoch = kept.get("epoch")
        version = kept.get("version")
        if isinstance(version, int) and isinstance(epoch, str):
            self._epoch = epoch
            self._version = max(self._version, version + 1)
        self._version_reserved = 0  # reserve afresh in this journal at the next change
        revoked = kept.get("revoked")
        if isinstance(revoked, list):
            self._revoked = {str(h) for h in revoked}
        page = kept.get("page") or []
        if page:
            self._log.clear()
            self._reports.clear()
        for entry in page:
            if not isinstance(entry, dict):
                continue
            lines = entry.get("lines")
            if isinstance(lines, list):
                self._log.extend(str(x) for x in lines)
            if isinstance(entry.get("report"), dict):
                self._reports.append(entry["report"])
            if isinstance(entry.get("dice"), dict):
                self._dice = entry["dice"]
        reports = kept.get("reports")
        if isinstance(reports, list):  # the whole list, however long ago they were made
            self._reports.clear()
            self._reports.extend(r for r in reports if isinstance(r, dict))

    def _keep_tokens(self) -> None:
        """Write the join tokens, epoch and revoked tokens into the journal."""
        memory = self._memory
        if memory is None:
            return
        with self._cond:
            tokens = {"host": self._host_token, "players": dict(self._tokens)}
            revoked = sorted(self._revoked)
        self._keep("tokens", tokens)
        self._keep("epoch", self._epoch)
        self._keep("revoked", revoked)

    def _keep(self, key: str, value: object) -> None:
        memory = self._memory
        if memory is None:
            return
        try:
            memory.keep(key, value)
        except MEMORY_ERRORS as exc:
            log.error("journal: %s not kept: %s", key, exc)
            self.heartbeats.trouble("tracker", f"journal: {key} not kept: {exc}")

    def _remember(self, entry: dict[str, object]) -> None:
        memory = self._memory
        if memory is None:
            return
        try:
            memory.remember(entry)
        except MEMORY_ERRORS as exc:
            log.error("journal: page record not kept: %s", exc)

    def _reissue(self, who: str) -> CommandResult:
        """New join tokens for ``who`` (``players``, ``host`` or a seat's colour); the old ones
        stop working at once (their phones get a 401 saying so).

        :raises CommandError: ``who`` names no seat of this game (400).
        """
        with self._cond:
            if who not in ("players", "host") and who not in self._tokens:
                raise CommandError(f"reissue_tokens.who: {who!r} is not a seat of this game")
            old: list[str] = []
            if who == "host":
                old.append(self._host_token)
                self._host_token = secrets.token_urlsafe(16)
            else:
                for colour in list(self._tokens):
                    if who in ("players", colour):
                        old.append(self._tokens[colour])
                        self._tokens[colour] = secrets.token_urlsafe(16)
            self._revoked.update(_token_hash(t) for t in old)
            while len(self._revoked) > REVOKED_KEPT:
                self._revoked.pop()
            host_link = f"/join/{self._host_token}"
        self._keep_tokens()
        line = "host issued new join links: " + who
        self._remember({"lines": [line]})
        with self._cond:
            self._log.append(line)
            self._bump_locked()
        result: dict[str, object] = {
            "message": f"new join links for {who}: the old ones no longer work"
        }
        if who == "host":
            result["host_link"] = host_link  # the host page follows it to keep its seat
        return result

    def _accept_journal(self) -> CommandResult:
        """The host took note of a salvaged journal (its notice goes away)."""
        memory = self._memory
        with self._cond:
            if self._damage is None:
                raise CommandError("the journal is not damaged", 409)
            if memory is None or self._driver is None:
                raise CommandError(
                    "no game was salvaged: start a new game (the damaged journal is kept)", 409
                )
        try:
            memory.accept_damage()
        except MEMORY_ERRORS as exc:
            raise CommandError(f"journal: {exc}", 500) from None
        line = "host continues the salvaged game"
        self._remember({"lines": [line]})
        with self._cond:
            self._damage = None
            self._log.append(line)
            self._bump_locked()
        return {"message": "the salvaged game goes on"}


def _token_hash(token: str) -> str:
    """What is kept of a revoked token: its SHA-256 (hex), never the token itself."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
