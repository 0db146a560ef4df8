"""The README's pictures come from a seeded position the script finds again: the player asked on
the phone page has a trapped wizard (the memory aid shows), and the detected frame's reading is
the true board."""

from __future__ import annotations

from companion.rules import dump_state, observe
from companion.sim import docs_images


def test_the_pictured_position_shows_the_asked_players_trapped_wizard():
    _setup, state, actions = docs_images.played_position()
    assert actions >= docs_images.ACTIONS
    to, text, options = docs_images._question(state)
    assert to == str(state.current_player)
    data = dump_state(state)
    trapped = [
        wid
        for wid, pos in data["wizards"].items()
        if wid.startswith(to + "-")
        and isinstance(pos, dict)
        and pos["tier"] < len(data["stacks"].get(str(pos["space"]), []))
    ]
    assert trapped, "the page would show no trapped wizard"
    space = int(text.rsplit(" ", 1)[1].rstrip("?"))
    assert len(state.stacks[space - 1]) >= 2  # a tower moved onto a stack
    assert len(options) == 2


def test_the_pictured_frame_is_read_as_the_board_stands():
    setup, state, actions = docs_images.played_position()
    _frame, detection, _geometry = docs_images.read_frame(setup, state, actions)
    assert detection.ok, detection.message
    truth = observe(state)
    seen = detection.reading  # every space as read (the unsure ones are withheld from the board)
    wrong = [
        n
        for n, s in truth.spaces.items()
        if (o := seen.spaces.get(n)) is None
        or (o.towers, o.top, dict(o.wizards), o.castle)
        != (s.towers, s.top, dict(s.wizards), s.castle)
    ]
    assert wrong == []
