"""The colour profile from a frame of the setup position: ``companion calibrate profile``.

:func:`build_profile` fits the colours (:mod:`companion.vision.profile_fit`) and then lets the
detector read the same frame to measure how large one wizard comes out at this table
(:func:`companion.vision.detector.wizard_area_gain`); the profile carries both. :func:`main` is
the command line that writes it as JSON.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import Config, dump_state, observe, setup
from companion.rules.model import default_colours
from companion.vision.camera import CameraFileError, CameraModel
from companion.vision.detector import wizard_area_gain
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile, ProfileError, separation
from companion.vision.profile_fit import fit_profile


def mean_frame(frames: NDArray[np.uint8] | Sequence[NDArray[np.uint8]]) -> NDArray[np.uint8]:
    """One frame from one or several still frames of the same view: their mean (the sensor's
    noise falls with the square root of their number).

    :param frames: ``(H, W, 3) uint8 BGR`` or a sequence of such frames of one size.
    :raises ProfileError: on an empty sequence or frames of different sizes.
    """
    if isinstance(frames, np.ndarray):
        return frames
    seq = list(frames)
    if not seq:
        raise ProfileError("no setup frame given")
    if any(f.shape != seq[0].shape for f in seq):
        raise ProfileError("the setup frames differ in size")
    if len(seq) == 1:
        return seq[0]
    acc = np.zeros(seq[0].shape, np.float32)
    for f in seq:
        acc += f
    return np.clip(acc / len(seq) + 0.5, 0, 255).astype(np.uint8)


def build_profile(
    frame: NDArray[np.uint8] | Sequence[NDArray[np.uint8]],
    camera: CameraModel,
    geometry: BoardGeometry,
    colours: Sequence[str],
    *,
    base: ColourProfile | None = None,
    expected: object = None,
) -> ColourProfile:
    """Sample a colour profile from a frame of the setup position.

    The setup tells what stands where (R-SETUP-1: castle on space 1; R-SETUP-3: crest towers on
    2, 4, 6, 8, 10, plain towers on 3, 5, 7, 9; R-SETUP-6: the wizards on those roofs in seat
    order). This layout comes from the rules core (``setup`` + ``observe``), so any player count
    and track works. Learnt: ``roof-crest``, ``roof-plain``, ``wall``, ``castle``, ``track``,
    ``track-crest``, ``border`` (the landscape beside the track) and the wizard colours in play;
    with the expansion's setup (``expected``) also ``roof-magic`` and ``roof-magic-star`` (the
    magic tower's roof, a field with a printed star), ``wall-magic`` (its violet merlons and
    walls, not learnt into ``wall``), the insert tiles (``track-fountain``,
    ``track-web``) and the ``witch`` and ``raven`` tokens.

    :param frame: ``(H, W, 3) uint8 BGR`` of the untouched setup position, all markers visible,
        or several still frames of it (averaged first: :func:`mean_frame`).
    :param camera: the :class:`~companion.vision.camera.CameraModel` (scaled to the frame).
    :param geometry: the :class:`~companion.vision.geometry.BoardGeometry`.
    :param colours: the players' colours in seat order (seat 0 = start player).
    :param base: prototypes to start the wizard assignment from (default
        :func:`~companion.vision.profile.default_profile`).
    :param expected: the :class:`~companion.rules.observation.Observation` of the setup position
        shown (``observe(setup(config))``; default: the base game's setup for ``colours``). With
        the expansion's modules the towers, inserts and tokens stand elsewhere.
    :raises ProfileError: when the board is not found or a colour cannot be sampled.
    """
    frame = mean_frame(frame)
    profile, cam, spaces = fit_profile(
        frame, camera, geometry, colours, base=base, expected=expected
    )
    # one wizard's measured area at setup (see detector.wizard_area_gain)
    gain = wizard_area_gain(frame, cam, geometry, profile, spaces)
    if gain is not None:
        profile.meta["wizard_area"] = round(gain, 4)
    return profile


def main(argv: list[str]) -> int:
    """``companion calibrate profile --frame F --camera C --players N [--colours …] [--out P]``.

    Samples the colour profile from a photo of the setup position and writes it as JSON.
    Exit codes: 0 ok, 1 the frame could not be used, 2 bad arguments or a camera file that
    cannot be read (the line names the file).
    """
    ap = argparse.ArgumentParser(
        prog="companion calibrate profile",
        description="Sample the colour profile (wizards, roofs, track) from a setup photo.",
    )
    ap.add_argument("--frame", required=True, help="photo of the untouched setup position")
    ap.add_argument("--camera", required=True, help="camera file (companion calibrate intrinsics)")
    ap.add_argument("--players", required=True, type=int, help="number of players, 1-6")
    ap.add_argument("--colours", help="colours in seat order, comma separated (default R-COMP-2)")
    ap.add_argument("--geometry", help="board geometry JSON (default: the built-in defaults)")
    ap.add_argument(
        "--modules",
        default="",
        help="expansion modules set up, comma separated (fountain, web, witch, raven, magic_tower)",
    )
    ap.add_argument("--out", default="colour-profile.json", help="where to write the profile")
    args = ap.parse_args(argv)

    if not 1 <= args.players <= 6:
        print("players: expected 1..6", file=sys.stderr)
        return 2
    colours = (
        [c.strip() for c in args.colours.split(",") if c.strip()]
        if args.colours
        else list(default_colours(args.players))
    )
    if len(colours) != args.players:
        print(f"colours: {len(colours)} given for {args.players} players", file=sys.stderr)
        return 2
    frame = cast("NDArray[np.uint8] | None", cv2.imread(args.frame, cv2.IMREAD_COLOR))
    if frame is None:
        print(f"cannot read the frame {args.frame}", file=sys.stderr)
        return 1
    try:
        camera = CameraModel.load(args.camera)
    except CameraFileError as exc:
        print(f"camera: {exc}", file=sys.stderr)
        return 2
    try:
        geometry = BoardGeometry.load(args.geometry) if args.geometry else BoardGeometry.default()
        expected = None
        modules = frozenset(m.strip() for m in args.modules.split(",") if m.strip())
        if modules:
            state = setup(Config(len(colours), colours=tuple(colours), modules=modules), None)
            expected = observe(state)
            if geometry.n_spaces != len(expected.spaces):
                geometry = geometry.with_track(dump_state(state)["track"])
        profile = build_profile(frame, camera, geometry, colours, expected=expected)
    except (ProfileError, ValueError, OSError) as exc:
        print(f"profile: {exc}", file=sys.stderr)
        return 1
    profile.meta["frame"] = Path(args.frame).name
    profile.save(args.out)
    for a, b in (("yellow", "orange"), ("red", "orange"), ("blue", "purple")):
        if a in profile.classes and b in profile.classes:
            print(f"separation {a}/{b}: {separation(profile, a, b):.1f}", file=sys.stderr)
    print(
        f"colour profile with {len(profile.classes)} classes written to {args.out}", file=sys.stderr
    )
    return 0
