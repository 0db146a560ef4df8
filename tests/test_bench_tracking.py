"""``companion bench tracking --seeds``: the per-seed report and its spread (no timed figures)."""

from __future__ import annotations

import pytest

from companion.cli import main
from companion.sim import seeds
from companion.sim.answering import GameFigures


def _game(
    turns: int, correct: int, questions: int, wrong: int = 0, reanchors: int = 0
) -> GameFigures:
    return {
        "turns": turns,
        "turns_correct": correct,
        "turns_potions_correct": correct,
        "exact_hidden": correct == turns,
        "potions_exact": True,
        "potions_shown": True,
        "wrong_commits": wrong,
        "wrong_commits_joint": wrong,
        "wrong_board_commits": 0,
        "questions": questions,
        "questions_by_kind": {},
        "reanchors": reanchors,
        "narrowed_frames": 0,
    }


def test_ranges_and_player_mix() -> None:
    assert seeds.parse_range("500-519", "--seeds") == (500, 519)
    assert seeds.parse_range("7", "--seeds") == (7, 7)
    for bad in ("5-3", "a-b", "-1", ""):
        with pytest.raises(ValueError, match="--seeds"):
            seeds.parse_range(bad, "--seeds")
    counts = {seeds.players_for(s, (2, 6)) for s in range(100, 110)}
    assert counts == {2, 3, 4, 5, 6}
    assert seeds.players_for(101, (3, 3)) == 3


def test_summary_and_spread_over_seeds() -> None:
    a = seeds.summarise([_game(10, 10, 1), _game(10, 9, 4, wrong=2, reanchors=1)], [5.0, 1.0, 3.0])
    assert a["turns_correct_pct"] == 95.0
    assert a["reanchors"] == 1
    assert a["games_exact_hidden"] == 1
    assert a["questions_per_game"] == {"mean": 2.5, "median": 2.5, "max": 4}
    assert a["reconcile_ms_p50"] == 3.0 and a["reconcile_ms_max"] == 5.0
    b = seeds.summarise([_game(20, 20, 0)], [])
    sp = seeds.spread([{**a, "rss_mb": 100.0}, {**b, "rss_mb": 120.0}])
    assert sp["turns_correct_pct"] == {"mean": 97.5, "min": 95.0, "max": 100.0}
    assert sp["wrong_commits"] == {"mean": 1.0, "min": 0.0, "max": 2.0}
    assert sp["questions_max"]["max"] == 4.0
    assert sp["reanchors"] == {"mean": 0.5, "min": 0.0, "max": 1.0}
    assert sp["rss_mb"]["min"] == 100.0


def test_bad_seeds_change_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "tracking", "--seeds", "9-2"]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert main(["bench", "tracking", "--players", "2-6"]) == 2  # a mix needs seeds
    assert "needs --seeds" in capsys.readouterr().err
    assert main(["bench", "tracking", "--seeds", "1-2", "--modules", "dragons"]) == 2
    assert "dragons" in capsys.readouterr().err
    assert main(["bench", "tracking", "--seeds", "1-2", "--frame-budget", "-1"]) == 2
    assert "--frame-budget" in capsys.readouterr().err
