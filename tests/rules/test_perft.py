"""Perft-style legal action counts from fixed positions (``tests/data/rules_perft.json``).

The counts were produced by this engine; three small positions were also counted by hand
(see ``HAND_CHECKED`` below). Regenerate after an intended rules change with
``python -m tests.rules.test_perft`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.rules import GameState, apply, legal_actions, load_state

DATA = Path(__file__).resolve().parents[1] / "data" / "rules_perft.json"

# Hand-checked positions (2 players, base game). All nine towers form one stack on space 2
# (R1 P1 R2 P2 R3 P3 R4 P4 R5, bottom -> top); blue-1 stands on its roof (tier 9), yellow-1
# on the track at space 5, every other wizard is in the castle on space 1.
#
# "tower9-hand": blue holds W2, T3 and the either-die card; no full potion.
#   W2: blue-1 2 -> 4                                                     =  1
#   T3: lift any of the 9 tiers, 2 -> 5 (not the castle)                  =  9
#   either-die, final roll 1-6: wizard side 6 destinations 3..8           =  6
#                               tower side 6 rolls x 9 tiers              = 54
#   discard: every card is playable and it is the first action            =  0
#   redraw: without push 1, push one of the 9 tiers 1 space               = 10
#   spells: no full potion; end turn: no action played yet                =  0
#                                                                   total = 80
# "tower9-unknown": the same board, hands unknown, one representative card per target and
#   step count: wizard 6 (steps 1-6) + tower 6 x 9 = 54 + discard 1 + redraw 10  = 71
#   with every card face (every_card): wizard-only 5 faces x 1, tower-only 5 x 9, either
#   equal 4 x (1 + 9), either unequal 4 x (1 + 9), either-die 6 + 54, tower 2-dice 54,
#   wizard 2-dice 6, tower 3-dice 54, wizard 3-dice 6 = 310; + discard 1 + redraw 10 = 321
# "tower9-spells": as "tower9-unknown" but blue holds 2 full potions: Advance a Wizard
#   (cost 2) on blue-1 or yellow-1 = 2, Advance a Tower (cost 1) on any of 9 tiers = 9;
#   71 + 11 = 82 (every_card: 321 + 11 = 332).
HAND_CHECKED = {
    "tower9-hand": [80],
    "tower9-unknown": [71],
    "tower9-unknown-every-card": [321],
    "tower9-spells": [82],
    "tower9-spells-every-card": [332],
}


def perft(state: GameState, depth: int, every_card: bool) -> int:
    """Number of legal action sequences of length ``depth``."""
    if depth == 0:
        return 1
    actions = list(legal_actions(state, every_card))
    if depth == 1:
        return len(actions)
    return sum(perft(apply(state, a)[0], depth - 1, every_card) for a in actions)


def _cases() -> list[dict]:
    return json.loads(DATA.read_text())["positions"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_perft_counts_match_the_recorded_table(case):
    state = load_state(case["state"])
    counts = [perft(state, d + 1, case["every_card"]) for d in range(len(case["counts"]))]
    assert counts == case["counts"]
    if case["name"] in HAND_CHECKED:
        assert counts[: len(HAND_CHECKED[case["name"]])] == HAND_CHECKED[case["name"]]


def test_every_hand_checked_position_is_in_the_table():
    assert set(HAND_CHECKED) <= {c["name"] for c in _cases()}


def _regenerate() -> None:  # pragma: no cover - maintenance helper
    cases = json.loads(DATA.read_text())
    for case in cases["positions"]:
        state = load_state(case["state"])
        case["counts"] = [
            perft(state, d + 1, case["every_card"]) for d in range(len(case["counts"]))
        ]
    DATA.write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":  # pragma: no cover
    _regenerate()
