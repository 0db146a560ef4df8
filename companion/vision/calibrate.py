"""Camera intrinsics from photos of a checkerboard or a ChArUco board.

Two targets:

* **Checkerboard** (:class:`ChessboardPattern`): ``cv2.findChessboardCorners`` followed by
  ``cv2.cornerSubPix`` (11x11 window, as OpenCV's own ``calibration.cpp`` sample), or
  ``cv2.findChessboardCornersSB`` (``detector="sb"``).
* **ChArUco** (:class:`CharucoPattern`): ``cv2.aruco.CharucoDetector``. By default the
  calibration follows OpenCV's ``calibrate_camera_charuco`` sample, which produced the reference
  calibrations OpenCV ships: (1) detect the markers, (2) calibrate on the marker corners alone,
  (3) interpolate the ChArUco corners *with* that camera model (pose-based prediction, then
  ``cornerSubPix``), (4) calibrate on the ChArUco corners. ``two_stage=False`` skips steps 2-3
  (corners predicted from local marker homographies).

On OpenCV's own four ChArUco photos (opencv_contrib 4.6.0, ``aruco_calibration`` tutorial) the
two-stage path gives fx 455.3, fy 460.3, RMS 0.183 px against the shipped reference 452.5, 456.8,
0.182 px; the single-stage path gives fx 457.3. Both stop ``cornerSubPix`` at OpenCV's default
0.1 px, so the final corners depend on where the interpolation put them, and four views leave fx
uncertain by +-16 px (one sigma): the reference camera fits our corners as well as our own does
(0.1796 vs 0.1792 px). Use 10+ views of a real board.

Both go through ``cv2.calibrateCameraExtended`` and give a :class:`CalibrationResult` with the
camera model, the RMS reprojection error, per-view errors, the standard deviations of the
intrinsics, and every rejected photo with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.camera import CameraModel
from companion.vision.markers import get_dictionary, to_gray

Progress = Callable[[str], None]

MIN_VIEWS = 3
"""Fewest usable photos for a calibration."""

MIN_CHARUCO_CORNERS = 6
"""Fewest ChArUco corners (not all on one line) for a photo to count as a view."""


UNCERTAIN_FOCAL = 0.01
"""Relative one-sigma focal-length uncertainty above which the calibration warns."""


class CalibrationError(ValueError):
    """Calibration impossible: too few usable photos, mixed image sizes, bad pattern."""


@dataclass(frozen=True)
class ChessboardPattern:
    """A printed checkerboard.

    :param cols: inner corners per row (e.g. 9 for a board of 10 squares across).
    :param rows: inner corners per column.
    :param square_mm: side of one square in mm.
    :param detector: ``"classic"`` (findChessboardCorners + cornerSubPix) or ``"sb"``
        (findChessboardCornersSB, sector-based).
    """

    cols: int
    rows: int
    square_mm: float
    detector: str = "classic"

    def __post_init__(self) -> None:
        if self.cols < 2 or self.rows < 2 or self.square_mm <= 0:
            raise CalibrationError("a checkerboard needs >= 2x2 inner corners and a square > 0 mm")
        if self.detector not in ("classic", "sb"):
            raise CalibrationError("chessboard detector must be 'classic' or 'sb'")

    def object_points(self) -> NDArray[np.float32]:
        """``(cols*rows, 3) float32`` corner positions in mm, row by row, z = 0."""
        grid = np.mgrid[0 : self.cols, 0 : self.rows].T.reshape(-1, 2)
        pts = np.zeros((self.cols * self.rows, 3), np.float32)
        pts[:, :2] = grid * self.square_mm
        return pts


@dataclass(frozen=True)
class CharucoPattern:
    """A printed ChArUco board.

    :param squares_x: squares across (e.g. 5).
    :param squares_y: squares down (e.g. 7).
    :param square_mm: square side in mm.
    :param marker_mm: marker side in mm (smaller than the square).
    :param dictionary: ArUco dictionary name or file (see
        :func:`companion.vision.markers.get_dictionary`).
    :param legacy: OpenCV < 4.6 layout of boards with an even number of rows.
    """

    squares_x: int
    squares_y: int
    square_mm: float
    marker_mm: float
    dictionary: str = "DICT_6X6_250"
    legacy: bool = False

    def __post_init__(self) -> None:
        if self.squares_x < 2 or self.squares_y < 2:
            raise CalibrationError("a ChArUco board needs at least 2x2 squares")
        if not 0 < self.marker_mm < self.square_mm:
            raise CalibrationError("the marker must be smaller than the square (both > 0 mm)")

    def board(self) -> cv2.aruco.CharucoBoard:
        """The OpenCV board object (units mm)."""
        try:
            dictionary = get_dictionary(self.dictionary)
        except ValueError as exc:
            raise CalibrationError(str(exc)) from None
        board = cv2.aruco.CharucoBoard(
            (self.squares_x, self.squares_y), self.square_mm, self.marker_mm, dictionary
        )
        board.setLegacyPattern(self.legacy)
        return board


@dataclass
class ViewResult:
    """One photo's part in a calibration.

    :param name: file name (or caller's label).
    :param used: whether it went into the calibration.
    :param points: corners found (0 when rejected before detection).
    :param reason: why it was rejected ("" when used).
    :param error_px: RMS reprojection error of this view in px (used views only).
    """

    name: str
    used: bool
    points: int = 0
    reason: str = ""
    error_px: float | None = None


@dataclass
class CalibrationResult:
    """Outcome of a calibration.

    :param camera: the camera model (``camera.rms`` = ``rms``).
    :param rms: overall RMS reprojection error in px (OpenCV's return value).
    :param views: every photo offered, in order, used or rejected.
    :param std_intrinsics: one-sigma uncertainty of ``fx, fy, cx, cy`` in px.
    :param flags: the ``cv2.CALIB_*`` flags used.
    :param method: short description of how the points were obtained.
    """

    camera: CameraModel
    rms: float
    views: list[ViewResult]
    std_intrinsics: dict[str, float] = field(default_factory=dict)
    flags: int = 0
    method: str = ""

    @property
    def views_used(self) -> int:
        return sum(v.used for v in self.views)

    @property
    def views_rejected(self) -> int:
        return sum(not v.used for v in self.views)

    def summary(self) -> dict[str, Any]:
        """``{"rms", "fx", "fy", "cx", "cy", "views_used", "views_rejected"}`` (px, counts)."""
        c = self.camera
        return {
            "rms": round(self.rms, 6),
            "fx": round(c.fx, 4),
            "fy": round(c.fy, 4),
            "cx": round(c.cx, 4),
            "cy": round(c.cy, 4),
            "views_used": self.views_used,
            "views_rejected": self.views_rejected,
        }


# -- loading photos ----------------------------------------------------------------------------
def load_images(
    paths: Iterable[str | Path],
) -> list[tuple[str, NDArray[np.uint8] | None, str]]:
    """Read photos for calibration: ``(name, (H, W, 3) uint8 BGR or None, reason)`` each; a file
    that is missing or not a readable image gives ``None`` and the reason (never raises)."""
    out: list[tuple[str, NDArray[np.uint8] | None, str]] = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            out.append((path.name, None, "file not found"))
            continue
        data = np.fromfile(str(path), dtype=np.uint8)
        img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
        if img is None:
            out.append((path.name, None, "not a readable image"))
        else:
            out.append((path.name, np.asarray(img, np.uint8), ""))
    return out


# -- detection ---------------------------------------------------------------------------------
def find_chessboard(image: NDArray[Any], pattern: ChessboardPattern) -> NDArray[np.float32] | None:
    """Inner corners of the checkerboard, ``(cols*rows, 2) float32`` px in
    :meth:`ChessboardPattern.object_points` order, or ``None`` when not (fully) visible.

    :raises ValueError: on an image of the wrong shape or dtype.
    """
    gray = to_gray(image)
    size = (pattern.cols, pattern.rows)
    if pattern.detector == "sb":
        ok, corners = cv2.findChessboardCornersSB(
            gray, size, flags=cv2.CALIB_CB_EXHAUSTIVE | cv2.CALIB_CB_ACCURACY
        )
        return np.asarray(corners, np.float32).reshape(-1, 2) if ok else None
    ok, corners = cv2.findChessboardCorners(
        gray, size, flags=cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    )
    if not ok:
        return None
    corners = cv2.cornerSubPix(
        gray,
        corners,
        (11, 11),
        (-1, -1),
        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01),
    )
    return np.asarray(corners, np.float32).reshape(-1, 2)


@dataclass
class CharucoView:
    """ChArUco detection in one photo: board-mm object points ``(N, 3) float32`` and image px
    ``(N, 2) float32`` of the ChArUco corners, plus the raw marker detection."""

    object_points: NDArray[np.float32]
    image_points: NDArray[np.float32]
    charuco_ids: NDArray[np.int32]
    marker_corners: Sequence[NDArray[Any]]
    marker_ids: NDArray[np.int32] | None


def find_charuco(
    image: NDArray[Any],
    pattern: CharucoPattern,
    camera: CameraModel | None = None,
    *,
    board: cv2.aruco.CharucoBoard | None = None,
    markers: tuple[Sequence[NDArray[Any]], NDArray[Any] | None] | None = None,
) -> CharucoView:
    """Detect a ChArUco board.

    :param camera: when given, ChArUco corners are predicted from the board pose through this
        camera (OpenCV's "approximate calibration" interpolation) before ``cornerSubPix``;
        otherwise from local marker homographies.
    :param markers: marker corners and ids from an earlier detection, to reuse.
    :returns: the detection; ``image_points`` is empty when no corner was found.
    :raises ValueError: on an image of the wrong shape or dtype.
    """
    gray = to_gray(image)
    board = board or pattern.board()
    cparams = cv2.aruco.CharucoParameters()
    if camera is not None:
        cparams.cameraMatrix = np.asarray(camera.K)
        cparams.distCoeffs = np.asarray(camera.dist)
    detector = cv2.aruco.CharucoDetector(board, cparams, cv2.aruco.DetectorParameters())
    found: Any
    if markers is None:
        found = detector.detectBoard(gray)
    else:
        found = detector.detectBoard(gray, markerCorners=markers[0], markerIds=markers[1])
    ch_corners, ch_ids, m_corners_raw, m_ids = found
    m_corners = tuple(m_corners_raw) if m_corners_raw is not None else ()
    if ch_ids is None or len(ch_ids) == 0:
        empty3 = np.zeros((0, 3), np.float32)
        empty_ids = np.zeros((0, 1), np.int32)
        return CharucoView(empty3, np.zeros((0, 2), np.float32), empty_ids, m_corners, m_ids)
    obj, img = board.matchImagePoints(ch_corners, ch_ids)
    return CharucoView(
        np.asarray(obj, np.float32).reshape(-1, 3),
        np.asarray(img, np.float32).reshape(-1, 2),
        np.asarray(ch_ids, np.int32).reshape(-1, 1),
        m_corners,
        m_ids,
    )


# -- calibration -------------------------------------------------------------------------------
def _quiet(_msg: str) -> None:
    return None


def _check_sizes(
    images: Sequence[tuple[str, NDArray[Any] | None, str]], progress: Progress
) -> tuple[list[ViewResult], list[tuple[int, NDArray[Any]]], tuple[int, int]]:
    """Reject unreadable photos and photos whose size differs from the first readable one."""
    views: list[ViewResult] = []
    good: list[tuple[int, NDArray[Any]]] = []
    size: tuple[int, int] | None = None
    for name, img, reason in images:
        if img is None:
            views.append(ViewResult(name, False, reason=reason or "no image"))
            progress(f"{name}: rejected ({views[-1].reason})")
            continue
        h, w = img.shape[:2]
        if size is None:
            size = (w, h)
        if (w, h) != size:
            why = f"size {w}x{h} differs from {size[0]}x{size[1]}"
            views.append(ViewResult(name, False, reason=why))
            progress(f"{name}: rejected ({why})")
            continue
        views.append(ViewResult(name, True))
        good.append((len(views) - 1, img))
    if size is None:
        raise CalibrationError("no readable photo")
    return views, good, size


def _solve(
    obj: list[NDArray[np.float32]],
    img: list[NDArray[np.float32]],
    size: tuple[int, int],
    flags: int,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], list[float]]:
    K0 = np.eye(3)
    calibrate: Any = cv2.calibrateCameraExtended  # the stubs reject dist=None
    try:
        rms, K, dist, _r, _t, std_in, _std_ex, per_view = calibrate(
            [o.reshape(-1, 1, 3) for o in obj],
            [i.reshape(-1, 1, 2) for i in img],
            size,
            K0,
            None,
            flags=flags,
        )
    except cv2.error as exc:
        raise CalibrationError(f"calibrateCamera failed: {exc.err}") from None
    return (
        float(rms),
        np.asarray(K, np.float64),
        np.asarray(dist, np.float64).reshape(-1),
        np.asarray(std_in, np.float64).reshape(-1),
        [float(e) for e in np.asarray(per_view).reshape(-1)],
    )


def _result(
    views: list[ViewResult],
    used: list[int],
    solved: tuple[
        float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], list[float]
    ],
    size: tuple[int, int],
    flags: int,
    method: str,
    progress: Progress,
) -> CalibrationResult:
    rms, K, dist, std_in, per_view = solved
    for idx, err in zip(used, per_view, strict=True):
        views[idx].error_px = err
    std = {k: float(std_in[i]) for i, k in enumerate(("fx", "fy", "cx", "cy"))}
    info = f"{method}; {len(used)} views; flags {flags}"
    camera = CameraModel(K, dist, size, rms, info)
    progress(
        f"calibrated on {len(used)} views: RMS {rms:.3f} px, fx {camera.fx:.2f}, "
        f"fy {camera.fy:.2f} (+-{std['fy']:.2f}), cx {camera.cx:.2f}, cy {camera.cy:.2f}"
    )
    spread = max(std["fx"] / camera.fx, std["fy"] / camera.fy)
    if spread > UNCERTAIN_FOCAL:
        progress(
            f"warning: the focal length is uncertain (+-{100 * spread:.1f} %, one sigma); "
            "add photos with the board tilted in different directions and filling the frame"
        )
    return CalibrationResult(camera, rms, views, std, flags, method)


def calibrate_chessboard(
    images: Sequence[tuple[str, NDArray[Any] | None, str]],
    pattern: ChessboardPattern,
    *,
    flags: int = 0,
    progress: Progress = _quiet,
) -> CalibrationResult:
    """Calibrate from checkerboard photos.

    :param images: ``(name, (H, W, 3) uint8 BGR or (H, W) grey or None, reason)`` as from
        :func:`load_images`.
    :param flags: ``cv2.CALIB_*`` flags (e.g. ``CALIB_FIX_ASPECT_RATIO``: fx/fy fixed at 1).
    :param progress: called with one line of text per photo and at the end.
    :raises CalibrationError: fewer than :data:`MIN_VIEWS` photos show the whole board.
    """
    views, good, size = _check_sizes(images, progress)
    obj: list[NDArray[np.float32]] = []
    img: list[NDArray[np.float32]] = []
    used: list[int] = []
    template = pattern.object_points()
    for n, (idx, image) in enumerate(good, 1):
        corners = find_chessboard(image, pattern)
        view = views[idx]
        if corners is None:
            view.used = False
            view.reason = f"{pattern.cols}x{pattern.rows} checkerboard not found"
            progress(f"[{n}/{len(good)}] {view.name}: rejected ({view.reason})")
            continue
        view.points = len(corners)
        obj.append(template)
        img.append(corners)
        used.append(idx)
        progress(f"[{n}/{len(good)}] {view.name}: {len(corners)} corners")
    if len(used) < MIN_VIEWS:
        raise CalibrationError(
            f"only {len(used)} photo(s) show the whole {pattern.cols}x{pattern.rows} "
            f"checkerboard; need {MIN_VIEWS}"
        )
    method = (
        f"checkerboard {pattern.cols}x{pattern.rows} {pattern.square_mm:g} mm ({pattern.detector})"
    )
    return _result(views, used, _solve(obj, img, size, flags), size, flags, method, progress)


def calibrate_charuco(
    images: Sequence[tuple[str, NDArray[Any] | None, str]],
    pattern: CharucoPattern,
    *,
    flags: int = 0,
    two_stage: bool = True,
    progress: Progress = _quiet,
) -> CalibrationResult:
    """Calibrate from ChArUco photos (partial views are fine).

    :param images: as for :func:`calibrate_chessboard`.
    :param flags: ``cv2.CALIB_*`` flags.
    :param two_stage: first calibrate on the marker corners and use that camera to interpolate
        the ChArUco corners (OpenCV's ``calibrate_camera_charuco`` sample, which made OpenCV's
        reference ``tutorial_camera_charuco.yml``); ``False``: local-homography interpolation.
    :param progress: called with one line of text per photo and per stage.
    :raises CalibrationError: fewer than :data:`MIN_VIEWS` photos with at least
        :data:`MIN_CHARUCO_CORNERS` non-collinear ChArUco corners.
    """
    views, good, size = _check_sizes(images, progress)
    board = pattern.board()
    grays = {idx: to_gray(image) for idx, image in good}
    detections: dict[int, CharucoView] = {}
    for n, (idx, _image) in enumerate(good, 1):
        det = find_charuco(grays[idx], pattern, board=board)
        detections[idx] = det
        view = views[idx]
        view.points = len(det.image_points)
        ok, why = _charuco_view_ok(det, board)
        if not ok:
            view.used = False
            view.reason = why
            progress(f"[{n}/{len(good)}] {view.name}: rejected ({why})")
        else:
            n_markers = 0 if det.marker_ids is None else len(det.marker_ids)
            progress(
                f"[{n}/{len(good)}] {view.name}: {n_markers} markers, "
                f"{len(det.image_points)} ChArUco corners"
            )
    used = [idx for idx, _ in good if views[idx].used]
    if len(used) < MIN_VIEWS:
        raise CalibrationError(
            f"only {len(used)} photo(s) show enough of the ChArUco board; need {MIN_VIEWS}"
        )
    method = (
        f"ChArUco {pattern.squares_x}x{pattern.squares_y} {pattern.square_mm:g}/"
        f"{pattern.marker_mm:g} mm {pattern.dictionary}"
    )
    if two_stage:
        obj_points: Any = board.getObjPoints()
        marker_ids: Any = board.getIds()
        marker_board = cv2.aruco.Board(obj_points, board.getDictionary(), marker_ids)
        m_obj: list[NDArray[np.float32]] = []
        m_img: list[NDArray[np.float32]] = []
        for idx in used:
            det = detections[idx]
            if det.marker_ids is None or len(det.marker_ids) == 0:
                continue
            o, i = marker_board.matchImagePoints(det.marker_corners, det.marker_ids)
            m_obj.append(np.asarray(o, np.float32).reshape(-1, 3))
            m_img.append(np.asarray(i, np.float32).reshape(-1, 2))
        rms_m, K_m, dist_m, _, _ = _solve(m_obj, m_img, size, flags)
        progress(f"stage 1, marker corners: RMS {rms_m:.3f} px, fx {K_m[0, 0]:.2f}")
        first = CameraModel(K_m, dist_m, size)
        for idx in used:
            old = detections[idx]
            det = find_charuco(
                grays[idx],
                pattern,
                first,
                board=board,
                markers=(old.marker_corners, old.marker_ids),
            )
            ok, why = _charuco_view_ok(det, board)
            if ok:
                detections[idx] = det
                views[idx].points = len(det.image_points)
        method += ", two-stage (marker calibration, camera-aided corner interpolation)"
    obj = [detections[idx].object_points for idx in used]
    img = [detections[idx].image_points for idx in used]
    return _result(views, used, _solve(obj, img, size, flags), size, flags, method, progress)


def _charuco_view_ok(det: CharucoView, board: cv2.aruco.CharucoBoard) -> tuple[bool, str]:
    n = len(det.image_points)
    if n < MIN_CHARUCO_CORNERS:
        n_markers = 0 if det.marker_ids is None else len(det.marker_ids)
        return False, f"{n} ChArUco corners ({n_markers} markers), need {MIN_CHARUCO_CORNERS}"
    if board.checkCharucoCornersCollinear(det.charuco_ids):
        return False, "ChArUco corners all on one line"
    return True, ""


def fx_error_percent(camera: CameraModel, reference_fx: float) -> float:
    """Relative focal-length difference ``100 * (fx / reference_fx - 1)`` in percent."""
    if reference_fx <= 0 or not math.isfinite(reference_fx):
        raise ValueError("reference fx must be a positive number")
    return 100.0 * (camera.fx / reference_fx - 1.0)
