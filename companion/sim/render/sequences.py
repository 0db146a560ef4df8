"""Sequences of frames: a hand passing over a still board, a move made under a hand."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from companion.rules import observe
from companion.rules.model import GameState
from companion.rules.serialize import dump_state
from companion.sim.render.camera import RenderError
from companion.sim.render.frame import (
    RenderResult,
    _clear_height,
    _geometry_for,
    _track_norm,
    render,
)
from companion.sim.render.hands import HandPose, random_hand
from companion.sim.render.light import TableSetup, random_setup
from companion.sim.render.scene import _as_state, _board_of


def _hand_at(base: HandPose, pos: np.ndarray, rng: np.random.Generator) -> HandPose:
    return HandPose(
        base.entry,
        (float(pos[0]), float(pos[1]), float(pos[2])),
        base.skin,
        base.sleeve,
        base.sleeve_reach,
        float(np.clip(base.spread + rng.normal(0, 0.1), 0, 1)),
        base.side,
    )


def render_hand_sequence(
    state: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    still_before: int = 3,
    moving: int = 8,
    still_after: int = 4,
    fps: float = 5.0,
    jpeg_quality: int | None | bool = True,
    ideal: bool = False,
) -> list[RenderResult]:
    """Frames of a still board while a hand enters, moves over it and leaves.

    ``still_before`` frames without a hand, ``moving`` frames with the hand entering from
    outside the frame, sweeping over a space and leaving the way it came, then ``still_after``
    frames without a hand. Camera, light and look stay fixed; noise and compression differ per
    frame, as in a real camera. ``time`` advances by ``1 / fps`` s per frame. ``ideal`` frames
    are the lens image only (see :func:`render`), for a camera model to finish.
    """
    gs = _as_state(state)
    data = dump_state(gs)
    if setup is None:
        setup = random_setup(rng, _geometry_for(None, data["track"]))
    g = setup.geometry
    base = random_hand(rng, g, min_height_mm=_clear_height(_board_of(data), g))
    entry = np.array(base.entry)
    target = np.array(base.hand)
    away = target + (np.array([entry[0], entry[1], target[2]]) - target) * 0.5
    results = []
    n = still_before + moving + still_after
    for i in range(n):
        hp: HandPose | bool = False
        k = i - still_before
        if 0 <= k < moving:
            # in (first third), hover over the space (middle), out (last third): the share of
            # the way back to the edge goes 1 -> 0 -> 1
            phase = k / max(moving - 1, 1)
            a = min(max(abs(2.0 * phase - 1.0) * 1.5 - 0.5, 0.0), 1.0)
            pos = target + (away - target) * a + rng.normal(0, 4, 3) * (1 - a)
            hp = _hand_at(base, pos, rng)
        results.append(
            render(
                gs,
                rng,
                setup=setup,
                hand=hp,
                jpeg_quality=jpeg_quality,
                frame_index=i,
                time_s=i / fps,
                ideal=ideal,
            )
        )
    return results


def render_move_sequence(
    before: GameState | Mapping[str, Any],
    after: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    still_before: int = 2,
    reach: int = 3,
    carry: int = 3,
    leave: int = 3,
    still_after: int = 3,
    fps: float = 5.0,
    frame0: int = 0,
    time0: float = 0.0,
    jpeg_quality: int | None | bool = True,
) -> list[RenderResult]:
    """Frames of a player making a move at the table: the board of ``before`` stands still, a
    hand reaches over the space where the move starts, carries over to where it ends - the
    board already shows ``after`` while the hand is there -, leaves, and the board of ``after``
    stands still. The spaces are those whose observation changes (any space if none does).

    Frame counts per phase: ``still_before`` (no hand, ``before``), ``reach`` (hand coming in,
    ``before``), ``carry`` (hand between the two spaces, ``after``), ``leave`` (hand going,
    ``after``), ``still_after`` (no hand, ``after``). Frame numbers start at ``frame0`` and
    times at ``time0`` s, ``1 / fps`` s apart. Camera, light and look come from ``setup``
    (default: a random one) and stay fixed.

    :raises RenderError: when a state is malformed or the two tracks differ.
    """
    gb, ga = _as_state(before), _as_state(after)
    db, da = dump_state(gb), dump_state(ga)
    if _track_norm(db["track"]) != _track_norm(da["track"]):
        raise RenderError("after: the track differs from the one before the move")
    if setup is None:
        setup = random_setup(rng, _geometry_for(None, db["track"]))
    g = setup.geometry
    ob, oa = observe(gb), observe(ga)
    changed = [s for s in g.spaces if ob.spaces.get(s) != oa.spaces.get(s)]
    if not changed:
        changed = [int(rng.integers(1, g.n_spaces + 1))]
    src, dst = changed[0], changed[-1]
    if len(changed) > 1 and rng.random() < 0.5:
        src, dst = dst, src
    clear = max(_clear_height(_board_of(db), g), _clear_height(_board_of(da), g))
    base = random_hand(rng, g, target_mm=g.space_centre(src), min_height_mm=clear)
    z = base.hand[2]
    a = np.array([*g.space_centre(src), z])
    b = np.array([*g.space_centre(dst), z])
    entry = np.array(base.entry)
    out_a = a + (np.array([entry[0], entry[1], z]) - a) * 0.5
    out_b = b + (np.array([entry[0], entry[1], z]) - b) * 0.5
    plan: list[tuple[GameState, np.ndarray | None]] = [(gb, None)] * still_before
    for k in range(reach):
        t = (k + 1) / reach
        plan.append((gb, out_a + (a - out_a) * t))
    for k in range(carry):
        t = k / max(carry - 1, 1)
        plan.append((ga, a + (b - a) * t))
    for k in range(leave):
        t = (k + 1) / (leave + 1)
        plan.append((ga, b + (out_b - b) * t))
    plan += [(ga, None)] * still_after
    results = []
    for i, (st, pos) in enumerate(plan):
        hp: HandPose | bool = (
            False if pos is None else _hand_at(base, pos + rng.normal(0, 3, 3), rng)
        )
        results.append(
            render(
                st,
                rng,
                setup=setup,
                hand=hp,
                jpeg_quality=jpeg_quality,
                frame_index=frame0 + i,
                time_s=time0 + i / fps,
            )
        )
    return results
