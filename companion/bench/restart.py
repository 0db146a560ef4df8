"""``companion bench restart``: ``kill -9`` the running companion at random moments, start it
again, and check that the table goes on as if nothing happened.

Each run starts ``python -m companion run`` on the embedded simulated table (no camera: the
simulated players' ideal view unless ``--picture``) in a fresh data directory, joins a phone
for the host and every player, waits a random time (seeded), kills the process with SIGKILL
and starts it again on the same port. It then checks, with the phones' old cookies and no
new join:

* **state**: the journal left by the kill restores (offline) to the state the tracker had;
  the last table page shown before the kill is one of the journal's states; the restarted
  service continued that journal (its records begin with exactly the records before the kill)
  and its first page shows the restored state or a later one of the same journal;
* **tokens**: the host's and every player's page answer 200 with the old cookies;
* **versions**: the first snapshot's version is above the last one seen before the kill (a page
  drops older ones);
* **log**: the page log before the kill goes on unchanged, then ``game restored: …``.

It prints per run and in total: runs, failures (by check), and the restart to first page time
(process start to the first 200 of ``/api/state``; p50/p95/max) with where it goes (process
start to the printed URL). Games alternate between the base game (3 players) and every
module (4 players).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.journal import INPUT_KINDS, Journal, apply_input, restore
from companion.rules import MODULES, GameState
from companion.rules.view import audience_view
from companion.service.webclient import PhoneClient, WebError
from companion.tracking import Tracker

GAMES: tuple[dict[str, Any], ...] = (
    {"players": 3, "modules": []},
    {"players": 4, "modules": list(MODULES)},
)
"""The games the runs alternate between: the base game and every module."""


@dataclass
class Run:
    """One kill and restart: what was checked and how long the restart took."""

    index: int
    game: str
    seed: int
    wait_s: float
    failures: list[str] = field(default_factory=list)
    url_s: float = 0.0
    first_page_s: float = 0.0
    versions: tuple[int, int] = (0, 0)
    inputs: int = 0

    def line(self) -> str:
        status = "ok" if not self.failures else "FAIL " + "; ".join(self.failures)
        return (
            f"run {self.index:3d} {self.game:<10} seed {self.seed:<5} killed after "
            f"{self.wait_s:4.1f} s ({self.inputs} inputs) | versions {self.versions[0]} -> "
            f"{self.versions[1]} | URL {self.url_s:5.2f} s, first page {self.first_page_s:5.2f} s"
            f" | {status}"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_config(folder: Path, game: dict[str, Any], seed: int, port: int, picture: bool) -> Path:
    sections: dict[str, dict[str, Any]] = {
        "camera": {"source": "simulated"},
        "web": {"host": "127.0.0.1", "port": port},
        "data": {"dir": str(folder / "data")},
        "service": {"status_every_s": 0},
        "game": {"players": game["players"], "modules": game["modules"], "memory_aid": "all"},
        "simulation": {"seed": seed, "speed": 30.0, "games": 1, "picture": picture},
    }
    lines = []
    for name, keys in sections.items():
        lines.append(f"[{name}]")
        lines.extend(f"{k} = {json.dumps(v)}" for k, v in keys.items())
    cfg = folder / "companion.toml"
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


class Process:
    """``python -m companion run`` with its output in a log file."""

    code = ""
    """Where the companion's code is taken from ("" = this one; another checkout compares)."""

    def __init__(self, cfg: Path, log: Path) -> None:
        self.log = log
        self.offset = log.stat().st_size if log.exists() else 0
        self.started = time.monotonic()
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "companion", "run", "--config", str(cfg), "--no-qr"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={
                    **os.environ,
                    "PYTHONUNBUFFERED": "1",
                    **({"PYTHONPATH": Process.code} if Process.code else {}),
                },
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")[self.offset :]

    def wait_for(self, text: str, timeout_s: float) -> float:
        """Seconds from the start until ``text`` is printed. :raises RuntimeError: not printed."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.output():
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                raise RuntimeError("companion exited:\n" + self.output()[-2000:])
            time.sleep(0.02)
        raise RuntimeError(f"{text!r} not printed in {timeout_s} s:\n" + self.output()[-2000:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def _game_view(page_state: Any) -> Any:
    """A page's ``state`` without what the tracker adds beside the game (``potions_unsure``,
    ``trapped_unsure``: the potion counts and trapped wizards it cannot tell apart yet), to
    compare with a journal state's view."""
    if not isinstance(page_state, dict):
        return page_state
    return {k: v for k, v in page_state.items() if k not in ("potions_unsure", "trapped_unsure")}


