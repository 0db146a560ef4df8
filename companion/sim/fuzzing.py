"""Fuzzing every input kind of the companion with random and broken inputs.

Seeded (``--seed``), ``--cases`` per kind (default 500). Kinds:

* ``web``: every route of the phone pages (in-process Flask client over a fake table) with random
  query strings, headers, cookies and bodies, some of them invalid by construction (an unknown
  ``as``, a non-number ``length``, a bad ``tab``, a command with an unknown field, a wrong type, a
  number out of range, ``NaN``, deep nesting, no CSRF token, a join cookie that is not one);
* ``config``: the example TOML with one key changed to a wrong type, an out-of-range number or an
  unknown key, or its bytes garbled;
* ``rules-apply``: ``companion rules apply`` (in-process) on a valid setup state and action with
  one field changed to something invalid, or the JSON text garbled;
* ``journal``: a game's journal file with bytes flipped, zeroed, cut or appended, then opened and
  restored as at a restart (the errors the service catches as "damaged" count as clear errors);
* ``frames``: image files of random bytes, cut or garbled JPEG/PNG, zero or absurd sizes, read
  through a folder source and a recorded session with a garbled index;
* ``serial``: frames of the LED/dice link (``hardware.protocol``) with bytes flipped, cut or
  inserted, and random byte streams, through the frame reader and the host link.

Figures per kind: ``tracebacks`` (an exception that is not the kind's own clear error, or an
HTTP 500; target 0), ``accepted_invalid`` (an input invalid by construction taken as valid;
target 0), ``changed_after_reject`` (a refused input that changed a snapshot, a journal or a link
state; target 0), with up to three examples of each.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import sys
import tempfile
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Tally:
    """Counts of one input kind (see the module doc)."""

    cases: int = 0
    tracebacks: int = 0
    accepted_invalid: int = 0
    changed_after_reject: int = 0
    refused: int = 0  # inputs refused with the kind's clear error
    invalid: int = 0  # inputs invalid by construction among the cases
    examples: list[str] = field(default_factory=list)

    def note(self, what: str, example: str) -> None:
        setattr(self, what, getattr(self, what) + 1)
        if sum(1 for e in self.examples if e.startswith(what)) < 3:
            self.examples.append(f"{what}: {example[:300]}")


def _garble(data: bytes, rng: random.Random) -> bytes:
    """``data`` with bytes flipped, zeroed, cut, repeated or inserted (one to three edits)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not out:
            out += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))
            continue
        i = rng.randrange(len(out))
        match rng.randrange(5):
            case 0:
                out[i] ^= 1 << rng.randrange(8)
            case 1:
                out[i : i + rng.randint(1, 64)] = bytes(min(64, len(out) - i))
            case 2:
                del out[i:]
            case 3:
                out[i:i] = out[i : i + rng.randint(1, 32)]
            case _:
                out[i:i] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 32)))
    return bytes(out)


WEIRD_TEXT = [
    "",
    " ",
    "\x00",
    "é",
    "😀" * 50,
    "a" * 5000,
    "%ff%fe",
    "../../etc/passwd",
    "<script>",
    "NaN",
    "-1",
    "1e999",
    "9" * 400,
    "null",
    "[]",
    "{}",
]


def _segment(text: str) -> str:
    """``text`` as one URL path segment (percent-encoded, as a browser sends it)."""
    return quote(text, safe="")


def _weird(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(WEIRD_TEXT)
    return "".join(
        chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF)])) for _ in range(8)
    )


# ------------------------------------------------------------------------------------------
# web


