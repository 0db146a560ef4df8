"""Camera intrinsics on OpenCV's real calibration photos, the camera file, and
``companion calibrate``."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.vision.calibrate import (
    CalibrationError,
    CharucoPattern,
    ChessboardPattern,
    calibrate_charuco,
    calibrate_chessboard,
    fx_error_percent,
    load_images,
)
from companion.vision.calibrate_cli import main as calibrate_main
from companion.vision.camera import CameraFileError, CameraModel, camera_from_fov
from companion.vision.markers import MarkerDetector


@pytest.fixture(scope="module")
def left_photos(realdata):
    paths = sorted((realdata / "opencv-left-chessboard").glob("left*.jpg"))
    assert len(paths) == 13
    return paths


@pytest.fixture(scope="module")
def charuco_photos(realdata):
    paths = sorted((realdata / "opencv-charuco-calib").glob("img_*.jpg"))
    assert len(paths) == 4
    return paths


# -- real photos ---------------------------------------------------------------------------------


@pytest.mark.realdata
def test_checkerboard_matches_opencv_reference(realdata, left_photos):
    ref = CameraModel.load(realdata / "opencv-left-chessboard" / "left_intrinsics.yml")
    assert ref.fx == pytest.approx(535.916, abs=0.001)
    # the reference run used CALIB_FIX_ASPECT_RATIO (flags 2 in its file)
    result = calibrate_chessboard(
        load_images(left_photos), ChessboardPattern(9, 6, 25.0), flags=cv2.CALIB_FIX_ASPECT_RATIO
    )
    assert result.views_used == 13 and result.views_rejected == 0
    assert result.rms <= 0.45
    assert abs(fx_error_percent(result.camera, 535.9)) <= 1.0
    assert result.camera.fx == pytest.approx(result.camera.fy)  # aspect ratio fixed
    assert abs(result.camera.cx - ref.cx) < 3 and abs(result.camera.cy - ref.cy) < 3
    assert all(v.error_px is not None and v.error_px < 1.5 for v in result.views)
    # left02 is the worst view in OpenCV's own per-view errors too (1.18 px there)
    worst = max(result.views, key=lambda v: v.error_px or 0.0)
    assert worst.name == "left02.jpg"


@pytest.mark.realdata
def test_charuco_matches_opencv_reference_within_1_percent(realdata, charuco_photos):
    ref = CameraModel.load(realdata / "opencv-charuco-calib" / "tutorial_camera_charuco.yml")
    pattern = CharucoPattern(5, 7, 40.0, 20.0, "DICT_6X6_250")
    result = calibrate_charuco(load_images(charuco_photos), pattern)
    assert result.views_used == 4
    assert all(v.points == 24 for v in result.views)
    assert abs(fx_error_percent(result.camera, ref.fx)) <= 1.0
    assert abs(100 * (result.camera.fy / ref.fy - 1)) <= 1.0
    assert result.rms == pytest.approx(ref.rms, abs=0.02)


@pytest.mark.realdata
def test_charuco_single_stage_is_the_plain_detector_path(charuco_photos):
    # without the marker-calibration stage the corners come from local homographies: this is
    # the "plain" path of the data's provenance note (fx about 457.3)
    pattern = CharucoPattern(5, 7, 40.0, 20.0, "DICT_6X6_250")
    result = calibrate_charuco(load_images(charuco_photos), pattern, two_stage=False)
    assert result.camera.fx == pytest.approx(457.3, abs=0.5)


@pytest.mark.realdata
def test_unusable_photos_are_dropped_with_a_reason(tmp_path, left_photos):
    (tmp_path / "garbage.jpg").write_bytes(b"\xff\xd8not really a jpeg")
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640), 200, np.uint8))
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(left_photos[0])), (320, 240)))
    paths = [*left_photos[:4], tmp_path / "garbage.jpg", blank, small, tmp_path / "gone.jpg"]
    lines: list[str] = []
    result = calibrate_chessboard(
        load_images(paths), ChessboardPattern(9, 6, 25.0), progress=lines.append
    )
    assert result.views_used == 4 and result.views_rejected == 4
    reasons = {v.name: v.reason for v in result.views if not v.used}
    assert reasons["garbage.jpg"] == "not a readable image"
    assert "checkerboard not found" in reasons["blank.png"]
    assert "differs" in reasons["small.png"]
    assert reasons["gone.jpg"] == "file not found"
    assert any("blank.png: rejected" in line for line in lines)


def test_too_few_views_is_a_clear_error():
    blank = np.full((120, 160, 3), 200, np.uint8)
    with pytest.raises(CalibrationError, match="only 0 photo"):
        calibrate_chessboard([("a", blank, ""), ("b", blank, "")], ChessboardPattern(9, 6, 25))
    with pytest.raises(CalibrationError, match="no readable photo"):
        calibrate_charuco([("a", None, "not a readable image")], CharucoPattern(5, 7, 40, 20))
    with pytest.raises(CalibrationError):
        CharucoPattern(5, 7, 20, 40)


# -- camera file ---------------------------------------------------------------------------------


def _camera():
    K = np.array([[812.3, 0.0, 640.7], [0.0, 809.9, 358.2], [0.0, 0.0, 1.0]])
    return CameraModel(K, np.array([-0.21, 0.08, 0.001, -0.0005, -0.02]), (1280, 720), 0.31, "t")


@pytest.mark.parametrize("suffix", [".yml", ".yaml", ".xml", ".json"])
def test_camera_file_round_trip(tmp_path, suffix):
    cam = _camera()
    path = cam.save(tmp_path / f"cam{suffix}")
    back = CameraModel.load(path)
    np.testing.assert_allclose(back.K, cam.K, rtol=1e-12)
    np.testing.assert_allclose(back.dist, cam.dist, rtol=1e-12)
    assert back.size == cam.size and back.rms == pytest.approx(cam.rms) and back.info == "t"


def test_bad_camera_files_are_refused(tmp_path):
    with pytest.raises(CameraFileError, match="not found"):
        CameraModel.load(tmp_path / "nope.yml")
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(CameraFileError):
        CameraModel.load(tmp_path / "a.json")
    (tmp_path / "b.json").write_text(json.dumps({"image_width": 640, "image_height": 480}))
    with pytest.raises(CameraFileError, match="camera_matrix"):
        CameraModel.load(tmp_path / "b.json")
    bad = _camera().to_dict()
    bad["camera_matrix"][0][0] = -5
    (tmp_path / "c.json").write_text(json.dumps(bad))
    with pytest.raises(CameraFileError, match="fx > 0"):
        CameraModel.load(tmp_path / "c.json")


def test_scaled_camera_projects_the_same_ray():
    cam = _camera()
    half = cam.scaled_to(640, 360)
    ray = np.array([[0.1, -0.05, 1.0]])
    p_full, _ = cv2.projectPoints(ray, np.zeros(3), np.zeros(3), cam.K, cam.dist)
    p_half, _ = cv2.projectPoints(ray, np.zeros(3), np.zeros(3), half.K, half.dist)
    # pixel centres: full-res px x maps to (x + 0.5) / 2 - 0.5 at half resolution
    np.testing.assert_allclose(p_half.reshape(2), (p_full.reshape(2) + 0.5) / 2 - 0.5, atol=1e-9)
    with pytest.raises(ValueError, match="aspect"):
        cam.scaled_to(640, 480)


def test_undistort_then_distort_returns_the_pixel():
    cam = _camera()
    px = np.array([[5.0, 7.0], [640.0, 360.0], [1275.0, 700.0]])
    ideal = cam.undistort_points(px)
    assert np.abs(ideal[0] - px[0]).max() > 5  # the corner really is distorted
    np.testing.assert_allclose(cam.distort_points(ideal), px, atol=1e-3)
    flat = camera_from_fov((640, 480), 60)
    np.testing.assert_allclose(flat.undistort_points(px[:2]), px[:2], atol=1e-9)


# -- command line -----------------------------------------------------------------------------


@pytest.mark.realdata
def test_cli_checkerboard_json_and_camera_file(tmp_path, capsys, realdata):
    out = tmp_path / "left.yml"
    rc = calibrate_main(
        [
            "intrinsics",
            "--chessboard",
            "9x6",
            "--square-mm",
            "25",
            "--fix-aspect-ratio",
            str(realdata / "opencv-left-chessboard"),
            "--out",
            str(out),
            "--json",
        ]
    )
    cap = capsys.readouterr()
    assert rc == 0
    summary = json.loads(cap.out)
    assert set(summary) == {"rms", "fx", "fy", "cx", "cy", "views_used", "views_rejected"}
    assert summary["views_used"] == 13 and summary["rms"] <= 0.45
    assert "[13/13] left14.jpg" in cap.err and "camera file written" in cap.err
    assert CameraModel.load(out).fx == pytest.approx(summary["fx"], abs=1e-3)


@pytest.mark.realdata
def test_cli_charuco(tmp_path, capsys, charuco_photos):
    out = tmp_path / "cam.json"
    args = ["intrinsics", "--charuco", "5x7", "--square-mm", "40", "--marker-mm", "20"]
    args += ["--dict", "DICT_6X6_250", *map(str, charuco_photos), "--out", str(out), "--json"]
    assert calibrate_main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert abs(summary["fx"] / 452.51 - 1) <= 0.01 and summary["views_rejected"] == 0


def test_cli_usage_errors_return_2(tmp_path, capsys):
    assert calibrate_main([]) == 2
    assert calibrate_main(["warp-drive"]) == 2
    assert calibrate_main(["intrinsics", "--chessboard", "9by6", "--square-mm", "25"]) == 2
    args = ["intrinsics", "--charuco", "5x7", "--square-mm", "40", "x.jpg", "--out", "c.yml"]
    assert calibrate_main(args) == 2  # --marker-mm missing
    assert calibrate_main(["markers", "--out", str(tmp_path / "sheet.svg")]) == 2
    assert "unknown subcommand" in capsys.readouterr().err


def test_cli_calibration_failure_returns_1_and_writes_nothing(tmp_path, capsys):
    img = tmp_path / "blank.png"
    cv2.imwrite(str(img), np.full((100, 100), 128, np.uint8))
    out = tmp_path / "cam.yml"
    rc = calibrate_main(
        ["intrinsics", "--chessboard", "9x6", "--square-mm", "25", str(img), "--out", str(out)]
    )
    assert rc == 1 and not out.exists()
    assert "calibration failed" in capsys.readouterr().err


def test_cli_marker_sheet_png_is_true_size_and_pdf_is_a_pdf(tmp_path):
    from PIL import Image

    png, pdf = tmp_path / "sheet.png", tmp_path / "sheet.pdf"
    assert calibrate_main(["markers", "--out", str(png)]) == 0
    assert calibrate_main(["markers", "--out", str(pdf), "--page", "letter"]) == 0
    with Image.open(png) as im:
        assert im.info["dpi"] == pytest.approx((300, 300), abs=0.01)
        sheet = np.asarray(im.convert("L"))
    found = MarkerDetector().detect(sheet)
    assert sorted(found) == [0, 1, 2, 3]
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_cli_profile_slot_dispatches(capsys):
    # the colour profile command lives in companion.vision.profile_setup; its own --help
    # answers through us
    assert calibrate_main(["profile", "--help"]) == 0
    assert "profile" in capsys.readouterr().out


def test_default_camera_profiles_load_and_match_their_field_of_view():
    import math
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "calibration" / "cameras"
    expected = {
        "picamera-v2-1640x1232.yml": ((1640, 1232), 62.2),
        "picamera-v3-2304x1296.yml": ((2304, 1296), 66.0),
        "webcam-1280x720.yml": ((1280, 720), 70.4),
    }
    assert sorted(p.name for p in folder.glob("*.yml")) == sorted(expected)
    for name, (size, hfov) in expected.items():
        cam = CameraModel.load(folder / name)
        assert cam.size == size
        assert math.degrees(2 * math.atan(size[0] / 2 / cam.fx)) == pytest.approx(hfov, abs=0.01)
        assert "calibrate" in cam.info


def _board_photo(camera: CameraModel, rvec, tvec):
    """A photo of the default board's four markers through ``camera`` (no other content)."""
    from companion.vision.geometry import BoardGeometry
    from companion.vision.markers import marker_image

    g = BoardGeometry.default()
    ppm = 4.0
    w, h = g.board_size
    canvas = np.full((int(h * ppm), int(w * ppm)), 230, np.uint8)
    for mid, quad in g.marker_corners().items():
        side = int(round((quad[1, 0] - quad[0, 0]) * ppm))
        x, y = (np.round(quad[0] * ppm)).astype(int)
        canvas[y : y + side, x : x + side] = marker_image(mid, side)
    R, _ = cv2.Rodrigues(np.asarray(rvec, np.float64))
    H = camera.K @ np.column_stack([R[:, 0], R[:, 1], tvec])
    to_canvas = np.array([[ppm, 0, -0.5], [0, ppm, -0.5], [0, 0, 1]])
    img = cv2.warpPerspective(
        canvas, H @ np.linalg.inv(to_canvas), camera.size, flags=cv2.INTER_AREA, borderValue=90
    )
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)


