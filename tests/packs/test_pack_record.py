"""``companion record`` / ``companion replay`` for the pack games: what chance decided live
(dice, the siege race's face-down cards, Wiz-War's rolled start order) is recorded as carried
out, so a replay reaches the same pages; a changed recording is reported, a broken one refused
with exit code 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from companion.service.cli import replay_main
from companion.service.record import Recorder, replay
from companion.sim.testing import sim_config, simulated_companion, wait_until
from companion.web.service import Audience, CommandError
from tests.packs.table import PackTable
from tests.packs.test_pack_service import play_some, player, setup

REPO = Path(__file__).resolve().parents[2]
GAMES = ["siege", "princess", "wizwar"]


def roll(t: PackTable, *faces: int) -> None:
    """The dice panel's ROLL as the hardware reports it."""
    t.svc.hardware_event(
        {
            "type": "dice",
            "rolls": [sum(faces)],
            "used": sum(faces),
            "dice_allowed": 1,
            "dice": [list(faces)],
        }
    )
    t.svc.drain()


def press(t: PackTable, button: str) -> None:
    t.svc.hardware_event({"type": button})
    t.svc.drain()


def script(t: PackTable, game: str) -> None:
    """A short seeded game chosen on the host page as `companion run` does, with the buttons,
    the phones, an undo and a refused input."""
    if game == "siege":
        setup(t, "siege", ["blue", "red", "green"])  # full rules: the cards are dealt
        for c in ("blue", "red", "green"):
            assert not isinstance(t.pack("pick", player(c)), CommandError)  # drawn face down
        roll(t, 4, 5)
        t.pack("token", token="barrier", op="take", n=3)
        press(t, "undo")
        t.pack("token", token="mud", op="take", n=2)
        assert isinstance(t.pack("token", token="bomb", op="take", n=9), CommandError)
        for _ in range(3):  # the round ends: the next round's cards are dealt
            press(t, "done")
        assert t.view()["round"] == 2
    elif game == "princess":
        setup(t, "princess", ["blue", "red"], overtake="free")
        t.pack("declare", player("blue"), cards=[2, 2, 3])
        roll(t, 3)  # no dice in this game: said, nothing changes
        press(t, "done")
        t.pack("declare", player("red"), steps=11)
        t.send({"command": "undo"})
        t.pack("declare", player("red"), steps=12)
        assert isinstance(t.pack("declare", steps=40), CommandError)
        t.pack("end_turn")
    else:
        setup(t, "wizwar", ["blue", "red", "green"])  # the start order is rolled
        current = t.view()["current"]
        roll(t, 2)  # the d4: a random direction
        t.pack("damage", wizard=current, amount=4)
        t.pack("rest", wizard=current, turns=2)
        assert isinstance(t.pack("set_hp", wizard="red", hp=-3), CommandError)
        t.pack("obstacle", kind="wall")
        press(t, "undo")
        t.pack("move_card", value=5)
        press(t, "done")


def record(tmp: Path, game: str, seed: int = 11, play: Callable[..., None] = script) -> Path:
    t = PackTable(tmp / "data", seed=seed)
    rec = Recorder(tmp / "rec")
    rec.attach(t.svc, t.config, "simulated", lambda: None)
    try:
        play(t, game)
    finally:
        t.close()
        rec.close()
    return tmp / "rec"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {g: record(tmp_path_factory.mktemp(g), g) for g in GAMES}


def lines(path: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (path / name).read_text().splitlines()]


