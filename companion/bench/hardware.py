"""``companion bench hardware [--json] [--samples N] [--rolls N] [--seed S]``

Figures (printed, never asserted):

* **press -> pip LED latency** on gpiozero mock pins: ``drive_low()`` on the ROLL pin until the
  first pip LED pin has changed (the roll chase starts), through the real callback, queue,
  worker thread and gpiozero LEDs; p50/p99/max in ms (target p99 <= 5 ms).
* **dice fairness**: ``--rolls`` (60,000) results of each Wandering Towers mode (1, 2, 3 dice;
  keep/reroll decided blind to the face) through the pure dice machine with a seeded RNG, chi-square
  p-value of the used values and of every roll; the 2d6 army table and the d4 against their
  expected distributions (``scipy.stats.chisquare``).
* **serial round trip** on a real pty with the fake LED-ring device: frame sent -> ACK
  received (protocol) and ``set_led_state()`` -> acknowledged (end to end), p50/p99 in ms.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from companion.hardware.dice import HardwareEvent


class Ms(TypedDict):
    """Times of ``n`` samples, ms."""

    n: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float


class Latency(TypedDict):
    press_to_pip: Ms
    pip_pins_changed: int
    missed_presses: int
    results: int


class Serial(TypedDict):
    frame_to_ack: Ms | None
    set_to_acked: Ms | None
    resends: int


class Report(TypedDict):
    latency: Latency
    fairness: dict[str, dict[str, object]]  # distribution -> counts and chi-square p-values
    serial: Serial


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q / 100 * (len(s) - 1)))]


def _ms(xs: list[float]) -> Ms:
    return {
        "n": len(xs),
        "p50_ms": round(_pct(xs, 50) * 1000, 3),
        "p99_ms": round(_pct(xs, 99) * 1000, 3),
        "max_ms": round(max(xs) * 1000, 3),
        "mean_ms": round(statistics.fmean(xs) * 1000, 3),
    }


def bench_latency(samples: int, seed: int) -> Latency:
    from gpiozero.pins.mock import MockFactory

    from companion.hardware import create_hardware
    from companion.hardware.dice import DiceTiming

    timing = DiceTiming(roll_anim_s=0.01, frame_s=0.005)  # short rolls: more presses per second
    results: list[HardwareEvent] = []
    done = threading.Event()

    def events_out(ev: HardwareEvent) -> None:
        if ev["type"] == "dice":
            results.append(ev)
            done.set()

    factory = MockFactory()
    hw = create_hardware(
        {"hardware": {"backend": "mock", "buzzer": False}},
        events_out,
        rng=random.Random(seed),
        pin_factory=factory,
        timing=timing,
    )
    applied = threading.Event()
    stamp: list[float] = []

    def on_applied(t: float) -> None:
        stamp.append(time.monotonic())
        applied.set()

    lat: list[float] = []
    pin_ok = missed = 0
    pips = [factory.pin(p) for p in hw.pin_map.pips]  # the mock pins the pip LEDs drive
    try:
        roll = factory.pin(hw.pin_map.roll)
        for _ in range(samples):
            hw.select_dice(1)
            time.sleep(0.002)
            before = tuple(pin.state for pin in pips)
            applied.clear()
            done.clear()
            stamp.clear()
            hw.runner.on_applied = on_applied
            t0 = time.monotonic()
            roll.drive_low()
            if applied.wait(1.0):
                lat.append(stamp[0] - t0)
                pin_ok += tuple(pin.state for pin in pips) != before
            else:
                missed += 1
            hw.runner.on_applied = None
            time.sleep(0.005)
            roll.drive_high()
            done.wait(1.0)
            time.sleep(0.03)
    finally:
        hw.close()
    return {
        "press_to_pip": _ms(lat),
        "pip_pins_changed": pin_ok,
        "missed_presses": missed,
        "results": len(results),
    }


def bench_fairness(rolls: int, seed: int) -> dict[str, dict[str, object]]:
    from scipy.stats import chisquare  # type: ignore[import-untyped]

    from companion.hardware.dice import SIEGE_2D6, WANDERING_TOWERS, WIZWAR_D4, DiceMachine

    out: dict[str, dict[str, object]] = {}
    for mode in (1, 2, 3):
        m = DiceMachine(WANDERING_TOWERS, random.Random(seed + mode))
        policy = random.Random(seed * 7 + mode)
        t = 0.0
        used = [0] * 7
        every = [0] * 7
        for _ in range(rolls):
            m.select_mode(t, mode)
            m.edge(t, "roll", True)
            m.edge(t + 0.05, "roll", False)
            t += 1.0
            m.tick(t)
            while m.can_choose():
                if policy.random() < 0.5:
                    m.keep(t)
                else:
                    m.reroll(t)
                    t += 1.0
                    m.tick(t)
            res = m.last_result
            assert res is not None
            used[res["used"]] += 1
            for r in res["rolls"]:
                every[r] += 1
        out[f"wandering_towers_{mode}_dice"] = {
            "used_counts": used[1:],
            "used_p": float(chisquare(used[1:]).pvalue),
            "all_rolls": sum(every),
            "all_rolls_p": float(chisquare(every[1:]).pvalue),
        }
    rng = random.Random(seed)
    armies = [0] * 5
    for _ in range(rolls):
        armies[SIEGE_2D6.used(sum(SIEGE_2D6.throw(rng)))] += 1
    expected = [rolls * k / 36 for k in (5, 11, 14, 6)]
    out["siege_2d6_armies"] = {
        "counts": armies[1:],
        "p": float(chisquare(armies[1:], expected).pvalue),
    }
    d4 = [0] * 5
    for _ in range(rolls):
        d4[WIZWAR_D4.throw(rng)[0]] += 1
    out["wizwar_d4"] = {"counts": d4[1:], "p": float(chisquare(d4[1:]).pvalue)}
    return out


def bench_serial(samples: int) -> Serial:
    from companion.hardware.fake_device import FakeRingDevice, PtyLink
    from companion.hardware.protocol import HostLink, LedState
    from companion.hardware.serial_link import SerialPeripheral

    pty = PtyLink()
    dev = FakeRingDevice(pty).start()
    sp = SerialPeripheral(pty.port_name, link=HostLink(ping_interval_s=3600))
    end_to_end: list[float] = []
    try:
        sp.start()
        deadline = time.monotonic() + 5
        while not sp.link.ready and time.monotonic() < deadline:
            time.sleep(0.001)
        for i in range(samples):
            state = LedState(pips=i % 128, current=None)
            t0 = time.monotonic()
            sp.set_led_state(state)
            while not (sp.link.in_sync and sp.link.acked == state):
                if time.monotonic() - t0 > 2:
                    break
                time.sleep(0.0002)
            else:
                end_to_end.append(time.monotonic() - t0)
        protocol = list(sp.link.round_trips)
    finally:
        sp.close()
        dev.stop()
        pty.close()
    return {
        "frame_to_ack": _ms(protocol) if protocol else None,
        "set_to_acked": _ms(end_to_end) if end_to_end else None,
        "resends": sp.link.stats["resends"],
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="companion bench hardware", description=__doc__)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--samples", type=int, default=300, help="latency / serial samples")
    ap.add_argument("--rolls", type=int, default=60000, help="results per dice mode")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    report: Report = {
        "latency": bench_latency(args.samples, args.seed),
        "fairness": bench_fairness(args.rolls, args.seed),
        "serial": bench_serial(args.samples),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    lat = report["latency"]["press_to_pip"]
    print(
        f"press -> pip LED (mock pins, {lat['n']} presses): p50 {lat['p50_ms']} ms, "
        f"p99 {lat['p99_ms']} ms, max {lat['max_ms']} ms (target p99 <= 5 ms); "
        f"presses without a pip change: {report['latency']['missed_presses']}"
    )
    for name, f in report["fairness"].items():
        if "used_p" in f:
            print(
                f"fairness {name}: counts {f['used_counts']}, chi2 p = {f['used_p']:.4f}; "
                f"all {f['all_rolls']} rolls p = {f['all_rolls_p']:.4f}"
            )
        else:
            print(f"fairness {name}: counts {f['counts']}, chi2 p = {f['p']:.4f}")
    ser = report["serial"]
    for s, label in ((ser["frame_to_ack"], "frame -> ACK"), (ser["set_to_acked"], "set -> acked")):
        if s:
            print(
                f"serial pty {label} ({s['n']}): p50 {s['p50_ms']} ms, p99 {s['p99_ms']} ms, "
                f"max {s['max_ms']} ms"
            )
    print(f"serial resends: {ser['resends']}")
    return 0
