"""Debounce on bounce traces: one press = one press, however the contacts chatter."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.hardware.bounce import Press, burst, press_trace, random_presses, trace
from companion.hardware.dice import ButtonEvent, Debouncer, DiceTiming

TIMING = DiceTiming()


def run(edges: list[tuple[float, bool]], until: float | None = None) -> list[ButtonEvent]:
    deb = Debouncer(TIMING)
    out: list[ButtonEvent] = []
    for t, level in edges:
        out += deb.edge(t, level)
    out += deb.tick((until if until is not None else edges[-1][0]) + 5.0)
    return out


def kinds(events: list[ButtonEvent]) -> list[str]:
    return [e.kind for e in events]


def main(events: list[ButtonEvent]) -> list[ButtonEvent]:
    """The events without the ``press`` confirmations."""
    return [e for e in events if e.kind != "press"]


class TestCleanPresses:
    def test_tap_is_down_then_up_with_its_length(self) -> None:
        ev = run([(1.0, True), (1.2, False)])
        assert kinds(ev) == ["down", "press", "up"]
        assert ev[0].t == 1.0
        assert ev[1].t == pytest.approx(1.0 + TIMING.min_press_s)
        assert ev[2].duration == pytest.approx(0.2)

    def test_press_shows_at_first_contact(self) -> None:
        deb = Debouncer(TIMING)
        assert kinds(deb.edge(3.0, True)) == ["down"]

    def test_hold_reported_at_hold_time_while_still_down(self) -> None:
        deb = Debouncer(TIMING)
        deb.edge(1.0, True)
        assert kinds(deb.tick(1.79)) == ["press"]
        assert deb.next_deadline() == pytest.approx(1.8)
        assert [(e.kind, e.t) for e in deb.tick(1.8)] == [("hold", pytest.approx(1.8))]
        ev = deb.edge(2.5, False) + deb.tick(3.0)
        assert kinds(ev) == ["up"] and ev[0].duration == pytest.approx(1.5)

    def test_release_needs_quiet_line(self) -> None:
        deb = Debouncer(TIMING)
        deb.edge(1.0, True)
        deb.edge(1.1, False)
        assert deb.tick(1.1 + TIMING.release_s * 0.9) == []
        assert kinds(deb.tick(1.1 + TIMING.release_s)) == ["up"]


class TestBounce:
    def test_burst_at_both_ends_is_one_press(self) -> None:
        rng = random.Random(7)
        edges = press_trace(rng, Press(1.0, 0.2), pathological=0.0)
        assert len(edges) > 4  # it really bounces
        ev = main(run(edges))
        assert kinds(ev) == ["down", "up"]
        assert ev[1].duration == pytest.approx(0.2)

    def test_one_second_chatter_on_release_is_one_tap(self) -> None:
        rng = random.Random(3)
        edges = burst(rng, 1.0, 0.001, True) + burst(rng, 1.3, 1.0, False)
        assert edges[-1][0] > 2.2
        ev = main(run(edges))
        assert kinds(ev) == ["down", "up"]  # no hold although the line chattered past 0.8 s
        assert ev[1].duration == pytest.approx(0.3)

    def test_one_second_chatter_on_press_then_held_is_a_hold(self) -> None:
        rng = random.Random(4)
        edges = burst(rng, 1.0, 0.95, True) + burst(rng, 3.0, 0.005, False)
        ev = main(run(edges))
        assert kinds(ev) == ["down", "hold", "up"]
        assert ev[1].t >= 1.8 and ev[2].duration == pytest.approx(2.0)

    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
    def test_every_press_seen_once_tap_and_hold_right(self, seed: int, n: int) -> None:
        rng = random.Random(seed)
        presses, edges = random_presses(rng, n, pathological=0.2)
        ev = run(edges)
        downs = [e for e in ev if e.kind == "down"]
        ups = [e for e in ev if e.kind == "up"]
        holds = [e for e in ev if e.kind == "hold"]
        confirmed = [e for e in ev if e.kind == "press"]
        assert len(confirmed) == n and not [e for e in ev if e.kind == "glitch"]
        assert [d.t for d in downs] == [p.t0 for p in presses]
        assert [u.duration for u in ups] == pytest.approx([p.duration for p in presses])
        assert len(holds) == sum(p.duration >= TIMING.hold_s for p in presses)

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(seed=st.integers(0, 2**32 - 1))
    def test_short_presses_with_short_gaps_are_all_counted(self, seed: int) -> None:
        rng = random.Random(seed)
        presses, edges = random_presses(
            rng, 10, min_s=0.05, max_s=0.12, gap_s=(0.04, 0.08), pathological=0.0
        )
        assert len([e for e in run(edges) if e.kind == "down"]) == 10

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(seed=st.integers(0, 2**32 - 1))
    def test_spikes_are_glitches_not_presses(self, seed: int) -> None:
        rng = random.Random(seed)
        edges: list[tuple[float, bool]] = []
        t = 1.0
        for _ in range(rng.randrange(1, 8)):  # bursts of 1-6 spikes, under 5 ms pressed
            for _ in range(rng.randrange(1, 7)):
                width = rng.uniform(0.000005, 0.0008)
                edges += [(t, True), (t + width, False)]
                t += width + rng.uniform(0.00005, 0.002)
            t += rng.uniform(0.04, 0.3)
        ev = run(edges)
        assert kinds(ev).count("glitch") == kinds(ev).count("down") >= 1
        assert "press" not in kinds(ev) and "up" not in kinds(ev)

    def test_late_ticks_keep_events_in_time_order(self) -> None:
        rng = random.Random(11)
        edges = trace(rng, [Press(1.0, 1.0), Press(2.5, 0.1)], pathological=0.0)
        deb = Debouncer(TIMING)
        ev: list[ButtonEvent] = []
        for t, level in edges:  # no ticks in between: only edges drive it
            ev += deb.edge(t, level)
        ev += deb.tick(10.0)
        assert kinds(ev) == ["down", "press", "hold", "up", "down", "press", "up"]
        assert [e.t for e in ev] == sorted(e.t for e in ev)
