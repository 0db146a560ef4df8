"""``companion bench hardware``, run through the command line, reports every figure (small sizes;
no timing asserted)."""

from __future__ import annotations

import json

import pytest

from companion.cli import main


def test_bench_prints_all_figures_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["bench", "hardware", "--json", "--samples", "5", "--rolls", "600", "--seed", "3"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["latency"]["press_to_pip"]["n"] == 5
    assert report["latency"]["pip_pins_changed"] == 5  # the LEDs really changed on each press
    fair = report["fairness"]
    for mode in (1, 2, 3):
        f = fair[f"wandering_towers_{mode}_dice"]
        assert sum(f["used_counts"]) == 600 and 0.0 <= f["used_p"] <= 1.0
    assert sum(fair["siege_2d6_armies"]["counts"]) == 600
    assert report["serial"]["set_to_acked"]["n"] == 5


def test_bench_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "hardware", "--samples", "3", "--rolls", "120"]) == 0
    out = capsys.readouterr().out
    assert "press -> pip LED" in out and "chi2 p" in out and "serial pty" in out
