"""*The Princess and Magic Tile* as a game pack (:class:`~companion.packs.base.PackGame`).

The phone is the score track's step calculator: the player on turn enters the step values of
the rune cards he completes, the companion adds ``k - 1`` (G3-STEP-1), takes 2 off for the
princess's carrier or a move past her (G3-STEP-2), opens the secret passages once someone
reaches space 20 (G3-STEP-3), scores GOAL arrivals 10/5/3/1 plus excess steps (G3-STEP-4) and
counts the last turns owed after the first arrival, or ends the game when the element tiles
run out (G3-END-1, G3-END-2). Then each player's tiles and spirit cards go on the scoring sheet
(G3-SCORE-1..5).

Where the rulebook is unclear the host's setup chooses (stated defaults in
:class:`~companion.packs.princess.rules.TrackSettings`): passing the carrier, when a passage
is taken, whether landing on 13 picks the princess up, how ties for the most share second
place, and the printed values of the track spaces short of GOAL (only space 23 → −2 is in
the text; the host enters the others as printed).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from companion.packs.base import (
    Command,
    Game,
    Leds,
    PackConflict,
    Who,
    arg_bool,
    arg_choice,
    arg_int,
    arg_player,
    check_seats,
    check_setup,
    copy_game,
    own_turn,
)
from companion.packs.errors import PackError
from companion.packs.princess.rules import (
    GOAL_SPACE,
    MAX_CARD_STEPS,
    MAX_GEMS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    EndCheck,
    Overtake,
    PassageUse,
    Track,
    TrackSettings,
    declaration_steps,
)
from companion.packs.princess.scoring import (
    SPIRIT_CARDS,
    SPIRIT_USES,
    BonusCard,
    Element,
    MajorityTies,
    PlayerEnd,
    score_sheet,
)

ACTIONS = ("declare", "end_turn", "score", "bonus")
MAX_TILES = 48
"""Element tiles in the box (G3-COMP-1): the most a player can count of one kind."""


class PrincessPack:
    """The Princess and Magic Tile (seed S3) for the companion (see the module doc)."""

    name = "princess"
    title = "The Princess and Magic Tile"
    dice_profile = "wandering-towers"  # no dice in this game: the button's plain d6 stays
    players = (MIN_PLAYERS, MAX_PLAYERS)

    def setup_choices(self) -> dict[str, Any]:
        return {
            "overtake": {
                "label": "G3-STEP-2 passing the carrier also costs 2 (penalised) or is free",
                "default": Overtake.PENALISED.value,
                "choices": [o.value for o in Overtake],
            },
            "passage_use": {
                "label": "G3-STEP-3 a secret passage is taken when landing on 8/10 or passing",
                "default": PassageUse.LAND.value,
                "choices": [p.value for p in PassageUse],
            },
            "carry_on_13": {
                "label": "G3-STEP-2 a leader ending exactly on 13 already carries the princess",
                "default": False,
            },
            "majority": {
                "label": "G3-SCORE-3 score the sky majority (off in the first game)",
                "default": True,
            },
            "ties": {
                "label": "G3-SCORE-3 a tie for the most leaves second place to the next (dense)"
                " or uses it up (skip)",
                "default": MajorityTies.DENSE.value,
                "choices": [t.value for t in MajorityTies],
            },
            "track_values": {
                "label": "G3-SCORE-2 printed values of the track (space:value, …; others score "
                "space − 25)",
                "default": "23:-2",
            },
        }

    def settings(self, raw: Mapping[str, Any], colours: Sequence[str]) -> dict[str, Any]:
        check_setup(raw, colours, self.setup_choices(), self.players, "G3-COMP-1")
        return {
            "overtake": arg_choice(
                raw, "overtake", "G3-STEP-2", [o.value for o in Overtake], Overtake.PENALISED.value
            ),
            "passage_use": arg_choice(
                raw,
                "passage_use",
                "G3-STEP-3",
                [p.value for p in PassageUse],
                PassageUse.LAND.value,
            ),
            "carry_on_13": arg_bool(raw, "carry_on_13", False),
            "majority": arg_bool(raw, "majority", True),
            "ties": arg_choice(
                raw, "ties", "G3-SCORE-3", [t.value for t in MajorityTies], MajorityTies.DENSE.value
            ),
            "track_values": _track_values(raw.get("track_values", "23:-2")),
        }

    def new_game(
        self, settings: Mapping[str, Any], colours: Sequence[str], rng: random.Random
    ) -> Game:
        players = list(check_seats(colours, *self.players, "G3-COMP-1"))
        return {
            "players": players,
            "current": players[0],
            "phase": "play",
            "settings": dict(settings),
            "track": _track_json(Track.start(players)),
            "end": {"first_finisher": None, "final_turns": [], "over": False, "rescued": False},
            "declared": False,
            "last": None,
            "sheet": {},
            "bonus": [],
        }

    def resolve(self, game: Game, command: Command, rng: random.Random) -> dict[str, Any]:
        return dict(command)

    def apply(self, game: Game, command: Command, who: Who) -> tuple[Game, list[str]]:
        action = arg_choice(command, "action", "pack", ACTIONS)
        g = copy_game(game)
        handler = getattr(self, f"_do_{action}")
        lines: list[str] = handler(g, command, who)
        return g, lines

    # -- play --------------------------------------------------------------------------------

    def _do_declare(self, g: Game, command: Command, who: Who) -> list[str]:
        if g["phase"] != "play":
            raise PackConflict("action", "G3-END-1", "the game is over: enter the scores")
        player = g["current"]
        own_turn(g, player, who, "G3-TURN-1")
        if g["declared"]:
            raise PackConflict("action", "G3-TURN-1", f"{player} has declared this turn already")
        cards = command.get("cards")
        if cards is not None:
            if not isinstance(cards, list) or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in cards
            ):
                raise PackError("cards", "G3-STEP-1", "expected the step values of the cards")
            steps = declaration_steps(cards)
            how = " + ".join(map(str, cards)) + (f" + ({len(cards)} − 1)" if len(cards) > 1 else "")
        else:
            steps = arg_int(command, "steps", "G3-STEP-1", 1, 30)
            how = "declared"
        was_open = bool(g["track"]["passages_open"])
        track, adv = _track(g).advance(player, steps)
        g["track"] = _track_json(track)
        g["declared"] = True
        g["last"] = {
            "player": player,
            "start": adv.start,
            "end": adv.end,
            "declared": steps,
            "walked": adv.walked,
            "penalised": adv.penalised,
            "passage": adv.passage,
            "place": adv.place,
            "score": adv.score,
            "how": how,
        }
        line = f"{player}: {how} = {steps} steps, {adv.start} → "
        line += "GOAL" if adv.place is not None else str(adv.end)
        if adv.penalised:
            line += " (the princess is heavy: −2, G3-STEP-2)"
        if adv.passage:
            line += " through a secret passage (G3-STEP-3)"
        lines = [line]
        if adv.place is not None:
            lines.append(
                f"{player} reached GOAL {_ordinal(adv.place)}: {adv.score} points (G3-STEP-4)"
            )
        if track.passages_open and not was_open:
            lines.append("space 20 reached: the secret passages 8 → 12 and 10 → 14 are open")
        return lines

    def _do_end_turn(self, g: Game, command: Command, who: Who) -> list[str]:
        if g["phase"] != "play":
            raise PackConflict("action", "G3-END-1", "the game is over: enter the scores")
        player = g["current"]
        own_turn(g, player, who, "G3-TURN-1")
        tiles_out = arg_bool(command, "tiles_out", False)
        end = EndCheck(
            players=tuple(g["players"]),
            first_finisher=g["end"]["first_finisher"],
            final_turns=tuple(g["end"]["final_turns"]),
            over=g["end"]["over"],
            rescued=g["end"]["rescued"],
        ).end_of_turn(
            player,
            reached_goal=player in g["track"]["arrivals"],
            tiles_left=0 if tiles_out else 1,
        )
        g["end"] = {
            "first_finisher": end.first_finisher,
            "final_turns": list(end.final_turns),
            "over": end.over,
            "rescued": end.rescued,
        }
        g["declared"] = False
        lines = [f"{player} ended the turn"]
        if end.over:
            g["phase"], g["current"] = "scoring", None
            why = (
                "the princess is rescued"
                if end.rescued
                else "the tiles ran out: the witch returns and the rescue fails (G3-END-2)"
            )
            return [*lines, f"game over, {why}: enter the scores"]
        if end.first_finisher is not None:
            g["current"] = end.final_turns[0]
            owed = ", ".join(end.final_turns)
            return [*lines, f"last turns (G3-END-1): {owed}"]
        i = g["players"].index(player)
        g["current"] = g["players"][(i + 1) % len(g["players"])]
        return [*lines, f"{g['current']}'s turn"]

    # -- scoring -----------------------------------------------------------------------------

    def _do_score(self, g: Game, command: Command, who: Who) -> list[str]:
        player = arg_player(command, "player", "G3-SCORE-1", g["players"], who)
        own_turn(g, player, who, "G3-SCORE-1")
        raw_tiles = command.get("tiles", {})
        if not isinstance(raw_tiles, Mapping):
            raise PackError("tiles", "G3-SCORE-3", "expected kind -> visible top tiles")
        tiles: dict[str, int] = {}
        for kind, n in raw_tiles.items():
            arg_choice({"tiles": kind}, "tiles", "G3-COMP-2", [e.value for e in Element])
            tiles[kind] = arg_int({f"tiles.{kind}": n}, f"tiles.{kind}", "G3-SCORE-3", 0, MAX_TILES)
        uses = command.get("spirit_uses", [SPIRIT_USES] * SPIRIT_CARDS)
        if not isinstance(uses, list) or len(uses) > SPIRIT_CARDS:
            raise PackError("spirit_uses", "G3-SCORE-4", f"uses left of {SPIRIT_CARDS} cards")
        spirit = [
            arg_int({"spirit_uses": u}, "spirit_uses", "G3-SCORE-4", 0, SPIRIT_USES) for u in uses
        ]
        g["sheet"][player] = {"tiles": tiles, "spirit_uses": spirit}
        lines = [f"{player}'s end-of-game counts entered"]
        if "track_value" in command:
            space = g["track"]["positions"][player]
            if player in g["track"]["arrivals"]:
                raise PackError("track_value", "G3-SCORE-2", f"{player} reached GOAL")
            value = arg_int(command, "track_value", "G3-SCORE-2", -GOAL_SPACE, GOAL_SPACE)
            g["settings"]["track_values"][str(space)] = value
            lines.append(f"space {space} is printed {value} (G3-SCORE-2)")
        return lines

    def _do_bonus(self, g: Game, command: Command, who: Who) -> list[str]:
        if not who.host:
            raise PackConflict("cards", "G3-SCORE-5", "the host reveals the bonus cards")
        cards = command.get("cards")
        if not isinstance(cards, list) or len(cards) > 2:
            raise PackError("cards", "G3-SCORE-5", "expected the 2 bonus cards")
        checked = []
        for card in cards:
            if not isinstance(card, Mapping):
                raise PackError("cards", "G3-SCORE-5", "a card is {element, most, points}")
            checked.append(
                {
                    "element": arg_choice(
                        card, "element", "G3-SCORE-5", [e.value for e in Element]
                    ),
                    "most": arg_bool(card, "most", True),
                    "points": arg_int(card, "points", "G3-SCORE-5", 0, 20, 3),
                }
            )
        g["bonus"] = checked
        return [
            "bonus cards: "
            + ", ".join(
                f"{'most' if c['most'] else 'fewest'} {c['element']} +{c['points']}"
                for c in checked
            )
        ]

    # -- outputs -----------------------------------------------------------------------------

    def view(self, game: Game, who: Who) -> dict[str, Any]:
        track = _track(game)
        return {
            "game": self.name,
            "players": game["players"],
            "current": game["current"],
            "phase": game["phase"],
            "positions": dict(track.positions),
            "princess": track.princess_space,
            "carrier": track.carrier,
            "passages_open": track.passages_open,
            "arrivals": list(track.arrivals),
            "goal_scores": dict(track.goal_scores),
            "final_turns": game["end"]["final_turns"],
            "rescued": game["end"]["rescued"],
            "declared": game["declared"],
            "last": game["last"],
            "settings": game["settings"],
            "entered": sorted(game["sheet"]),
            "bonus": game["bonus"],
            "sheet": _sheet(game),
            "limits": {"cards": MAX_GEMS, "card_steps": MAX_CARD_STEPS, "goal": GOAL_SPACE},
        }

    def leds(self, game: Game) -> Leds:
        current = game["current"]
        seat = game["players"].index(current) if current in game["players"] else None
        return Leds(seat, attention=game["phase"] == "scoring")

    def over(self, game: Game) -> bool:
        return bool(game["phase"] != "play")


def _track_values(raw: object) -> dict[str, int]:
    """``"23:-2, 22:-3"`` (or an object) -> {"23": -2, ...}, spaces 0..24.

    :raises PackError: naming ``track_values``.
    """
    pairs: list[tuple[object, object]]
    if isinstance(raw, Mapping):
        pairs = list(raw.items())
    elif isinstance(raw, str):
        pairs = []
        for part in filter(None, (p.strip() for p in raw.split(","))):
            left, _, right = part.partition(":")
            pairs.append((left.strip(), right.strip()))
    else:
        raise PackError("track_values", "G3-SCORE-2", "expected space:value pairs")
    out: dict[str, int] = {}
    for space, value in pairs:
        try:
            s, v = int(str(space)), int(str(value))
        except ValueError:
            raise PackError(
                "track_values", "G3-SCORE-2", f"{space}:{value} is not space:value"
            ) from None
        if not 0 <= s < GOAL_SPACE or not -GOAL_SPACE <= v <= GOAL_SPACE:
            raise PackError("track_values", "G3-SCORE-2", f"space 0..24 and value −25..25: {s}:{v}")
        out[str(s)] = v
    return out


def _settings(game: Mapping[str, Any]) -> TrackSettings:
    s = game["settings"]
    return TrackSettings(
        overtake=Overtake(s["overtake"]),
        passage_use=PassageUse(s["passage_use"]),
        carry_on_13=bool(s["carry_on_13"]),
        track_values=MappingProxyType({int(k): int(v) for k, v in s["track_values"].items()}),
    )


def _track(game: Mapping[str, Any]) -> Track:
    t = game["track"]
    settings = _settings(game) if "settings" in game else TrackSettings()
    return Track(
        positions=t["positions"],
        carrier=t["carrier"],
        passages_open=t["passages_open"],
        arrivals=tuple(t["arrivals"]),
        goal_scores=t["goal_scores"],
        settings=settings,
    )


def _track_json(track: Track) -> dict[str, Any]:
    return {
        "positions": dict(track.positions),
        "carrier": track.carrier,
        "passages_open": track.passages_open,
        "arrivals": list(track.arrivals),
        "goal_scores": dict(track.goal_scores),
    }


def _sheet(game: Game) -> list[dict[str, Any]] | None:
    """The scoring sheet rows (G3-SCORE-1..5) once every player's counts are entered."""
    if game["phase"] == "play" or set(game["sheet"]) != set(game["players"]):
        return None
    track = _track(game)
    ends = [
        PlayerEnd(
            name=p,
            goal_score=track.goal_scores.get(p),
            space=track.positions[p] if p not in track.goal_scores else 0,
            tiles={Element(k): n for k, n in game["sheet"][p]["tiles"].items()},
            spirit_uses=tuple(game["sheet"][p]["spirit_uses"]),
        )
        for p in game["players"]
    ]
    cards = [BonusCard(Element(c["element"]), c["most"], c["points"]) for c in game["bonus"]]
    s = game["settings"]
    sheet = score_sheet(
        ends,
        cards,
        majority=bool(s["majority"]),
        ties=MajorityTies(s["ties"]),
        settings=_settings(game),
    )
    winners = set(sheet.winners)
    return [
        {
            "player": r.name,
            "track": r.track,
            "majority": r.majority,
            "spirit": r.spirit,
            "bonus": r.bonus,
            "total": r.total,
            "winner": r.name in winners,
        }
        for r in sheet.rows
    ]


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")
