"""Camera model: intrinsics ``K``, lens distortion and image size, with load/save.

A camera file is either OpenCV FileStorage YAML/XML (``.yml``, ``.yaml``, ``.xml``) with the keys
OpenCV's own calibration samples write (``image_width``, ``image_height``, ``camera_matrix``,
``distortion_coefficients``, optionally ``avg_reprojection_error``) — so OpenCV's reference files
load unchanged — or JSON (``.json``)::

    {"image_width": 640, "image_height": 480,
     "camera_matrix": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]],
     "distortion_coefficients": [k1, k2, p1, p2, k3],
     "avg_reprojection_error": 0.39, "info": "free text"}

Units: pixels for ``K`` and the image size; distortion coefficients are dimensionless
(OpenCV's model, 4, 5, 8, 12 or 14 coefficients).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

_DIST_LENGTHS = (4, 5, 8, 12, 14)


class CameraFileError(ValueError):
    """A camera file that is missing, unreadable or holds inconsistent values."""


@dataclass(frozen=True)
class CameraModel:
    """A pinhole camera with OpenCV's distortion model.

    :param K: ``(3, 3) float64`` camera matrix in px (``fx, fy`` focal lengths, ``cx, cy``
        principal point).
    :param dist: ``(N,) float64`` distortion coefficients, N in 4, 5, 8, 12, 14 (0 means none).
    :param size: ``(w, h)`` image size in px the model was calibrated for.
    :param rms: RMS reprojection error of the calibration in px, when known.
    :param info: free text (where the model came from).
    :raises ValueError: on a K that is not a 3x3 upper-triangular matrix with positive focal
        lengths, on a bad number of distortion coefficients or a non-positive size.
    """

    K: FloatArray
    dist: FloatArray = field(default_factory=lambda: np.zeros(5))
    size: tuple[int, int] = (640, 480)
    rms: float | None = None
    info: str = ""

    def __post_init__(self) -> None:
        K = np.asarray(self.K, dtype=np.float64)
        if K.shape != (3, 3) or not np.all(np.isfinite(K)):
            raise ValueError(f"camera matrix must be a finite 3x3 matrix, got shape {K.shape}")
        if K[0, 0] <= 0 or K[1, 1] <= 0 or abs(K[2, 2] - 1.0) > 1e-9:
            raise ValueError("camera matrix needs fx > 0, fy > 0 and K[2,2] == 1")
        if abs(K[1, 0]) + abs(K[2, 0]) + abs(K[2, 1]) > 1e-12:
            raise ValueError("camera matrix must be upper triangular")
        dist = np.asarray(self.dist, dtype=np.float64).reshape(-1)
        if dist.size == 0:
            dist = np.zeros(5)
        if dist.size not in _DIST_LENGTHS or not np.all(np.isfinite(dist)):
            raise ValueError(
                f"distortion needs 4, 5, 8, 12 or 14 finite coefficients, got {dist.size}"
            )
        w, h = (int(v) for v in self.size)
        if w <= 0 or h <= 0:
            raise ValueError(f"image size must be positive, got {self.size}")
        K.setflags(write=False)
        dist.setflags(write=False)
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "dist", dist)
        object.__setattr__(self, "size", (w, h))

    # -- convenient views ---------------------------------------------------------------------
    @property
    def fx(self) -> float:
        return float(self.K[0, 0])

    @property
    def fy(self) -> float:
        return float(self.K[1, 1])

    @property
    def cx(self) -> float:
        return float(self.K[0, 2])

    @property
    def cy(self) -> float:
        return float(self.K[1, 2])

    # -- operations ---------------------------------------------------------------------------
    def scaled_to(self, w: int, h: int) -> CameraModel:
        """The same camera at another resolution of the same sensor area (e.g. a binned mode).

        Focal lengths and principal point scale with the image; distortion is unchanged.
        Uses OpenCV's pixel-centre convention (pixel *i* covers ``[i-0.5, i+0.5]``).

        :raises ValueError: when the aspect ratio differs by more than 1 % (a crop, not a
            scale: the principal point cannot be inferred).
        """
        w0, h0 = self.size
        sx, sy = w / w0, h / h0
        if w <= 0 or h <= 0 or abs(sx / sy - 1.0) > 0.01:
            raise ValueError(f"cannot scale a {w0}x{h0} camera to {w}x{h}: aspect ratio differs")
        K = self.K.copy()
        K[0, 0] *= sx
        K[0, 1] *= sx
        K[1, 1] *= sy
        K[0, 2] = (K[0, 2] + 0.5) * sx - 0.5
        K[1, 2] = (K[1, 2] + 0.5) * sy - 0.5
        rms = None if self.rms is None else self.rms * math.sqrt(sx * sy)
        return CameraModel(K, self.dist.copy(), (w, h), rms, self.info)

    def undistort_points(self, points_px: NDArray[Any]) -> FloatArray:
        """Remove lens distortion from pixel positions.

        :param points_px: ``(N, 2)`` pixel positions in the distorted image.
        :returns: ``(N, 2) float64`` positions an ideal pinhole camera with the same ``K`` sees.
        """
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
        if pts.size == 0:
            return np.zeros((0, 2))
        out = cv2.undistortPoints(
            pts,
            self.K,
            self.dist,
            R=None,
            P=self.K,
            criteria=(cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-6),
        )
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def distort_points(self, points_px: NDArray[Any]) -> FloatArray:
        """Inverse of :meth:`undistort_points`: ideal pinhole px ``(N, 2)`` -> distorted px."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        if pts.size == 0:
            return np.zeros((0, 2))
        rays = (np.linalg.inv(self.K) @ np.column_stack([pts, np.ones(len(pts))]).T).T
        img, _ = cv2.projectPoints(
            rays.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), self.K, self.dist
        )
        return np.asarray(img, dtype=np.float64).reshape(-1, 2)

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict in the camera-file shape (see the module docstring)."""
        out: dict[str, Any] = {
            "image_width": self.size[0],
            "image_height": self.size[1],
            "camera_matrix": self.K.tolist(),
            "distortion_coefficients": self.dist.tolist(),
        }
        if self.rms is not None:
            out["avg_reprojection_error"] = self.rms
        if self.info:
            out["info"] = self.info
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CameraModel:
        """Inverse of :meth:`to_dict`. :raises CameraFileError: on missing or bad fields."""
        try:
            K = np.asarray(data["camera_matrix"], dtype=np.float64)
            dist = np.asarray(data.get("distortion_coefficients", []), dtype=np.float64)
            size = (int(data["image_width"]), int(data["image_height"]))
            rms_raw = data.get("avg_reprojection_error")
            rms = None if rms_raw is None else float(rms_raw)
            return cls(K, dist, size, rms, str(data.get("info", "")))
        except KeyError as exc:
            raise CameraFileError(f"camera data lacks {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise CameraFileError(f"bad camera data: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write the camera file; JSON for ``.json``, else OpenCV FileStorage (YAML/XML).

        :returns: the path written.
        :raises CameraFileError: when the file cannot be written.
        """
        path = Path(path)
        if path.suffix.lower() == ".json":
            try:
                path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
            except OSError as exc:
                raise CameraFileError(f"cannot write {path}: {exc}") from None
            return path
        fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
        if not fs.isOpened():
            raise CameraFileError(f"cannot write {path}")
        try:
            fs.write("image_width", self.size[0])
            fs.write("image_height", self.size[1])
            fs.write("camera_matrix", self.K)
            fs.write("distortion_coefficients", self.dist.reshape(1, -1))
            if self.rms is not None:
                fs.write("avg_reprojection_error", float(self.rms))
            if self.info:
                fs.write("info", self.info)
        finally:
            fs.release()
        return path

    @classmethod
    def load(cls, path: str | Path) -> CameraModel:
        """Read a camera file written by :meth:`save` or by OpenCV's calibration samples.

        :raises CameraFileError: when the file is missing, unreadable or inconsistent.
        """
        path = Path(path)
        data: dict[str, Any]
        if not path.is_file():
            raise CameraFileError(f"camera file not found: {path}")
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise CameraFileError(f"cannot read {path}: {exc}") from None
            if not isinstance(data, dict):
                raise CameraFileError(f"{path}: expected a JSON object")
            return cls.from_dict(data)
        try:
            fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
        except cv2.error as exc:
            raise CameraFileError(f"cannot parse {path}: {exc.err}") from None
        except SystemError:  # what OpenCV's Python binding raises for text it cannot parse
            raise CameraFileError(
                f"cannot parse {path}: not an OpenCV YAML/XML camera file "
                "(write one with companion calibrate intrinsics)"
            ) from None
        if not fs.isOpened():
            raise CameraFileError(f"cannot open {path}")
        try:
            data = {}
            for key in ("camera_matrix", "distortion_coefficients"):
                node = fs.getNode(key)
                if not node.empty():
                    data[key] = node.mat()
            for key in ("image_width", "image_height", "avg_reprojection_error"):
                node = fs.getNode(key)
                if not node.empty():
                    data[key] = node.real()
            node = fs.getNode("info")
            if not node.empty() and node.isString():
                data["info"] = node.string()
        except cv2.error as exc:  # valid YAML, but not a mapping of the camera's keys
            raise CameraFileError(f"cannot read {path}: {exc.err}") from None
        finally:
            fs.release()
        return cls.from_dict(data)


def camera_from_fov(size: tuple[int, int], hfov_deg: float) -> CameraModel:
    """An ideal distortion-free camera of horizontal field of view ``hfov_deg`` (degrees).

    Useful as a starting point before calibration and for synthetic frames.

    :raises ValueError: unless 0 < hfov_deg < 180.
    """
    if not 0 < hfov_deg < 180:
        raise ValueError(f"field of view must be in (0, 180) degrees, got {hfov_deg}")
    w, h = size
    f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]], dtype=np.float64)
    return CameraModel(K, np.zeros(5), (w, h), None, f"ideal camera, {hfov_deg:g} deg hfov")
