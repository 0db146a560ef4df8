"""``companion calibrate …``: camera intrinsics, the printable marker sheet, the colour profile.

    companion calibrate intrinsics --chessboard 9x6 --square-mm 25 IMAGES… --out FILE [--json]
    companion calibrate intrinsics --charuco 5x7 --square-mm 40 --marker-mm 20 \\
        --dict DICT_6X6_250 IMAGES… --out FILE [--json]
    companion calibrate markers --out sheet.png|sheet.pdf [--side-mm 50] [--page a4|letter]
    companion calibrate check (PHOTO | --source SPEC) [--camera FILE] [--board FILE] [--out PNG]
    companion calibrate board PHOTO --taps TAPS.json [--board FILE] --out FILE [--json]
    companion calibrate profile …        (colour profile; see companion.vision.profile_setup)

IMAGES may be files or folders (every image inside, sorted). Progress goes to stderr; ``--json``
prints ``{"rms", "fx", "fy", "cx", "cy", "views_used", "views_rejected"}`` on stdout.
Exit codes: 0 done, 1 calibration impossible (too few usable photos, board not found),
2 usage error, unreadable input (a camera file that is not OpenCV YAML/XML or JSON names the
file), or ``check`` finding a board pose whose reprojection error exceeds ``--max-error-px``
(the photo does not match the board geometry, print scale or camera file).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SUBCOMMANDS = ("intrinsics", "markers", "check", "board", "profile")

MAX_REPROJECTION_ERROR_PX = 5.0
"""``calibrate check`` fails above this RMS reprojection error (px) of the board markers: a
well-printed board seen by a calibrated camera stays well below 1 px."""


def _err(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _pair(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected COLSxROWS like 9x6, got {text!r}") from None
    if a < 2 or b < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: both numbers must be at least 2")
    return a, b


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def expand_images(items: Sequence[str]) -> list[Path]:
    """Files as given; folders replaced by their image files, sorted by name."""
    from companion.vision.sources import IMAGE_EXTENSIONS

    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            out += sorted(
                f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_EXTENSIONS
            )
        else:
            out.append(p)
    return out


# -- intrinsics --------------------------------------------------------------------------------
def _intrinsics_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="companion calibrate intrinsics",
        description="Camera intrinsics from checkerboard or ChArUco photos.",
    )
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--chessboard", type=_pair, metavar="COLSxROWS", help="inner corners")
    target.add_argument("--charuco", type=_pair, metavar="SQxSQ", help="squares across x down")
    ap.add_argument("--square-mm", type=_positive, required=True, help="square side in mm")
    ap.add_argument("--marker-mm", type=_positive, help="ChArUco marker side in mm")
    ap.add_argument("--dict", default="DICT_6X6_250", help="ChArUco dictionary or file")
    ap.add_argument("--legacy", action="store_true", help="pre-4.6 ChArUco layout (even rows)")
    ap.add_argument(
        "--single-stage",
        action="store_true",
        help="ChArUco: skip the marker-corner calibration that guides corner interpolation",
    )
    ap.add_argument(
        "--detector", choices=("classic", "sb"), default="classic", help="checkerboard finder"
    )
    ap.add_argument("--fix-aspect-ratio", action="store_true", help="CALIB_FIX_ASPECT_RATIO")
    ap.add_argument("--zero-tangent", action="store_true", help="CALIB_ZERO_TANGENT_DIST")
    ap.add_argument("--fix-principal-point", action="store_true", help="CALIB_FIX_PRINCIPAL_POINT")
    ap.add_argument("--out", required=True, help="camera file to write (.yml, .yaml, .xml, .json)")
    ap.add_argument("--json", action="store_true", help="print the result summary as JSON")
    ap.add_argument("images", nargs="+", help="photos or folders of photos")
    return ap


def intrinsics_main(argv: list[str]) -> int:
    ap = _intrinsics_parser()
    args = ap.parse_args(argv)
    import cv2

    from companion.vision.calibrate import (
        CalibrationError,
        CharucoPattern,
        ChessboardPattern,
        calibrate_charuco,
        calibrate_chessboard,
        load_images,
    )
    from companion.vision.camera import CameraFileError

    flags = 0
    if args.fix_aspect_ratio:
        flags |= cv2.CALIB_FIX_ASPECT_RATIO
    if args.zero_tangent:
        flags |= cv2.CALIB_ZERO_TANGENT_DIST
    if args.fix_principal_point:
        flags |= cv2.CALIB_FIX_PRINCIPAL_POINT
    paths = expand_images(args.images)
    if not paths:
        _err("no photos given (the folders hold no images)")
        return 2
    _err(f"reading {len(paths)} photos")
    images = load_images(paths)
    try:
        if args.chessboard:
            cols, rows = args.chessboard
            pattern = ChessboardPattern(cols, rows, args.square_mm, args.detector)
            result = calibrate_chessboard(images, pattern, flags=flags, progress=_err)
        else:
            if args.marker_mm is None:
                ap.error("--charuco needs --marker-mm")
            sx, sy = args.charuco
            ch = CharucoPattern(sx, sy, args.square_mm, args.marker_mm, args.dict, args.legacy)
            result = calibrate_charuco(
                images, ch, flags=flags, two_stage=not args.single_stage, progress=_err
            )
    except CalibrationError as exc:
        _err(f"calibration failed: {exc}")
        return 1
    for v in result.views:
        if v.used and v.error_px is not None:
            _err(f"  {v.name}: {v.points} points, reprojection error {v.error_px:.3f} px")
        elif not v.used:
            _err(f"  {v.name}: dropped - {v.reason}")
    try:
        out = result.camera.save(args.out)
    except CameraFileError as exc:
        _err(str(exc))
        return 1
    _err(f"camera file written: {out}")
    if args.json:
        print(json.dumps(result.summary()))
    return 0


# -- marker sheet ------------------------------------------------------------------------------
def markers_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="companion calibrate markers",
        description="Write a printable sheet of the four board markers (true size).",
    )
    ap.add_argument("--out", required=True, help="sheet.png (300 dpi) or sheet.pdf")
    ap.add_argument("--side-mm", type=_positive, default=50.0, help="marker side (default 50)")
    ap.add_argument("--dpi", type=int, default=300)
    ap.add_argument("--page", choices=("a4", "letter"), default="a4")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".pdf"):
        _err("--out must end in .png or .pdf")
        return 2
    try:
        write_marker_sheet(out, side_mm=args.side_mm, dpi=args.dpi, page=args.page)
    except (ValueError, OSError) as exc:
        _err(f"cannot write the sheet: {exc}")
        return 1
    _err(f"marker sheet written: {out} ({args.page}, {args.dpi} dpi, side {args.side_mm:g} mm)")
    return 0


def write_marker_sheet(
    path: str | Path, *, side_mm: float = 50.0, dpi: int = 300, page: str = "a4"
) -> Path:
    """Render :func:`companion.vision.markers.marker_sheet` and save it as PNG (with the dpi
    stored, so it prints at true size) or PDF (one page, the same raster at ``dpi``).

    :raises ValueError: markers do not fit, or an unsupported suffix.
    :raises OSError: the file cannot be written.
    """
    from PIL import Image

    from companion.vision.markers import marker_sheet

    path = Path(path)
    sheet = marker_sheet(side_mm, dpi=dpi, page=page)
    img = Image.fromarray(sheet).convert("1")  # the sheet is pure black and white
    suffix = path.suffix.lower()
    if suffix == ".png":
        img.save(path, format="PNG", dpi=(dpi, dpi))
    elif suffix == ".pdf":
        img.save(path, format="PDF", resolution=float(dpi), title="Board markers")
    else:
        raise ValueError(f"unsupported sheet format {path.suffix!r} (use .png or .pdf)")
    return path


# -- board check -------------------------------------------------------------------------------
def _marker_quality(image: Any, quads: Any) -> Any:
    """:class:`~companion.vision.quality.FrameQuality` of a frame measured on its markers
    (``quads``: each ``(4, 2)`` px): the markers' white, their edge width and cell size."""
    import cv2
    import numpy as np

    from companion.vision.quality import FrameQuality, marker_edges

    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    quads = [np.asarray(q, np.float64).reshape(4, 2) for q in quads]
    edge, cell = marker_edges(grey, quads)
    whites = []
    for q in quads:
        x0, y0 = np.maximum(np.floor(q.min(axis=0)).astype(int), 0)
        x1, y1 = np.ceil(q.max(axis=0)).astype(int) + 1
        patch = grey[y0:y1, x0:x1]
        if patch.size:
            whites.append(float(np.percentile(patch, 90)))
    return FrameQuality(float(np.median(whites)) if whites else None, edge, cell)


