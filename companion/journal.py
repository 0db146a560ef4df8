"""The game journal: every input the tracker took and everything it committed, on disk first.

Stored in SQLite (stdlib :mod:`sqlite3`) in WAL mode with ``synchronous=FULL``: a record is on
disk when :meth:`Journal.append` returns, so the service writes it *before* it publishes the
update (docs/architecture.md, "Threads"). A restart replays the journal into a
fresh tracker and reaches the identical belief (:func:`restore`).

Records (one row each, JSON payload, in order):

* ``start`` — the tracker as it began (``Tracker.to_json()``: configuration, setup state, options);
* inputs: ``observation`` (the Observation JSON), ``dice`` (``rolls``, ``dice_allowed``),
  ``end_turn``, ``answer`` (``question``, ``option``), ``undo``, ``correct`` (a full state JSON);
* outputs: ``commit`` (the committed actions and events of the input just before it; for
  review — a restore re-derives them);
* ``snapshot`` — ``Tracker.to_json()`` every :attr:`Journal.snapshot_every` inputs or once the
  tracker worked :attr:`Journal.snapshot_after_s` seconds since the last one, whichever comes
  first, so a restart replays at most about that much tracker work (the tracker takes a few
  tenths of a second per board; the snapshot ~25 ms to write). The snapshot before the last is
  then emptied (``{"pruned": true}``, its row kept so the numbering stays whole);
* ``page`` — what the phone pages showed beside the game (``lines`` of the log, a player's
  ``report``, the ``dice`` display), so a restart shows them again (not part of a game record);
* ``received`` — a camera board or a button press as it came, written by the service thread
  when it hands the input to the tracker's thread (``input``: ``observation``, ``dice``,
  ``done`` or ``undo``; ``payload`` as a recording keeps it), and ``taken`` — written in the
  same transaction as the input record when the tracker took that input (alone when it
  refused it). The tracker takes inputs in the order they came, so the received inputs
  without a ``taken`` are the last ones (:func:`untaken`): a restart — a power cut while the
  tracker was still working through a backlog too — hands them to the tracker again instead
  of losing them (not part of a game record).

Beside the records, a ``meta`` table keeps the table's settings that are not the game: the join
tokens, the pages' epoch and version, the game settings and a note on a salvaged journal
(:meth:`Journal.get_meta`, :meth:`Journal.set_meta`; docs/architecture.md, "Restart").

A finished game is exported as JSON lines in the vocabulary of ``docs/state-model.md`` (§1-§5):
the setup state, then the actions (``{"kind": "move_tower", …}``), events, dice rolls, answers and
corrections, one per line (:func:`export_jsonl`, :func:`import_jsonl`, :func:`replay_record`).
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Concatenate, ParamSpec, TypeVar

from companion.rules.observation import Observation
from companion.tracking import Tracker, TrackerUpdate

INPUT_KINDS: frozenset[str] = frozenset(
    {"observation", "dice", "end_turn", "answer", "undo", "correct"}
)
PACK_KINDS: frozenset[str] = frozenset({"pack_start", "pack_input", "pack_undo"})
"""Records of a game pack's journal (``companion.service.packs``): its first position, each
command as carried out (chance already drawn), and an undo."""
LEDGER_KINDS: frozenset[str] = frozenset({"received", "taken"})
"""The inputs handed to the tracker's thread and the marks of those it took (:func:`untaken`)."""
RECORD_KINDS: frozenset[str] = (
    INPUT_KINDS | {"start", "commit", "snapshot", "page"} | PACK_KINDS | LEDGER_KINDS
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

RECORD_COLUMNS = ("seq", "kind", "payload")
"""The columns of the ``records`` table, in order (a file with others is not a journal)."""


_T = TypeVar("_T")
_P = ParamSpec("_P")


def _locked(
    method: Callable[Concatenate[Journal, _P], _T],
) -> Callable[Concatenate[Journal, _P], _T]:
    """Run a journal method holding its lock: the service thread (the pages' memory) and the
    tracker's thread share one connection, and SQLite's transactions are per connection, so a
    write of one must never land inside the other's ``BEGIN … COMMIT``."""

    @functools.wraps(method)
    def run(self: Journal, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class JournalError(RuntimeError):
    """The journal file is unusable (not a journal, corrupt record, missing start record)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One journal row: ``seq`` (1, 2, …), ``kind`` (one of :data:`RECORD_KINDS`), ``payload``."""

    seq: int
    kind: str
    payload: dict[str, Any]


class Journal:
    """An append-only SQLite journal of one game.

    :param path: the database file (created if absent); ``":memory:"`` for tests.
    :param snapshot_every: write a tracker snapshot after this many inputs (0 = never).
    :param snapshot_after_s: ... or once the tracker worked this many seconds since the last one.
    :param create: create the file when it is absent; False = open an existing journal only
        (a file that is not one is then left exactly as it was).
    :raises JournalError: when the file exists but is not a journal (another schema, not
        SQLite), or it is absent and ``create`` is False.
    """

    def __init__(
        self,
        path: str | Path,
        snapshot_every: int = 200,
        *,
        create: bool = True,
        snapshot_after_s: float = 1.0,
    ) -> None:
        self.path = str(path)
        self.snapshot_every = snapshot_every
        self.snapshot_after_s = snapshot_after_s
        self._work_since_snapshot = 0.0
        if not create and not Path(self.path).is_file():
            raise JournalError(f"{self.path}: no journal file there")
        self._lock = threading.RLock()  # one statement or transaction at a time (see _locked)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            tables = {
                str(r[0])
                for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if tables:
                self._check_schema(tables)
            elif not create:
                raise JournalError(f"{self.path}: not a journal (no records table)")
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise JournalError(f"{self.path}: not a journal ({exc})") from exc
        except JournalError:
            self._db.close()
            raise
        self.wal = bool(mode and str(mode[0]).lower() == "wal")
        self._inputs_since_snapshot = 0

    def _check_schema(self, tables: set[str]) -> None:
        """:raises JournalError: the file's tables are not a journal's (nothing is changed)."""
        if "records" not in tables:
            raise JournalError(f"{self.path}: not a journal (tables: {', '.join(sorted(tables))})")
        cols = tuple(str(r[1]) for r in self._db.execute("PRAGMA table_info(records)"))
        if cols != RECORD_COLUMNS:
            raise JournalError(
                f"{self.path}: not a journal (records columns {', '.join(cols)}; "
                f"expected {', '.join(RECORD_COLUMNS)})"
            )

    # -- settings beside the records ---------------------------------------------------------

    @_locked
    def get_meta(self, key: str) -> Any:
        """The JSON value kept under ``key``, None when there is none.

        :raises JournalError: the stored value is not JSON.
        """
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise JournalError(f"meta {key}: not JSON ({exc})") from exc

    @_locked
    def set_meta(self, key: str, value: Any) -> None:
        """Keep ``value`` (JSON) under ``key``, durable on return (None removes the key).

        :raises ValueError: the value is not JSON.
        """
        if value is None:
            self._db.execute("DELETE FROM meta WHERE key = ?", (key,))
            return
        try:
            text = json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"journal: meta {key} is not JSON ({exc})") from exc
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, text))

    @_locked
    def recent(self, kind: str, limit: int) -> list[Record]:
        """The last ``limit`` records of ``kind``, oldest first (a corrupt payload is skipped)."""
        rows = self._db.execute(
            "SELECT seq, kind, payload FROM records WHERE kind = ? ORDER BY seq DESC LIMIT ?",
            (kind, limit),
        ).fetchall()
        out: list[Record] = []
        for seq, k, text in reversed(rows):
            try:
                out.append(Record(int(seq), str(k), json.loads(text)))
            except json.JSONDecodeError:
                continue
        return out

    # -- writing ---------------------------------------------------------------------------

    def append(self, kind: str, payload: dict[str, Any]) -> int:
        """Write one record and make it durable before returning its ``seq``.

        :raises ValueError: for an unknown kind or a payload that is not JSON.
        """
        return self.append_many([(kind, payload)])[-1]

    @_locked
    def append_many(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> list[int]:
        """Write several records in one transaction (all or none), durable on return."""
        encoded: list[tuple[str, str]] = []
        for kind, payload in rows:
            if kind not in RECORD_KINDS:
                raise ValueError(f"journal: unknown record kind {kind!r}")
            try:
                text = json.dumps(payload, sort_keys=True, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"journal: {kind} payload is not JSON ({exc})") from exc
            encoded.append((kind, text))
        seqs: list[int] = []
        cur = self._db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            for kind, text in encoded:
                cur.execute("INSERT INTO records (kind, payload) VALUES (?, ?)", (kind, text))
                seqs.append(int(cur.lastrowid or 0))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return seqs

    # -- reading ---------------------------------------------------------------------------

    def records(self, after: int = 0) -> Iterator[Record]:
        """Records with ``seq > after``, in order.

        :raises JournalError: for a row whose payload is not JSON.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, payload FROM records WHERE seq > ? ORDER BY seq", (after,)
            ).fetchall()
        for seq, kind, text in rows:
            try:
                payload = json.loads(text)
            except json.JSONDecodeError as exc:
                raise JournalError(f"record {seq}: payload is not JSON ({exc})") from exc
            yield Record(int(seq), str(kind), payload)

    @_locked
    def last_seq(self, kind: str) -> int | None:
        """The ``seq`` of the last record of ``kind``, None without one."""
        row = self._db.execute("SELECT MAX(seq) FROM records WHERE kind = ?", (kind,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    @_locked
    def prune_snapshot(self, seq: int) -> None:
        """Empty an older snapshot (a restore only reads the last one); the row stays."""
        self._db.execute(
            "UPDATE records SET payload = ? WHERE seq = ? AND kind = 'snapshot'",
            ('{"pruned": true}', seq),
        )

    @_locked
    def last(self, kind: str) -> Record | None:
        row = self._db.execute(
            "SELECT seq, kind, payload FROM records WHERE kind = ? ORDER BY seq DESC LIMIT 1",
            (kind,),
        ).fetchone()
        if row is None:
            return None
        return Record(int(row[0]), str(row[1]), json.loads(row[2]))

    @_locked
    def count(self, kind: str | None = None) -> int:
        if kind is None:
            row = self._db.execute("SELECT COUNT(*) FROM records").fetchone()
        else:
            row = self._db.execute(
                "SELECT COUNT(*) FROM records WHERE kind = ?", (kind,)
            ).fetchone()
        return int(row[0])

    @_locked
    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# The tracker with its journal


def _update_rows(update: TrackerUpdate) -> list[tuple[str, dict[str, Any]]]:
    if not update.committed:
        return []
    return [("commit", {"committed": update.committed_json(), "events": update.events_json()})]


class JournaledTracker:
    """A :class:`Tracker` whose every input is journaled before its update is returned.

    Use the same calls as on the tracker; each returns the :class:`TrackerUpdate` only after the
    input (and what it committed) is on disk. Bad input (a malformed observation, an unknown
    answer) raises before anything is written and leaves tracker and journal unchanged.

    :param tracker: the tracker (already set up or restored).
    :param journal: the journal; a ``start`` record is written if the journal is empty.
    """

    def __init__(self, tracker: Tracker, journal: Journal) -> None:
        self.tracker = tracker
        self.journal = journal
        self._prepared: _Prepared | None = None
        self.taking = False
        """The input in progress was journaled ``received``: the next input record carries its
        ``taken`` mark (:meth:`took` writes it alone when the input wrote nothing)."""
        self.prepared = 0
        """Observations worked out ahead (:meth:`prepare`)."""
        self.prepared_used = 0
        """Of them, the ones :meth:`observe` then took as they were."""
        if journal.count("start") == 0:
            journal.append("start", tracker.to_json())

    def prepare(self, obs: Observation | dict[str, Any]) -> bool:
        """Work out an observation ahead of time, without taking it: the tracker's update for
        ``obs`` is computed and kept, and the belief is rolled back. When :meth:`observe` is
        then called with an equal observation before any other input, it journals and returns
        that update at once (the stability gate's still period hides the tracker's time).

        Nothing is written and the belief is unchanged either way; a malformed ``obs`` is
        ignored (``False``), as is one the tracker refuses.

        :returns: True when the update was prepared.
        """
        self._prepared = None
        try:
            parsed = self.tracker.parse_observation(obs)
        except ValueError:
            return False
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        try:
            update = self.tracker.observe(parsed)
            after = self.tracker.checkpoint()
        except ValueError:
            return False
        finally:
            self.tracker.rollback(before)
        self._prepared = _Prepared(parsed, before, update, after, time.perf_counter() - t0)
        self.prepared += 1
        return True

    def _record(
        self, kind: str, payload: dict[str, Any], update: TrackerUpdate, work_s: float = 0.0
    ) -> TrackerUpdate:
        self._prepared = None  # any input taken makes a prepared update stale
        rows = [(kind, payload), *_update_rows(update)]
        if self.taking:
            rows.append(("taken", {}))
        j = self.journal
        j._inputs_since_snapshot += 1
        j._work_since_snapshot += work_s
        snapshot = j.snapshot_every and (
            j._inputs_since_snapshot >= j.snapshot_every
            or j._work_since_snapshot >= j.snapshot_after_s
        )
        previous = j.last_seq("snapshot") if snapshot else None
        if snapshot:
            rows.append(("snapshot", self.tracker.to_json()))
        j.append_many(rows)
        self.taking = False
        if snapshot:
            j._inputs_since_snapshot = 0
            j._work_since_snapshot = 0.0
            if previous is not None:
                j.prune_snapshot(previous)
        return update

    def receive(self, kind: str, payload: Any) -> None:
        """Journal an input ahead, as it is handed to the tracker's thread (``received``;
        ``kind``: ``observation``, ``dice``, ``done`` or ``undo``; ``payload``: JSON). Safe
        from another thread than the one feeding the tracker (the journal's lock)."""
        self.journal.append("received", {"input": kind, "payload": payload})

    def took(self) -> None:
        """The input in progress is done with: its ``taken`` mark, when its input record did
        not carry it (the tracker refused it, or the driver wrote nothing)."""
        if self.taking:
            self.taking = False
            self.journal.append("taken", {})

    def observe(self, obs: Observation | dict[str, Any]) -> TrackerUpdate:
        """Journal and feed one observation (an :class:`Observation` or its JSON).

        :raises ObservationError: for a malformed observation (nothing is written).
        """
        parsed = self.tracker.parse_observation(obs)
        before = self.tracker.checkpoint()
        prepared, self._prepared = self._prepared, None
        t0 = time.perf_counter()
        if prepared is not None and prepared.fits(parsed, before):
            update = prepared.update
            self.tracker.rollback(prepared.after)
            self.prepared_used += 1
            work = prepared.work_s
        else:
            update = self.tracker.observe(parsed)
            work = time.perf_counter() - t0
        try:
            return self._record("observation", parsed.to_json(), update, work)
        except BaseException:
            self.tracker.rollback(before)
            raise

    def dice(self, rolls: list[int] | tuple[int, ...], dice_allowed: int) -> TrackerUpdate:
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        update = self.tracker.dice(rolls, dice_allowed)
        work = time.perf_counter() - t0
        try:
            return self._record(
                "dice", {"rolls": list(rolls), "dice_allowed": dice_allowed}, update, work
            )
        except BaseException:
            self.tracker.rollback(before)
            raise

    def end_turn(self) -> TrackerUpdate:
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        update = self.tracker.end_turn()
        work = time.perf_counter() - t0
        try:
            return self._record("end_turn", {}, update, work)
        except BaseException:
            self.tracker.rollback(before)
            raise

    def answer(self, question_id: str, option: int) -> TrackerUpdate:
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        update = self.tracker.answer(question_id, option)
        work = time.perf_counter() - t0
        try:
            return self._record("answer", {"question": question_id, "option": option}, update, work)
        except BaseException:
            self.tracker.rollback(before)
            raise

    def undo(self) -> TrackerUpdate:
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        update = self.tracker.undo()
        work = time.perf_counter() - t0
        try:
            return self._record("undo", {}, update, work)
        except BaseException:
            self.tracker.rollback(before)
            raise

    def correct(self, state: Any) -> TrackerUpdate:
        """Replace the belief with a full state (a GameState or its JSON) from the host page."""
        before = self.tracker.checkpoint()
        t0 = time.perf_counter()
        update = self.tracker.correct(state)
        work = time.perf_counter() - t0
        try:
            return self._record("correct", {"state": self.tracker.state_json()}, update, work)
        except BaseException:
            self.tracker.rollback(before)
            raise


@dataclass(frozen=True)
class _Prepared:
    """An update worked out ahead (:meth:`JournaledTracker.prepare`)."""

    obs: Observation
    before: dict[str, Any]
    update: TrackerUpdate
    after: dict[str, Any]
    work_s: float = 0.0

    def fits(self, obs: Observation, now: dict[str, Any]) -> bool:
        """True when ``obs`` equals the prepared observation and the belief ``now`` is the very
        one it was prepared from (every value of the checkpoint the same object)."""
        return (
            obs == self.obs
            and now.keys() == self.before.keys()
            and all(_same(now[k], v) for k, v in self.before.items())
        )


def _same(a: Any, b: Any) -> bool:
    """The same belief value: the same object, or an equal number/string (counters)."""
    return a is b or (type(a) in (int, float, str, bool) and type(a) is type(b) and a == b)


def apply_input(tracker: Tracker, record: Record) -> TrackerUpdate | None:
    """Feed one journaled input record to ``tracker`` (outputs and snapshots are skipped).

    :raises JournalError: for an input record whose payload the tracker rejects.
    """
    p = record.payload
    try:
        if record.kind == "observation":
            return tracker.observe(tracker.parse_observation(p))
        if record.kind == "dice":
            return tracker.dice(p["rolls"], p["dice_allowed"])
        if record.kind == "end_turn":
            return tracker.end_turn()
        if record.kind == "answer":
            return tracker.answer(p["question"], p["option"])
        if record.kind == "undo":
            return tracker.undo()
        if record.kind == "correct":
            return tracker.correct(p["state"])
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"record {record.seq} ({record.kind}): {exc}") from exc
    return None


