"""Health says what really works: the page's dice without GPIO pins, an LED ring that cannot be
opened, the journal, and a config error that names its key once."""

from __future__ import annotations

import io
import sqlite3
import time

import pytest

from companion.hardware import on_raspberry_pi
from companion.rules import observe
from companion.service.app import Companion, StartError
from companion.service.cli import run_main
from companion.service.core import ring_problem
from companion.service.heartbeat import Heartbeats
from companion.sim.testing import sim_config, simulated_companion
from companion.web import create_app
from companion.web.service import Audience

NO_PICTURE = "renderer left out in these tests"


def wait_for(check, timeout_s: float = 20.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    return check()


def healthz(c: Companion) -> tuple[int, dict]:
    resp = create_app({"TESTING": True}, c.service).test_client().get("/healthz")
    return resp.status_code, resp.get_json()


@pytest.mark.skipif(on_raspberry_pi(), reason="off a Pi the GPIO pins cannot be opened")
@pytest.mark.filterwarnings("ignore::gpiozero.exc.PinFactoryFallback")
def test_gpio_backend_off_a_pi_rolls_from_the_page_and_says_the_pins_are_missing(tmp_path):
    out = io.StringIO()
    cfg = sim_config(tmp_path / "data", hardware={"backend": "gpio"})
    c = simulated_companion(cfg, without_picture=NO_PICTURE, web=False, out=out)
    c.start()
    try:
        # the page's dice controls work: the virtual panel stands in for the pins
        assert c.service.submit({"command": "roll"}, Audience.host())["ok"]
        said = out.getvalue()
        assert "GPIO pins not available" in said and "virtual dice panel" in said
        status, report = healthz(c)
        hw = report["parts"]["hardware"]
        assert status == 503 and hw["ok"] is False
        assert "GPIO pins not available" in hw["detail"]
        host = c.service.snapshot(Audience.host())
        assert "hardware: GPIO pins not available" in host["health"]["line"]
        assert host["host"]["parts"]["hardware"]["ok"] is False
        # alive all the same: systemd's watchdog is not starved over missing pins
        assert c.heartbeats.report()["parts"]["hardware"]["age_s"] is not None
    finally:
        c.stop()


def test_a_missing_led_ring_port_shows_on_the_host_page_and_healthz(tmp_path):
    port = str(tmp_path / "ttyACM-not-there")
    cfg = sim_config(tmp_path / "data", hardware={"backend": "mock", "serial_port": port})
    c = simulated_companion(cfg, without_picture=NO_PICTURE, web=False, out=io.StringIO())
    c.start()
    try:
        hw = wait_for(
            lambda: (p := c.service.health()["parts"]["hardware"])["detail"] != "mock" and p
        )
        assert hw["ok"] is False
        assert port in hw["detail"] and "cannot open" in hw["detail"]
        status, report = healthz(c)
        assert status == 503 and report["parts"]["hardware"]["ok"] is False
        line = wait_for(
            lambda: port in (s := c.service.snapshot(Audience.host()))["health"]["line"] and s
        )
        assert line, "the host page names the port"
        assert line["health"]["ok"] is False
        # the players' pages say something is wrong, without the detail
        public = c.service.snapshot(Audience.public())["health"]
        assert public["ok"] is False and port not in public["line"]
        assert "hardware" in public["line"] and "(see the host page)" in public["line"]
    finally:
        c.stop()


def test_ring_problem_names_the_port_and_the_error():
    assert ring_problem({"backend": "mock"}) == ""
    ok = {"ring": {"port": "/dev/ttyACM0", "link": "ready", "in_sync": True, "error": ""}}
    assert ring_problem(ok) == ""
    bad = {"ring": {"port": "/dev/ttyACM0", "link": "closed", "in_sync": False, "error": "lost"}}
    assert ring_problem(bad) == "LED ring /dev/ttyACM0: lost"


def test_the_journal_is_a_part_of_health_and_a_failed_write_shows(direct_companion):
    c = direct_companion(simulation={"speed": 0.01})  # one move in minutes: only ours count
    journal = wait_for(lambda: (p := c.service.health()["parts"]["journal"])["ok"] and p)
    assert journal and str(c.service.driver.journal_path) in journal["detail"]
    c.service.driver.journal.close()  # the disk goes away under the game
    c.service.post_observation(observe(c.service.state))  # the next input cannot be written
    failed = wait_for(lambda: not (p := c.service.health()["parts"]["journal"])["ok"] and p)
    assert failed, "a journal that cannot be written is not ok"
    assert "cannot write" in failed["detail"] and "ProgrammingError" in failed["detail"]


def test_working_false_is_not_ok_but_alive_for_the_watchdog():
    hb = Heartbeats(parts=("hardware",))
    hb.beat("hardware", "GPIO pins not available", working=False)
    assert hb.all_fresh() and not hb.all_ok() and not hb.part_ok("hardware")
    assert hb.report()["parts"]["hardware"]["ok"] is False
    hb.beat("hardware", "gpio")
    assert hb.all_ok()


def test_a_config_error_names_its_key_once(tmp_path, capsys):
    assert run_main(["--config", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion: config: cannot read") and "config: config:" not in err


def test_an_address_the_web_server_refuses_is_named_web_host(tmp_path):
    cfg = sim_config(tmp_path / "data", web={"host": "999.1.1.1"})
    c = simulated_companion(cfg, without_picture=NO_PICTURE, web=True, out=io.StringIO())
    try:
        with pytest.raises(StartError, match=r"^web\.host: cannot listen on '999\.1\.1\.1'"):
            c.start()
    finally:
        c.stop()


def test_sqlite_errors_count_as_journal_errors():
    from companion.service.core import JOURNAL_ERRORS

    assert issubclass(sqlite3.ProgrammingError, JOURNAL_ERRORS)


def test_the_terminal_says_what_is_starting_before_the_web_address(tmp_path):
    out = io.StringIO()
    cfg = sim_config(tmp_path / "data", seed=5, players=3)
    c = simulated_companion(cfg, without_picture=NO_PICTURE, web=True, out=out)
    c.start()
    try:
        lines = out.getvalue().splitlines()
        starting = next(i for i, x in enumerate(lines) if x.startswith("starting the simulated"))
        web = next(i for i, x in enumerate(lines) if "open http://" in x)
        assert starting < web
        assert "seed 5, 3 players" in lines[starting]
    finally:
        c.stop()
