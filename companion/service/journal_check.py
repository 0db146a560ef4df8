"""Checking a journal before a restart continues it, and salvaging a damaged one.

A restart must never replace a game silently (docs/architecture.md, "Restart"). Before the
service opens the journal it checks a copy of it (:func:`check_journal`: the write-ahead log's
header, SQLite's ``quick_check``, the schema, every record's JSON), so a damaged file is left
exactly as it was. A damaged journal is then salvaged (:func:`salvage`): the records read back
up to the first damage, replayed as far as the tracker accepts them. The caller keeps the
damaged files under a name it shows (:func:`kept_name`) and writes the salvaged records into a
fresh journal; when nothing can be salvaged no game is started until the host says so.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.journal import (
    INPUT_KINDS,
    RECORD_COLUMNS,
    RECORD_KINDS,
    JournalError,
    Record,
    apply_input,
)
from companion.tracking import Tracker

WAL_MAGIC = (0x377F0682, 0x377F0683)
"""The first four bytes (big-endian) of an SQLite write-ahead log (sqlite.org/fileformat.html)."""

WAL_HEADER_BYTES = 32
"""Size of the write-ahead log's header; a shorter non-empty log is not SQLite's."""

SUFFIXES = ("", "-wal", "-shm")
"""The files of one SQLite journal in WAL mode."""


@dataclass(frozen=True)
class JournalDamage:
    """What is wrong with a journal and what became of it.

    :param detail: what was found (``"record 812: payload is not JSON"``).
    :param kept_as: the file name the damaged journal is (or will be) kept under.
    :param salvaged: inputs of the game read back and continued (0 = no game salvaged).
    """

    detail: str
    kept_as: str
    salvaged: int = 0

    def to_json(self) -> dict[str, object]:
        return {"detail": self.detail, "kept_as": self.kept_as, "salvaged": self.salvaged}

    @classmethod
    def from_json(cls, data: object) -> JournalDamage | None:
        if not isinstance(data, dict):
            return None
        return cls(
            str(data.get("detail", "")), str(data.get("kept_as", "")), int(data.get("salvaged", 0))
        )

    def line(self) -> str:
        """One line for the host page and ``/healthz``."""
        kept = Path(self.kept_as).name
        if self.salvaged:
            return (
                f"journal damaged ({self.detail}); the game was restored from the "
                f"{self.salvaged} inputs read before the damage; the damaged file is kept as {kept}"
            )
        return (
            f"journal damaged ({self.detail}); no game started over it: start a new game "
            f"(the damaged journal is kept as {kept})"
        )


@dataclass
class Salvage:
    """What could be read from a damaged journal: the records up to the damage (``rows``, kind
    and payload, in order, replayable), the ``meta`` values, and the tracker they lead to."""

    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    tracker: Tracker | None = None
    inputs: int = 0
    problem: str = ""


def kept_name(path: Path) -> Path:
    """The first free ``<journal>.damaged-<n>`` beside ``path`` (nothing is created)."""
    n = 1
    while any(path.with_name(f"{path.name}.damaged-{n}{s}").exists() for s in SUFFIXES):
        n += 1
    return path.with_name(f"{path.name}.damaged-{n}")


def keep_damaged(path: Path, target: Path) -> None:
    """Move the journal's files (with its log and shared memory) to ``target``."""
    for suffix in SUFFIXES:
        src = path.with_name(path.name + suffix)
        if src.is_file():
            src.replace(target.with_name(target.name + suffix))


def wal_problem(path: Path) -> str:
    """What is wrong with the journal's write-ahead log, "" when it is absent, empty or
    SQLite's (a log cut short by a crash is SQLite's: it stops at the last whole commit)."""
    wal = path.with_name(path.name + "-wal")
    try:
        if not wal.is_file() or wal.stat().st_size == 0:
            return ""
        with open(wal, "rb") as fh:
            head = fh.read(WAL_HEADER_BYTES)
    except OSError as exc:
        return f"write-ahead log unreadable: {exc}"
    if len(head) < WAL_HEADER_BYTES or struct.unpack(">I", head[:4])[0] not in WAL_MAGIC:
        return "the write-ahead log is not SQLite's (garbage)"
    return ""


