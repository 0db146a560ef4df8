"""Random command bodies: never a server error, and a refused command changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.sim.faketable import FakeTableService
from companion.web import create_app
from companion.web.service import HOST_COMMANDS, Audience

from .conftest import TEST_CONFIG, command, join

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "space",
    "towers",
    "top",
    "wizards",
    "castle",
    "dice",
    "spell",
    "question",
    "option",
    "players",
    "colours",
    "variant",
    "teams",
    "modules",
    "spells",
    "memory_aid",
    "options",
]
bodies = (
    st.fixed_dictionaries(
        {"command": st.sampled_from(sorted(HOST_COMMANDS)) | st.text(max_size=10)},
        optional={f: json_values for f in FIELDS},
    )
    | json_values
)


def everything(svc: FakeTableService) -> str:
    snaps = [svc.snapshot(Audience.host()), svc.snapshot(Audience.public())]
    snaps += [svc.snapshot(Audience.player(c)) for c in svc.player_tokens()]
    for s in snaps:
        s.pop("version")
    return json.dumps(snaps, sort_keys=True)


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[FakeTableService, dict[str, FlaskClient]]]:
    svc = FakeTableService(seed=3, setup={"players": 3})
    app = create_app(TEST_CONFIG, svc)
    clients = {"host": app.test_client(), "player": app.test_client()}
    join(clients["host"], svc.host_token)
    join(clients["player"], svc.player_tokens()["red"])
    yield svc, clients
    svc.close()


@settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=bodies, as_=st.sampled_from(["host", "player"]))
def test_random_commands_never_break_the_table(
    table: tuple[FakeTableService, dict[str, FlaskClient]], body: Any, as_: str
) -> None:
    # one table for every example: it may change when a random command happens to be valid
    svc, clients = table
    before = everything(svc)
    resp = command(clients[as_], as_, body)
    assert resp.status_code < 500, resp.get_data(as_text=True)
    answer = resp.get_json()
    if resp.status_code >= 400:
        assert answer["ok"] is False and answer["error"]
        assert everything(svc) == before
    else:
        assert answer["ok"] is True