def fuzz_web(cases: int, rng: random.Random) -> Tally:
    from companion.sim.faketable import FakeTableService
    from companion.web import create_app
    from companion.web.service import Audience

    t = Tally()
    svc = FakeTableService(seed=rng.randrange(1000), setup={"players": 3})
    app = create_app({"TESTING": True, "SSE_HEARTBEAT_S": 0.05, "SSE_MAX_S": 0.1}, svc)
    host_token = svc.host_token
    player_token = next(iter(svc.player_tokens().values()))

    def everything() -> str:
        audiences = [Audience.host(), Audience.public()]
        audiences += [Audience.player(c) for c in svc.player_tokens()]
        snaps = [svc.snapshot(a) for a in audiences]
        shown = [{k: v for k, v in s.items() if k != "version"} for s in snaps]
        return json.dumps(shown, sort_keys=True, default=str)

    valid_commands: list[dict[str, Any]] = [
        {"command": "roll"},
        {"command": "dice_mode", "dice": 2},
        {"command": "report_spell", "spell": "advance_wizard"},
        {"command": "correct_space", "space": 3, "towers": 1, "top": "crest", "wizards": {}},
        {"command": "answer", "question": "q1", "option": 0},
        {"command": "setup", "players": 3},
        {"command": "end_turn"},
    ]

    def invalid_command() -> tuple[bytes, str]:
        """A command body that must be refused, and why."""
        body = dict(rng.choice(valid_commands))
        match rng.randrange(7):
            case 0:
                body[_weird(rng)[:20] or "x"] = 1
                why = "unknown field"
            case 1:
                key = rng.choice([k for k in body if k != "command"] or ["command"])
                body[key] = (
                    rng.choice([[1], {"a": 1}, True, 1.5, "x" * 3]) if key != "command" else 7
                )
                why = f"wrong type of {key}"
            case 2:
                body["command"] = _weird(rng)
                why = "unknown command"
            case 3:
                text = json.dumps(body)[:-1] + ', "note": NaN}'
                return text.encode(), "NaN"
            case 4:
                depth = rng.randint(65, 3000)
                return ('{"command": ' * depth + '"roll"' + "}" * depth).encode(), "deep nesting"
            case 5:
                return _garble(json.dumps(body).encode(), rng) + b"\x00{", "garbled JSON"
            case _:
                body["dice"] = rng.choice([0, 4, -5, 10**30])
                body["command"] = "dice_mode"
                why = "number out of range"
        return json.dumps(body).encode(), why

    client = app.test_client()
    for i in range(cases):
        t.cases += 1
        c = app.test_client()
        cookies: dict[str, str] = {}
        role = rng.choice(["none", "host", "player", "garbage"])
        if role == "host":
            cookies["wt_host"] = host_token
        elif role == "player":
            cookies["wt_player"] = player_token
        elif role == "garbage":
            cookies[rng.choice(["wt_host", "wt_player"])] = _weird(rng)[:100] or "x"
        csrf = "tok" + str(i)
        if rng.random() < 0.8:
            cookies["wt_csrf"] = csrf
        for k, v in cookies.items():
            with contextlib.suppress(ValueError, UnicodeError):
                c.set_cookie(k, v)
        headers: dict[str, str] = {}
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(
                ["If-None-Match", "Origin", "Sec-Fetch-Site", "Accept", "Last-Event-ID", "Range"]
            )
            headers[name] = (
                "".join(  # what one header line can carry: no line breaks
                    ch for ch in _weird(rng)[:200] if ch not in "\r\n"
                )
                .encode("latin-1", "replace")
                .decode("latin-1")
            )
        invalid = ""
        method, body, ctype = "GET", b"", None
        kind = rng.randrange(9)
        if kind == 0:
            as_ = rng.choice(["public", "player", "host", _weird(rng)[:30]])
            path = "/api/state"
            query = {"as": as_}
            if as_ not in ("", "public", "player", "host"):  # "" = absent: public
                invalid = f"as={as_!r}"
        elif kind == 1:
            path = "/api/layout"
            length = rng.choice(["16", "20", _weird(rng)[:20], "abc", "1.5", "-3", "99999"])
            query = {"length": length, "special": rng.choice(["", "9:fountain", _weird(rng)[:30]])}
            if not length.strip().lstrip("-").isdigit():
                invalid = f"length={length!r}"
        elif kind == 2:
            path = "/events"
            tab = rng.choice(["", "abc", _weird(rng)[:40], "a" * 40])
            query = {"as": rng.choice(["public", "host", "player"]), "tab": tab}
            ok_tab = len(tab) <= 32 and all(
                ch.isascii() and (ch.isalnum() or ch in "_-") for ch in tab
            )
            if not ok_tab:
                invalid = f"tab={tab!r}"
        elif kind in (3, 4, 5):
            method = "POST"
            path = "/api/command"
            query = {"as": rng.choice(["host", "player", "public", _weird(rng)[:10]])}
            if rng.random() < 0.6:
                body, invalid = invalid_command()
            else:
                body = json.dumps(rng.choice(valid_commands)).encode()
            ctype = rng.choice(["application/json"] * 4 + ["text/plain", "", _weird(rng)[:30]])
            if rng.random() < 0.85:
                headers["X-CSRF-Token"] = csrf
            else:
                invalid = invalid or "no CSRF header"
        elif kind == 6:
            token = rng.choice([host_token[:-1] + "x", _weird(rng)[:80] or "x", "a" * 70])
            path = "/join/" + _segment(token)
            query = {}
            invalid = "join token that is not one"
        else:
            path = rng.choice(
                [
                    "/",
                    "/me",
                    "/host",
                    "/api/setup-choices",
                    "/api/qr",
                    "/camera.jpg",
                    "/healthz",
                    "/static/common.js",
                    "/static/" + _segment(_weird(rng)[:30]),
                    "/" + _segment(_weird(rng)[:30]),
                ]
            )
            query = {_weird(rng)[:10]: _weird(rng)[:30] for _ in range(rng.randint(0, 2))}
        before = everything()
        try:
            resp = c.open(
                path,
                method=method,
                query_string=query,
                headers=headers,
                data=body if method == "POST" else None,
                content_type=ctype if method == "POST" else None,
            )
            status = resp.status_code
            text = resp.get_data(as_text=True)[:200] if not resp.is_streamed else ""
            resp.close()
        except Exception as exc:  # a traceback: the app let an exception out
            t.note("tracebacks", f"{method} {path} {query}: {type(exc).__name__}: {exc}")
            continue
        t.refused += status >= 400
        t.invalid += bool(invalid)
        if status >= 500:
            t.note("tracebacks", f"{method} {path} {query} -> {status} {text}")
        if invalid and status < 400:
            t.note("accepted_invalid", f"{method} {path} {query} ({invalid}) -> {status}")
        if status >= 400 and everything() != before:
            t.note("changed_after_reject", f"{method} {path} {query} -> {status}")
    del client
    svc.close()
    return t