def check_main(argv: list[str]) -> int:
    """``companion calibrate check``: find the four board markers in one photo or live frame and
    report the board pose (markers seen, reprojection error, camera position above the board)."""
    ap = argparse.ArgumentParser(
        prog="companion calibrate check",
        description="Check the board markers and camera: one photo or one frame of a source.",
    )
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("image", nargs="?", help="a photo of the board")
    where.add_argument("--source", help="frame source spec (picamera2, usb:0, folder:PATH, …)")
    ap.add_argument("--camera", help="camera file (.yml/.json); without it: homography only")
    ap.add_argument("--board", help="board geometry JSON (default: the built-in geometry)")
    ap.add_argument("--out", help="write an annotated copy of the frame here (.png/.jpg)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--frames", type=int, default=10, help="frames to try from --source")
    ap.add_argument(
        "--max-error-px",
        type=_positive,
        default=MAX_REPROJECTION_ERROR_PX,
        help=f"fail above this reprojection error in px (default {MAX_REPROJECTION_ERROR_PX:g})",
    )
    args = ap.parse_args(argv)

    import cv2
    import numpy as np

    from companion.vision.camera import CameraFileError, CameraModel
    from companion.vision.geometry import BoardGeometry
    from companion.vision.markers import (
        BOARD_DICTIONARY,
        CORNER_NAMES,
        MarkerDetector,
        PoseError,
        estimate_board_pose,
    )
    from companion.vision.quality import setup_advice
    from companion.vision.sources import FrameSourceError, open_source, read_image_file

    try:
        geometry = BoardGeometry.load(args.board) if args.board else BoardGeometry.default()
    except (OSError, ValueError) as exc:
        _err(f"cannot read the board geometry: {exc}")
        return 2
    camera = None
    if args.camera:
        try:
            camera = CameraModel.load(args.camera)
        except CameraFileError as exc:
            _err(str(exc))
            return 2
    image = None
    if args.image:
        image, why = read_image_file(args.image)
        if image is None:
            _err(f"cannot read the photo: {why}")
            return 2
    else:
        try:
            src = open_source(args.source)
        except FrameSourceError as exc:
            _err(str(exc))
            return 2
        with src:
            for _ in range(max(1, args.frames)):
                frame = src.read()
                if frame is not None:
                    image = frame.image
                    break
            if image is None:
                _err(f"no frame from {args.source}: {src.status}")
                return 1
    assert image is not None
    h, w = image.shape[:2]
    if camera is not None and camera.size != (w, h):
        try:
            camera = camera.scaled_to(w, h)
            _err(f"camera file scaled to the frame size {w}x{h}")
        except ValueError as exc:
            _err(f"camera file does not fit the {w}x{h} frame: {exc}")
            return 2
    corners_mm = geometry.marker_corners()
    found = MarkerDetector(BOARD_DICTIONARY, ids=corners_mm).detect(image)
    missing = sorted(set(corners_mm) - set(found))
    report: dict[str, object] = {
        "frame_size": [w, h],
        "markers_found": sorted(found),
        "markers_missing": missing,
    }
    for mid in sorted(corners_mm):
        state = "found" if mid in found else "MISSING"
        _err(f"marker {mid} ({CORNER_NAMES.get(mid, '?')}): {state}")
    rc = 0
    try:
        pose = estimate_board_pose(found, corners_mm, camera)
    except PoseError as exc:
        _err(f"no board pose: {exc}")
        report["pose"] = None
        rc = 1
    else:
        report["reprojection_error_px"] = round(pose.reprojection_error_px, 3)
        _err(
            f"board pose from {len(pose.marker_ids)} markers: reprojection error "
            f"{pose.reprojection_error_px:.2f} px"
        )
        centre = pose.camera_position_mm()
        if centre is not None:
            height = -float(centre[2])
            report["camera_position_mm"] = [round(float(v), 1) for v in centre]
            report["camera_height_mm"] = round(height, 1)
            _err(
                f"camera centre at x {centre[0]:.0f} mm, y {centre[1]:.0f} mm, "
                f"{height:.0f} mm above the board"
            )
        # light, focus and marker size, as the host page's camera check
        quality = _marker_quality(image, found.values())
        report["quality"] = quality.to_json()
        report["advice"] = setup_advice(quality)
        if quality.marker_cell_px is not None:
            _err(
                f"markers: {quality.marker_cell_px:.1f} px per cell, edges "
                f"{quality.edge_px or 0:.1f} px wide"
            )
        for line in setup_advice(quality):
            _err(line)
        too_large = pose.reprojection_error_px > args.max_error_px
        report["reprojection_ok"] = not too_large
        if too_large:
            rc = 2
        elif pose.reprojection_error_px > 2.0:
            _err(
                "large error: check the marker positions in the board geometry, the print "
                "scale (100 mm bar) and the camera file"
            )
        if args.out:
            out = image.copy()
            outline = pose.board_to_image(geometry.board_outline())
            cv2.polylines(out, [np.round(outline).astype(np.int32)], True, (0, 200, 0), 2)
            for mid, quad in found.items():
                q = np.round(quad).astype(np.int32)
                cv2.polylines(out, [q], True, (0, 0, 255), 2)
                cv2.putText(
                    out,
                    str(mid),
                    tuple(int(v) for v in q[0]),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.8,
                    (0, 0, 255),
                    2,
                )
            centres = pose.board_to_image(geometry.space_centres())
            for c in np.round(centres).astype(int):
                cv2.circle(out, (int(c[0]), int(c[1])), 4, (255, 0, 0), -1)
            if not cv2.imwrite(args.out, out):
                _err(f"cannot write {args.out}")
                return 1
            _err(f"annotated frame written: {args.out}")
    if args.json:
        print(json.dumps(report))
    if rc == 2:
        # last, so the one line that says what to fix is what the terminal ends with
        _err(
            f"calibrate check: reprojection error {report['reprojection_error_px']} px is over "
            f"{args.max_error_px:g} px: the photo does not match the board geometry "
            f"({args.board or 'built-in'}); check that it shows the game board (not the marker "
            "sheet), the marker positions (--board), the print scale (100 mm bar) and the camera "
            "file (--camera)"
        )
    return rc


