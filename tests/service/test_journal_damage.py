"""A damaged journal is never replaced silently: the service salvages what it can read into a
restored game, or starts none until the host says so; the damaged file is kept byte for byte
and named on the host page and in ``/healthz``."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from companion.journal import Journal, JournaledTracker
from companion.rules.model import Config
from companion.service.core import CompanionService
from companion.service.game import GameSettings
from companion.sim.simulate import CameraNoise, simulate
from companion.sim.testing import sim_config
from companion.tracking import Tracker, board_key
from companion.web.service import Audience, CommandError

INPUTS = 24


def write_game(cfg, seed: int) -> tuple[Path, list]:
    """A journal of a 2-player game's first inputs (with its ``.game.json``) where the service
    looks for it; returns the path and the tracker's state after each input."""
    sim = simulate(Config(player_count=2), seed, CameraNoise(rate=0.0, gap="action"))
    path = cfg.data.journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    journal = Journal(path, snapshot_every=10)
    jt = JournaledTracker(Tracker(sim.start), journal)
    states = [jt.tracker.state]
    for inp in sim.inputs[:INPUTS]:
        if inp.kind == "observation":
            jt.observe(inp.observation)
        elif inp.kind == "dice":
            jt.dice(list(inp.rolls), inp.dice_allowed)
        else:
            jt.end_turn()
        states.append(jt.tracker.state)
    settings = GameSettings(players=2, colours=tuple(sim.start.table.colours), memory_aid="all")
    journal.set_meta("settings", settings.to_json())
    journal.close()
    path.with_name(path.name + ".game.json").write_text(json.dumps(settings.to_json()))
    return path, states


def files(path: Path) -> dict[str, bytes]:
    return {
        p.name.replace(path.name, "J"): p.read_bytes()
        for p in sorted(path.parent.glob(path.name + "*"))
        if p.is_file() and not p.name.endswith((".game.json", "-shm"))
    }


def truncate(path: Path, rng: random.Random) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * rng.uniform(0.45, 0.75)) // 4096 * 4096])


def flip_bytes(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    spots = [i for i in range(len(data)) if data[i : i + 11] == b'"spaces": {']
    at = rng.choice(spots[len(spots) // 3 :])
    data[at + 12 : at + 20] = bytes(rng.randrange(0x80, 0x100) for _ in range(8))
    path.write_bytes(bytes(data))


def garbage_wal(path: Path, rng: random.Random) -> None:
    wal = path.with_name(path.name + "-wal")
    wal.write_bytes(bytes(rng.randrange(256) for _ in range(5000)))


def wrong_schema(path: Path, rng: random.Random) -> None:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE records (id INTEGER, body BLOB)")
    db.execute("INSERT INTO records VALUES (1, x'00ff')")
    db.commit()
    db.close()


def not_sqlite(path: Path, rng: random.Random) -> None:
    path.write_bytes(bytes(rng.randrange(256) for _ in range(9000)))


def started(cfg) -> CompanionService:
    svc = CompanionService(cfg)
    svc.start_game(GameSettings.from_config(cfg.game), restore=True)
    return svc


@pytest.fixture
def cfg(tmp_path):
    return sim_config(tmp_path / "data", players=2)


@pytest.mark.parametrize(
    ("damage", "seed"),
    [(truncate, 31), (flip_bytes, 32), (garbage_wal, 33)],
    ids=["truncated", "flipped bytes", "garbage WAL"],
)
def test_a_damaged_journal_is_salvaged_up_to_the_damage_and_kept(cfg, damage, seed):
    path, states = write_game(cfg, seed)
    damage(path, random.Random(seed))
    damaged = files(path)
    svc = started(cfg)
    # a restored game, not a new one: the salvaged state is one the game went through
    driver = svc.driver
    assert driver is not None and driver.restored
    salvaged = driver.damage.salvaged
    assert 0 < salvaged <= INPUTS
    assert board_key(svc.state) == board_key(states[salvaged])
    assert svc.settings.memory_aid == "all"
    # the damaged files are kept byte for byte under the name the host page shows
    kept = Path(driver.damage.kept_as)
    assert kept.name == path.name + ".damaged-1"
    assert files(kept) == damaged
    health = svc.health()
    assert health["ok"] is False and health["journal"]["ok"] is False
    assert "kept as journal.sqlite3.damaged-1" in health["journal"]["detail"]
    host = svc.snapshot(Audience.host())
    assert host["host"]["journal"]["salvaged"] == salvaged and host["health"]["ok"] is False
    assert host["log"][-1].startswith("game restored")
    # the salvaged journal restores by itself; the note stays until the host accepts it
    svc.close()
    svc = started(cfg)
    assert board_key(svc.state) == board_key(states[salvaged])
    assert svc.health()["journal"]["ok"] is False
    svc._accept_journal()
    assert svc.health()["journal"]["ok"] is True
    svc.close()
    assert started(cfg).health()["journal"] == {"ok": True, "detail": "restored"}


@pytest.mark.parametrize(
    ("damage", "seed"), [(wrong_schema, 41), (not_sqlite, 42)], ids=["wrong schema", "not SQLite"]
)
def test_an_unreadable_journal_starts_no_game_until_the_host_says_so(cfg, damage, seed):
    path, _ = write_game(cfg, seed)
    damage(path, random.Random(seed))
    before = files(path)
    svc = started(cfg)
    assert svc.driver is None and svc.state is None
    assert files(path) == before, "the damaged journal was changed"
    health = svc.health()
    assert health["ok"] is False and "no game started" in health["journal"]["detail"]
    host = svc.snapshot(Audience.host())
    assert host["host"]["journal"]["kept_name"] == "journal.sqlite3.damaged-1"
    assert host["host"]["journal"]["game"] is False
    with pytest.raises(CommandError, match="no game was salvaged"):
        svc._accept_journal()
    svc.close()
    assert started(cfg).driver is None, "a second restart went over the damaged journal"
    # the host starts a new game: the damaged journal is kept under the name shown
    svc = started(cfg)
    svc.start_game(GameSettings.from_config(cfg.game), restore=False)
    assert svc.driver is not None and svc.health()["journal"]["ok"] is True
    assert "damaged journal is kept as journal.sqlite3.damaged-1" in svc.log_lines()[-1]
    kept = path.with_name(path.name + ".damaged-1")
    assert kept.read_bytes() == before["J"]
    svc.close()


def test_a_missing_game_json_restores_the_game_from_the_journal_and_says_so(cfg):
    path, states = write_game(cfg, 51)
    path.with_name(path.name + ".game.json").unlink()
    svc = started(cfg)
    assert svc.driver is not None and svc.driver.restored
    assert board_key(svc.state) == board_key(states[-1])
    assert svc.settings.memory_aid == "all"  # from the journal, not the config
    detail = svc.health()["journal"]["detail"]
    assert "game.json beside it was missing" in detail
    assert path.with_name(path.name + ".game.json").exists()
    svc.close()


def test_a_directory_at_the_journal_path_is_never_moved(cfg):
    path = cfg.data.journal_path()
    path.mkdir(parents=True)
    (path / "photo.jpg").write_bytes(b"x")
    svc = started(cfg)
    assert svc.driver is None and svc.health()["ok"] is False
    with pytest.raises(CommandError, match="is a directory"):
        svc.start_game(GameSettings.from_config(cfg.game), restore=False)
    assert (path / "photo.jpg").read_bytes() == b"x"
    assert not any(p.name.startswith(path.name + ".") for p in path.parent.iterdir())
    svc.close()