# ------------------------------------------------------------------------------------------
# config


def fuzz_config(cases: int, rng: random.Random) -> Tally:
    import tomllib

    from companion.config import ConfigError, load_config

    t = Tally()
    example = (REPO / "companion.example.toml").read_text()
    base = tomllib.loads(example)
    int_keys = [("web", "port"), ("web", "threads"), ("game", "players"), ("camera", "width")]
    str_keys = [("web", "host"), ("camera", "source"), ("hardware", "backend")]
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-config-"))
    try:
        for i in range(cases):
            t.cases += 1
            mode = rng.randrange(5)
            invalid = ""
            if mode == 4:
                text = _garble(example.encode(), rng).decode("utf-8", "replace")
            else:
                lines = [f"[data]\ndir = {json.dumps(str(tmp / str(i)))}\n"]
                section, key = rng.choice(int_keys + str_keys)
                value: str
                if mode == 0:
                    value = rng.choice(['"yes"', "1.5", "[1]", "{a = 1}", "true"])
                    if (section, key) in str_keys:
                        value = rng.choice(["5", "[1]", "true", "1.5"])
                    invalid = f"{section}.{key} of a wrong type"
                elif mode == 1 and (section, key) in int_keys:
                    value = rng.choice(["-5", "1000000", "9" * 5000, "0"])
                    if value == "0" and key in ("port",):
                        value = "-1"
                    invalid = f"{section}.{key} out of range"
                elif mode == 2:
                    key = _weird(rng)[:12].replace('"', "") or "zz"
                    value = "1"
                    section = rng.choice(list(base))
                    invalid = f"unknown key {section}.{key!r}"
                    key = json.dumps(key)
                else:
                    depth = rng.randint(40, 4000)
                    value = "[" * depth + "]" * depth
                    invalid = "nested too deep"
                lines.append(f"[{section}]\n{key} = {value}\n")
                text = "".join(lines)
            t.invalid += bool(invalid)
            try:
                load_config(text=text)
            except ConfigError:
                t.refused += 1
                continue
            except Exception as exc:
                t.note("tracebacks", f"{invalid or 'garbled'}: {type(exc).__name__}: {exc}")
                continue
            if invalid:
                t.note("accepted_invalid", f"{invalid}: {text[-120:]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t


# ------------------------------------------------------------------------------------------
# rules apply


def fuzz_rules_apply(cases: int, rng: random.Random) -> Tally:
    from companion import rules
    from companion.rules_cli import main as rules_main

    t = Tally()
    state = rules.setup(rules.Config(player_count=3), 7)
    action = list(rules.legal_actions(state))[0]
    valid = {"state": rules.dump_state(state), "actions": [rules.dump_action(action)]}

    def paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        out = [prefix] if prefix else []
        if isinstance(obj, dict):
            for k, v in obj.items():
                out += paths(v, (*prefix, k))
        elif isinstance(obj, list):
            for j, v in enumerate(obj[:6]):
                out += paths(v, (*prefix, j))
        return out

    all_paths = paths(valid)
    for _ in range(cases):
        t.cases += 1
        doc = json.loads(json.dumps(valid))
        invalid = ""
        mode = rng.randrange(4)
        if mode == 3:
            text = _garble(json.dumps(doc).encode(), rng).decode("utf-8", "replace")
        else:
            where = rng.choice(all_paths)
            parent = doc
            for k in where[:-1]:
                parent = parent[k]
            last = where[-1]
            old = parent[last]
            if mode == 0:
                if isinstance(parent, dict):
                    new_key = "zz_" + (_weird(rng)[:8] or "x")
                    parent[new_key] = 1
                    invalid = f"unknown key {new_key!r} at {where[:-1]}"
                else:
                    parent.append({"zz": 1}) if isinstance(old, dict) else parent.append("zz")
                    invalid = ""  # an extra list item may be a valid one
            elif mode == 1:
                choices: list[Any] = [None, [], {}, "zz", 1.5, -7, 10**40]
                new = rng.choice([c for c in choices if type(c) is not type(old)])
                parent[last] = new
                invalid = ""  # some fields are nullable: only tracebacks count here
            else:
                depth = rng.randint(1000, 100000)
                text = json.dumps(doc)
                text = text.replace(
                    '"actions": [', '"actions": [' + "[" * depth + "]" * depth + ",", 1
                )
                invalid = "actions nested too deep"
                doc = None
            if doc is not None:
                text = json.dumps(doc)
        out, err = io.StringIO(), io.StringIO()
        old_in = sys.stdin
        try:
            sys.stdin = io.StringIO(text)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = rules_main(["apply"])
        except Exception as exc:
            t.note("tracebacks", f"{invalid or 'mutated'}: {type(exc).__name__}: {exc}")
            continue
        finally:
            sys.stdin = old_in
        t.invalid += bool(invalid)
        t.refused += rc in (2, 3)
        if rc not in (0, 2, 3):
            t.note("tracebacks", f"exit {rc}: {err.getvalue()[-200:]}")
        elif rc == 0 and invalid:
            t.note("accepted_invalid", f"{invalid}: exit 0")
        elif rc == 2 and not err.getvalue().strip():
            t.note("tracebacks", "exit 2 without a message")
    return t


# ------------------------------------------------------------------------------------------
# journal


def _journal_game(folder: Path) -> tuple[Path, str]:
    """A journal of a short game (setup, a few observations and dice) and its restored state."""
    from companion import rules
    from companion.journal import Journal, JournaledTracker, restore
    from companion.tracking import Tracker

    path = folder / "journal.sqlite3"
    journal = Journal(path, snapshot_every=3)
    tracker = Tracker.new(rules.Config(player_count=2))
    jt = JournaledTracker(tracker, journal)
    state = tracker.state
    for k in range(6):
        actions = list(rules.legal_actions(state))
        state = rules.apply(state, actions[k % len(actions)])[0]
        jt.observe(rules.observe(state, float(k), k))
    journal.close()
    with Journal(path) as again:
        return path, json.dumps(rules.dump_state(restore(again).state), sort_keys=True)


def fuzz_journal(cases: int, rng: random.Random) -> Tally:
    from companion import rules
    from companion.journal import Journal, restore
    from companion.service.tracked import RESTORE_ERRORS

    t = Tally()
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-journal-"))
    try:
        good, truth = _journal_game(tmp)
        data = good.read_bytes()
        for i in range(cases):
            t.cases += 1
            path = tmp / f"j{i}.sqlite3"
            path.write_bytes(_garble(data, rng))
            try:
                with Journal(path) as j:
                    got = json.dumps(rules.dump_state(restore(j).state), sort_keys=True)
            except RESTORE_ERRORS:
                t.refused += 1
                continue  # what the service catches: the journal is reported as damaged
            except Exception as exc:
                t.note("tracebacks", f"case {i}: {type(exc).__name__}: {exc}")
                continue
            finally:
                for p in tmp.glob(f"j{i}.sqlite3*"):
                    p.unlink()
            if got != truth:
                t.note("accepted_invalid", f"case {i}: a damaged journal restored another state")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t


# ------------------------------------------------------------------------------------------
# frame sources


def fuzz_frames(cases: int, rng: random.Random) -> Tally:
    import cv2
    import numpy as np

    from companion.vision.sources import (
        Frame,
        FrameSourceError,
        ImageFolderSource,
        SessionRecorder,
        SessionSource,
        read_image_file,
    )

    t = Tally()
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-frames-"))
    img = np.zeros((48, 64, 3), np.uint8)
    cv2.circle(img, (32, 24), 10, (0, 200, 255), -1)
    jpg = cv2.imencode(".jpg", img)[1].tobytes()
    png = cv2.imencode(".png", img)[1].tobytes()

    def png_of_size(w: int, h: int) -> bytes:
        # a PNG header declaring w x h over the small image's data: a decoder must not trust it
        out = bytearray(png)
        out[16:24] = w.to_bytes(4, "big") + h.to_bytes(4, "big")
        out[29:33] = zlib.crc32(bytes(out[12:29])).to_bytes(4, "big")  # a valid IHDR
        return bytes(out)

    try:
        for i in range(cases):
            t.cases += 1
            mode = rng.randrange(4)
            if mode == 0:
                data, invalid = (
                    bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))),
                    "random",
                )
            elif mode == 1:
                data, invalid = _garble(rng.choice([jpg, png]), rng), ""
            else:
                w, h = rng.choice(
                    [(0, 0), (0, 10), (1, 1), (12000, 12000), (2**31 - 1, 2), (65535, 65535)]
                )
                data, invalid = png_of_size(w, h), f"PNG header of {w}x{h}"
            f = tmp / f"f{i}.{rng.choice(['jpg', 'png'])}"
            f.write_bytes(data)
            try:
                image, why = read_image_file(f)
                folder = tmp / f"d{i}"
                folder.mkdir()
                shutil.copy(f, folder / f.name)
                with ImageFolderSource(folder) as src:
                    frames = [src.read() for _ in range(2)]
                if mode == 3:
                    sess = tmp / f"s{i}"
                    with SessionRecorder(sess, image_ext=".png") as rec:
                        rec.write(Frame(img, 0, 0.0))
                    index = sess / "frames.jsonl"
                    index.write_bytes(_garble(index.read_bytes(), rng))
                    (sess / "frames" / "000000.png").write_bytes(data)
                    with contextlib.suppress(FrameSourceError), SessionSource(sess) as ss:
                        for _ in range(3):
                            ss.read()
            except Exception as exc:
                t.note("tracebacks", f"{invalid or 'garbled'}: {type(exc).__name__}: {exc}")
                continue
            got = image is not None or any(fr is not None for fr in frames)
            t.invalid += bool(invalid)
            t.refused += not got
            if got and invalid and mode != 1:
                if invalid == "random" and image is None:
                    continue
                shape = None if image is None else image.shape
                if (
                    invalid.startswith("PNG header")
                    and shape is not None
                    and (shape == img.shape or shape[:2] == (1, 1))
                ):
                    continue  # a readable PNG of the header's own (small) size, or the real one
                t.note("accepted_invalid", f"{invalid}: read as {shape}")
            if image is not None and (image.ndim != 3 or image.shape[2] != 3 or image.size == 0):
                t.note("accepted_invalid", f"{invalid or 'garbled'}: image {image.shape}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t


# ------------------------------------------------------------------------------------------
# serial link


def fuzz_serial(cases: int, rng: random.Random) -> Tally:
    from companion.hardware import protocol as p

    t = Tally()
    for i in range(cases):
        t.cases += 1
        payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
        good = p.encode_frame(rng.choice(list(p.MsgType)), rng.randrange(256), payload)
        bad = _garble(good[:-1], rng)
        t.invalid += bad != good[:-1]
        stream = (
            bad + b"\x00"
            if rng.random() < 0.7
            else bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 600)))
        )
        try:
            out = p.FrameReader().feed(stream)
            link = p.HostLink()
            link.open(0.0)
            link.poll(0.0)
            before = (link.state, link.device_version, link.device_name, link.acked)
            link.receive(stream, 0.05)
            after = (link.state, link.device_version, link.device_name, link.acked)
        except Exception as exc:
            t.note("tracebacks", f"case {i}: {type(exc).__name__}: {exc}")
            continue
        frames = [item for item in out if isinstance(item, p.Frame)]
        t.refused += sum(1 for item in out if isinstance(item, p.FrameError))
        if not frames and before != after:
            t.note("changed_after_reject", f"case {i}: refused bytes changed the link {after}")
        for item in frames:
            again = p.encode_frame(item.type, item.seq, item.payload, item.version)
            if again[:-1] in stream.split(b"\x00"):
                continue  # the bytes held a well-formed frame (CRC and all): not garbled
            t.note("accepted_invalid", f"case {i}: garbled bytes decoded as {item}")
    return t


KINDS: dict[str, Callable[[int, random.Random], Tally]] = {
    "web": fuzz_web,
    "config": fuzz_config,
    "rules-apply": fuzz_rules_apply,
    "journal": fuzz_journal,
    "frames": fuzz_frames,
    "serial": fuzz_serial,
}


def run(cases: int = 500, seed: int = 1, kinds: list[str] | None = None) -> dict[str, Tally]:
    """Fuzz each kind with ``cases`` inputs (seeded); the tallies by kind."""
    out: dict[str, Tally] = {}
    for name in kinds or list(KINDS):
        rng = random.Random(f"{seed}:{name}")
        try:
            out[name] = KINDS[name](cases, rng)
        except Exception:
            tally = Tally()
            tally.note("tracebacks", "the fuzz itself failed: " + traceback.format_exc()[-300:])
            out[name] = tally
    return out