def write_lines(path: Path, name: str, rows: list[dict[str, Any]]) -> None:
    (path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def run_replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = replay_main([str(path)])
    out = capsys.readouterr()
    return rc, out.out, out.err


# ------------------------------------------------------------------------------------------
# a faithful recording replays to the same pages


@pytest.mark.parametrize("game", GAMES)
def test_a_recorded_pack_game_replays_identical(
    recordings: dict[str, Path], game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recordings[game]
    results = lines(path, "results.jsonl")
    carried = [r["carried_out"] for r in results if "carried_out" in r]
    assert any(c["kind"] == "pack_undo" for c in carried)
    result = replay(path)
    assert result.packs.games == [game]
    assert result.packs.changes_replayed == len(carried) >= 6
    # the pages were compared at the start of the pack game and after every input since
    assert result.packs.views_compared > len(carried)
    assert result.identical and result.final_state_equal, result.text()
    rc, out, _ = run_replay(path, capsys)
    assert rc == 0 and out.rstrip().endswith("IDENTICAL"), out


def test_what_chance_decided_is_recorded_as_carried_out(recordings: dict[str, Path]) -> None:
    siege = [
        r["carried_out"] for r in lines(recordings["siege"], "results.jsonl") if "carried_out" in r
    ]
    picks = [c["command"] for c in siege if c.get("command", {}).get("action") == "pick"]
    assert len(picks) == 3 and len({p["number"] for p in picks}) == 3  # the drawn cards
    ends = [c["command"] for c in siege if c.get("command", {}).get("action") == "end_turn"]
    assert len(ends[-1]["unused"]) == 2  # the next round's two cards set aside
    start = next(
        r["new_game"] for r in lines(recordings["wizwar"], "results.jsonl") if "new_game" in r
    )
    assert start["record"]["history"][0]["rolled"]  # the start order as it was rolled


def test_another_seed_draws_otherwise_and_still_replays_identical(tmp_path: Path) -> None:
    a, b = record(tmp_path / "a", "siege", seed=1), record(tmp_path / "b", "siege", seed=2)

    def numbers(path: Path) -> list[int]:
        return [
            r["carried_out"]["command"]["number"]
            for r in lines(path, "results.jsonl")
            if r.get("carried_out", {}).get("command", {}).get("action") == "pick"
        ]

    assert numbers(a) != numbers(b)
    assert replay(a).identical and replay(b).identical


def test_a_recording_of_a_restored_pack_game_replays_its_undo_past_the_start(
    tmp_path: Path,
) -> None:
    t = PackTable(tmp_path / "data", seed=3)
    play_some(t, "wizwar")
    t.close()

    def after_restart(t: PackTable, game: str) -> None:
        assert t.svc.settings.game == "wizwar"
        t.send({"command": "undo"})
        t.send({"command": "undo"})
        t.pack("heal", wizard=t.view()["current"], amount=1)

    path = record(tmp_path, "wizwar", seed=9, play=after_restart)
    header = json.loads((path / "recording.json").read_text())
    assert len(header["game"]["record"]["history"]) == 6  # the journal's positions in force
    result = replay(path)
    assert result.identical and result.packs.changes_replayed == 3, result.text()


def test_the_whole_companion_records_a_pack_game_chosen_on_the_host_page(
    tmp_path: Path,
) -> None:
    """`companion record` as it runs: the simulated table's Wandering Towers first, then the
    host picks Wiz-War (unseeded chance), then the Wandering Towers again; the replay follows
    each new game and reaches the same pages and the same tracked state."""
    cfg = sim_config(tmp_path / "data", simulation={"speed": 20.0})
    rec = Recorder(tmp_path / "rec")
    c = simulated_companion(
        cfg, without_picture="not needed here", web=False, recorder=rec, out=io.StringIO()
    )
    c.start()
    try:
        c.service.submit(
            {"command": "setup", "game": "wizwar", "colours": ["red", "blue"]}, Audience.host()
        )
        now = c.service.snapshot(Audience.host())["pack"]["current"]
        c.service.submit(
            {"command": "pack", "action": "damage", "args": {"wizard": now, "amount": 6}},
            Audience.player(now),
        )
        c.service.submit({"command": "end_turn"}, Audience.host())
        c.service.submit(
            {"command": "setup", "game": "wandering-towers", "players": 3}, Audience.host()
        )

        def board_tracked() -> bool:
            def read(name: str) -> list[dict[str, Any]]:  # the recorder may be mid-line
                text = (tmp_path / "rec" / name).read_text()
                return [json.loads(x) for x in text.splitlines()[:-1]]

            done = {r["n"] for r in read("results.jsonl")}
            return any(r["kind"] == "observation" and r["n"] in done for r in read("inputs.jsonl"))

        wait_until(board_tracked, 30, "a board worked out by the tracker")
    finally:
        c.stop()
    result = replay(tmp_path / "rec")
    assert result.packs.games == ["wizwar"] and result.packs.changes_replayed == 2
    assert result.readings > 0  # the Wandering Towers' boards after the pack game
    assert result.identical, result.text()


# ------------------------------------------------------------------------------------------
# a changed recording is reported


def first_with_int_argument(path: Path) -> tuple[int, str]:
    """The first phone command of the recording with a whole-number argument, and its name."""
    for line in lines(path, "inputs.jsonl"):
        p = line.get("payload") or {}
        if line["kind"] == "command" and p.get("command") == "pack":
            for k, v in (p.get("args") or {}).items():
                if isinstance(v, int) and not isinstance(v, bool):
                    return int(line["n"]), k
    raise AssertionError("no such input")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("where", ["sent", "carried_out"])
def test_a_tampered_input_is_reported_and_exits_1(
    recordings: dict[str, Path],
    tmp_path: Path,
    game: str,
    where: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = copy(recordings[game], tmp_path / "tampered")
    n, arg = first_with_int_argument(path)
    if where == "sent":  # what the phone sent
        rows = lines(path, "inputs.jsonl")
        row = next(r for r in rows if r["n"] == n)
        row["payload"]["args"][arg] += 1
        write_lines(path, "inputs.jsonl", rows)
    else:  # what the companion carried out
        rows = lines(path, "results.jsonl")
        row = next(r for r in rows if r["n"] == n)
        row["carried_out"]["command"][arg] += 1
        write_lines(path, "results.jsonl", rows)
    result = replay(path)
    assert not result.identical
    assert n in result.packs.changes_unlike_input
    if where == "carried_out":  # the pages it led to differ (or the pack refuses it now)
        assert n in result.packs.views_differing + result.packs.changes_refused
    rc, out, _ = run_replay(path, capsys)
    assert rc == 1 and out.rstrip().endswith("DIFFERENT") and f"inputs [{n}" in out, out
    assert "IDENTICAL" not in out


def test_a_changed_face_down_card_changes_the_pages(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(recordings["siege"], tmp_path / "tampered")
    rows = lines(path, "results.jsonl")
    picks = [r for r in rows if r.get("carried_out", {}).get("command", {}).get("action") == "pick"]
    first, second = picks[0], picks[1]
    first["carried_out"]["command"]["number"] = second["carried_out"]["command"]["number"]
    write_lines(path, "results.jsonl", rows)
    result = replay(path)
    assert not result.identical
    # the card is now held twice: the pack refuses the second pick
    assert second["n"] in result.packs.changes_refused
    assert first["n"] in result.packs.views_differing  # the first picker's phone shows another


# ------------------------------------------------------------------------------------------
# a recording the replay cannot read


def set_game(path: Path, name: str) -> None:
    header = json.loads((path / "recording.json").read_text())
    rows = lines(path, "results.jsonl")
    start = next(r for r in rows if "new_game" in r)["new_game"]
    start["settings"]["game"] = name
    write_lines(path, "results.jsonl", rows)
    (path / "recording.json").write_text(json.dumps(header))


BROKEN: dict[str, tuple[Callable[[Path], None], str]] = {
    "unknown pack": (lambda p: set_game(p, "chess"), "'chess' is not one of wandering-towers"),
    "recording.json not JSON": (
        lambda p: (p / "recording.json").write_text("{not json"),
        "not a recording",
    ),
    "an inputs line not JSON": (
        lambda p: (p / "inputs.jsonl").write_text("garbage\n" + (p / "inputs.jsonl").read_text()),
        "inputs.jsonl: line 1 is not JSON",
    ),
    "an inputs line not an object": (
        lambda p: (p / "inputs.jsonl").write_text("[1, 2]\n" + (p / "inputs.jsonl").read_text()),
        "inputs.jsonl: line 1 is not a JSON object",
    ),
    "an input without its number": (
        lambda p: write_lines(
            p,
            "inputs.jsonl",
            [{k: v for k, v in r.items() if k != "n"} for r in lines(p, "inputs.jsonl")],
        ),
        "inputs.jsonl: line 1 has no input number",
    ),
    "a carried-out change of the wrong shape": (
        lambda p: write_lines(
            p,
            "results.jsonl",
            [
                {**r, "carried_out": "?"} if "carried_out" in r else r
                for r in lines(p, "results.jsonl")
            ],
        ),
        "carried_out is not a pack_input or pack_undo record",
    ),
    "a pack game without its first position": (
        lambda p: write_lines(
            p,
            "results.jsonl",
            [
                {**r, "new_game": {"settings": r["new_game"]["settings"]}} if "new_game" in r else r
                for r in lines(p, "results.jsonl")
            ],
        ),
        "a princess game without its first position",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_recording_is_refused_with_exit_code_2(
    recordings: dict[str, Path], tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recordings["princess"], tmp_path / "broken")
    breaks, message = BROKEN[case]
    breaks(path)
    rc, out, err = run_replay(path, capsys)
    assert rc == 2 and err.startswith("companion replay: ") and message in err, err
    assert out == ""


def test_the_command_line_says_why_without_a_traceback(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(recordings["siege"], tmp_path / "broken")
    set_game(path, "chess")
    done = subprocess.run(
        [sys.executable, "-m", "companion", "replay", str(path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "'chess' is not one of" in done.stderr and "Traceback" not in done.stderr
