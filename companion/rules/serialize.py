"""The neutral JSON of ``docs/state-model.md`` §1-§5: load and dump states, actions, events.

``dump_state(load_state(j)) == j`` and ``load_state(dump_state(s)) == s`` hold exactly. Loading
checks every field and the invariants of ``docs/state-model.md`` §2.4; a malformed document
raises :class:`FormatError` whose message starts with the field path (``wizards.blue-2.tier``,
``actions[2].steps``).

States and configurations: :mod:`companion.rules.state_json`; cards, actions and events:
:mod:`companion.rules.action_json`.
"""

from companion.rules.action_json import (
    card_from_json,
    card_to_json,
    dump_action,
    dump_event,
    load_action,
    load_event,
)
from companion.rules.actions import FormatError
from companion.rules.state_json import dump_config, dump_state, load_state

__all__ = [
    "FormatError",
    "card_from_json",
    "card_to_json",
    "dump_action",
    "dump_config",
    "dump_event",
    "dump_state",
    "load_action",
    "load_event",
    "load_state",
]
