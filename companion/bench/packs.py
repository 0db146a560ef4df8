"""``companion bench packs [--rolls N] [--seed S] [--json]``: the siege race's 2d6 button path.

Figures (printed, never asserted): ``--rolls`` presses of ROLL on the virtual panel (gpiozero
mock pins, the dice machine with the ``siege-2d6`` profile, debounce and roll animation on a
simulated clock), each result through the service queue into the siege pack and its SQLite
journal. The number of armies the pack shows after each roll is counted and tested against
the distribution derived from table G2-DICE-1 (1 army 5/36, 2 armies 11/36, 3 armies 14/36,
4 armies 6/36): chi-square, degrees of freedom and p-value (``scipy.stats.chisquare``), plus
the sums 2..12 against their 36ths. Also the time per roll through the whole path (journal
writes are ``synchronous=FULL``).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ARMIES_EXPECTED = {1: Fraction(5, 36), 2: Fraction(11, 36), 3: Fraction(14, 36), 4: Fraction(6, 36)}
"""G2-DICE-1, derived over the 36 rolls of 2d6 (docs/rules.md)."""


def bench_siege_button(rolls: int, seed: int, data: Path) -> dict[str, Any]:
    """Press ROLL ``rolls`` times through the virtual panel into a siege game (seeded dice)."""
    from scipy.stats import chisquare  # type: ignore[import-untyped]

    from companion.config import Config, with_overrides
    from companion.hardware import create_hardware
    from companion.service.core import CompanionService
    from companion.service.packs import game_driver, settings_from_command
    from companion.web.service import Audience

    config = with_overrides(Config(), data={"dir": str(data)})
    svc = CompanionService(
        config, driver_factory=functools.partial(game_driver, rng=random.Random(seed))
    )
    now = [0.0]

    def clock() -> float:
        return now[0]

    hw = create_hardware(
        {"hardware": {"backend": "mock", "profile": "wandering-towers"}},
        svc.hardware_event,
        rng=random.Random(seed),
        clock=clock,
        start=False,
    )
    svc.hardware = hw
    siege = {"game": "siege", "colours": ["blue", "red"], "pack": {"rules": "simple"}}
    svc.start_game(settings_from_command(siege, svc.settings), restore=False)
    armies = {n: 0 for n in ARMIES_EXPECTED}
    sums = {s: 0 for s in range(2, 13)}
    missed = 0
    started = time.perf_counter()
    for _ in range(rolls):
        before = svc.version
        hw.press("roll")
        for _step in range(60):  # 3 s of panel time in 50 ms steps: press, window, animation
            now[0] += 0.05
            hw.runner.step()
            if svc.drain() and svc.version != before:
                break
        pack = svc.snapshot(Audience.public()).get("pack") or {}
        roll = pack.get("roll")
        if svc.version == before or not isinstance(roll, dict):
            missed += 1
            continue
        armies[int(roll["armies"])] += 1
        sums[int(roll["sum"])] += 1
    took = time.perf_counter() - started
    hw.close()
    svc.close()
    n = sum(armies.values())
    expected = [float(p) * n for p in ARMIES_EXPECTED.values()]
    chi2, p = chisquare(list(armies.values()), expected)
    ways = {s: 6 - abs(s - 7) for s in sums}
    chi2_sums, p_sums = chisquare(list(sums.values()), [w * n / 36 for w in ways.values()])
    return {
        "rolls": n,
        "missed": missed,
        "armies": armies,
        "expected": {k: round(e, 1) for k, e in zip(ARMIES_EXPECTED, expected, strict=True)},
        "chi2": round(float(chi2), 3),
        "dof": len(armies) - 1,
        "p": round(float(p), 4),
        "sums": sums,
        "sums_chi2": round(float(chi2_sums), 3),
        "sums_dof": len(sums) - 1,
        "sums_p": round(float(p_sums), 4),
        "ms_per_roll": round(1000 * took / max(1, rolls), 2),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="companion bench packs", description=__doc__)
    ap.add_argument("--rolls", type=int, default=3600, help="presses of ROLL")
    ap.add_argument("--seed", type=int, default=2026, help="seeds the dice (and the deal)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-packs-") as tmp:
        report = bench_siege_button(args.rolls, args.seed, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"siege 2d6 through ROLL -> panel -> service -> pack -> journal, seed {args.seed}: "
        f"{report['rolls']} rolls ({report['missed']} without a result), "
        f"{report['ms_per_roll']} ms per roll"
    )
    print(
        f"armies {report['armies']} vs expected {report['expected']} (G2-DICE-1 5/11/14/6 of 36): "
        f"chi2 = {report['chi2']}, dof = {report['dof']}, p = {report['p']}"
    )
    print(
        f"sums 2..12 {list(report['sums'].values())}: chi2 = {report['sums_chi2']}, "
        f"dof = {report['sums_dof']}, p = {report['sums_p']}"
    )
    return 0