def test_cli_check_finds_the_board_and_the_camera_height(tmp_path, capsys):
    cam = camera_from_fov((1280, 960), 62.0)
    rvec = np.array([0.35, 0.0, 0.0])
    R, _ = cv2.Rodrigues(rvec)
    tvec = np.array([0.0, 0.0, 900.0]) - R @ np.array([240.0, 240.0, 0.0])
    photo = tmp_path / "board.png"
    cv2.imwrite(str(photo), _board_photo(cam, rvec, tvec))
    cam_file = cam.save(tmp_path / "cam.yml")
    annotated = tmp_path / "annotated.png"
    args = ["check", str(photo), "--camera", str(cam_file), "--out", str(annotated), "--json"]
    assert calibrate_main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["markers_found"] == [0, 1, 2, 3] and report["markers_missing"] == []
    true_height = -float((-R.T @ tvec)[2])
    assert report["camera_height_mm"] == pytest.approx(true_height, abs=5.0)
    assert report["reprojection_error_px"] < 0.5
    assert cv2.imread(str(annotated)).shape == (960, 1280, 3)
    # light, focus and the markers' size in px per cell, as the host page's camera check
    assert report["quality"]["marker_cell_px"] > 5 and report["quality"]["edge_px"] > 0
    assert isinstance(report["advice"], list)