def board_main(argv: list[str]) -> int:
    """``companion calibrate board``: adjust the board geometry to space centres tapped on a photo.

    The four markers in the photo give the homography board mm -> image px; the taps (a JSON
    object ``{"<space>": [x_px, y_px], …}``, at least 3 spaces, from the host page or typed in)
    are fitted by :func:`companion.vision.geometry.fit_loop_to_taps` (scale, rotation, offset of
    the loop) and the adjusted geometry is written to ``--out``.
    Exit codes: 0 written, 1 no board pose in the photo, 2 unreadable input or bad taps.
    """
    ap = argparse.ArgumentParser(
        prog="companion calibrate board",
        description="Fit the board geometry to space centres tapped on a still photo.",
    )
    ap.add_argument("image", help="a still photo of the board with the four markers")
    ap.add_argument("--taps", required=True, help='JSON file {"1": [x, y], …} in image px')
    ap.add_argument("--board", help="board geometry JSON to start from (default: built-in)")
    ap.add_argument("--out", required=True, help="where to write the adjusted geometry JSON")
    ap.add_argument("--json", action="store_true", help="print the fit as JSON")
    args = ap.parse_args(argv)

    from companion.vision.geometry import BoardGeometry, GeometryError, fit_loop_to_taps
    from companion.vision.markers import (
        BOARD_DICTIONARY,
        MarkerDetector,
        PoseError,
        estimate_board_pose,
    )
    from companion.vision.sources import read_image_file

    try:
        geometry = BoardGeometry.load(args.board) if args.board else BoardGeometry.default()
    except (OSError, ValueError) as exc:
        _err(f"cannot read the board geometry: {exc}")
        return 2
    try:
        raw = json.loads(Path(args.taps).read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("expected an object of space -> [x, y]")
        taps = {int(k): (float(v[0]), float(v[1])) for k, v in raw.items()}
    except (OSError, ValueError, TypeError, IndexError, KeyError) as exc:
        _err(f"cannot read the taps {args.taps}: {exc}")
        return 2
    image, why = read_image_file(args.image)
    if image is None:
        _err(f"cannot read the photo: {why}")
        return 2
    corners_mm = geometry.marker_corners()
    found = MarkerDetector(BOARD_DICTIONARY, ids=corners_mm).detect(image)
    try:
        pose = estimate_board_pose(found, corners_mm)
    except PoseError as exc:
        _err(f"no board pose in the photo: {exc}")
        return 1
    try:
        fit = fit_loop_to_taps(taps, pose.homography, geometry)
    except GeometryError as exc:
        _err(f"cannot fit the taps: {exc}")
        return 2
    fit.geometry.save(args.out)
    _err(
        f"loop fitted to {len(taps)} taps: scale {fit.scale:.4f}, rotation "
        f"{fit.rotation_deg:.2f} deg, offset {fit.offset_mm[0]:.1f}/{fit.offset_mm[1]:.1f} mm, "
        f"residual {fit.rms_mm:.2f} mm; written {args.out}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "scale": fit.scale,
                    "rotation_deg": fit.rotation_deg,
                    "offset_mm": list(fit.offset_mm),
                    "rms_mm": fit.rms_mm,
                    "taps": len(taps),
                }
            )
        )
    return 0