def restore(journal: Journal) -> Tracker:
    """Rebuild the tracker from the journal: the last snapshot (or the start record), then every
    later input replayed in order. Deterministic: the result equals the tracker that wrote it.

    :raises JournalError: when the journal has no start record or a record is corrupt.
    """
    snap = journal.last("snapshot")
    base = snap if snap is not None else journal.last("start")
    if base is None:
        raise JournalError(f"{journal.path}: no start record")
    tracker = Tracker.from_json(base.payload)
    inputs = 0
    t0 = time.perf_counter()
    for rec in journal.records(after=base.seq):
        if rec.kind in INPUT_KINDS:
            apply_input(tracker, rec)
            inputs += 1
    journal._inputs_since_snapshot = inputs
    journal._work_since_snapshot = time.perf_counter() - t0
    return tracker


def untaken(journal: Journal) -> list[Record]:
    """The ``received`` inputs the tracker never took, oldest first: the last ones, since it
    takes them in the order they came and marks each ``taken`` (with its input record, or
    alone when refused). A restart hands them to the tracker again (docs/architecture.md,
    "Restart")."""
    waiting = journal.count("received") - journal.count("taken")
    if waiting <= 0:
        return []
    return journal.recent("received", waiting)


# --------------------------------------------------------------------------------------------
# Game records as JSON lines