def _journal_states(path: Path) -> tuple[list[tuple[str, str]], list[GameState], GameState]:
    """The journal's records (kind, payload text), its state after every input, and the state a
    restore reaches."""
    j = Journal(path, create=False)
    try:
        rows = [
            (str(k), str(p))
            for k, p in j._db.execute("SELECT kind, payload FROM records ORDER BY seq")
        ]
        start = j.last("start")
        assert start is not None
        tracker = Tracker.from_json(start.payload)
        states = [tracker.state]
        for rec in j.records(after=start.seq):
            if rec.kind in INPUT_KINDS:
                apply_input(tracker, rec)
                states.append(tracker.state)
        restored = restore(j).state
    finally:
        j.close()
    return rows, states, restored


def _copy_journal(data: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for p in data.glob("journal.sqlite3*"):
        if not p.name.endswith("-shm"):
            shutil.copyfile(p, into / p.name)
    return into / "journal.sqlite3"


def _page_lines(rows: list[tuple[str, str]]) -> list[str]:
    """The log lines the journal's ``page`` records hold, oldest first."""
    lines: list[str] = []
    for kind, payload in rows:
        if kind == "page":
            lines.extend(str(x) for x in json.loads(payload).get("lines", []))
    return lines


def _same_log(before: list[str], after: list[str], journal: list[str]) -> bool:
    """The log goes on across the kill: the restored log (``after`` up to ``game restored``) is
    the tail of the lines the journal held at the kill, and the lines the page showed before the
    kill (``before``) are in the journal. The page log is bounded, so when more lines were
    journaled after the page's last view than it holds (a batch of commits after an answer),
    the restored log no longer holds the lines that page showed — the log still goes on."""
    marks = [i for i, line in enumerate(after) if line.startswith("game restored")]
    if not marks:
        return False
    kept = after[: marks[-1]]
    if kept and journal[len(journal) - len(kept) :] != kept:
        return False
    if not before:
        return True
    return any(
        journal[end - len(before) : end] == before
        for end in range(len(journal), len(before) - 1, -1)
    )


def one_run(index: int, rng: random.Random, folder: Path, picture: bool) -> Run:
    game = GAMES[index % len(GAMES)]
    seed = rng.randrange(1, 10_000)
    run = Run(index, "base" if not game["modules"] else "all-module", seed, rng.uniform(1.0, 12.0))
    port = _free_port()
    cfg = _write_config(folder, game, seed, port, picture)
    log = folder / "companion.log"
    url = f"http://127.0.0.1:{port}"
    proc = Process(cfg, log)
    try:
        proc.wait_for("host page: ", 120)
        host_token = proc.output().split("host page: ", 1)[1].split()[0].rsplit("/", 1)[-1]
        host = PhoneClient(url)
        host.join(host_token)
        links = json.loads(host.get("/api/qr")[1])["players"]
        phones = {p["label"]: PhoneClient(url) for p in links}
        for p in links:
            phones[p["label"]].join(p["url"].rsplit("/", 1)[-1])
        table = PhoneClient(url)
        deadline = time.monotonic() + run.wait_s
        seen = table.state("public")
        while time.monotonic() < deadline:
            seen = table.state("public")
            time.sleep(0.05)
        proc.kill()
    except BaseException:
        proc.kill()
        raise
    data = folder / "data"
    before_rows, states, restored = _journal_states(_copy_journal(data, folder / "at-kill"))
    run.inputs = len(states) - 1
    aid = "all"
    if not any(audience_view(s, None, aid) == _game_view(seen["state"]) for s in states):
        run.failures.append("state: the last page shown is not in the journal")
    # start again on the same port: the phones keep their cookies, nobody joins again
    again = Process(cfg, log)
    try:
        run.url_s = again.wait_for(f"open {url}/", 120)
        first = None
        while first is None:
            try:
                first = table.state("public")
            except (WebError, OSError):
                time.sleep(0.01)
        run.first_page_s = time.monotonic() - again.started
        run.versions = (int(seen["version"]), int(first["version"]))
        if first["version"] <= seen["version"]:
            run.failures.append("versions: the page would drop the restored game's snapshots")
        for name, phone in [("host", host), *phones.items()]:
            try:
                phone.state("host" if name == "host" else "player")
            except WebError as exc:
                run.failures.append(f"tokens: {name}'s phone refused ({exc.status})")
        if not _same_log(list(seen["log"]), list(first["log"]), _page_lines(before_rows)):
            run.failures.append("log: the page log does not go on with 'game restored'")
            logs = {"before": seen["log"], "after": first["log"]}
            (folder / "logs.json").write_text(json.dumps(logs, indent=1))
        host_first = host.state("host")
        time.sleep(0.3)
        again.kill()
    except BaseException:
        again.kill()
        raise
    after_rows, after_states, _ = _journal_states(_copy_journal(data, folder / "after"))
    # (an older snapshot is emptied when a newer one is written: compare the rest)
    derived = ("page", "snapshot")
    if [r for r in after_rows[: len(before_rows)] if r[0] not in derived] != [
        r for r in before_rows if r[0] not in derived
    ]:
        run.failures.append("state: the restarted service did not continue the journal")
    later = after_states[len(states) - 1 :]
    if audience_view(restored, None, aid) not in [audience_view(s, None, aid) for s in later]:
        run.failures.append("state: the restore is not the state at the kill")
    shown = _game_view(host_first["state"])
    if not any(audience_view(s, None, aid) == shown for s in later):
        run.failures.append("state: the first page after the restart is not the journal's")
    return run


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="companion bench restart", description=__doc__)
    p.add_argument("--runs", type=int, default=50, help="kills and restarts (default 50)")
    p.add_argument("--seed", type=int, default=1, help="seed of the kill moments and games")
    p.add_argument("--first", type=int, default=0, help="index of the first run (batches)")
    p.add_argument("--picture", action="store_true", help="render the simulated camera")
    p.add_argument("--keep", type=Path, default=None, help="keep the run folders here")
    p.add_argument(
        "--code", default="", help="run the companion from this checkout (a before/after check)"
    )
    args = p.parse_args(argv)
    Process.code = args.code
    rng = random.Random(args.seed)
    for _ in range(args.first):  # the same draws as a single long run
        rng.randrange(1, 10_000)
        rng.uniform(1.0, 12.0)
    runs: list[Run] = []
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-restart-"))
    for i in range(args.first, args.first + args.runs):
        folder = base / f"run{i:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            run = one_run(i, rng, folder, args.picture)
        except (RuntimeError, OSError, WebError, ValueError, AssertionError) as exc:
            run = Run(i, "?", 0, 0.0, [f"error: {type(exc).__name__}: {str(exc)[:300]}"])
        runs.append(run)
        print(run.line(), flush=True)
        if not args.keep and not run.failures:
            shutil.rmtree(folder, ignore_errors=True)
    failed = [r for r in runs if r.failures]
    firsts = [r.first_page_s for r in runs if r.first_page_s]
    urls = [r.url_s for r in runs if r.url_s]
    print(f"runs {len(runs)}, failures {len(failed)} (seed {args.seed}, first {args.first})")
    if firsts:
        print(
            f"restart -> first page: p50 {statistics.median(firsts):.2f} s, "
            f"p95 {_pct(firsts, 0.95):.2f} s, max {max(firsts):.2f} s; "
            f"-> URL printed: p50 {statistics.median(urls):.2f} s"
        )
    return 1 if failed else 0