def test_cli_check_without_a_board_says_which_markers_are_missing(tmp_path, capsys):
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), np.full((480, 640, 3), 120, np.uint8))
    assert calibrate_main(["check", str(photo)]) == 1
    err = capsys.readouterr().err
    assert "marker 0 (top-left): MISSING" in err and "no board pose" in err
    assert calibrate_main(["check", str(tmp_path / "nope.png")]) == 2


@pytest.mark.realdata
def test_four_charuco_views_warn_that_the_focal_length_is_uncertain(charuco_photos, left_photos):
    lines: list[str] = []
    pattern = CharucoPattern(5, 7, 40.0, 20.0, "DICT_6X6_250")
    result = calibrate_charuco(load_images(charuco_photos), pattern, progress=lines.append)
    assert result.std_intrinsics["fx"] / result.camera.fx > 0.01
    assert any(line.startswith("warning: the focal length is uncertain") for line in lines)
    lines.clear()
    calibrate_chessboard(
        load_images(left_photos), ChessboardPattern(9, 6, 25.0), progress=lines.append
    )
    assert not any(line.startswith("warning") for line in lines)


def test_cli_check_on_the_marker_sheet_fails_saying_what_to_fix(tmp_path, capsys):
    # the printed marker sheet has the four markers, but not where the board geometry puts
    # them: the pose fits badly and the check must say so instead of reporting success
    sheet = tmp_path / "sheet.png"
    assert calibrate_main(["markers", "--out", str(sheet)]) == 0
    capsys.readouterr()
    assert calibrate_main(["check", str(sheet), "--json"]) == 2
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["reprojection_error_px"] > 5.0 and report["reprojection_ok"] is False
    last = captured.err.strip().splitlines()[-1]
    assert "reprojection error" in last and "over 5 px" in last and "marker sheet" in last
    # a looser threshold given on purpose is honoured
    assert calibrate_main(["check", str(sheet), "--max-error-px", "1000"]) == 0


@pytest.mark.parametrize("text", ["hello", "not: [yaml", "%YAML:1.0\n---\n  - ]["])
def test_cli_a_camera_file_that_is_not_yaml_is_one_line_and_exit_2(tmp_path, capsys, text):
    cam = tmp_path / "cam.yml"
    cam.write_text(text)
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), np.full((480, 640, 3), 120, np.uint8))
    for argv in (
        ["check", str(photo), "--camera", str(cam)],
        [
            "profile",
            "--frame",
            str(photo),
            "--camera",
            str(cam),
            "--players",
            "3",
            "--out",
            str(tmp_path / "p.json"),
        ],
    ):
        assert calibrate_main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(cam) in err and "Traceback" not in err and err.count("\n") == 1, err
    assert not (tmp_path / "p.json").exists()