def export_jsonl(journal: Journal, out: IO[str]) -> int:
    """Write the game as JSON lines: ``{"kind": "game", "tracker": …}`` first, then each input
    and commit in order (docs/state-model.md vocabulary). Returns the number of lines written."""
    start = journal.last("start")
    if start is None:
        raise JournalError(f"{journal.path}: no start record")
    n = 0
    out.write(json.dumps({"kind": "game", "tracker": start.payload}, sort_keys=True) + "\n")
    n += 1
    for rec in journal.records():
        if rec.kind in ("start", "snapshot", "page") or rec.kind in LEDGER_KINDS:
            continue
        out.write(json.dumps({"kind": rec.kind, **rec.payload}, sort_keys=True) + "\n")
        n += 1
    return n


def _record_rows(lines: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
    """The records of a game record's JSON lines, checked line by line (not yet replayed).

    :raises JournalError: for a malformed line, naming its number.
    """
    rows: list[tuple[str, dict[str, Any]]] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JournalError(f"line {no}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or "kind" not in obj:
            raise JournalError(f"line {no}: expected an object with a kind")
        kind = obj.pop("kind")
        if not rows:
            if kind != "game" or not isinstance(obj.get("tracker"), dict):
                raise JournalError(f"line {no}: a game record starts with a game line")
            rows.append(("start", obj["tracker"]))
            continue
        if kind not in INPUT_KINDS and kind != "commit":
            raise JournalError(f"line {no}: unknown kind {kind!r}")
        rows.append((kind, obj))
    if not rows:
        raise JournalError("import: empty game record")
    return rows


def _replayed(rows: list[tuple[str, dict[str, Any]]]) -> Tracker:
    """The tracker at the end of ``rows`` (replayed in memory; nothing is written).

    :raises JournalError: when a record is one the tracker rejects.
    """
    probe = Journal(":memory:", snapshot_every=0)
    try:
        probe.append_many(rows)
        return restore(probe)
    finally:
        probe.close()


def import_jsonl(lines: Iterable[str], journal: Journal) -> int:
    """Load a game record (from :func:`export_jsonl`) into an empty journal.

    The record is replayed once before anything is written (a record the tracker rejects is
    refused whole), and the tracker it reached is written last as a snapshot, so a restart on
    the imported journal (:func:`restore`) replays nothing.

    :returns: the number of records written (the snapshot included).
    :raises JournalError: for a malformed line (naming its number) or a non-empty journal;
        nothing is written then.
    """
    if journal.count() != 0:
        raise JournalError("import: the journal is not empty")
    rows = _record_rows(lines)
    tracker = _replayed(rows)
    rows.append(("snapshot", tracker.to_json()))
    journal.append_many(rows)
    return len(rows)


def replay_record(lines: Iterable[str]) -> Tracker:
    """Replay an exported game record in memory and return the tracker at its end.

    :raises JournalError: for a malformed line or a record the tracker rejects.
    """
    return _replayed(_record_rows(lines))
