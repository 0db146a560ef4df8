"""``companion rules apply | legal | play | setup | deck``."""

from __future__ import annotations

import io
import json

import pytest

from companion.cli import main as companion
from companion.rules import Config, dump_state, setup


def run(capsys, monkeypatch, argv, stdin=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(stdin)))
    code = companion(["rules", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def start():
    return dump_state(setup(Config(player_count=2)))


def test_apply_prints_the_new_state_and_one_event_list_per_action(capsys, monkeypatch):
    actions = [
        {
            "kind": "move_tower",
            "player": "blue",
            "space": 3,
            "tier": 1,
            "steps": 1,
            "card": {"type": "tower", "value": 1},
        },
        {
            "kind": "move_wizard",
            "player": "blue",
            "wizard": "blue-1",
            "steps": 2,
            "card": {"type": "either", "wizard": 2, "tower": 4},
        },
    ]
    code, out, _ = run(capsys, monkeypatch, ["apply"], {"state": start(), "actions": actions})
    assert code == 0
    result = json.loads(out)
    assert result["result"] == "ok" and len(result["events"]) == 2
    assert result["state"]["stacks"]["4"] == ["R2", "P1"]
    assert result["state"]["potions"]["blue"] == {"full": 1, "empty": 5, "spent": 0}
    assert result["events"][0][0]["kind"] == "tower_moved"


def test_apply_reports_an_illegal_action_with_the_state_before_it(capsys, monkeypatch):
    actions = [
        {
            "kind": "move_tower",
            "player": "blue",
            "space": 10,
            "tier": 1,
            "steps": 1,
            "card": {"type": "tower", "value": 1},
        },
        {
            "kind": "move_tower",
            "player": "blue",
            "space": 11,
            "tier": 1,
            "steps": 6,
            "card": {"type": "either", "dice": 1},
            "rolls": [6],
        },
    ]
    s = start()
    s["castle"] = {"space": 1, "tier": 0}
    code, out, _ = run(capsys, monkeypatch, ["apply"], {"state": s, "actions": actions})
    assert code == 3
    result = json.loads(out)
    assert result["result"] == "illegal" and result["index"] == 1
    assert result["rule"] == "R-TOWER-5" and "castle" in result["reason"]
    assert result["state"]["stacks"]["11"] == ["R5"], "the state before action 1"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"actions": []}, "state"),
        ({"state": "x", "actions": []}, "state"),
        ({"state": None, "actions": [{}]}, "state"),
    ],
)
def test_apply_malformed_input_exits_2_naming_the_field(capsys, monkeypatch, payload, field):
    code, out, err = run(capsys, monkeypatch, ["apply"], payload)
    assert code == 2 and out == "" and field in err


def test_apply_malformed_action_names_its_index(capsys, monkeypatch):
    bad = [
        {"kind": "end_turn"},
        {"kind": "end_turn"},
        {
            "kind": "move_wizard",
            "player": "blue",
            "wizard": "blue-1",
            "steps": "3",
            "card": {"type": "wizard", "value": 3},
        },
    ]
    code, _, err = run(capsys, monkeypatch, ["apply"], {"state": start(), "actions": bad})
    assert code == 2 and "actions[2].steps" in err


def test_apply_refuses_text_that_is_not_json(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("{nope"))
    assert companion(["rules", "apply"]) == 2
    assert "not JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"state": 1, "actions": [' + "[" * 100_000 + "]" * 100_000 + "]}", "nested too deep"),
        ('{"state": ' + "7" * 5000 + ', "actions": []}', "unreadable JSON value"),
    ],
    ids=["100000-deep array", "5000-digit integer"],
)
def test_apply_refuses_json_the_parser_cannot_read(capsys, monkeypatch, text, says):
    # found by `companion bench fuzz --kind rules-apply`: both ended in a traceback
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert companion(["rules", "apply"]) == 2
    assert says in capsys.readouterr().err


def test_apply_refuses_an_unknown_top_level_key(capsys, monkeypatch):
    # found by `companion bench fuzz --kind rules-apply --seed 2`: the key was ignored (exit 0)
    code, out, err = run(capsys, monkeypatch, ["apply"], {"state": start(), "actions": [], "x": 1})
    assert code == 2 and out == ""
    assert "x: unknown key" in err


