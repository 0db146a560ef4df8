"""The values of a game: cards and the deck, the track, towers, configuration and the state.

Everything here is immutable. A :class:`GameState` shares every unchanged part with the state it
was derived from (tuples are never copied, only the changed entries are rebuilt), so keeping a
history of states or a tracker's set of hypotheses is cheap.

Internal encoding (fast and compact; the public accessors and the JSON speak the game's words):

* spaces are numbered ``1..N`` (``stacks[space - 1]``);
* towers are indices into :attr:`Table.towers`; a stack is a tuple of tower indices bottom -> top;
* a wizard's position is one int ``space << 4 | tier`` (tier 0..15), ``0`` = inside the castle;
* players are seats ``0..n-1`` clockwise, seat 0 = start player; colours name them in JSON.

The move cards live in :mod:`companion.rules.cards` and the fixed numbers, spells and OPEN
defaults in :mod:`companion.rules.catalogue`; both are importable from here as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from companion.rules.cards import CARD_KINDS as CARD_KINDS
from companion.rules.cards import DECK as DECK
from companion.rules.cards import DECK_SIZE as DECK_SIZE
from companion.rules.cards import KIND_INDEX as KIND_INDEX
from companion.rules.cards import Card as Card
from companion.rules.cards import full_deck as full_deck
from companion.rules.catalogue import BASE_SPELLS as BASE_SPELLS
from companion.rules.catalogue import DEFAULT_FEATHER_COSTS as DEFAULT_FEATHER_COSTS
from companion.rules.catalogue import DEFAULT_OPTIONS as DEFAULT_OPTIONS
from companion.rules.catalogue import DEFAULT_SPELL_COSTS as DEFAULT_SPELL_COSTS
from companion.rules.catalogue import EXPANSION_SPELLS as EXPANSION_SPELLS
from companion.rules.catalogue import MAX_ON_TOP as MAX_ON_TOP
from companion.rules.catalogue import MODULES as MODULES
from companion.rules.catalogue import SETUP_CAPACITIES as SETUP_CAPACITIES
from companion.rules.catalogue import SETUP_COUNTS as SETUP_COUNTS
from companion.rules.catalogue import WIZARDS_PER_COLOUR as WIZARDS_PER_COLOUR
from companion.rules.observation import COLOURS

# --------------------------------------------------------------------------------------------
# Packed wizard positions: ``space << 4 | tier``; 0 = inside the castle

IN_CASTLE = 0
"""The packed position of a wizard inside the castle (R-TURN-6)."""


def position(space: int, tier: int) -> int:
    """The packed position of a wizard on ``space`` (1..N) at ``tier`` (0 = on the board under
    every tower of the stack, ``len(stack)`` = on the top surface; 0..15)."""
    return space << 4 | tier


def space_of(p: int) -> int:
    """The space (1..N) of a packed position; 0 for :data:`IN_CASTLE`."""
    return p >> 4


def tier_of(p: int) -> int:
    """The tier (0..15) of a packed position: how many towers are under the wizard."""
    return p & 15


class FrozenMap(dict[str, Any]):
    """A read-only, hashable ``dict`` (configuration mappings)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((k, _hashable(v)) for k, v in self.items())))

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("configuration mappings are immutable")

    __setitem__ = _refuse
    __delitem__ = _refuse
    update = _refuse
    pop = _refuse
    clear = _refuse
    setdefault = _refuse
    popitem = _refuse  # type: ignore[assignment]


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


# --------------------------------------------------------------------------------------------
# Track and towers (R-TRACK, R-COMP)


