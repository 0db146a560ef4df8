"""The page snapshot is built in one place for the real service and the web fake: what each
phone may see of hidden wizards, hands and questions."""

from __future__ import annotations

from companion.rules import Config, apply, setup
from companion.sim.bots import BOTS
from companion.web.service import Audience
from companion.web.snapshot import build_snapshot


def state_with_trapped_wizards(seed: int = 3):
    state = setup(Config(player_count=3), seed)
    bots = [BOTS["greedy"](seed * 7 + i + 1) for i in range(3)]
    for _ in range(200):
        state, _ = apply(state, bots[int(state.turn.player)].choose(state))
        trapped = [
            (wid, p)
            for wid, p in zip(state.table.wizard_ids, state.wizards, strict=True)
            if p and (p & 15) < len(state.stacks[(p >> 4) - 1])
        ]
        if trapped:
            return state, trapped
    raise AssertionError("no wizard was trapped in 200 actions")


def snap(state, audience, memory_aid="own", question=None):
    return build_snapshot(
        version=7,
        audience=audience,
        phase="playing",
        memory_aid=memory_aid,
        state=state,
        dice=None,
        panel={},
        question=question,
        health_ok=True,
        health_line="ok",
        log=["a line"],
        reports=[],
        camera="ok",
        host={"settings": {}},
    )


def test_the_table_page_shows_no_hand_and_no_trapped_wizard_unless_all():
    state, trapped = state_with_trapped_wizards()
    wid, _ = trapped[0]
    public = snap(state, Audience.public())
    assert wid not in public["state"]["wizards"]
    assert sum(public["state"]["trapped"].values()) >= 1 and "hidden" not in public["state"]
    assert "hand" not in (public["state"]["cards"] or {})
    assert public["state"]["viewer"]["player"] is None
    assert "host" not in public
    shown_to_all = snap(state, Audience.public(), memory_aid="all")
    assert wid in shown_to_all["state"]["wizards"]


def test_a_player_sees_his_own_trapped_wizard_and_hand_with_memory_aid_own():
    state, trapped = state_with_trapped_wizards()
    wid, _ = trapped[0]
    owner = wid.rsplit("-", 1)[0]
    other = next(c for c in state.table.colours if c != owner)
    mine = snap(state, Audience.player(owner))
    assert wid in mine["state"]["wizards"]
    assert mine["state"]["cards"]["hand"] is not None
    assert wid not in snap(state, Audience.player(other))["state"]["wizards"]
    # a phone whose colour does not play this game sees the table page
    stranger = snap(state, Audience.player("nobody"))
    assert stranger["state"]["viewer"]["player"] is None


def test_a_question_for_another_player_shows_no_options():
    state, _ = state_with_trapped_wizards()
    q = {"id": "q1", "to": "yellow", "text": "Which tower?", "options": [{"id": "0", "label": "a"}]}
    assert snap(state, Audience.player("yellow"), question=q)["question"]["options"]
    blue = snap(state, Audience.player("blue"), question=q)["question"]
    assert blue["options"] == [] and blue["for_other"] is True
    assert snap(state, Audience.host(), question=q)["question"]["options"]
    assert snap(state, Audience.host(), question=q)["host"] == {"settings": {}}


def test_the_public_page_shows_who_is_asked_but_not_the_options():
    state, _ = state_with_trapped_wizards()
    q = {"id": "q1", "to": "blue", "text": "Which tower?", "options": [{"id": "0", "label": "a"}]}
    public = snap(state, Audience.public(), question=q)["question"]
    assert public["to"] == "blue" and public["text"] == "Which tower?"
    assert public["options"] == [] and public["for_other"] is True
    # a question for nobody in particular is the host's to answer
    anyone = {**q, "to": None}
    assert snap(state, Audience.public(), question=anyone)["question"]["options"] == []
    assert snap(state, Audience.player("blue"), question=anyone)["question"]["options"] == []
    assert snap(state, Audience.host(), question=anyone)["question"]["options"]
    assert snap(None, Audience.public())["state"] is None


def test_a_phone_link_with_a_foreign_token_is_refused_not_an_error():
    import threading

    from companion.web.snapshot import SeatTokens

    class Table(SeatTokens):
        def __init__(self) -> None:
            self._cond = threading.Condition()
            self._version = 3
            self._host_token = "h"
            self._tokens = {"blue": "abc", "red": "xyz"}

    t = Table()
    assert t.player_for_token("xyz") == "red"
    assert t.player_for_token("ünïcode") is None
    assert t.player_for_token("") is None
    assert t.version == 3 and t.player_tokens() == {"blue": "abc", "red": "xyz"}


def test_potions_the_tracker_cannot_tell_reach_every_page_as_one_of_several_counts():
    """A card and a spell look alike (R-SPELL-6): the counts the tracker holds go to every
    audience (potions lie open on the table), the state's own count first; none when certain."""
    state = setup(Config(player_count=3), 3)
    blue = state.potions_of("blue")
    unsure = {"blue": (blue, (1, blue[1] - 1, blue[2]))}
    kwargs = dict(
        version=7,
        phase="playing",
        memory_aid="own",
        state=state,
        dice=None,
        panel={},
        question=None,
        health_ok=True,
        health_line="ok",
        log=[],
        reports=[],
        camera="ok",
    )
    for audience in (Audience.public(), Audience.player("blue"), Audience.player("red")):
        got = build_snapshot(audience=audience, potions_unsure=unsure, **kwargs)["state"]
        assert got["potions_unsure"] == {
            "blue": [
                {"full": blue[0], "empty": blue[1], "spent": blue[2]},
                {"full": 1, "empty": blue[1] - 1, "spent": blue[2]},
            ]
        }
    certain = build_snapshot(audience=Audience.public(), **kwargs)["state"]
    assert "potions_unsure" not in certain


def test_trapped_wizards_the_tracker_holds_two_stories_of_reach_only_pages_that_show_them():
    """Hidden pieces the tracker defers (docs/architecture.md, "The tracker"): every placement
    of a colour's trapped wizards it holds goes to the pages that show that colour's trapped
    wizards (``own``: the player's own page; ``all``: every page), never to the others."""
    state = setup(Config(player_count=3), 3)
    unsure = {"blue": (((6, 2),), ((6, 1),)), "red": (((4, 0),), ((9, 0),))}
    kwargs = dict(
        version=7,
        phase="playing",
        state=state,
        dice=None,
        panel={},
        question=None,
        health_ok=True,
        health_line="ok",
        log=[],
        reports=[],
        camera="ok",
        hidden_unsure=unsure,
    )

    def shown(audience: Audience, aid: str) -> set[str]:
        got = build_snapshot(audience=audience, memory_aid=aid, **kwargs)["state"]
        return set(got.get("trapped_unsure", {}))

    assert shown(Audience.public(), "own") == set()
    assert shown(Audience.player("blue"), "own") == {"blue"}
    assert shown(Audience.player("yellow"), "own") == set()
    assert shown(Audience.player("blue"), "off") == set()
    assert shown(Audience.public(), "all") == {"blue", "red"}
    got = build_snapshot(audience=Audience.player("blue"), memory_aid="own", **kwargs)["state"]
    assert got["trapped_unsure"]["blue"] == [[{"space": 6, "tier": 2}], [{"space": 6, "tier": 1}]]
