"""攻城奇策 as a game pack (:class:`~companion.packs.base.PackGame`): rounds, dice, tokens.

The companion deals the deployment cards itself (G2-ROUND-1): at the start of a round it sets
2 of the 8 numbers aside unseen, then each player in the picking order presses PICK on his
phone and is dealt one of the others face down (only his phone shows it). Then it calls the
numbers 1 -> 8, passing over the 2 set aside and the ones nobody holds without a word, and
lights the seat LED of the holder of the number called (G2-ROUND-2); DONE ends his turn. The
next round picks in ascending order of the numbers held; the Pope's holder (4) may impose
another order before anyone picks (G2-ROUND-3). Simple rules: turns go clockwise from the
start player (G2-ROUND-4).

ROLL throws 2d6 (profile ``siege-2d6``): the sum and the number of armies of table G2-DICE-1
go on every phone. The supply of barrier, mud and bomb tokens is counted (G2-COMP-1,
G2-TOK-1..5), and every DONE reminds of the hand limit of 6 (G2-TURN-3).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from companion.packs.base import (
    Command,
    Game,
    Leds,
    PackConflict,
    Who,
    arg_choice,
    arg_int,
    arg_player,
    check_seats,
    check_setup,
    copy_game,
    own_turn,
)
from companion.packs.errors import PackError
from companion.packs.siege.rules import (
    DEPLOYMENT_NUMBERS,
    HAND_LIMIT,
    MAX_PLAYERS,
    POPE,
    SET_ASIDE,
    SUPPLY,
    Token,
    TokenSupply,
    armies_for_roll,
    cards_to_discard,
    next_player,
)

RULES = ("full", "simple")
"""Full rules with deployment cards (G2-ROUND-1..3) or simple clockwise turns (G2-ROUND-4)."""

ACTIONS = ("pick", "end_turn", "pope_order", "dice", "token", "win")


class SiegePack:
    """The siege race (seed S2) for the companion (see the module doc)."""

    name = "siege"
    title = "Siege race (攻城奇策)"
    dice_profile = "siege-2d6"
    players = (2, MAX_PLAYERS)

    # -- setup -------------------------------------------------------------------------------

    def setup_choices(self) -> dict[str, Any]:
        return {
            "rules": {
                "label": "Rules (G2-ROUND-1 full with deployment cards, G2-ROUND-4 simple)",
                "default": "full",
                "choices": list(RULES),
            }
        }

    def settings(self, raw: Mapping[str, Any], colours: Sequence[str]) -> dict[str, Any]:
        check_setup(raw, colours, self.setup_choices(), self.players, "G2-COMP-2")
        return {"rules": arg_choice(raw, "rules", "G2-ROUND-4", RULES, "full")}

    def new_game(
        self, settings: Mapping[str, Any], colours: Sequence[str], rng: random.Random
    ) -> Game:
        players = list(check_seats(colours, *self.players, "G2-COMP-2"))
        game: Game = {
            "players": players,
            "rules": settings.get("rules", "full"),
            "round": 1,
            "phase": "play",
            "order": list(players),
            "unused": [],
            "held": {},
            "called": [],
            "pope": None,
            "current": players[0],
            "supply": {t.value: SUPPLY[t] for t in Token},
            "roll": None,
            "winner": None,
        }
        if game["rules"] == "full":
            _deal(game, players, _set_aside(rng))
        return game

    # -- commands ----------------------------------------------------------------------------

    def resolve(self, game: Game, command: Command, rng: random.Random) -> dict[str, Any]:
        out = dict(command)
        action = command.get("action")
        drawn = {"pick": "number", "end_turn": "unused"}.get(str(action))
        if drawn is not None and drawn in command:  # the face-down cards are not chosen
            raise PackError(drawn, "G2-ROUND-1", "drawn by the companion, not sent")
        if action == "pick" and game["phase"] == "pick":
            free = _free_numbers(game)
            if free:
                out["number"] = rng.choice(free)
        elif action == "end_turn" and _round_ends(game):
            out["unused"] = _set_aside(rng)  # the last turn of a round deals the next one
        return out

    def apply(self, game: Game, command: Command, who: Who) -> tuple[Game, list[str]]:
        action = arg_choice(command, "action", "pack", ACTIONS)
        g = copy_game(game)
        if g["phase"] == "over" and action != "token":
            raise PackConflict("action", "G2-GOAL-1", f"the game is over: {g['winner']} won")
        handler = getattr(self, f"_do_{action}")
        lines: list[str] = handler(g, command, who)
        return g, lines

    def _do_pick(self, g: Game, command: Command, who: Who) -> list[str]:
        if g["phase"] != "pick":
            raise PackConflict("action", "G2-ROUND-1", "nobody picks a deployment card now")
        picker = g["order"][len(g["held"])]
        player = arg_player(command, "player", "G2-ROUND-1", g["players"], who)
        if player != picker:
            raise PackConflict("player", "G2-ROUND-1", f"{picker} picks next, not {player}")
        own_turn(g, player, who, "G2-ROUND-1")
        number = arg_int(command, "number", "G2-ROUND-1", 1, len(DEPLOYMENT_NUMBERS))
        if number not in _free_numbers(g):
            raise PackError("number", "G2-ROUND-1", f"{number} is not among the cards left")
        g["held"][player] = number
        lines = [f"{player} picked a deployment card"]
        if len(g["held"]) < len(g["order"]):
            g["current"] = g["order"][len(g["held"])]
            return lines
        g["phase"] = "play"
        holder = _next_holder(g)
        assert holder is not None
        return [*lines, *_call(g, holder)]

    def _do_end_turn(self, g: Game, command: Command, who: Who) -> list[str]:
        if g["phase"] != "play":
            raise PackConflict("action", "G2-ROUND-1", "the deployment cards are being picked")
        ending = g["current"]
        own_turn(g, ending, who, "G2-TURN-3")
        lines = [f"{ending} ended the turn: discard down to {HAND_LIMIT} cards (G2-TURN-3)"]
        hand = command.get("hand")
        if hand is not None:
            discard = cards_to_discard(arg_int(command, "hand", "G2-TURN-3", 0, 75))
            if discard:
                lines.append(f"{ending}: discard {discard} card(s) to keep {HAND_LIMIT}")
        g["roll"] = None
        if g["rules"] == "simple":
            g["current"] = next_player(g["players"], ending)
            return [*lines, f"{g['current']}'s turn"]
        holder = _next_holder(g)
        if holder is not None:
            return [*lines, *_call(g, holder)]
        unused = command.get("unused")
        if not isinstance(unused, list):
            raise PackError("unused", "G2-ROUND-1", "the numbers set aside were not drawn")
        held = g["held"]
        order = sorted(g["order"], key=lambda p: held[p])
        g["pope"] = next((p for p, n in held.items() if n == POPE), None)
        g["round"] += 1
        _deal(g, order, unused)
        pope = f"; {g['pope']} holds the Pope and may change it" if g["pope"] else ""
        return [*lines, f"round {g['round']}: {', '.join(order)} pick in this order{pope}"]

    def _do_pope_order(self, g: Game, command: Command, who: Who) -> list[str]:
        pope = g["pope"]
        if pope is None or g["phase"] != "pick" or g["held"]:
            raise PackConflict(
                "order", "G2-ROUND-3", "only before the first pick of a round after the Pope"
            )
        if who.colour is not None and who.colour != pope:
            raise PackConflict("order", "G2-ROUND-3", f"only {pope} (the Pope) sets the order")
        order = command.get("order")
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(g["players"]):
            raise PackError(
                "order", "G2-ROUND-3", f"must order exactly {', '.join(sorted(g['players']))}"
            )
        g["order"] = [str(p) for p in order]
        g["current"] = g["order"][0]
        g["pope"] = None
        return [f"{pope} (the Pope) set the picking order: {', '.join(g['order'])}"]

    def _do_dice(self, g: Game, command: Command, who: Who) -> list[str]:
        faces = command.get("faces")
        if not isinstance(faces, list) or len(faces) != 2:
            raise PackError("faces", "G2-DICE-1", "expected the two faces of 2d6")
        first, second = (
            int(f) if isinstance(f, int) and not isinstance(f, bool) else 0 for f in faces
        )
        armies = armies_for_roll(first, second)
        g["roll"] = {"faces": [first, second], "sum": first + second, "armies": armies}
        armies_text = f"{armies} arm{'y' if armies == 1 else 'ies'}"
        return [f"2d6: {first} + {second} = {first + second} → {armies_text} move (G2-DICE-1)"]

    def _do_token(self, g: Game, command: Command, who: Who) -> list[str]:
        kind = Token(arg_choice(command, "token", "G2-TOK-1", [t.value for t in Token]))
        op = arg_choice(command, "op", "G2-TOK-1", ("take", "return"))
        n = arg_int(command, "n", "G2-TOK-1", 1, SUPPLY[kind], 1)
        supply = TokenSupply(**g["supply"])
        supply = supply.take(kind, n) if op == "take" else supply.give_back(kind, n)
        g["supply"] = {t.value: supply.count(t) for t in Token}
        verb = "placed" if op == "take" else "returned"
        return [f"{n} {kind.value} token(s) {verb}: {supply.count(kind)} in the supply"]

    def _do_win(self, g: Game, command: Command, who: Who) -> list[str]:
        if not who.host:
            raise PackConflict("player", "G2-GOAL-1", "the host records the winner")
        winner = arg_player(command, "player", "G2-GOAL-1", g["players"], who)
        g["phase"], g["winner"], g["current"] = "over", winner, None
        return [f"{winner}'s army reached the opposite city-state: {winner} wins (G2-GOAL-1)"]

    # -- outputs -----------------------------------------------------------------------------

    def view(self, game: Game, who: Who) -> dict[str, Any]:
        held: dict[str, int] = game["held"]
        revealed = {p: held[p] for p in game["called"] if p in held}
        view: dict[str, Any] = {
            "game": self.name,
            "players": game["players"],
            "rules": game["rules"],
            "round": game["round"],
            "phase": game["phase"],
            "current": game["current"],
            "order": game["order"],
            "picked": [p for p in game["order"] if p in held],
            "revealed": revealed,
            "calling": [n for n in DEPLOYMENT_NUMBERS if n in revealed.values()],
            "pope": game["pope"],
            "supply": game["supply"],
            "box": {t.value: SUPPLY[t] for t in Token},
            "roll": game["roll"],
            "hand_limit": HAND_LIMIT,
            "winner": game["winner"],
        }
        if who.colour is not None and who.colour in held:
            view["my_number"] = held[who.colour]
        return view

    def leds(self, game: Game) -> Leds:
        current = game["current"]
        seat = game["players"].index(current) if current in game["players"] else None
        return Leds(seat, attention=game["phase"] == "pick")

    def over(self, game: Game) -> bool:
        return bool(game["phase"] == "over")


def _set_aside(rng: random.Random) -> list[int]:
    """Shuffle the 8 deployment numbers and set 2 aside unseen (G2-ROUND-1)."""
    deck = list(DEPLOYMENT_NUMBERS)
    rng.shuffle(deck)
    return sorted(deck[:SET_ASIDE])


def _deal(game: Game, order: Sequence[str], unused: Sequence[Any]) -> None:
    """Start a round's picking: ``unused`` are the 2 numbers set aside (G2-ROUND-1)."""
    numbers = sorted({n for n in unused if isinstance(n, int) and n in DEPLOYMENT_NUMBERS})
    if len(numbers) != SET_ASIDE:
        raise PackError("unused", "G2-ROUND-1", f"2 of the numbers 1..8, got {list(unused)}")
    game.update(
        phase="pick", order=list(order), unused=numbers, held={}, called=[], current=order[0]
    )


def _round_ends(game: Game) -> bool:
    """The full-rules turn under way is the last of its round (G2-ROUND-2)."""
    return bool(game["phase"] == "play" and game["rules"] == "full" and _next_holder(game) is None)


def _free_numbers(game: Game) -> list[int]:
    taken = set(game["unused"]) | set(game["held"].values())
    return [n for n in DEPLOYMENT_NUMBERS if n not in taken]


def _next_holder(game: Game) -> str | None:
    """Who holds the next number called, passing over the unused and unheld ones silently
    (G2-ROUND-2); None when every holder has played."""
    waiting = [(n, p) for p, n in game["held"].items() if p not in game["called"]]
    return min(waiting)[1] if waiting else None


def _call(game: Game, holder: str) -> list[str]:
    game["called"].append(holder)
    game["current"] = holder
    return [f"number {game['held'][holder]} called: {holder} reveals it and plays (G2-ROUND-2)"]
