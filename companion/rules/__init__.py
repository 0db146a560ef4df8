"""The rules core of *The Wandering Towers* (base game §1-§15 and the 2025 expansion §16-§23):
pure, immutable, fast.

Usage::

    from companion.rules import Config, setup, legal_actions, apply, observe, MoveWizard, Card

    state = setup(Config(player_count=4), seed=7)       # seed deals cards; None = hands unknown
    for action in legal_actions(state):                 # lazy; `in`, .count() also work
        ...
    state, events = apply(state, MoveWizard("blue", "blue-1", 3, Card("wizard", wizard=3)))
    observe(state)                                      # what the camera sees (Observation)
    view(state, "blue", memory_aid="own")               # what one player may be shown (JSON)
    dump_state(state) / load_state(data)                # docs/state-model.md JSON, exact round trip
    dump_action(a) / load_action(data, "actions[2]")    # FormatError names the bad field
    check_invariants(state)                             # docs/state-model.md §2.4, [] when fine
    describe_action(a) / describe_event(e)              # one English sentence each

Actions (``MoveWizard``, ``MoveTower``, ``DiscardCard``, ``Redraw``, ``Cast``, ``EndTurn``,
``GivePotion``, ``ExchangeCards``) name players by colour and wizards by id (``blue-2``).
Dice results are part of the action (``rolls``, the last one is used; R-CARD-4); the engine
never rolls. ``apply`` raises :class:`IllegalAction` (``.reason``, ``.rule``) and the given
state stays as it was. Events are ``Event(kind, data)`` (``event["space"]``, ``.to_json()``).

Hands: a state from ``setup(config, seed)`` knows every card (hands, draw pile, seeded
reshuffles) and ``apply`` checks the player holds the card. With ``seed=None`` (the tracker)
``state.cards`` is None and only the card's form is checked; ``legal_actions(state)`` then
lists one action per target and step count 1-6 with a representative card (value card 1-5,
the 1-die card rolled 6); ``legal_actions(state, every_card=True)`` lists every card face.

Turn flow: 2 card actions (``MoveWizard``/``MoveTower``/``DiscardCard``) or one ``Redraw``,
spells (``Cast``) in between as the variant allows, then ``EndTurn`` (refill, round
completion at the end of the game, next player). ``state.turn.ended`` = a wizard of the
current player entered the castle (R-TURN-6); ``state.game.over`` / ``state.game.result``.

Configuration: ``Config(player_count, variant="base"|"master", teams=…, colours=…,
modules={"fountain", "web", "witch", "raven", "magic_tower"}, spells=…, spell_costs={…},
feather_costs={…}, options={…}, track=Track(…))``; every OPEN-nn default of the rules
reference is in :data:`DEFAULT_OPTIONS` / :data:`DEFAULT_SPELL_COSTS` /
:data:`DEFAULT_FEATHER_COSTS`.

Expansion (``companion.rules.expansion``): with ``config.modules`` the fountain/web tiles are
inserted (18 spaces by default, OPEN-10), the magic tower, witch and raven set up, and every
state carries ``state.modules`` (witch/raven positions, witch vials, feathers, armed spells,
free spell rights; None without modules, so the base game pays nothing). Card actions carry
``page`` (witch page card, OPEN-12: the camera cannot read it), ``raven_timing``,
``witch_guess``, ``witch_protect``, ``web_steps`` and ``physically_lifted`` (lift penalty);
``Feather(player, use, …)`` spends feathers; ``Cast(…, free=True)`` uses a magic tower or
feather free spell.

Bots: ``companion.sim.bots`` (``RandomBot(seed)``, ``GreedyBot(seed)``, ``play(config,
seed, "random")`` yields every applied step).

Internals for fast code (tracker search): ``state.stacks[space-1]`` = tower indices bottom->top,
``state.wizards[i]`` = packed ``position(space, tier)`` (``space_of``, ``tier_of`` of
:mod:`companion.rules.model`; ``IN_CASTLE`` = 0), ``state.table`` = lookups
(``wizard_ids``, ``wizard_owner``, ``tower_ids``, ``crest_space``, …).
"""

from companion.rules.actions import (
    ACTION_KINDS,
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    Feather,
    FormatError,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.engine import (
    HAND_SIZE,
    LegalActions,
    actions_for_card,
    apply,
    card_playable,
    is_legal,
    legal_actions,
    setup,
)
from companion.rules.invariants import check_invariants
from companion.rules.model import (
    BASE_SPELLS,
    BASE_TOWERS,
    BASE_TRACK,
    CARD_KINDS,
    DECK,
    DEFAULT_FEATHER_COSTS,
    DEFAULT_OPTIONS,
    DEFAULT_SPELL_COSTS,
    EXPANSION_SPELLS,
    MODULES,
    SETUP_CAPACITIES,
    SETUP_COUNTS,
    WIZARDS_PER_COLOUR,
    Card,
    CardState,
    Config,
    GameState,
    ModuleState,
    Progress,
    Result,
    Table,
    TowerSpec,
    Track,
    Turn,
)
from companion.rules.observation import COLOURS, Observation, ObservationError, SpaceObservation
from companion.rules.serialize import (
    card_from_json,
    dump_action,
    dump_event,
    dump_state,
    load_action,
    load_event,
    load_state,
)
from companion.rules.text import describe_action, describe_event
from companion.rules.view import MEMORY_AIDS, observe, view

__all__ = [
    "ACTION_KINDS",
    "BASE_SPELLS",
    "BASE_TOWERS",
    "BASE_TRACK",
    "CARD_KINDS",
    "COLOURS",
    "DECK",
    "DEFAULT_FEATHER_COSTS",
    "DEFAULT_OPTIONS",
    "DEFAULT_SPELL_COSTS",
    "EXPANSION_SPELLS",
    "HAND_SIZE",
    "MEMORY_AIDS",
    "MODULES",
    "SETUP_CAPACITIES",
    "SETUP_COUNTS",
    "WIZARDS_PER_COLOUR",
    "Action",
    "Card",
    "CardState",
    "Cast",
    "Config",
    "DiscardCard",
    "EndTurn",
    "Event",
    "ExchangeCards",
    "Feather",
    "FormatError",
    "GameState",
    "GivePotion",
    "IllegalAction",
    "LegalActions",
    "ModuleState",
    "MoveTower",
    "MoveWizard",
    "Observation",
    "ObservationError",
    "Progress",
    "Redraw",
    "Result",
    "SpaceObservation",
    "Table",
    "TowerSpec",
    "Track",
    "Turn",
    "actions_for_card",
    "apply",
    "card_from_json",
    "card_playable",
    "check_invariants",
    "describe_action",
    "describe_event",
    "dump_action",
    "dump_event",
    "dump_state",
    "is_legal",
    "legal_actions",
    "load_action",
    "load_event",
    "load_state",
    "observe",
    "setup",
    "view",
]