# -- dispatcher --------------------------------------------------------------------------------
def profile_main(argv: list[str]) -> int:
    try:
        module = importlib.import_module("companion.vision.profile_setup")
    except ImportError as exc:
        _err(f"companion calibrate profile is not available: {exc}")
        return 2
    func = getattr(module, "main", None)
    if func is None:
        _err(
            "companion calibrate profile is not available: "
            "companion.vision.profile_setup has no main"
        )
        return 2
    rc: int = func(argv)
    return rc


def usage() -> str:
    return (
        "usage: companion calibrate {intrinsics|markers|check|profile} [options]\n\n"
        "  intrinsics  camera intrinsics from checkerboard or ChArUco photos\n"
        "  markers     printable sheet of the four board markers\n"
        "  check       find the board markers in a photo or live frame, report the pose\n"
        "  board       fit the board geometry to space centres tapped on a photo\n"
        "  profile     colour profile of the wizards from the setup position\n"
    )


def main(argv: list[str]) -> int:
    """Entry point of ``companion calibrate``; returns the exit code (never raises SystemExit)."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], list(argv[1:])
    handlers = {
        "intrinsics": intrinsics_main,
        "markers": markers_main,
        "check": check_main,
        "board": board_main,
        "profile": profile_main,
    }
    if name not in handlers:
        _err(f"companion calibrate: unknown subcommand {name!r}\n\n{usage()}")
        return 2
    try:
        return handlers[name](rest)
    except SystemExit as exc:  # argparse: --help or a usage error
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
