"""ArUco marker detection and the board pose from the four corner markers.

Board markers (contract shared by the vision code): dictionary ``DICT_4X4_50``, ids 0, 1, 2, 3 at
the board corners (0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left). Board coordinates are
millimetres, x to the right, y down, origin at the top-left of the board area. Each marker's four
corners in board mm come from the board geometry as ``Mapping[int, (4, 2) float mm]`` in OpenCV's
corner order (top-left, top-right, bottom-right, bottom-left of the printed marker).

* :class:`MarkerDetector` wraps ``cv2.aruco.ArucoDetector`` with tuned parameters and sub-pixel
  corner refinement; it takes any dictionary (predefined name or a dictionary file).
* :func:`estimate_board_pose` turns detected marker corners into a :class:`BoardPose`: the
  homography board mm -> image px and, with a :class:`~companion.vision.camera.CameraModel`,
  the 3-D pose (``rvec``, ``tvec`` from ``cv2.solvePnP`` over all visible marker corners).
* :class:`BoardPoseTracker` keeps the pose across frames and re-checks it cheaply (sub-pixel
  re-check of the last corners, then detection in small ROIs, full detection when those fail or
  every N frames); it never raises on a bad frame and reports ``ok`` / ``lost`` / ``bad frame``.
* :func:`marker_sheet` draws the printable sheet of board markers at true size.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.camera import CameraModel

FloatArray = NDArray[np.float64]

BOARD_DICTIONARY = "DICT_4X4_50"
"""ArUco dictionary of the board corner markers."""

BOARD_MARKER_IDS: tuple[int, int, int, int] = (0, 1, 2, 3)
"""Marker ids at the board corners: top-left, top-right, bottom-right, bottom-left."""

MIN_MARKERS_FOR_POSE = 3
"""Fewer visible board markers than this and the board is reported lost."""


class PoseError(ValueError):
    """The board pose cannot be computed from the markers given (too few, degenerate)."""


# -- dictionaries and detector parameters ------------------------------------------------------
def get_dictionary(spec: str | int | Path | cv2.aruco.Dictionary) -> cv2.aruco.Dictionary:
    """An ArUco dictionary from a predefined name (``"DICT_6X6_250"``), its OpenCV constant, a
    dictionary file written by ``Dictionary.writeDictionary`` (e.g. OpenCV's
    ``tutorial_dict.yml``), or an existing ``cv2.aruco.Dictionary``.

    :raises ValueError: unknown name or unreadable file.
    """
    if isinstance(spec, cv2.aruco.Dictionary):
        return spec
    if isinstance(spec, int):
        return cv2.aruco.getPredefinedDictionary(spec)
    text = str(spec)
    name = text.upper()
    if not name.startswith("DICT_"):
        name = "DICT_" + name
    if hasattr(cv2.aruco, name) and not Path(text).suffix:
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"unknown ArUco dictionary {text!r} (not a DICT_* name nor a file)")
    try:
        fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
        dictionary = cv2.aruco.Dictionary()
        ok = dictionary.readDictionary(fs.root())
        fs.release()
    except cv2.error as exc:
        raise ValueError(f"cannot read ArUco dictionary {path}: {exc.err}") from None
    if not ok or dictionary.bytesList is None or len(dictionary.bytesList) == 0:
        raise ValueError(f"{path} is not an ArUco dictionary file")
    return dictionary


def detector_parameters(corner_refinement: str = "subpix") -> cv2.aruco.DetectorParameters:
    """``DetectorParameters`` tuned for printed markers seen by a table camera.

    :param corner_refinement: ``"subpix"`` (default: ``cornerSubPix`` on the marker corners,
        window half a marker cell up to 8 px, 30 iterations, 0.01 px), ``"contour"``,
        ``"apriltag"`` or ``"none"``.
    :raises ValueError: unknown refinement name.
    """
    methods = {
        "none": cv2.aruco.CORNER_REFINE_NONE,
        "subpix": cv2.aruco.CORNER_REFINE_SUBPIX,
        "contour": cv2.aruco.CORNER_REFINE_CONTOUR,
        "apriltag": cv2.aruco.CORNER_REFINE_APRILTAG,
    }
    if corner_refinement not in methods:
        raise ValueError(f"corner_refinement must be one of {sorted(methods)}")
    p = cv2.aruco.DetectorParameters()
    p.cornerRefinementMethod = methods[corner_refinement]
    # sub-pixel window: half a marker cell, at most 8 px. On OpenCV's real ChArUco photos this
    # cut the marker-corner reprojection RMS (reference camera, solvePnP) from 0.96 px without
    # refinement and 0.88 px with OpenCV's default window (0.3 cell) to 0.80 px.
    p.relativeCornerRefinmentWinSize = 0.5
    p.cornerRefinementWinSize = 8
    p.cornerRefinementMaxIterations = 30
    p.cornerRefinementMinAccuracy = 0.01
    # markers far from the camera are small: accept perimeters down to 2 % of the image size
    p.minMarkerPerimeterRate = 0.02
    # more threshold windows help under the uneven light of a table lamp
    p.adaptiveThreshWinSizeMin = 3
    p.adaptiveThreshWinSizeMax = 33
    p.adaptiveThreshWinSizeStep = 10
    return p


RESCUE_ERROR_CORRECTION = 1.0
"""``errorCorrectionRate`` of the second, lenient pass for board markers the first pass missed
(OpenCV's default 0.6 corrects fewer bit errors): a marker smeared by motion blur or defocus
loses bits at its cell edges. The lenient pass also decodes more false markers in clutter, so
its markers count only when they fit the board's layout (:func:`consistent_markers`)."""

RESCUE_FIT = 0.15
"""Largest corner residual, in marker sides, of any marker against the board's 3-D pose fitted
to all of them, for markers of the lenient pass to be used. On rendered tables the true markers
stay under 0.08 of a side under strong motion blur; one marker a side away from its place leaves
some marker 0.2 of a side or more off the fitted pose."""


def to_gray(image: NDArray[Any]) -> NDArray[np.uint8]:
    """``(H, W)`` uint8 grey from ``(H, W)``, ``(H, W, 1)``, ``(H, W, 3)`` BGR or ``(H, W, 4)``
    BGRA uint8.

    :raises ValueError: any other shape or dtype, or an empty image.
    """
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.size == 0:
        raise ValueError(f"expected a non-empty uint8 image, got {arr.dtype} {arr.shape}")
    if arr.ndim == 2:
        return arr
    if arr.ndim == 3 and arr.shape[2] == 1:
        return arr[:, :, 0]
    if arr.ndim == 3 and arr.shape[2] == 3:
        return np.asarray(cv2.cvtColor(arr, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    if arr.ndim == 3 and arr.shape[2] == 4:
        return np.asarray(cv2.cvtColor(arr, cv2.COLOR_BGRA2GRAY), dtype=np.uint8)
    raise ValueError(f"expected (H, W) or (H, W, 3) image, got shape {arr.shape}")


# -- detection ---------------------------------------------------------------------------------
class MarkerDetector:
    """Finds ArUco markers of one dictionary in a frame.

    :param dictionary: dictionary name, constant, file or object (see :func:`get_dictionary`);
        default the board dictionary ``DICT_4X4_50``.
    :param ids: only report these ids (``None``: every id of the dictionary).
    :param parameters: detector parameters; default :func:`detector_parameters` (sub-pixel
        corner refinement).
    :param corner_refinement: shortcut for ``detector_parameters(corner_refinement)`` when
        ``parameters`` is not given.
    """

    def __init__(
        self,
        dictionary: str | int | Path | cv2.aruco.Dictionary = BOARD_DICTIONARY,
        ids: Iterable[int] | None = None,
        *,
        parameters: cv2.aruco.DetectorParameters | None = None,
        corner_refinement: str = "subpix",
    ) -> None:
        self.dictionary = get_dictionary(dictionary)
        self.ids: frozenset[int] | None = None if ids is None else frozenset(int(i) for i in ids)
        self.parameters = parameters or detector_parameters(corner_refinement)
        self._detector = cv2.aruco.ArucoDetector(self.dictionary, self.parameters)
        # inside a small ROI the marker fills much of the crop: fewer threshold windows suffice
        # (about half the time of the full set)
        roi_params = _copy_parameters(self.parameters)
        roi_params.adaptiveThreshWinSizeMax = min(self.parameters.adaptiveThreshWinSizeMax, 23)
        self._roi_detector = cv2.aruco.ArucoDetector(self.dictionary, roi_params)
        lenient = _copy_parameters(self.parameters)
        lenient.errorCorrectionRate = RESCUE_ERROR_CORRECTION
        self._lenient = cv2.aruco.ArucoDetector(self.dictionary, lenient)

    def detect_lenient(self, image: NDArray[Any]) -> dict[int, NDArray[np.float32]]:
        """Like :meth:`detect` with :data:`RESCUE_ERROR_CORRECTION`: finds blurred markers, and
        more false ones (check them with :func:`consistent_markers`).

        :raises ValueError: on an image of the wrong shape or dtype.
        """
        corners, ids, _rejected = self._lenient.detectMarkers(to_gray(image))
        return self._collect(corners, ids)

    def detect(self, image: NDArray[Any]) -> dict[int, NDArray[np.float32]]:
        """Markers in a frame.

        :param image: ``(H, W)`` uint8 grey or ``(H, W, 3)`` uint8 BGR.
        :returns: id -> ``(4, 2) float32`` corner pixels in OpenCV order (TL, TR, BR, BL of the
            marker as printed). When an id is seen twice the larger marker wins.
        :raises ValueError: on an image of the wrong shape or dtype.
        """
        gray = to_gray(image)
        corners, ids, _rejected = self._detector.detectMarkers(gray)
        return self._collect(corners, ids)

    def detect_in_rois(
        self, image: NDArray[Any], rois: Mapping[int, tuple[int, int, int, int]]
    ) -> dict[int, NDArray[np.float32]]:
        """Look for each marker id only inside its ROI ``(x0, y0, x1, y1)`` px (clipped to the
        image). The crops are laid side by side, separated by white, and searched in one
        ``detectMarkers`` call: about a third of the time of separate calls and far less than
        :meth:`detect` on a large frame.

        :returns: id -> ``(4, 2) float32`` corner pixels in full-frame coordinates; only ids
            found inside their own ROI.
        :raises ValueError: on an image of the wrong shape or dtype.
        """
        gray = to_gray(image)
        h, w = gray.shape
        gap = 8
        crops: list[tuple[int, int, int, NDArray[np.uint8]]] = []  # id, x0, y0, crop
        for marker_id, (x0, y0, x1, y1) in rois.items():
            x0, y0 = max(0, int(x0)), max(0, int(y0))
            x1, y1 = min(w, int(x1)), min(h, int(y1))
            if x1 - x0 >= 8 and y1 - y0 >= 8:
                crops.append((marker_id, x0, y0, gray[y0:y1, x0:x1]))
        if not crops:
            return {}
        height = max(c.shape[0] for *_, c in crops)
        width = sum(c.shape[1] for *_, c in crops) + gap * (len(crops) + 1)
        mosaic = np.full((height + 2 * gap, width), 255, np.uint8)
        slots = []  # (marker id, mosaic x0, mosaic x1, offset to full frame)
        x = gap
        for marker_id, x0, y0, crop in crops:
            ch, cw = crop.shape
            mosaic[gap : gap + ch, x : x + cw] = crop
            slots.append((marker_id, x, x + cw, np.array([x0 - x, y0 - gap], np.float32)))
            x += cw + gap
        corners, ids, _ = self._roi_detector.detectMarkers(mosaic)
        found: dict[int, NDArray[np.float32]] = {}
        for mid, quad in self._collect(corners, ids).items():
            cx = float(quad[:, 0].mean())
            for slot_id, sx0, sx1, offset in slots:
                if slot_id == mid and sx0 <= cx < sx1:
                    found[mid] = quad + offset
        return found

    def _collect(self, corners: Any, ids: Any) -> dict[int, NDArray[np.float32]]:
        out: dict[int, NDArray[np.float32]] = {}
        if ids is None:
            return out
        for quad, mid in zip(corners, np.asarray(ids).reshape(-1), strict=True):
            marker_id = int(mid)
            if self.ids is not None and marker_id not in self.ids:
                continue
            q = np.asarray(quad, dtype=np.float32).reshape(4, 2)
            if marker_id in out and _perimeter(out[marker_id]) >= _perimeter(q):
                continue
            out[marker_id] = q
        return out


def _copy_parameters(params: cv2.aruco.DetectorParameters) -> cv2.aruco.DetectorParameters:
    """A copy of ``DetectorParameters`` (the binding has no copy constructor)."""
    out = cv2.aruco.DetectorParameters()
    for name in dir(params):
        if name.startswith("_"):
            continue
        value = getattr(params, name)
        if not callable(value):
            setattr(out, name, value)
    return out


def _perimeter(quad: NDArray[Any]) -> float:
    q = np.asarray(quad, dtype=np.float64)
    return float(np.sum(np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)))


# -- pose --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoardPose:
    """Where the board is in the image.

    :param homography: ``(3, 3) float64`` board mm (x, y) -> image px (fitted on the raw,
        distorted marker corners: exact for a distortion-free camera).
    :param marker_ids: the board markers the pose was computed from.
    :param reprojection_error_px: RMS distance in px between the detected marker corners and
        their projection by this pose (the 3-D pose when a camera is given, else the homography).
    :param camera: the camera model, when the pose was computed with one.
    :param rvec: ``(3,) float64`` Rodrigues rotation board -> camera (with a camera only).
    :param tvec: ``(3,) float64`` translation board -> camera in mm (with a camera only).
    """

    homography: FloatArray
    marker_ids: tuple[int, ...]
    reprojection_error_px: float
    camera: CameraModel | None = None
    rvec: FloatArray | None = None
    tvec: FloatArray | None = None
    marker_corners_px: Mapping[int, NDArray[np.float32]] = field(default_factory=dict)

    @property
    def has_3d(self) -> bool:
        """True when ``rvec``/``tvec`` are known (a camera model was given)."""
        return self.camera is not None and self.rvec is not None and self.tvec is not None

    def board_to_image(self, points_mm: NDArray[Any]) -> FloatArray:
        """Board-plane points ``(N, 2)`` mm -> image ``(N, 2)`` px (with lens distortion when a
        camera model is known, else through the homography)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if self.has_3d:
            return self.project(np.column_stack([pts, np.zeros(len(pts))]))
        return _apply_h(self.homography, pts)

    def image_to_board(self, points_px: NDArray[Any]) -> FloatArray:
        """Image px ``(N, 2)`` -> board-plane mm ``(N, 2)`` (the inverse of
        :meth:`board_to_image`; lens distortion removed first when a camera is known)."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        if self.has_3d:
            assert self.camera is not None and self.rvec is not None and self.tvec is not None
            ideal = self.camera.undistort_points(pts)
            R, _ = cv2.Rodrigues(self.rvec)
            # plane z=0: pixel ~ K [r1 r2 t] [x y 1]^T
            H = self.camera.K @ np.column_stack([R[:, 0], R[:, 1], self.tvec])
            return _apply_h(np.linalg.inv(H), ideal)
        return _apply_h(np.linalg.inv(self.homography), pts)

    def project(self, points_mm_xyz: NDArray[Any]) -> FloatArray:
        """Board-frame 3-D points ``(N, 3)`` mm (z up from the board is *negative* z, OpenCV's
        right-handed frame with x right and y down) -> image ``(N, 2)`` px.

        Without a camera model only points on the board plane (z = 0) can be projected.

        :raises ValueError: z != 0 and no camera model.
        """
        pts = np.asarray(points_mm_xyz, dtype=np.float64).reshape(-1, 3)
        if not self.has_3d:
            if np.any(np.abs(pts[:, 2]) > 1e-9):
                raise ValueError("projecting points off the board plane needs a camera model")
            return _apply_h(self.homography, pts[:, :2])
        assert self.camera is not None and self.rvec is not None and self.tvec is not None
        img, _ = cv2.projectPoints(
            pts.reshape(-1, 1, 3), self.rvec, self.tvec, self.camera.K, self.camera.dist
        )
        return np.asarray(img, dtype=np.float64).reshape(-1, 2)

    def camera_position_mm(self) -> FloatArray | None:
        """Camera centre in board mm ``(3,)`` (negative z = above the board), or ``None``."""
        if self.rvec is None or self.tvec is None:
            return None
        R, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(-R.T @ np.asarray(self.tvec).reshape(3), dtype=np.float64)


def _apply_h(H: NDArray[Any], pts: NDArray[Any]) -> FloatArray:
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    if len(p) == 0:
        return np.zeros((0, 2))
    q = np.column_stack([p, np.ones(len(p))]) @ np.asarray(H, dtype=np.float64).T
    return np.asarray(q[:, :2] / q[:, 2:3], dtype=np.float64)


def estimate_board_pose(
    markers_px: Mapping[int, NDArray[Any]],
    marker_corners_mm: Mapping[int, NDArray[Any]],
    camera: CameraModel | None = None,
    *,
    min_markers: int = MIN_MARKERS_FOR_POSE,
) -> BoardPose:
    """Board pose from detected markers.

    :param markers_px: id -> ``(4, 2)`` detected corner px (as from
        :meth:`MarkerDetector.detect`); ids not in ``marker_corners_mm`` are ignored.
    :param marker_corners_mm: id -> ``(4, 2)`` corner positions on the board in mm, OpenCV corner
        order (from the board geometry).
    :param camera: when given, also solve the 3-D pose (``cv2.solvePnP``, planar IPPE then
        Levenberg-Marquardt refinement) over all visible marker corners.
    :param min_markers: fewest board markers accepted (default 3).
    :raises PoseError: fewer than ``min_markers`` board markers, or a degenerate configuration.
    """
    ids = sorted(i for i in markers_px if i in marker_corners_mm)
    if len(ids) < max(1, min_markers):
        raise PoseError(f"board pose needs {min_markers} board markers, {len(ids)} visible")
    obj = np.concatenate(
        [np.asarray(marker_corners_mm[i], dtype=np.float64).reshape(4, 2) for i in ids]
    )
    img = np.concatenate([np.asarray(markers_px[i], dtype=np.float64).reshape(4, 2) for i in ids])
    H, _mask = cv2.findHomography(obj, img, 0)
    if H is None or not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-12:
        raise PoseError("degenerate marker configuration: no homography")
    H = H / H[2, 2]
    frozen = {i: np.asarray(markers_px[i], dtype=np.float32).reshape(4, 2) for i in ids}
    if camera is None:
        err = _rms(_apply_h(H, obj), img)
        return BoardPose(H, tuple(ids), err, marker_corners_px=frozen)
    obj3 = np.column_stack([obj, np.zeros(len(obj))])
    try:
        ok, rvec, tvec = cv2.solvePnP(obj3, img, camera.K, camera.dist, flags=cv2.SOLVEPNP_IPPE)
        if not ok:
            raise PoseError("solvePnP found no pose")
        rvec, tvec = cv2.solvePnPRefineLM(obj3, img, camera.K, camera.dist, rvec, tvec)
    except cv2.error as exc:
        raise PoseError(f"solvePnP failed: {exc.err}") from None
    rvec = np.asarray(rvec, dtype=np.float64).reshape(3)
    tvec = np.asarray(tvec, dtype=np.float64).reshape(3)
    proj, _ = cv2.projectPoints(obj3.reshape(-1, 1, 3), rvec, tvec, camera.K, camera.dist)
    err = _rms(np.asarray(proj).reshape(-1, 2), img)
    return BoardPose(H, tuple(ids), err, camera, rvec, tvec, frozen)


def _rms(a: NDArray[Any], b: NDArray[Any]) -> float:
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return float(math.sqrt(np.mean(np.sum(d * d, axis=1)))) if len(d) else 0.0


def consistent_markers(
    found: Mapping[int, NDArray[Any]],
    extra: Mapping[int, NDArray[Any]],
    marker_corners_mm: Mapping[int, NDArray[Any]],
    camera: CameraModel | None,
) -> dict[int, NDArray[np.float32]]:
    """``found`` and those markers of ``extra`` (ids not in ``found``; from
    :meth:`MarkerDetector.detect_lenient`) that fit the board layout with it.

    The board's 3-D pose (``camera`` needed: a homography bends to fit four corner markers,
    one of them misplaced, almost exactly) is fitted to all the markers; when one is off its
    fitted place by more than :data:`RESCUE_FIT` of its side, the ``extra`` marker whose
    leaving out fits the rest best is dropped, and so on. Without a camera, or with fewer than
    :data:`MIN_MARKERS_FOR_POSE` markers in all (nothing to check against), only ``found``.

    :returns: id -> ``(4, 2) float32`` corner px.
    """
    out = {i: np.asarray(q, np.float32).reshape(4, 2) for i, q in found.items()}
    cand = {
        i: np.asarray(q, np.float32).reshape(4, 2)
        for i, q in extra.items()
        if i not in out and i in marker_corners_mm
    }
    if camera is None:
        return out

    def misfit(markers: dict[int, NDArray[np.float32]]) -> float:
        if len(markers) < MIN_MARKERS_FOR_POSE:
            return math.inf
        try:
            pose = estimate_board_pose(markers, marker_corners_mm, camera)
        except PoseError:
            return math.inf
        worst = 0.0
        for i, q in markers.items():
            at = pose.board_to_image(np.asarray(marker_corners_mm[i], np.float64).reshape(4, 2))
            off = float(np.max(np.linalg.norm(at - q, axis=1)))
            worst = max(worst, off / max(_perimeter(q) / 4.0, 1.0))
        return worst

    while cand:
        if misfit({**out, **cand}) <= RESCUE_FIT:
            return {**out, **cand}
        drop = min(cand, key=lambda i: misfit({**out, **{j: q for j, q in cand.items() if j != i}}))
        del cand[drop]
    return out


# -- tracking across frames --------------------------------------------------------------------
class TrackStatus(enum.Enum):
    """Outcome of one :meth:`BoardPoseTracker.update`."""

    OK = "ok"
    LOST = "lost"
    BAD_FRAME = "bad frame"


@dataclass(frozen=True)
class TrackResult:
    """One frame's board pose.

    :param status: ``OK`` with a pose; ``LOST`` when fewer than ``min_markers`` board markers are
        visible (``pose`` is None); ``BAD_FRAME`` when the frame could not be used.
    :param pose: the board pose (the same object as the previous frame's when the visible
        markers did not move by more than the tracker's ``still_px``).
    :param markers: board markers found in this frame, id -> ``(4, 2)`` px.
    :param full_detection: whether this frame ran a full-frame detection.
    :param message: human-readable explanation (which markers are missing, why the frame is bad).
    :param method: how the markers were checked: ``"full"`` (whole frame), ``"roi"`` (detection
        in ROIs around the last markers), ``"unchanged"`` (sub-pixel re-check of the last
        corners found no motion), ``""`` for a bad frame.
    """

    status: TrackStatus
    pose: BoardPose | None
    markers: Mapping[int, NDArray[np.float32]]
    full_detection: bool
    message: str = ""
    method: str = ""

    @property
    def ok(self) -> bool:
        return self.status is TrackStatus.OK


class BoardPoseTracker:
    """Keeps the board pose across frames.

    Per frame, cheapest first:

    1. *unchanged*: ``cv2.cornerSubPix`` re-refines the last marker corners (16 points, well
       under a millisecond); when none moved by more than ``still_px`` and each marker's patch
       kept its brightness and contrast (a hand over a marker changes them), the previous pose
       object is returned as it is;
    2. *roi*: markers are detected only in small ROIs around their last positions (margin
       ``roi_margin`` x marker size);
    3. *full*: full-frame detection on the first frame, at least every ``full_every`` frames
       (to pick up markers that came back into view), and whenever the ROI pass finds fewer
       markers than before.

    When the markers still visible moved by at most ``still_px`` the previous pose object is
    reused — also when it was built from more markers than are visible now — so a steady camera
    gives a steady pose and a hand over one corner marker does not degrade it.

    :param detector: a :class:`MarkerDetector` for the board dictionary.
    :param marker_corners_mm: id -> ``(4, 2)`` board-mm corners of the board markers.
    :param camera: optional camera model for the 3-D pose.
    :param full_every: full detection at least every this many frames (>= 1).
    :param roi_margin: ROI half-margin around a marker, in marker side lengths.
    :param still_px: largest corner motion (px) treated as "did not move".
    :param min_markers: fewest markers for a pose (default 3; fewer -> ``LOST``).
    :param cheap_check: try the sub-pixel "unchanged" re-check before any detection.
    """

    def __init__(
        self,
        detector: MarkerDetector,
        marker_corners_mm: Mapping[int, NDArray[Any]],
        camera: CameraModel | None = None,
        *,
        full_every: int = 30,
        roi_margin: float = 1.0,
        still_px: float = 0.5,
        min_markers: int = MIN_MARKERS_FOR_POSE,
        cheap_check: bool = True,
    ) -> None:
        if full_every < 1:
            raise ValueError("full_every must be >= 1")
        self.detector = detector
        self.marker_corners_mm = {
            int(k): np.asarray(v, dtype=np.float64).reshape(4, 2)
            for k, v in marker_corners_mm.items()
        }
        self.camera = camera
        self.full_every = full_every
        self.roi_margin = roi_margin
        self.still_px = still_px
        self.min_markers = min_markers
        self.cheap_check = cheap_check
        self._pose: BoardPose | None = None
        self._last: dict[int, NDArray[np.float32]] = {}
        self._stats: dict[int, tuple[float, float]] = {}
        self._since_full = 0
        self.frames = 0
        self.full_detections = 0

    @property
    def pose(self) -> BoardPose | None:
        """The last good pose (kept while the board is lost, for display), or None."""
        return self._pose

    def reset(self) -> None:
        """Forget the cached markers and pose; the next frame runs a full detection."""
        self._pose = None
        self._last = {}
        self._stats = {}
        self._since_full = 0

    def update(self, frame: Any) -> TrackResult:
        """Board pose for one frame; never raises.

        :param frame: ``(H, W, 3)`` uint8 BGR or ``(H, W)`` uint8 grey.
        """
        self.frames += 1
        try:
            gray = to_gray(frame)
        except (ValueError, TypeError) as exc:
            return TrackResult(TrackStatus.BAD_FRAME, None, {}, False, f"unusable frame: {exc}")
        try:
            return self._update(gray)
        except (cv2.error, ValueError, np.linalg.LinAlgError) as exc:
            return TrackResult(TrackStatus.BAD_FRAME, None, {}, False, f"detection failed: {exc}")

    def _rois(self, shape: tuple[int, ...]) -> dict[int, tuple[int, int, int, int]]:
        rois = {}
        for mid, quad in self._last.items():
            x0, y0 = quad.min(axis=0)
            x1, y1 = quad.max(axis=0)
            side = max(x1 - x0, y1 - y0)
            m = self.roi_margin * side + 4
            rois[mid] = (int(x0 - m), int(y0 - m), int(math.ceil(x1 + m)), int(math.ceil(y1 + m)))
        return rois

    @staticmethod
    def _patch_stats(gray: NDArray[np.uint8], quad: NDArray[np.float32]) -> tuple[float, float]:
        h, w = gray.shape
        x0, y0 = np.floor(quad.min(axis=0)).astype(int)
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
        patch = gray[max(0, y0) : min(h, y1), max(0, x0) : min(w, x1)]
        if patch.size == 0:
            return 0.0, 0.0
        mean, std = cv2.meanStdDev(patch)
        return float(mean[0, 0]), float(std[0, 0])

    def _unchanged(self, gray: NDArray[np.uint8]) -> bool:
        """Sub-pixel re-check of the last corners: True when nothing moved or got covered."""
        if self._pose is None or not self._last or set(self._stats) != set(self._last):
            return False
        h, w = gray.shape
        cells = self.detector.dictionary.markerSize + 2
        criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.01)
        for mid, quad in self._last.items():
            side = float(np.max(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)))
            win = int(max(2, min(8, 0.5 * side / cells)))
            if (
                quad[:, 0].min() < win + 1
                or quad[:, 1].min() < win + 1
                or quad[:, 0].max() > w - win - 2
                or quad[:, 1].max() > h - win - 2
            ):
                return False
            pts = quad.reshape(-1, 1, 2).astype(np.float32).copy()
            refined = cv2.cornerSubPix(gray, pts, (win, win), (-1, -1), criteria)
            if float(np.max(np.abs(refined.reshape(4, 2) - quad))) > self.still_px:
                return False
            mean0, std0 = self._stats[mid]
            mean, std = self._patch_stats(gray, quad)
            if abs(mean - mean0) > 12.0 or abs(std - std0) > 0.15 * std0 + 2.0:
                return False
        return True

    def _update(self, gray: NDArray[np.uint8]) -> TrackResult:
        wanted = set(self.marker_corners_mm)
        full = not self._last or self._since_full + 1 >= self.full_every
        if not full and self.cheap_check and self._unchanged(gray):
            self._since_full += 1
            missing = sorted(wanted - set(self._last))
            msg = f"markers {sorted(self._last)} unchanged" + (
                f", missing {missing}" if missing else ""
            )
            return TrackResult(
                TrackStatus.OK, self._pose, self._last, False, msg, method="unchanged"
            )
        found: dict[int, NDArray[np.float32]] = {}
        if not full:
            found = self.detector.detect_in_rois(gray, self._rois(gray.shape))
            found = {k: v for k, v in found.items() if k in wanted}
            if len(found) < len(self._last) or len(found) < self.min_markers:
                full = True
        if full:
            self._since_full = 0
            self.full_detections += 1
            found = {k: v for k, v in self.detector.detect(gray).items() if k in wanted}
            if len(found) < self.min_markers:
                # only where the board would be lost: a hand over one marker leaves a pose
                # from the others, and the lenient pass costs as much as the full one
                extra = {k: v for k, v in self.detector.detect_lenient(gray).items() if k in wanted}
                found = consistent_markers(found, extra, self.marker_corners_mm, self.camera)
        else:
            self._since_full += 1
        missing = sorted(wanted - set(found))
        method = "full" if full else "roi"
        if len(found) < self.min_markers:
            self._last = {}
            self._stats = {}
            msg = f"board lost: {len(found)} of {len(wanted)} markers visible (missing {missing})"
            return TrackResult(TrackStatus.LOST, None, found, full, msg, method)
        pose = self._pose
        # the markers still seen have not moved: keep the pose, even if it was built from more
        # markers than are visible now (a hand over one corner must not degrade the pose)
        still = (
            pose is not None
            and set(found) <= set(pose.marker_ids)
            and all(
                float(np.max(np.abs(found[i] - pose.marker_corners_px[i]))) <= self.still_px
                for i in found
            )
        )
        if not still:
            pose = estimate_board_pose(
                found, self.marker_corners_mm, self.camera, min_markers=self.min_markers
            )
        assert pose is not None
        self._pose = pose
        self._last = found
        self._stats = {i: self._patch_stats(gray, q) for i, q in found.items()}
        msg = f"markers {sorted(found)}" + (f", missing {missing}" if missing else "")
        return TrackResult(TrackStatus.OK, pose, found, full, msg, method)


