"""The dice button as a player uses it (R-CARD-4): modes, reroll limits, keep, profiles."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from companion.hardware.bounce import Press, press_trace
from companion.hardware.dice import (
    BLANK,
    COUNT_PATTERNS,
    FACES,
    ROLL_FRAMES,
    SIEGE_2D6,
    WANDERING_TOWERS,
    WIZWAR_D4,
    DiceError,
    DiceMachine,
    DiceProfile,
    DiceState,
    DiceTiming,
)

T = DiceTiming()


class Table:
    """Drives a machine with clean or bouncing presses on a fake clock."""

    def __init__(
        self, seed: int = 1, profile: DiceProfile = WANDERING_TOWERS, bounce: bool = False
    ):
        self.m = DiceMachine(profile, random.Random(seed), T)
        self.t = 10.0
        self.events: list[dict[str, Any]] = []
        self.bounce = random.Random(seed + 1) if bounce else None

    def wait(self, s: float) -> None:
        end = self.t + s
        while (d := self.m.next_deadline()) is not None and d <= end:
            self.events += self.m.tick(d)
        self.events += self.m.tick(end)
        self.t = end

    def press(self, button: str = "roll", s: float = 0.12, gap: float = 0.1) -> None:
        if self.bounce is not None:
            edges = press_trace(self.bounce, Press(self.t, s), pathological=0.1)
        else:
            edges = [(self.t, True), (self.t + s, False)]
        for t, level in edges:
            while (d := self.m.next_deadline()) is not None and d <= t:
                self.events += self.m.tick(d)
            self.events += self.m.edge(t, button, level)
        self.t = edges[-1][0]
        self.wait(gap)

    def hold(self, button: str = "roll") -> None:
        self.press(button, 1.0)

    def settle(self) -> None:
        self.wait(2.0)

    def dice(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "dice"]


def test_single_press_is_a_one_die_card_and_final() -> None:
    tb = Table()
    tb.press()
    assert tb.m.pips == COUNT_PATTERNS[1]  # one pip of the middle row while counting
    tb.settle()
    [ev] = tb.dice()
    assert ev["dice_allowed"] == 1 and len(ev["rolls"]) == 1 and ev["used"] == ev["rolls"][0]
    assert tb.m.pips == FACES[ev["used"]]
    assert set(ev) == {"type", "rolls", "used", "dice_allowed"}


def test_two_quick_presses_pick_two_dice_then_reroll_once_and_second_is_final() -> None:
    tb = Table(seed=5)
    tb.press()
    tb.press()
    assert tb.m.pips == COUNT_PATTERNS[2]
    tb.settle()
    assert tb.m.state is DiceState.CHOOSING and tb.dice() == []
    first = tb.m.rolls[0]
    assert tb.m.pips == FACES[first]
    tb.press()  # tap = reroll
    tb.settle()
    [ev] = tb.dice()
    assert ev["dice_allowed"] == 2 and ev["rolls"][0] == first and len(ev["rolls"]) == 2
    assert ev["used"] == ev["rolls"][1]  # must keep the second, never the sum
    tb.press()  # a further tap starts a new selection, it does not reroll
    assert tb.dice() == [ev]


def test_three_dice_allow_three_rolls_and_the_third_is_final() -> None:
    tb = Table(seed=9)
    for _ in range(3):
        tb.press()
    tb.settle()
    tb.press()
    tb.settle()
    assert tb.m.state is DiceState.CHOOSING and len(tb.m.rolls) == 2
    tb.press()
    tb.settle()
    [ev] = tb.dice()
    assert ev["dice_allowed"] == 3 and len(ev["rolls"]) == 3 and ev["used"] == ev["rolls"][2]


def test_more_than_three_quick_presses_stay_three_dice() -> None:
    tb = Table()
    for _ in range(5):
        tb.press()
    tb.settle()
    assert tb.m.mode == 3


def test_hold_keeps_the_first_roll() -> None:
    tb = Table(seed=2)
    tb.m.select_mode(tb.t, 3)  # picked on the phone
    tb.press()  # rolls at once
    tb.settle()
    shown = tb.m.rolls[0]
    tb.t += 0.01
    tb.events += tb.m.edge(tb.t, "roll", True)
    assert tb.m.pips == BLANK  # dark while the button is down
    tb.wait(0.85)
    [ev] = tb.dice()  # kept before release
    assert ev == {"type": "dice", "rolls": [shown], "used": shown, "dice_allowed": 3}
    assert tb.m.pips == FACES[shown]
    tb.events += tb.m.edge(tb.t, "roll", False)
    tb.settle()
    assert len(tb.dice()) == 1  # the release of the hold does nothing more


def test_roll_animates_before_the_face() -> None:
    tb = Table(seed=3)
    tb.m.select_mode(tb.t, 1)
    tb.events += tb.m.edge(tb.t, "roll", True)
    assert tb.m.pips in ROLL_FRAMES
    frames = set()
    for _ in range(8):
        tb.wait(T.frame_s)
        frames.add(tb.m.pips)
    assert len(frames) > 3 and tb.dice() == []
    tb.wait(T.roll_anim_s)
    assert len(tb.dice()) == 1


def test_presses_during_the_animation_are_ignored() -> None:
    tb = Table(seed=4)
    tb.m.select_mode(tb.t, 2)
    tb.press(gap=0.05)
    tb.press(gap=0.05)  # still rolling: ignored, not a reroll
    tb.settle()
    assert tb.m.state is DiceState.CHOOSING and len(tb.m.rolls) == 1


def test_done_keeps_a_waiting_face_then_ends_the_turn() -> None:
    tb = Table(seed=6)
    tb.m.select_mode(tb.t, 2)
    tb.press()
    tb.settle()
    tb.press("done")
    assert [e["type"] for e in tb.events] == ["dice", "done"]
    assert tb.events[0]["rolls"] == tb.events[0]["rolls"][:1]


def test_undo_and_done_buttons() -> None:
    tb = Table()
    tb.press("undo")
    tb.press("done")
    assert tb.events == [{"type": "undo"}, {"type": "done"}]


def test_phone_commands_refused_cleanly_in_the_wrong_state() -> None:
    tb = Table()
    with pytest.raises(DiceError, match="nothing to keep"):
        tb.m.keep(tb.t)
    with pytest.raises(DiceError, match="not a mode"):
        tb.m.select_mode(tb.t, 4)
    tb.m.select_mode(tb.t, 2)
    tb.press()
    tb.settle()
    before = (tb.m.state, list(tb.m.rolls), tb.m.pips)
    with pytest.raises(DiceError, match="under way"):
        tb.m.select_mode(tb.t, 1)
    with pytest.raises(DiceError, match="under way"):
        tb.m.cancel(tb.t)
    assert (tb.m.state, tb.m.rolls, tb.m.pips) == before
    tb.m.reroll(tb.t)
    tb.settle()
    assert len(tb.dice()) == 1 and len(tb.dice()[0]["rolls"]) == 2


def test_cancel_forgets_the_picked_mode() -> None:
    tb = Table()
    tb.m.select_mode(tb.t, 3)
    assert tb.m.pips == COUNT_PATTERNS[3]
    tb.m.cancel(tb.t)
    tb.press()
    tb.settle()
    assert tb.dice()[0]["dice_allowed"] == 1


def test_show_face_only_when_idle() -> None:
    tb = Table()
    tb.m.show(tb.t, 5)
    assert tb.m.pips == FACES[5]
    with pytest.raises(ValueError, match="no pip pattern"):
        tb.m.show(tb.t, 7)


def test_machine_needs_injected_rng() -> None:
    with pytest.raises(ValueError, match="rng"):
        DiceMachine(WANDERING_TOWERS, None)


def test_same_seed_same_rolls() -> None:
    a, b = Table(seed=42), Table(seed=42)
    for tb in (a, b):
        for _ in range(20):
            tb.press()
            tb.settle()
    assert a.dice() == b.dice() and len(a.dice()) == 20


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31), mode=st.sampled_from([1, 2, 3]), taps=st.integers(0, 3))
def test_bouncing_buttons_never_double_roll(seed: int, mode: int, taps: int) -> None:
    tb = Table(seed=seed, bounce=True)
    for _ in range(mode):
        tb.press(s=0.1, gap=0.15)
    tb.settle()
    for _ in range(min(taps, mode - 1)):
        tb.press(s=0.15)
        tb.settle()
    if taps < mode - 1:
        tb.hold()
        tb.settle()
    [ev] = tb.dice()
    assert ev["dice_allowed"] == mode
    assert len(ev["rolls"]) == min(taps, mode - 1) + 1


class TestProfiles:
    def test_siege_2d6_uses_the_army_table(self) -> None:
        tb = Table(seed=8, profile=SIEGE_2D6)
        tb.press()
        tb.settle()
        [ev] = tb.dice()
        assert ev["profile"] == "siege-2d6" and ev["dice_allowed"] == 1
        assert sum(ev["dice"][0]) == ev["rolls"][0]
        assert ev["used"] == SIEGE_2D6.used(ev["rolls"][0]) and 1 <= ev["used"] <= 4
        assert tb.m.pips == FACES[ev["used"]]

    def test_siege_army_distribution_matches_the_rulebook(self) -> None:
        # G2-DICE-1 derived: 1 army 5/36, 2: 11/36, 3: 14/36, 4: 6/36
        counts = Counter(SIEGE_2D6.used(a + b) for a in range(1, 7) for b in range(1, 7))
        assert counts == {1: 5, 2: 11, 3: 14, 4: 6}

    def test_d4(self) -> None:
        rng = random.Random(1)
        assert {WIZWAR_D4.throw(rng)[0] for _ in range(200)} == {1, 2, 3, 4}

    def test_profile_without_pips_for_a_value_refused(self) -> None:
        with pytest.raises(ValueError, match="no pips"):
            DiceProfile(name="2d6-sum", dice=2)


def test_fairness_chi_square_each_mode() -> None:
    """6,000 results per mode, seeded; the bench runs 60,000."""
    for mode in (1, 2, 3):
        rng = random.Random(1000 + mode)
        policy = random.Random(mode)
        m = DiceMachine(WANDERING_TOWERS, rng, T)
        t = 0.0
        used: list[int] = []
        every: list[int] = []
        for _ in range(6000):
            m.select_mode(t, mode)
            m.edge(t, "roll", True)
            m.edge(t + 0.05, "roll", False)
            t += 1.0
            m.tick(t)
            while m.state is DiceState.CHOOSING:
                if policy.random() < 0.5:  # keep or reroll, blind to the face
                    m.keep(t)
                else:
                    m.reroll(t)
                    t += 1.0
                    m.tick(t)
            res = m.last_result
            assert res is not None
            used.append(res["used"])
            every += res["rolls"]
        for sample in (used, every):
            counts = [sample.count(f) for f in range(1, 7)]
            assert chisquare(counts).pvalue > 0.001, (mode, counts)


def test_undo_while_picking_drops_the_pick_only() -> None:
    tb = Table()
    tb.press()
    tb.press("undo")
    tb.settle()
    assert tb.events == [] and tb.m.state is DiceState.IDLE
    tb.m.select_mode(tb.t, 2)
    tb.press("undo")
    tb.press("undo")  # nothing picked any more: this one is for the game
    assert tb.events == [{"type": "undo"}]
    tb.press()
    tb.settle()
    assert tb.dice()[0]["dice_allowed"] == 1


def test_done_while_rolling_uses_the_drawn_value() -> None:
    tb = Table(seed=12)
    tb.m.select_mode(tb.t, 3)
    tb.press(gap=0.05)
    drawn = tb.m.rolls[0]
    tb.press("done", gap=0.01)
    assert [e["type"] for e in tb.events] == ["dice", "done"]
    assert tb.events[0]["rolls"] == [drawn] and tb.m.pips == FACES[drawn]
    tb.settle()
    assert len(tb.dice()) == 1


def test_done_while_picking_ends_the_turn_without_a_roll() -> None:
    tb = Table()
    tb.press()
    tb.press("done")
    tb.settle()
    assert tb.events == [{"type": "done"}] and tb.m.state is DiceState.IDLE


def spike(tb: Table, button: str, width: float = 0.0005) -> None:
    tb.events += tb.m.edge(tb.t, button, True)
    tb.events += tb.m.edge(tb.t + width, button, False)
    tb.t += width
    tb.wait(0.1)


def test_spikes_on_the_lines_do_nothing() -> None:
    tb = Table(seed=21)
    spike(tb, "done")
    spike(tb, "undo")
    spike(tb, "roll")
    tb.settle()
    assert tb.events == [] and tb.m.state is DiceState.IDLE
    tb.m.select_mode(tb.t, 2)
    spike(tb, "roll")  # the chase started at the contact, then is taken back
    assert tb.m.state is DiceState.IDLE and tb.m.pips == COUNT_PATTERNS[2]
    tb.press()
    tb.settle()
    shown = tb.m.pips
    spike(tb, "roll")  # no reroll
    tb.settle()
    assert tb.m.can_choose() and len(tb.m.rolls) == 1 and tb.m.pips == shown
    tb.press("done")
    assert [e["type"] for e in tb.events] == ["dice", "done"]


def test_pick_count_not_raised_by_a_spike() -> None:
    tb = Table()
    tb.press()
    spike(tb, "roll")
    tb.press()
    tb.settle()
    assert tb.m.mode == 2 and tb.m.can_choose()