def test_apply_refuses_a_tower_id_that_is_not_text(capsys, monkeypatch):
    # found by `companion bench fuzz --kind rules-apply --seed 3`: a TypeError traceback
    state = start()
    space = next(k for k, ids in state["stacks"].items() if ids)
    state["stacks"][space] = [{"id": 1}, *state["stacks"][space][1:]]
    code, _, err = run(capsys, monkeypatch, ["apply"], {"state": state, "actions": []})
    assert code == 2
    assert f"stacks.{space}[0]" in err


def test_legal_lists_the_actions_of_a_state(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["legal"], start())
    listed = json.loads(out)
    assert code == 0 and listed["count"] == len(listed["actions"]) == 95
    code, out, _ = run(capsys, monkeypatch, ["legal", "--every-card"], {"state": start()})
    assert json.loads(out)["count"] > 95


def test_play_prints_setup_actions_and_result_as_json_lines(capsys, monkeypatch):
    code, out, _ = run(
        capsys,
        monkeypatch,
        ["play", "--players", "4", "--seed", "5", "--variant", "master", "--teams"],
    )
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and "setup" in lines[0] and "result" in lines[-1]
    assert lines[0]["setup"]["config"]["teams"] == [["blue", "red"], ["yellow", "green"]]
    assert all("action" in x and "events" in x for x in lines[1:-1])
    assert lines[-1]["result"]["over"] is True
    again = run(
        capsys,
        monkeypatch,
        ["play", "--players", "4", "--seed", "5", "--variant", "master", "--teams"],
    )[1]
    assert again == out


def test_play_refuses_an_impossible_configuration(capsys, monkeypatch):
    code, _, err = run(capsys, monkeypatch, ["play", "--players", "3", "--teams"])
    assert code == 2 and "config.teams" in err


def test_setup_and_deck(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["setup", "--players", "3", "--seed", "1"])
    assert code == 0 and len(json.loads(out)["cards"]["hands"]["red"]) == 3
    code, out, _ = run(capsys, monkeypatch, ["deck"])
    deck = json.loads(out)
    assert deck["size"] == 90 and len(deck["cards"]) == 23


def test_play_and_setup_take_modules(capsys, monkeypatch):
    code, out, _ = run(
        capsys, monkeypatch, ["play", "--players", "3", "--seed", "2", "--modules", "all"]
    )
    assert code == 0
    lines = [json.loads(x) for x in out.splitlines()]
    first = lines[0]["setup"]
    assert first["track"]["special"] == {"9": "web", "18": "fountain"}
    assert first["config"]["modules"] == ["fountain", "magic_tower", "raven", "web", "witch"]
    kinds = {e["kind"] for line in lines[1:-1] for e in line["events"]}
    assert {"witch_moved", "raven_moved", "web_bounce"} <= kinds
    assert lines[-1]["result"]["over"] is True
    code, out, _ = run(capsys, monkeypatch, ["setup", "--players", "2", "--modules", "witch,raven"])
    state = json.loads(out)
    assert state["witch"] == {"space": 11, "tier": 0} and state["feathers"] == {
        "blue": 0,
        "yellow": 0,
    }


def test_play_takes_page_cards_and_refuses_unknown_modules(capsys, monkeypatch):
    argv = [
        "play",
        "--players",
        "2",
        "--seed",
        "5",
        "--modules",
        "witch",
        "--page-cards",
        "T1,T2,W1",
    ]
    code, out, _ = run(capsys, monkeypatch, argv)
    assert code == 0
    played = [json.loads(x) for x in out.splitlines()[1:-1]]
    pages = [p["action"] for p in played if p["action"].get("page")]
    assert pages and all(
        a["card"]
        in (
            {"type": "tower", "value": 1},
            {"type": "tower", "value": 2},
            {"type": "wizard", "value": 1},
        )
        for a in pages
    )
    code, _, err = run(capsys, monkeypatch, ["setup", "--modules", "dragon"])
    assert code == 2 and "--modules" in err
    code, _, err = run(capsys, monkeypatch, ["play", "--modules", "witch", "--page-cards", "X9"])
    assert code == 2 and "--page-cards" in err
