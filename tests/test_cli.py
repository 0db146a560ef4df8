"""The top-level command line lists its commands and refuses unknown ones; the end-to-end bench
reports what a user of it reads."""

import json

import pytest

from companion.cli import main


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("run", "rules", "calibrate", "bench", "record", "replay"):
        assert name in out


def test_unknown_command_exits_2(capsys):
    assert main(["fly-to-the-moon"]) == 2
    assert "unknown command" in capsys.readouterr().err


@pytest.mark.long
def test_bench_e2e_reports_the_questions_and_an_honest_end_state(capsys):
    # the ideal view (no picture) of a short modules game, flat out: the host's phone answers the
    # tracker's questions through the web API; the JSON says what was asked and answered and
    # what the tracker committed against the simulated truth
    rc = main(
        [
            "bench",
            "e2e",
            "--players",
            "4",
            "--modules",
            "all",
            "--seed",
            "4",
            "--actions",
            "12",
            "--no-picture",
            "--speed",
            "40",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    q = out["questions"]
    assert q["errors"] == 0
    assert q["seen"] <= q["asked"]
    assert q["answered"] + q["withdrawn"] + q["unanswerable"] <= q["asked"]
    end = out["end_state"]
    assert end["true_actions"] == out["actions"] >= 12  # a cut may finish the turn in play
    assert end["wrong_commits"] == 0 and end["first_wrong_after_action"] is None
    assert end["wrong_board_commits"] == 0  # reported apart: a wrong board is the worse error
    assert end["board_equals_truth"]
    assert 0 < end["committed_actions"] <= end["true_actions"]
    assert out["tracked_equals_truth"] == (end["differs_from_truth_in"] == [])
    assert out["missed_boards"] == 0
    slowest = out["slowest_observe"]  # where to look for the tracker's slowest board
    assert slowest["ms"] == out["tracker_observe_ms"]["max"]
    assert slowest["journal_observation"] >= 1


BAD_CONFIGS = {
    "[game.options]\nno_such_rule = true\n": "game.options.no_such_rule",
    "a = " + "[" * 3000 + "]" * 3000 + "\n": "nested too deeply",
    "[web]\nport = " + "9" * 5000 + "\n": "a value cannot be read",
    '[web]\nhost = "not a host!!"\n': "web.host",
    '[data]\njournal = "{tmp}/c.toml/journal.sqlite3"\n': "data.journal",
}


def test_a_bad_config_is_one_line_naming_the_key_and_exit_2_before_anything_starts(
    tmp_path, capsys
):
    for text, key in BAD_CONFIGS.items():
        path = tmp_path / "c.toml"
        path.write_text(text.replace("{tmp}", str(tmp_path)))
        rc = main(["run", "--config", str(path), "--no-qr", "--port", "0", "--games", "1"])
        out, err = capsys.readouterr()
        assert rc == 2, (key, err)
        assert err.count("\n") == 1 and key in err, err
        # nothing started: only the line said before loading the service
        assert "Traceback" not in err, err
        assert out == "companion: starting (loading OpenCV, Flask and the tracker) …\n", out


def test_run_says_it_is_starting_before_loading_the_service(tmp_path):
    # the first line comes before OpenCV, Flask and the tracker are loaded (seconds on a Pi);
    # here the config is missing, so the run stops right after it
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    probe = (
        "import sys, runpy; sys.argv = ['companion', 'run', '--config', sys.argv[1]];"
        "import companion.cli as c;"
        "orig = c._starting;"
        "c._starting = lambda a: (orig(a), print('cv2 loaded:', 'cv2' in sys.modules, flush=True));"
        "raise SystemExit(c.main())"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "missing.toml")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "companion: starting (loading OpenCV, Flask and the tracker) …",
        "cv2 loaded: False",
    ]
    assert done.returncode == 2 and "config: cannot read" in done.stderr


def test_help_of_run_is_not_preceded_by_the_starting_line(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert not capsys.readouterr().out.startswith("companion: starting")