@dataclass(frozen=True, slots=True)
class Track:
    """The closed loop of spaces (R-TRACK-1..5). Any definition is accepted.

    :param length: number of spaces N (at least 7, so that no move of 1..6 steps comes back to
        its own space).
    :param raven_crest: spaces with a printed raven crest (default 1, 5, 9, 13; OPEN-09).
    :param special: space -> ``"fountain"`` or ``"web"`` (expansion, R-TRACK-5).
    :raises ValueError: for a malformed definition.
    """

    length: int = 16
    raven_crest: frozenset[int] = frozenset({1, 5, 9, 13})
    special: tuple[tuple[int, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or self.length < 7:
            raise ValueError("track.length: at least 7 spaces are needed")
        for s in self.raven_crest:
            if not 1 <= s <= self.length:
                raise ValueError(f"track.raven_crest: space {s} is not on the track")
        for s, kind in self.special:
            if not 1 <= s <= self.length:
                raise ValueError(f"track.special.{s}: space is not on the track")
            if kind not in ("fountain", "web"):
                raise ValueError(f"track.special.{s}: {kind!r} is not fountain or web")
        object.__setattr__(self, "special", tuple(sorted(self.special)))

    @property
    def special_map(self) -> dict[int, str]:
        return dict(self.special)


BASE_TRACK = Track()


@dataclass(frozen=True, slots=True)
class TowerSpec:
    """One tower of the catalogue: id (``R1``..``R5`` crest, ``P1``..``P4`` plain, ``MT`` magic)
    and roof kind ``crest`` / ``plain`` / ``magic``."""

    id: str
    kind: str

    @property
    def crest(self) -> bool:
        return self.kind == "crest"

    @property
    def magic(self) -> bool:
        return self.kind == "magic"


BASE_TOWERS: tuple[TowerSpec, ...] = (
    TowerSpec("R1", "crest"),
    TowerSpec("P1", "plain"),
    TowerSpec("R2", "crest"),
    TowerSpec("P2", "plain"),
    TowerSpec("R3", "crest"),
    TowerSpec("P3", "plain"),
    TowerSpec("R4", "crest"),
    TowerSpec("P4", "plain"),
    TowerSpec("R5", "crest"),
)
"""R-SETUP-3: the 9 towers in their setup order clockwise from the castle."""

MAGIC_TOWER = TowerSpec("MT", "magic")
"""R-MOD-MAGICTOWER-1: the 10th tower of the expansion."""


# --------------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True, slots=True)
class Config:
    """Static choices of one game (docs/state-model.md §1).

    :param player_count: 1..6 (1 = solo, R-SOLO).
    :param variant: ``"base"`` (R-SPELL-2 timing) or ``"master"`` (R-MASTER-*).
    :param teams: team variant (R-TEAM, 4 or 6 players; partners sit opposite).
    :param colours: colours in seat order (seat 0 = start player); default: the first colours
        of :data:`~companion.rules.observation.COLOURS` allowed for the player count (R-COMP-2).
    :param modules: expansion modules in play (rules not implemented by this core yet).
    :param spells: spell ids on display; None = resolved by :func:`~companion.rules.setup`.
    :param spell_costs: overrides of :data:`DEFAULT_SPELL_COSTS`.
    :param feather_costs: overrides of :data:`DEFAULT_FEATHER_COSTS`.
    :param options: overrides of :data:`DEFAULT_OPTIONS` (OPEN-nn switches).
    :param track: the track definition.
    :raises ValueError: naming the field (``config.colours``, ``config.options.foo`` …).
    """

    player_count: int = 4
    variant: str = "base"
    teams: bool = False
    colours: tuple[str, ...] | None = None
    modules: frozenset[str] = frozenset()
    spells: tuple[str, ...] | None = None
    spell_costs: Mapping[str, int] = field(default_factory=dict)
    feather_costs: Mapping[str, int] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    track: Track = BASE_TRACK

    def __post_init__(self) -> None:
        n = self.player_count
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 6:
            raise ValueError("config.player_count: expected 1..6")
        if self.variant not in ("base", "master"):
            raise ValueError("config.variant: expected 'base' or 'master'")
        if self.teams and n not in (4, 6):
            raise ValueError("config.teams: the team variant needs 4 or 6 players (R-TEAM-1)")
        unknown = set(self.modules) - set(MODULES)
        if unknown:
            raise ValueError(f"config.modules: unknown module {sorted(unknown)[0]!r}")
        object.__setattr__(self, "modules", frozenset(self.modules))
        for name, defaults in (
            ("spell_costs", DEFAULT_SPELL_COSTS),
            ("feather_costs", DEFAULT_FEATHER_COSTS),
            ("options", DEFAULT_OPTIONS),
        ):
            given = getattr(self, name)
            for key, value in given.items():
                if key not in defaults:
                    raise ValueError(f"config.{name}.{key}: unknown key")
                if name != "options" and (
                    not isinstance(value, int) or isinstance(value, bool) or value < 0
                ):
                    raise ValueError(f"config.{name}.{key}: expected a count >= 0")
            object.__setattr__(self, name, FrozenMap({**defaults, **given}))
        colours = self.colours
        if colours is None:
            colours = default_colours(n, bool(self.options["colour_limits"]))
        colours = tuple(colours)
        if len(colours) != n:
            raise ValueError(f"config.colours: expected {n} colours")
        for i, c in enumerate(colours):
            if c not in COLOURS:
                raise ValueError(f"config.colours[{i}]: unknown colour {c!r}")
            if (
                n > 1
                and self.options["colour_limits"]
                and WIZARDS_PER_COLOUR[c] < SETUP_COUNTS[n][0]
            ):
                raise ValueError(
                    f"config.colours[{i}]: {c} has only {WIZARDS_PER_COLOUR[c]} wizards, "
                    f"{n} players need {SETUP_COUNTS[n][0]} each (R-COMP-2)"
                )
        if len(set(colours)) != n:
            raise ValueError("config.colours: a colour is chosen twice")
        object.__setattr__(self, "colours", colours)
        if self.spells is not None:
            spells = tuple(self.spells)
            for i, s in enumerate(spells):
                if s not in BASE_SPELLS and s not in EXPANSION_SPELLS:
                    raise ValueError(f"config.spells[{i}]: unknown spell {s!r}")
            if len(set(spells)) != len(spells):
                raise ValueError("config.spells: a spell is listed twice")
            object.__setattr__(self, "spells", spells)
        if not isinstance(self.track, Track):
            raise ValueError("config.track: expected a Track")

    @property
    def team_pairs(self) -> tuple[tuple[str, str], ...] | None:
        """Partner pairs by colour (R-TEAM-1: seats i and i + n/2), or None."""
        if not self.teams:
            return None
        assert self.colours is not None
        half = self.player_count // 2
        return tuple((self.colours[i], self.colours[i + half]) for i in range(half))


def default_colours(player_count: int, colour_limits: bool = True) -> tuple[str, ...]:
    """The first ``player_count`` colours that have enough wizards (R-COMP-2)."""
    if player_count == 1:
        return ("blue",)
    need = SETUP_COUNTS[player_count][0]
    ok = [c for c in COLOURS if not colour_limits or WIZARDS_PER_COLOUR[c] >= need]
    return tuple(ok[:player_count])


# --------------------------------------------------------------------------------------------
# Static table of one game (derived from the configuration; shared by all states of a game)


class Table:
    """Everything fixed for one game, with lookup tables for the engine.

    Built by :func:`~companion.rules.setup` or when loading a state; never changes.
    """

    __slots__ = (
        "config",
        "track",
        "towers",
        "colours",
        "spells",
        "n",
        "length",
        "wizard_ids",
        "wizard_owner",
        "wizard_index",
        "wiz_range",
        "seat_of",
        "tower_index",
        "tower_ids",
        "tower_crest",
        "tower_magic",
        "crest_space",
        "special",
        "mod_tower_crest",
        "mod_crest_space",
        "mod_nudge_skip",
        "start_potions",
        "partner",
        "actions_per_turn",
        "solo",
        "master",
        "_hash",
    )

    config: Config
    track: Track
    towers: tuple[TowerSpec, ...]
    colours: tuple[str, ...]
    spells: tuple[str, ...]
    n: int
    length: int
    wizard_ids: tuple[str, ...]
    wizard_owner: tuple[int, ...]
    wizard_index: dict[str, int]
    wiz_range: tuple[tuple[int, int], ...]
    seat_of: dict[str, int]
    tower_index: dict[str, int]
    tower_ids: tuple[str, ...]
    tower_crest: tuple[bool, ...]
    tower_magic: tuple[bool, ...]
    crest_space: tuple[bool, ...]
    special: tuple[str | None, ...]
    mod_tower_crest: tuple[bool, ...]
    mod_crest_space: tuple[bool, ...]
    mod_nudge_skip: tuple[bool, ...]
    start_potions: tuple[int, ...]
    partner: tuple[int, ...]
    actions_per_turn: int
    solo: bool
    master: bool
    _hash: int

    def __init__(
        self,
        config: Config,
        spells: tuple[str, ...],
        towers: tuple[TowerSpec, ...] = BASE_TOWERS,
        wizards_each: int | None = None,
        potions_each: int | None = None,
    ) -> None:
        s = object.__setattr__
        n = config.player_count
        assert config.colours is not None
        s(self, "config", config)
        s(self, "track", config.track)
        s(self, "towers", tuple(towers))
        s(self, "colours", config.colours)
        s(self, "spells", tuple(spells))
        s(self, "n", n)
        s(self, "length", config.track.length)
        w_each, p_each = SETUP_COUNTS[n]
        if wizards_each is not None:
            w_each = wizards_each
        if potions_each is not None:
            p_each = potions_each
        ids: list[str] = []
        owner: list[int] = []
        ranges: list[tuple[int, int]] = []
        for seat, colour in enumerate(config.colours):
            ranges.append((len(ids), len(ids) + w_each))
            for k in range(1, w_each + 1):
                ids.append(f"{colour}-{k}")
                owner.append(seat)
        s(self, "wizard_ids", tuple(ids))
        s(self, "wizard_owner", tuple(owner))
        s(self, "wizard_index", {w: i for i, w in enumerate(ids)})
        s(self, "wiz_range", tuple(ranges))
        s(self, "seat_of", {c: i for i, c in enumerate(config.colours)})
        s(self, "tower_index", {t.id: i for i, t in enumerate(self.towers)})
        s(self, "tower_ids", tuple(t.id for t in self.towers))
        s(self, "tower_crest", tuple(t.crest for t in self.towers))
        s(self, "tower_magic", tuple(t.magic for t in self.towers))
        length = config.track.length
        special = config.track.special_map
        s(
            self,
            "crest_space",
            tuple(i in config.track.raven_crest and i not in special for i in range(length + 1)),
        )
        s(self, "special", tuple(special.get(i) for i in range(length + 1)))
        # the castle's rules with expansion modules (OPEN-15 magic tower crest, OPEN-11
        # fountain crest and castle spell on a fountain); the base game ignores these options
        opts = config.options
        mt_crest = bool(opts["magic_tower_crest"])
        s(self, "mod_tower_crest", tuple(t.crest or (mt_crest and t.magic) for t in self.towers))
        fountain_crest = bool(opts["fountain_web_crest"])
        s(
            self,
            "mod_crest_space",
            tuple(
                self.crest_space[i]
                or (
                    fountain_crest
                    and special.get(i) == "fountain"
                    and i in config.track.raven_crest
                )
                for i in range(length + 1)
            ),
        )
        on_fountain = bool(opts["castle_spell_may_stop_on_fountain"])
        s(
            self,
            "mod_nudge_skip",
            tuple(
                special.get(i) is not None and not (special.get(i) == "fountain" and on_fountain)
                for i in range(length + 1)
            ),
        )
        s(self, "start_potions", tuple(p_each for _ in range(n)))
        if config.teams:
            half = n // 2
            s(self, "partner", tuple((i + half) % n for i in range(n)))
        else:
            s(self, "partner", tuple(-1 for _ in range(n)))
        s(self, "solo", n == 1)
        s(self, "actions_per_turn", 1 if n == 1 else 2)
        s(self, "master", config.variant == "master")
        s(self, "_hash", hash((config, self.spells, self.towers, w_each, p_each)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Table is immutable")

    def _key(self) -> tuple[Any, ...]:
        return (self.config, self.spells, self.towers, self.wizard_ids, self.start_potions)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Table):
            return NotImplemented
        return self._hash == other._hash and self._key() == other._key()

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Table(players={self.colours}, variant={self.config.variant!r})"

    def team_of(self, seat: int) -> tuple[int, ...]:
        """The seats of ``seat``'s team (just ``(seat,)`` without the team variant)."""
        p = self.partner[seat]
        return (seat,) if p < 0 else tuple(sorted((seat, p)))


# --------------------------------------------------------------------------------------------
# Dynamic state


class Turn(NamedTuple):
    """The current turn (docs/state-model.md §2.3).

    ``casts``: every cast this turn as ``(seat, spell, window, times)``; a window is the card
    action a spell belongs to (R-MASTER-4; 0 before/during the 1st action, 1 afterwards).
    """

    player: int
    cards_used: int = 0
    redrawn: bool = False
    ended: bool = False
    casts: tuple[tuple[int, str, int, int], ...] = ()
    exchanges: int = 0
    feather_used: bool = False
    extra_card: bool = False
    fly_used: bool = False


class Result(NamedTuple):
    """Outcome of a finished game (R-END-3/4/5, R-SOLO-2).

    :param reason: ``round_completed``, ``deadlock``, ``solo_won`` or ``solo_lost``.
    :param qualified: seats that fulfil R-END-1 (team: R-TEAM-8).
    :param winners: winning seats (several = shared victory).
    :param unused_full: unspent full potions per seat.
    """

    reason: str
    qualified: tuple[int, ...]
    winners: tuple[int, ...]
    unused_full: tuple[int, ...]


class Progress(NamedTuple):
    """Game progress (docs/state-model.md §2.3 ``game``).

    ``remaining_turns``: turns still played after the current one before the game ends
    (R-END-2), None while the end is not triggered. ``cards_played``: move cards played or
    discarded so far, counted in solo play only (card limit, R-SOLO-2).
    """

    end_triggered_by: int | None = None
    remaining_turns: int | None = None
    over: bool = False
    result: Result | None = None
    cards_played: int = 0


class CardState(NamedTuple):
    """Known cards (a simulated or bot game). Absent (None) when the hands are unknown.

    Hands and piles hold indices into :data:`CARD_KINDS`; ``draw[0]`` is the top card.
    Reshuffles (R-TURN-4) are derived purely from ``seed`` and ``reshuffles``.
    """

    hands: tuple[tuple[int, ...], ...]
    draw: tuple[int, ...]
    discard: tuple[int, ...]
    seed: int
    reshuffles: int = 0


class ModuleState(NamedTuple):
    """Expansion pieces (§16-§21), carried for the module engine. Positions use the wizard
    encoding ``space << 4 | tier``; per-player tuples are in seat order."""

    witch: int | None = None
    raven: int | None = None
    witch_vials: tuple[tuple[int, int, int], ...] | None = None
    witch_vial_supply: int | None = None
    feathers: tuple[int, ...] | None = None
    armed: tuple[tuple[int, str], ...] = ()
    """``(seat, spell)`` of *Fountain Abundance* / *Precise Landing* cast this turn and not yet
    used (R-SPELLX-5/6); cleared at the end of the turn."""
    free_casts: tuple[tuple[int, str], ...] = ()
    """``(seat, source)`` free spell rights: ``magic_tower`` (R-MOD-MAGICTOWER-5) or
    ``feather`` (R-MOD-RAVEN-6); cleared at the end of the turn."""


@dataclass(frozen=True, slots=True)
class GameState:
    """One moment of a game. Immutable; derive new states with :func:`~companion.rules.apply`.

    :param table: the static part (configuration, track, towers, players).
    :param stacks: per space (index ``space - 1``) the tower indices bottom -> top.
    :param wizards: per wizard (index into ``table.wizard_ids``) ``space << 4 | tier``,
        0 = inside the raven castle.
    :param castle: the castle's space (its tier is always the height there, R-RAVEN-1).
    :param potions: per seat ``(full, empty, spent)`` (R-POTION-1).
    :param turn: the current :class:`Turn`.
    :param game: the :class:`Progress`.
    :param cards: the :class:`CardState`, or None when the hands are unknown (tracker).
    :param modules: the :class:`ModuleState`, or None when no module is in play.
    """

    table: Table
    stacks: tuple[tuple[int, ...], ...]
    wizards: tuple[int, ...]
    castle: int
    potions: tuple[tuple[int, int, int], ...]
    turn: Turn
    game: Progress
    cards: CardState | None = None
    modules: ModuleState | None = None

    # -- readable accessors (colours, ids, spaces) -------------------------------------------

    @property
    def current_player(self) -> str:
        """Colour of the player whose turn it is."""
        return self.table.colours[self.turn.player]

    @property
    def over(self) -> bool:
        return self.game.over

    def height(self, space: int) -> int:
        """Number of towers on ``space`` (the castle is not a tower)."""
        return len(self.stacks[space - 1])

    def stack(self, space: int) -> tuple[str, ...]:
        """Tower ids on ``space``, bottom -> top."""
        towers = self.table.towers
        return tuple(towers[t].id for t in self.stacks[space - 1])

    def wizard_position(self, wizard: str) -> tuple[int, int] | None:
        """``(space, tier)`` of a wizard, or None when it is inside the castle.

        :raises KeyError: for an unknown wizard id.
        """
        p = self.wizards[self.table.wizard_index[wizard]]
        return None if p == 0 else (p >> 4, p & 15)

    def visible_wizards(self, space: int) -> tuple[str, ...]:
        """Ids of the wizards on the top surface of ``space`` (R-WIZ-3)."""
        code = space << 4 | len(self.stacks[space - 1])
        ids = self.table.wizard_ids
        return tuple(ids[i] for i, p in enumerate(self.wizards) if p == code)

    def hidden_wizards(self, space: int) -> tuple[tuple[str, int], ...]:
        """``(wizard id, tier)`` of the trapped wizards inside the stack of ``space``."""
        h = len(self.stacks[space - 1])
        ids = self.table.wizard_ids
        return tuple(
            (ids[i], p & 15) for i, p in enumerate(self.wizards) if p >> 4 == space and (p & 15) < h
        )

    def in_castle(self, colour: str | None = None) -> tuple[str, ...]:
        """Ids of the wizards inside the castle (of one colour, or all)."""
        ids = self.table.wizard_ids
        return tuple(
            ids[i]
            for i, p in enumerate(self.wizards)
            if p == 0 and (colour is None or ids[i].rsplit("-", 1)[0] == colour)
        )

    def potions_of(self, colour: str) -> tuple[int, int, int]:
        """``(full, empty, spent)`` of a player."""
        return self.potions[self.table.seat_of[colour]]

    def hand(self, colour: str) -> tuple[Card, ...] | None:
        """A player's hand, or None when the hands are unknown."""
        if self.cards is None:
            return None
        return tuple(CARD_KINDS[k] for k in self.cards.hands[self.table.seat_of[colour]])

    def spaces(self) -> Iterator[int]:
        return iter(range(1, self.table.length + 1))

    def __repr__(self) -> str:
        return (
            f"GameState(player={self.current_player}, cards_used={self.turn.cards_used}, "
            f"castle={self.castle}, over={self.game.over})"
        )


_new = object.__new__
(
    _set_table,
    _set_stacks,
    _set_wizards,
    _set_castle,
    _set_potions,
    _set_turn,
    _set_game,
    _set_cards,
    _set_modules,
) = (
    GameState.__dict__[f].__set__
    for f in ("table", "stacks", "wizards", "castle", "potions", "turn", "game", "cards", "modules")
)


def make_state(
    table: Table,
    stacks: tuple[tuple[int, ...], ...],
    wizards: tuple[int, ...],
    castle: int,
    potions: tuple[tuple[int, int, int], ...],
    turn: Turn,
    game: Progress,
    cards: CardState | None,
    modules: ModuleState | None,
) -> GameState:
    """Fast constructor of a :class:`GameState` (no checks; the engine's hot path)."""
    st: GameState = _new(GameState)
    _set_table(st, table)
    _set_stacks(st, stacks)
    _set_wizards(st, wizards)
    _set_castle(st, castle)
    _set_potions(st, potions)
    _set_turn(st, turn)
    _set_game(st, game)
    _set_cards(st, cards)
    _set_modules(st, modules)
    return st


def colours_of(table: Table, seats: Iterable[int]) -> list[str]:
    """The colours of ``seats``, in the given order."""
    return [table.colours[s] for s in seats]
