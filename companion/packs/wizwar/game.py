"""*Wiz-War* as a game pack (:class:`~companion.packs.base.PackGame`): the counters of a duel.

Every phone carries the wizards' hit points (15 each, damage and heal buttons; out at 0,
G4-HP-1, G4-LOSE-1), the forced rests that add up and count down on the caster's turns
(G4-REST-1), the turn's movement (3 + one number card, G4-MOVE-1) and its one attack
(G4-ATK-1), the hit points of walls, doors and thornbushes under attack (G4-HP-1) and the
hand-limit reminders at DONE (7, draw at most 2, G4-HAND-1). ROLL throws the d4 of the
``wizwar-d4`` profile: the random direction goes on every phone (G4-DICE-1). The start order
is rolled at setup, highest first, ties rolling again (G4-SETUP-1; a d6 is the stated default
as the seed does not name the die).
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
    arg_bool,
    arg_choice,
    arg_int,
    arg_player,
    check_seats,
    check_setup,
    copy_game,
)
from companion.packs.errors import PackError
from companion.packs.wizwar.rules import (
    BASE_MOVE,
    HAND_LIMIT,
    MAX_DRAW,
    OBSTACLE_HP,
    START_HP,
    Obstacle,
    ObstacleHP,
    Rest,
    RestTable,
    TurnAttacks,
    Wizard,
    direction_for,
    movement,
    roll_start_order,
)

ACTIONS = (
    "damage", "heal", "set_hp", "attack", "move_card", "rest", "obstacle", "obstacle_damage",
    "dice", "end_turn", "win",
)  # fmt: skip
MAX_AMOUNT = 30
"""Largest damage or healing one press may carry (a sanity bound; spells deal far less)."""
MAX_REST = 20
"""Longest forced rest one spell may cast (a sanity bound)."""


class WizWarPack:
    """Wiz-War (seed S4) for the companion (see the module doc)."""

    name = "wizwar"
    title = "Wiz-War"
    dice_profile = "wizwar-d4"
    players = (2, 6)

    def setup_choices(self) -> dict[str, Any]:
        return {
            "start_order": {
                "label": "G4-SETUP-1 turn order: rolled by the companion (d6, highest first) or "
                "seating order from the start player",
                "default": "roll",
                "choices": ["roll", "seating"],
            },
            "hand_limit": {
                "label": "G4-HAND-1 hand limit (magic stones can raise it)",
                "default": HAND_LIMIT,
            },
        }

    def settings(self, raw: Mapping[str, Any], colours: Sequence[str]) -> dict[str, Any]:
        check_setup(raw, colours, self.setup_choices(), self.players, "G4-COMP-1")
        return {
            "start_order": arg_choice(
                raw, "start_order", "G4-SETUP-1", ("roll", "seating"), "roll"
            ),
            "hand_limit": arg_int(raw, "hand_limit", "G4-HAND-1", 1, 20, HAND_LIMIT),
        }

    def new_game(
        self, settings: Mapping[str, Any], colours: Sequence[str], rng: random.Random
    ) -> Game:
        seats = list(check_seats(colours, *self.players, "G4-COMP-1"))
        rolled = settings.get("start_order", "roll") == "roll"
        order = list(roll_start_order(seats, rng)) if rolled else seats
        return {
            "seats": seats,
            "players": order,
            "rolled": rolled,
            "current": order[0],
            "phase": "play",
            "hp": dict.fromkeys(order, START_HP),
            "out": [],
            "rests": {},
            "attack": None,
            "move_cards": [],
            "add": False,
            "obstacles": [],
            "next_obstacle": 1,
            "d4": None,
            "hand_limit": int(settings.get("hand_limit", HAND_LIMIT)),
            "winner": None,
        }

    def resolve(self, game: Game, command: Command, rng: random.Random) -> dict[str, Any]:
        return dict(command)

    def apply(self, game: Game, command: Command, who: Who) -> tuple[Game, list[str]]:
        action = arg_choice(command, "action", "pack", ACTIONS)
        g = copy_game(game)
        if g["phase"] == "over":
            raise PackConflict("action", "G4-WIN-1", f"the game is over: {g['winner']} won")
        handler = getattr(self, f"_do_{action}")
        lines: list[str] = handler(g, command, who)
        return g, lines

    # -- hit points --------------------------------------------------------------------------

    def _wizard(self, g: Game, command: Command, who: Who) -> Wizard:
        name = arg_player(command, "wizard", "G4-HP-1", g["players"], who)
        return Wizard(name, g["hp"][name])

    def _do_damage(self, g: Game, command: Command, who: Who) -> list[str]:
        wizard = self._wizard(g, command, who)
        amount = arg_int(command, "amount", "G4-HP-1", 0, MAX_AMOUNT)
        lines = []
        if command.get("attack") is not None:
            lines = self._do_attack(g, {"what": command["attack"]}, who)
        hit = wizard.damage(amount)
        g["hp"][hit.name] = hit.hp
        lines.append(f"{hit.name} takes {amount} damage: {hit.hp} HP")
        return lines + (self._eliminated(g, hit.name) if hit.out else [])

    def _do_heal(self, g: Game, command: Command, who: Who) -> list[str]:
        wizard = self._wizard(g, command, who)
        healed = wizard.heal(arg_int(command, "amount", "G4-HP-1", 0, MAX_AMOUNT))
        g["hp"][healed.name] = healed.hp
        return [f"{healed.name} heals to {healed.hp} HP"]

    def _do_set_hp(self, g: Game, command: Command, who: Who) -> list[str]:
        wizard = self._wizard(g, command, who)
        if wizard.out:
            raise PackConflict("wizard", "G4-LOSE-1", f"{wizard.name} is out")
        hp = command.get("hp")
        if isinstance(hp, bool) or not isinstance(hp, int):
            raise PackError("hp", "G4-HP-1", f"expected a whole number, got {hp!r}"[:80])
        fixed = Wizard(wizard.name, hp)  # PackError "hp: G4-HP-1: must be 0..15" otherwise
        g["hp"][fixed.name] = fixed.hp
        lines = [f"{fixed.name}'s hit points corrected to {fixed.hp}"]
        return lines + (self._eliminated(g, fixed.name) if fixed.out else [])

    def _eliminated(self, g: Game, name: str) -> list[str]:
        g["out"].append(name)
        rests = _rests(g).caster_out(name)
        g["rests"] = _rests_json(rests)
        g["rests"].pop(name, None)
        alive = [p for p in g["players"] if p not in g["out"]]
        lines = [f"{name} has no hit points left and is out (G4-LOSE-1)"]
        if len(alive) == 1:
            g["phase"], g["winner"], g["current"] = "over", alive[0], None
            lines.append(f"{alive[0]} is the last wizard standing and wins (G4-WIN-1)")
        return lines

    # -- the turn ----------------------------------------------------------------------------

    def _do_attack(self, g: Game, command: Command, who: Who) -> list[str]:
        what = command.get("what", "attack")
        if not isinstance(what, str) or not 1 <= len(what) <= 32:
            raise PackError("what", "G4-ATK-1", "name the attack (fist, a spell …)")
        if g["attack"] is not None:
            raise PackConflict(
                "attack", "G4-ATK-1", f"{g['current']} already attacked with {g['attack']!r}"
            )
        turn = TurnAttacks(g["current"], g["attack"]).attack_with(what)
        g["attack"] = turn.attack
        return [f"{g['current']} attacks with {what} (one attack per turn, G4-ATK-1)"]

    def _do_move_card(self, g: Game, command: Command, who: Who) -> list[str]:
        value = arg_int(command, "value", "G4-MOVE-1", 2, 6)
        add = arg_bool(command, "add", g["add"])
        cards = [*g["move_cards"], value]
        spaces = movement(cards, add=add)
        g["move_cards"], g["add"] = cards, add
        return [f"{g['current']} may move {spaces} spaces (3 + {' + '.join(map(str, cards))})"]

    def _do_rest(self, g: Game, command: Command, who: Who) -> list[str]:
        wizard = arg_player(command, "wizard", "G4-REST-1", g["players"], who)
        caster = command.get("caster", g["current"])
        if caster not in g["players"]:
            raise PackError("caster", "G4-REST-1", f"{str(caster)[:24]!r} is not playing")
        turns = arg_int(command, "turns", "G4-REST-1", 1, MAX_REST)
        rests = _rests(g).add(wizard, str(caster), turns)
        g["rests"] = _rests_json(rests)
        return [
            f"{wizard} is forced to rest: {rests.turns_left(wizard)} of {caster}'s turns "
            "(rests add up, G4-REST-1)"
        ]

    def _do_obstacle(self, g: Game, command: Command, who: Who) -> list[str]:
        kind = Obstacle(arg_choice(command, "kind", "G4-HP-1", [o.value for o in OBSTACLE_HP]))
        block = ObstacleHP.fresh(kind)
        g["obstacles"].append({"id": g["next_obstacle"], "kind": kind.value, "hp": block.hp})
        g["next_obstacle"] += 1
        return [f"a {kind.value} under attack ({block.hp} HP, G4-HP-1)"]

    def _do_obstacle_damage(self, g: Game, command: Command, who: Who) -> list[str]:
        ident = arg_int(command, "id", "G4-HP-1", 1, 10_000)
        found = [o for o in g["obstacles"] if o["id"] == ident]
        if not found:
            raise PackError("id", "G4-HP-1", f"no wall, door or thornbush {ident} is tracked")
        o = found[0]
        hit = ObstacleHP(Obstacle(o["kind"]), o["hp"]).damage(
            arg_int(command, "amount", "G4-HP-1", 0, MAX_AMOUNT)
        )
        if hit.destroyed:
            g["obstacles"].remove(o)
            return [f"the {o['kind']} is destroyed"]
        o["hp"] = hit.hp
        return [f"the {o['kind']} has {hit.hp} HP left"]

    def _do_dice(self, g: Game, command: Command, who: Who) -> list[str]:
        faces = command.get("faces")
        if not isinstance(faces, list) or len(faces) != 1:
            raise PackError("faces", "G4-DICE-1", "expected the face of one d4")
        face = arg_int({"faces": faces[0]}, "faces", "G4-DICE-1", 1, 4)
        direction = direction_for(face).value
        g["d4"] = {"face": face, "direction": direction}
        return [f"d4: {face} → {direction} (G4-DICE-1)"]

    def _do_end_turn(self, g: Game, command: Command, who: Who) -> list[str]:
        ending = g["current"]
        if who.colour is not None and who.colour != ending:
            raise PackConflict("player", "G4-HAND-1", f"{ending} ends the turn, not {who.colour}")
        order = g["players"]
        i = order.index(ending)
        alive = [p for p in order[i + 1 :] + order[: i + 1] if p not in g["out"]]
        nxt = alive[0]
        rests = _rests(g).turn_started(nxt)
        g.update(current=nxt, attack=None, move_cards=[], add=False, rests=_rests_json(rests))
        limit = g["hand_limit"]
        lines = [
            f"{ending} ended the turn: discard any, then draw at most {MAX_DRAW} "
            f"up to {limit} cards (G4-HAND-1)",
            f"{nxt}'s turn",
        ]
        if rests.resting(nxt):
            lines.append(
                f"{nxt} is resting ({rests.turns_left(nxt)} turn(s) left): "
                "counteractions only (G4-REST-1)"
            )
        return lines

    def _do_win(self, g: Game, command: Command, who: Who) -> list[str]:
        if not who.host:
            raise PackConflict("wizard", "G4-WIN-1", "the host records a treasure victory")
        winner = arg_player(command, "wizard", "G4-WIN-1", g["players"], who)
        if winner in g["out"]:
            raise PackConflict("wizard", "G4-LOSE-1", f"{winner} is out")
        g["phase"], g["winner"], g["current"] = "over", winner, None
        return [f"{winner} brought two treasures home and wins (G4-WIN-1)"]

    # -- outputs -----------------------------------------------------------------------------

    def view(self, game: Game, who: Who) -> dict[str, Any]:
        rests = _rests(game)
        cards = game["move_cards"]
        return {
            "game": self.name,
            "players": game["players"],
            "rolled": game["rolled"],
            "current": game["current"],
            "phase": game["phase"],
            "hp": game["hp"],
            "max_hp": START_HP,
            "out": game["out"],
            "rests": {p: rests.turns_left(p) for p in game["players"] if rests.resting(p)},
            "attack": game["attack"],
            "move_cards": cards,
            "movement": BASE_MOVE + sum(cards),
            "obstacles": game["obstacles"],
            "obstacle_hp": {o.value: hp for o, hp in OBSTACLE_HP.items()},
            "d4": game["d4"],
            "hand_limit": game["hand_limit"],
            "max_draw": MAX_DRAW,
            "winner": game["winner"],
        }

    def leds(self, game: Game) -> Leds:
        current = game["current"]
        return Leds(game["seats"].index(current) if current in game["seats"] else None)

    def over(self, game: Game) -> bool:
        return bool(game["phase"] == "over")


def _rests(game: Game) -> RestTable:
    return RestTable({w: Rest(r["caster"], r["turns"]) for w, r in game["rests"].items()})


def _rests_json(rests: RestTable) -> dict[str, Any]:
    return {w: {"caster": r.caster, "turns": r.turns} for w, r in rests.rests.items()}