# -- printable sheet ---------------------------------------------------------------------------
CORNER_NAMES = {0: "top-left", 1: "top-right", 2: "bottom-right", 3: "bottom-left"}

PAGE_SIZES_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
"""Printable page sizes ``(w, h)`` in mm."""


def marker_image(
    marker_id: int,
    side_px: int,
    dictionary: str | int | Path | cv2.aruco.Dictionary = BOARD_DICTIONARY,
) -> NDArray[np.uint8]:
    """One marker, black border included, ``(side_px, side_px) uint8`` (0 black, 255 white).

    :raises ValueError: an id outside the dictionary or ``side_px`` too small for its cells.
    """
    d = get_dictionary(dictionary)
    cells = d.markerSize + 2
    if not 0 <= marker_id < len(d.bytesList):
        raise ValueError(f"marker id {marker_id} is not in a {len(d.bytesList)}-marker dictionary")
    if side_px < cells:
        raise ValueError(f"side_px must be at least {cells}")
    return np.asarray(cv2.aruco.generateImageMarker(d, marker_id, side_px), np.uint8)


def marker_sheet(
    side_mm: float = 50.0,
    *,
    dpi: int = 300,
    page: str | tuple[float, float] = "a4",
    dictionary: str = BOARD_DICTIONARY,
    ids: Iterable[int] = BOARD_MARKER_IDS,
    quiet_mm: float = 5.0,
) -> NDArray[np.uint8]:
    """A printable page of board markers at true size: ``(H, W) uint8`` at ``dpi``, only 0 and 255.

    Each marker sits in a white quiet zone of ``quiet_mm`` (cut along the cut marks, which stay
    outside the quiet zone) with its id, board corner, dictionary and side length printed
    below; a 100 mm scale bar at the foot of the page checks the printer did not scale.

    :raises ValueError: when the markers do not fit on the page, or a bad size.
    """
    if side_mm <= 0 or dpi < 72 or quiet_mm < 0:
        raise ValueError("side_mm and quiet_mm must be positive, dpi >= 72")
    page_w, page_h = PAGE_SIZES_MM[page.lower()] if isinstance(page, str) else page
    px = dpi / 25.4  # px per mm

    def P(mm: float) -> int:
        return int(round(mm * px))

    ids = list(ids)
    margin, label_h, gap = 12.0, 12.0, 8.0
    cell_w = side_mm + 2 * quiet_mm
    cell_h = cell_w + label_h
    cols = max(1, min(len(ids), int((page_w - 2 * margin + gap) // (cell_w + gap))))
    rows = -(-len(ids) // cols)
    used_h = 20.0 + rows * (cell_h + gap) + 25.0
    if cell_w > page_w - 2 * margin or used_h > page_h - margin:
        raise ValueError(f"{len(ids)} markers of {side_mm:g} mm do not fit on a {page} page")
    sheet = np.full((P(page_h), P(page_w)), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = dpi / 300 * 1.2
    thick = max(1, P(0.25))
    title = f"Wandering Towers companion - board markers {dictionary}, side {side_mm:g} mm"
    cv2.putText(sheet, title, (P(margin), P(margin + 4)), font, scale, 0, max(1, P(0.3)))
    x_left = (page_w - (cols * cell_w + (cols - 1) * gap)) / 2
    side_px = P(side_mm)
    for k, marker_id in enumerate(ids):
        r, c = divmod(k, cols)
        x0 = x_left + c * (cell_w + gap)
        y0 = margin + 12.0 + r * (cell_h + gap)
        mx, my = P(x0 + quiet_mm), P(y0 + quiet_mm)
        sheet[my : my + side_px, mx : mx + side_px] = marker_image(marker_id, side_px, dictionary)
        # cut marks: short ticks outside each corner of the quiet zone
        for cx, sx in ((x0, -1), (x0 + cell_w, 1)):
            for cy, sy in ((y0, -1), (y0 + cell_w, 1)):
                a, b = P(cx), P(cy)
                cv2.line(sheet, (a + sx * P(1), b), (a + sx * P(3.5), b), 0, thick)
                cv2.line(sheet, (a, b + sy * P(1)), (a, b + sy * P(3.5)), 0, thick)
        where = CORNER_NAMES.get(marker_id, "")
        label = f"id {marker_id} {where}  {side_mm:g} mm"
        cv2.putText(sheet, label, (P(x0), P(y0 + cell_w + 7)), font, scale, 0, thick)
    # 100 mm scale bar with 10 mm ticks
    y = P(page_h - margin - 6)
    x0 = P(margin)
    cv2.line(sheet, (x0, y), (x0 + P(100), y), 0, max(1, P(0.4)))
    for t in range(11):
        tick = P(3 if t % 5 == 0 else 1.5)
        cv2.line(sheet, (x0 + P(10 * t), y), (x0 + P(10 * t), y - tick), 0, thick)
    cv2.putText(
        sheet, "100 mm - print at 100 % (no fit-to-page)", (x0, y + P(6)), font, scale, 0, thick
    )
    # pure black and white (text is drawn anti-aliased): crisp edges on any printer
    return np.where(sheet < 128, 0, 255).astype(np.uint8)