def _read_copy(path: Path, with_wal: bool, salvage: Salvage) -> None:
    """Read the records and meta of a copy of the journal into ``salvage``, stopping at the
    first damage (``salvage.problem``)."""
    with tempfile.TemporaryDirectory(prefix="journal-check-") as tmp:
        copy = Path(tmp) / "journal.sqlite3"
        shutil.copyfile(path, copy)
        if with_wal:
            wal = path.with_name(path.name + "-wal")
            if wal.is_file():
                shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        db = sqlite3.connect(copy, isolation_level=None)
        try:
            _read_db(db, salvage)
        finally:
            db.close()


def _read_db(db: sqlite3.Connection, salvage: Salvage) -> None:
    try:
        # a file cut short is read up to its end, not refused whole (the copy is never written)
        db.execute("PRAGMA writable_schema=ON")
        tables = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master")}
        cols = tuple(str(r[1]) for r in db.execute("PRAGMA table_info(records)"))
    except sqlite3.DatabaseError as exc:
        salvage.problem = f"not an SQLite journal ({exc})"
        return
    if "records" not in tables or cols != RECORD_COLUMNS:
        salvage.problem = "not a journal (another schema)"
        return
    if "meta" in tables:
        try:
            for key, value in db.execute("SELECT key, value FROM meta"):
                salvage.meta[str(key)] = json.loads(value)
        except (sqlite3.DatabaseError, ValueError):
            salvage.meta.clear()
    expected = None
    try:
        cur = db.execute("SELECT seq, kind, payload FROM records ORDER BY seq")
        while (row := cur.fetchone()) is not None:
            seq, kind, text = row
            if expected is not None and seq != expected:
                salvage.problem = f"records {expected}..{int(seq) - 1} are missing"
                return
            expected = int(seq) + 1
            if kind not in RECORD_KINDS:
                salvage.problem = f"record {seq}: unknown kind"
                return
            payload = json.loads(text)
            if not isinstance(payload, dict):
                salvage.problem = f"record {seq}: payload is not an object"
                return
            salvage.rows.append((str(kind), payload))
    except (sqlite3.DatabaseError, ValueError) as exc:
        at = f"after record {expected - 1}" if expected else "at the first record"
        salvage.problem = f"unreadable {at} ({exc})"
        return
    try:
        check = db.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        salvage.problem = f"quick_check failed ({exc})"
        return
    if check is None or str(check[0]) != "ok":
        salvage.problem = f"quick_check: {check[0] if check else 'no answer'}"


def check_journal(path: Path) -> str:
    """What is wrong with the journal at ``path``; "" when it reads back whole. The file is
    not touched (a copy is read)."""
    if path.is_dir():
        return f"{path.name} is a directory, not a journal file"
    wal = wal_problem(path)
    if wal:
        return wal
    probe = Salvage()
    try:
        _read_copy(path, True, probe)
    except OSError as exc:
        return f"unreadable: {exc}"
    return probe.problem


def salvage(path: Path) -> Salvage:
    """Read what can be read of a damaged journal: its records up to the first damage (the
    write-ahead log left out when it is garbage), replayed from the start record as far as the
    tracker accepts them. ``tracker`` is None when there is no start record to begin from."""
    out = Salvage()
    try:
        _read_copy(path, not wal_problem(path), out)
    except OSError as exc:
        out.problem = f"unreadable: {exc}"
        return out
    rows = out.rows
    if not rows or rows[0][0] != "start":
        out.rows = []
        return out
    try:
        tracker = Tracker.from_json(rows[0][1])
    except (KeyError, TypeError, ValueError) as exc:
        out.problem = out.problem or f"start record unreadable ({exc})"
        out.rows = []
        return out
    kept = [rows[0]]
    for seq, (kind, payload) in enumerate(rows[1:], 2):
        if kind in INPUT_KINDS:
            try:
                apply_input(tracker, Record(seq, kind, payload))
            except (JournalError, KeyError, TypeError, ValueError) as exc:
                out.problem = out.problem or f"record {seq} does not replay ({exc})"
                break
            out.inputs += 1
        elif kind == "snapshot":
            continue  # re-derived: the fresh journal writes its own
        kept.append((kind, payload))
    out.rows = kept
    out.tracker = tracker
    return out
