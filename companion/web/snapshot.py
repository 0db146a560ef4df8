"""The page snapshot: what ``TableService.snapshot(audience)`` returns, built in one place for
the real service (``companion.service.core``) and the web fake
(``companion.sim.faketable``), and the protocol's version counter and seat tokens they share
(:class:`SeatTokens`).

The game part comes from ``companion.rules.view`` alone (``audience_view``), so what a page may
show of hidden wizards and hands is decided by the rules core, never here.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Mapping, Sequence

from companion.rules import GameState, Observation
from companion.rules.view import audience_view
from companion.web.service import Audience, MemoryAid, Phase, Snapshot


class SeatTokens:
    """Version and tokens of a ``TableService``: the host's token and one secret token per seat
    colour (the link each player's phone joins with). Subclasses create ``_cond`` (a
    ``threading.Condition``), ``_version``, ``_host_token`` and ``_tokens`` (colour -> token);
    ``_revoked`` holds the SHA-256 (hex) of tokens the host revoked."""

    _cond: threading.Condition
    _version: int
    _host_token: str
    _tokens: dict[str, str]
    _revoked: set[str] | frozenset[str] = frozenset()

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    @property
    def host_token(self) -> str:
        return self._host_token

    def player_for_token(self, token: str) -> str | None:
        """The colour whose token this is (constant-time comparison), else None."""
        given = token.encode("utf-8", "replace")
        with self._cond:
            for colour, t in self._tokens.items():
                if hmac.compare_digest(given, t.encode()):
                    return colour
        return None

    def token_revoked(self, token: str) -> bool:
        """True when the host revoked this (once valid) join token."""
        digest = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
        with self._cond:
            return digest in self._revoked

    def player_tokens(self) -> dict[str, str]:
        with self._cond:
            return dict(self._tokens)


def question_for(
    question: Mapping[str, object] | None, audience: Audience
) -> dict[str, object] | None:
    """The open question as ``audience`` sees it. Its options (which may tell hidden moves
    apart) go only to those who may answer: the player it is addressed to and the host. Every
    other page - the public table page, the other players - gets its text and addressee
    ("a question for blue") with no options (``"for_other": True``)."""
    if question is None:
        return None
    q = dict(question)
    to = q.get("to")
    answers = audience.role == "host" or (audience.role == "player" and to == audience.colour)
    if not answers:
        q["options"] = []
        q["for_other"] = True
    return q


def build_snapshot(
    *,
    version: int,
    epoch: str = "",
    audience: Audience,
    phase: Phase,
    memory_aid: MemoryAid,
    state: GameState | None,
    dice: Mapping[str, object] | None,
    panel: Mapping[str, object],
    question: Mapping[str, object] | None,
    health_ok: bool,
    health_line: str,
    log: Sequence[str],
    reports: Sequence[Mapping[str, object]],
    camera: str,
    host: Mapping[str, object] | None = None,
    pack: Mapping[str, object] | None = None,
    seen: Observation | None = None,
    potions_unsure: Mapping[str, Sequence[Sequence[int]]] | None = None,
    hidden_unsure: Mapping[str, Sequence[Sequence[tuple[int, int]]]] | None = None,
) -> Snapshot:
    """The snapshot JSON for one audience (:class:`companion.web.service.Snapshot`).

    :param state: the game state (``GameState``) or None before a game is set up; shown through
        :func:`companion.rules.view.audience_view` with ``memory_aid``.
    :param epoch: the pages' epoch: a page that sees another epoch takes the snapshot whatever
        its version (a restart that could not read the last version back).
    :param host: the host page's extra section (settings, calibration, …); only the host gets it.
    :param pack: a game pack's view for this audience (made by the pack, docs/architecture.md
        "Game packs"); the snapshot then has a ``pack`` key.
    :param seen: the camera's still board that the tracker is still checking (None when the
        tracker has worked out the latest one): published as ``seen`` (:func:`seen_json`) with
        ``checking`` true, and the pages draw the board from it; everything the camera cannot
        see (trapped wizards, potions, whose turn) still comes from ``state``.
    :param potions_unsure: ``{colour: [(full, empty, spent), …]}``, the players whose potions
        the tracker cannot tell (a card and a spell look alike, R-SPELL-6), ``state``'s count
        first: the state's ``potions_unsure`` (``{colour: [{"full", "empty", "spent"}, …]}``),
        shown as "one of these" (potions lie open on the table: every audience gets it).
    :param hidden_unsure: ``{colour: [[(space, tier), …], …]}``, the colours whose trapped
        wizards the tracker holds several stories of, ``state``'s placement first: the state's
        ``trapped_unsure`` (``{colour: [[{"space", "tier"}, …], …]}``, docs/state-model.md
        §2.5) for the audiences that see that colour's trapped wizards (``memory_aid`` ``all``;
        ``own``: a player's own colour).
    """
    state_json = None
    if state is not None:
        colour = audience.colour if audience.role == "player" else None
        state_json = audience_view(state, colour, memory_aid)
        if potions_unsure:
            state_json["potions_unsure"] = {
                c: [{"full": p[0], "empty": p[1], "spent": p[2]} for p in counts]
                for c, counts in potions_unsure.items()
            }
        trapped = {
            c: alts
            for c, alts in (hidden_unsure or {}).items()
            if memory_aid == "all" or (memory_aid == "own" and c == colour)
        }
        if trapped:
            state_json["trapped_unsure"] = {
                c: [[{"space": s, "tier": t} for s, t in alt] for alt in alts]
                for c, alts in trapped.items()
            }
    snap: Snapshot = {
        "version": version,
        "epoch": epoch,
        "audience": audience.to_json(),
        "phase": phase,
        "memory_aid": memory_aid,
        "state": state_json,
        "dice": dice,
        "panel": panel,
        "question": question_for(question, audience),
        "health": {"ok": health_ok, "line": health_line},
        "log": list(log),
        "reports": list(reports),
        "camera": camera,
        "checking": seen is not None,
        "seen": seen_json(seen) if seen is not None else None,
    }
    if audience.role == "host" and host is not None:
        snap["host"] = dict(host)
    if pack is not None:
        snap["pack"] = dict(pack)
    return snap


def seen_json(obs: Observation) -> dict[str, object]:
    """What the camera sees of a still board, for the pages: ``{"frame": 812, "spaces": {"7":
    {"towers": 2, "top": "crest", "wizards": {"blue": 1}, "castle": false, "witch": false,
    "raven": false}, …}}`` — towers per space (0..10), the top surface's kind, the visible
    wizards by colour, the castle and the expansion's tokens (no confidences). Only what every
    player sees on the table, so every audience gets it. A space the detector withheld as
    unsure is absent: unknown, never empty (the pages draw it from the tracker's belief,
    marked "not read"; docs/state-model.md §3)."""
    return {
        "frame": obs.frame,
        "spaces": {
            str(n): {
                "towers": sp.towers,
                "top": sp.top,
                "wizards": dict(sp.wizards),
                "castle": sp.castle,
                "witch": sp.witch,
                "raven": sp.raven,
            }
            for n, sp in sorted(obs.spaces.items())
        },
    }
