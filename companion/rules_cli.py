"""``companion rules apply | legal | play | setup | deck`` — the rules core on the command line.

* ``apply``: stdin ``{"state": …, "actions": [ … ]}`` -> ``{"result": "ok", "state": …,
  "events": [[…], …]}``; an illegal action -> ``{"result": "illegal", "index": i, "reason": …,
  "rule": …, "state": <state before action i>}`` and exit code 3; malformed input -> exit 2
  with a message naming the bad field (e.g. ``actions[2].steps``).
* ``legal [--every-card]``: stdin a state (or ``{"state": …}``) -> ``{"count": n, "actions":
  […]}``.
* ``play --players N --seed S [--variant master] [--teams] [--modules all|LIST]
  [--page-cards W3,…] [--bot random|greedy]``: a seeded bot game as JSON lines:
  ``{"setup": state}``, then ``{"action": …, "events": […]}`` per action, then ``{"result": …}``.
* ``setup --players N [--seed S] [--variant …] [--teams] [--modules …]``: the start state.
* ``deck``: the 90-card move deck (R-DECK-1).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from companion.rules import (
    DECK,
    MODULES,
    Config,
    FormatError,
    IllegalAction,
    apply,
    dump_action,
    dump_event,
    dump_state,
    legal_actions,
    load_action,
    load_state,
    setup,
)
from companion.sim.bots import play

EXIT_MALFORMED = 2
EXIT_ILLEGAL = 3


def _read_json(stream: TextIO) -> object:
    """The JSON document on ``stream``.

    :raises FormatError: the text is not JSON, is nested deeper than the parser's recursion
        limit, or holds an integer too long to read.
    """
    text = stream.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError("input", f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise FormatError("input", "JSON nested too deep") from None
    except ValueError as exc:  # an integer longer than Python reads (sys.set_int_max_str_digits)
        raise FormatError("input", f"unreadable JSON value ({str(exc)[:60]})") from None


def _print(data: object) -> None:
    sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")


def cmd_apply(args: argparse.Namespace) -> int:
    data = _read_json(sys.stdin)
    if not isinstance(data, dict):
        raise FormatError("input", 'expected {"state": …, "actions": […]}')
    if "state" not in data:
        raise FormatError("state", "missing")
    for key in data:
        if key not in ("state", "actions"):
            raise FormatError(str(key)[:40], 'unknown key (expected "state" and "actions")')
    state = load_state(data["state"])
    raw = data.get("actions")
    if not isinstance(raw, list):
        raise FormatError("actions", "expected a list")
    actions = [load_action(a, f"actions[{i}]") for i, a in enumerate(raw)]
    events: list[list[dict[str, Any]]] = []
    for i, action in enumerate(actions):
        try:
            nxt, ev = apply(state, action)
        except IllegalAction as exc:
            _print(
                {
                    "result": "illegal",
                    "index": i,
                    "reason": exc.reason,
                    "rule": exc.rule,
                    "state": dump_state(state),
                }
            )
            return EXIT_ILLEGAL
        state = nxt
        events.append([dump_event(e) for e in ev])
    _print({"result": "ok", "state": dump_state(state), "events": events})
    return 0


def cmd_legal(args: argparse.Namespace) -> int:
    data = _read_json(sys.stdin)
    if isinstance(data, dict) and "state" in data and "config" not in data:
        data = data["state"]
    state = load_state(data)
    actions = [dump_action(a) for a in legal_actions(state, every_card=args.every_card)]
    _print({"count": len(actions), "actions": actions})
    return 0


def _modules(text: str | None) -> frozenset[str]:
    """``--modules all`` / ``none`` / a comma list of fountain, web, witch, raven,
    magic_tower (R-MOD-GEN-1)."""
    if not text or text == "none":
        return frozenset()
    if text == "all":
        return frozenset(MODULES)
    names = frozenset(x.strip().replace("-", "_") for x in text.split(",") if x.strip())
    unknown = sorted(names - set(MODULES))
    if unknown:
        raise FormatError(
            "--modules", f"unknown module {unknown[0]!r} (one of {', '.join(MODULES)})"
        )
    return names


def _config(args: argparse.Namespace) -> Config:
    try:
        return Config(
            player_count=args.players,
            variant=args.variant,
            teams=args.teams,
            modules=_modules(args.modules),
        )
    except ValueError as exc:
        field, _, problem = str(exc).partition(": ")
        raise FormatError(field, problem) from None


def cmd_play(args: argparse.Namespace) -> int:
    config = _config(args)
    from companion.rules import setup as _setup

    _print({"setup": dump_state(_setup(config, args.seed))})
    last = None
    count = 0
    pages = None
    if args.page_cards:
        pages = frozenset(x.strip() for x in args.page_cards.split(",") if x.strip())
        codes = {c.code for c, _ in DECK}
        bad = sorted(pages - codes)
        if bad:
            raise FormatError(
                "--page-cards", f"{bad[0]!r} is not a card code ({', '.join(sorted(codes))})"
            )
    for step in play(config, args.seed, args.bot, max_actions=args.max_actions, pages=pages):
        _print({"action": dump_action(step.action), "events": [dump_event(e) for e in step.events]})
        last = step.state
        count += 1
    over = last is not None and last.game.over
    result: dict[str, Any] = {"over": over, "actions": count}
    if last is not None:
        final = dump_state(last)
        result["game"] = final["game"]
    _print({"result": result})
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    _print(dump_state(setup(_config(args), args.seed)))
    return 0


def cmd_deck(args: argparse.Namespace) -> int:
    _print(
        {
            "size": sum(n for _, n in DECK),
            "cards": [{"card": c.to_json(), "code": c.code, "copies": n} for c, n in DECK],
        }
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="companion rules", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("apply", help="apply actions to a state (stdin JSON)")
    legal = sub.add_parser("legal", help="list the legal actions of a state (stdin JSON)")
    legal.add_argument("--every-card", action="store_true", help="unknown hands: every card face")
    for name, help_ in (("play", "play a seeded bot game"), ("setup", "print a start state")):
        q = sub.add_parser(name, help=help_)
        q.add_argument("--players", type=int, default=4, help="1..6")
        q.add_argument("--seed", type=int, default=None if name == "setup" else 1)
        q.add_argument("--variant", choices=("base", "master"), default="base")
        q.add_argument("--teams", action="store_true", help="team variant (4 or 6 players)")
        q.add_argument(
            "--modules",
            default=None,
            help="expansion modules: all, none, or a comma list of " + ", ".join(MODULES),
        )
        if name == "play":
            q.add_argument("--bot", choices=("random", "greedy"), default="random")
            q.add_argument("--max-actions", type=int, default=20000)
            q.add_argument(
                "--page-cards",
                default=None,
                help="witch page cards as card codes (W3,E-D1,…); default: a seeded sixth of "
                "the deck (OPEN-12)",
            )
    sub.add_parser("deck", help="print the move deck")
    return p


def main(argv: list[str]) -> int:
    """Entry point of ``companion rules``; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_MALFORMED
    handler = {
        "apply": cmd_apply,
        "legal": cmd_legal,
        "play": cmd_play,
        "setup": cmd_setup,
        "deck": cmd_deck,
    }[args.command]
    try:
        return handler(args)
    except FormatError as exc:
        print(f"companion rules {args.command}: malformed input: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
