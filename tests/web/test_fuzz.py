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
from companion.web.app import CSRF_HEADER
from companion.web.service import HOST_COMMANDS, Audience

from .conftest import TEST_CONFIG, command, csrf, join

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


# ------------------------------------------------------------------------------------------
# malformed raw bodies on every POST endpoint


def post_endpoints(svc: FakeTableService) -> list[str]:
    """Every URL of the app that takes a POST (the pages' command API today)."""
    app = create_app(TEST_CONFIG, svc)
    return sorted(
        str(rule.rule) for rule in app.url_map.iter_rules() if "POST" in (rule.methods or ())
    )


def _nested(depth: int) -> str:
    return '{"command": ' * depth + '"roll"' + "}" * depth


def _with_constant(text: str, constant: str) -> str:
    return text.replace("null", constant, 1) if "null" in text else f"[{constant}]"


json_texts = json_values.map(json.dumps)
command_texts = bodies.map(json.dumps)
malformed = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=40).map(str.encode),
    command_texts.map(lambda t: t[: max(1, len(t) // 2)].encode()),  # cut off
    st.builds(
        _with_constant,
        command_texts.map(lambda t: t.replace("}", ', "note": null}', 1)),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000]),
    ).map(str.encode),
    st.integers(33, 4000).map(lambda n: _nested(n).encode()),
    st.integers(33, 4000).map(lambda n: ("[" * n + "]" * n).encode()),
    st.builds(
        lambda name, key, size: json.dumps({"command": name, key: "x" * size}).encode(),
        st.sampled_from(sorted(HOST_COMMANDS)),
        st.sampled_from(["spell", "note", "question", "top", "option"]),
        st.integers(65, 40_000),
    ),
    json_texts.map(lambda t: t.encode("utf-16")),  # not UTF-8
)


@pytest.fixture(scope="module")
def endpoints(table: tuple[FakeTableService, dict[str, FlaskClient]]) -> list[str]:
    found = post_endpoints(table[0])
    assert found == ["/api/command"], "a new POST endpoint: add its valid bodies to this fuzz"
    return found


@settings(
    max_examples=600,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), raw=malformed, as_=st.sampled_from(["host", "player"]))
def test_malformed_bodies_never_break_any_post_endpoint(
    table: tuple[FakeTableService, dict[str, FlaskClient]],
    endpoints: list[str],
    data: st.DataObject,
    raw: bytes,
    as_: str,
) -> None:
    svc, clients = table
    url = data.draw(st.sampled_from(endpoints))
    client = clients[as_]
    before, version = everything(svc), svc.version
    resp = client.post(
        f"{url}?as={as_}",
        data=raw,
        content_type="application/json",
        headers={CSRF_HEADER: csrf(client)},
    )
    assert resp.status_code < 500, resp.get_data(as_text=True)[:300]
    assert resp.mimetype == "application/json", resp.get_data(as_text=True)[:300]
    answer = resp.get_json()
    if resp.status_code >= 400:
        assert answer["ok"] is False and answer["error"]
        assert svc.version == version and everything(svc) == before
    else:  # a cut-off or odd body may still be a valid command
        assert answer["ok"] is True


# ------------------------------------------------------------------------------------------
# query strings, headers and cookies on every GET route

GET_ROUTES = [
    "/",
    "/me",
    "/host",
    "/api/state",
    "/events",
    "/api/layout",
    "/api/setup-choices",
    "/api/qr",
    "/camera.jpg",
    "/healthz",
]
odd_text = st.text(max_size=40) | st.sampled_from(["", "public", "player", "host", "-1", "1e999"])


@pytest.fixture(scope="module")
def get_app(table: tuple[FakeTableService, dict[str, FlaskClient]]) -> Any:
    return create_app(TEST_CONFIG, table[0])


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    route=st.sampled_from(GET_ROUTES),
    query=st.dictionaries(
        st.sampled_from(["as", "tab", "length", "special"]) | st.text(max_size=8),
        odd_text,
        max_size=3,
    ),
    cookie=st.sampled_from(["wt_host", "wt_player", "wt_csrf"]),
    cookie_value=st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=80),
    header=st.sampled_from(["If-None-Match", "Origin", "Sec-Fetch-Site", "Last-Event-ID"]),
    header_value=st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=80),
)
def test_odd_queries_headers_and_cookies_never_break_a_page(
    table: tuple[FakeTableService, dict[str, FlaskClient]],
    get_app: Any,
    route: str,
    query: dict[str, str],
    cookie: str,
    cookie_value: str,
    header: str,
    header_value: str,
) -> None:
    svc, _ = table
    client = get_app.test_client()
    client.set_cookie(cookie, cookie_value)
    before = everything(svc)
    resp = client.get(route, query_string=query, headers={header: header_value})
    status = resp.status_code
    resp.close()
    assert status < 500
    as_ = query.get("as", "public")
    if route in ("/api/state", "/events") and as_ not in ("", "public", "player", "host"):
        assert status == 400  # an audience that is not one is refused, never taken as public
    assert everything(svc) == before
