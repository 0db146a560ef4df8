"""Board markers: detection on OpenCV's real tutorial photos, pose recovery on a synthetic
warped sheet, and the ROI-cached pose tracker."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from companion.vision.camera import CameraModel
from companion.vision.markers import (
    BOARD_MARKER_IDS,
    BoardPoseTracker,
    MarkerDetector,
    PoseError,
    TrackStatus,
    consistent_markers,
    estimate_board_pose,
    get_dictionary,
    marker_image,
    marker_sheet,
)

# -- real photos ---------------------------------------------------------------------------------

TUTORIAL_IMAGES = [
    "singlemarkersoriginal.jpg",
    "gboriginal.png",
    "choriginal.jpg",
    "chocclusion_original.jpg",
]


def _tutorial_case(realdata, name):
    folder = realdata / "opencv-aruco-tutorial"
    gt = json.loads((folder / "groundtruth_markers.json").read_text())
    assert name in gt, f"{name} missing from groundtruth_markers.json"
    entry = gt[name]
    dictionary = entry["dictionary"]
    if "tutorial_dict.yml" in dictionary:
        dictionary = str(folder / "tutorial_dict.yml")
    expected = {
        int(k): np.asarray(v, np.float64) for k, v in entry["corners_xy_px_by_marker_id"].items()
    }
    image = cv2.imread(str(folder / name))
    assert image is not None
    return dictionary, expected, image


@pytest.mark.realdata
@pytest.mark.parametrize("name", TUTORIAL_IMAGES)
def test_real_photos_every_id_and_corner_within_1px(realdata, name):
    # The ground truth is OpenCV's own test data, made without corner refinement (integer
    # contour corners); the detector run the same way must give every id within 1 px.
    dictionary, expected, image = _tutorial_case(realdata, name)
    found = MarkerDetector(dictionary, corner_refinement="none").detect(image)
    assert sorted(found) == sorted(expected)
    worst = max(float(np.abs(found[i] - expected[i]).max()) for i in expected)
    assert worst <= 1.0, f"{name}: corner off by {worst:.2f} px"


@pytest.mark.realdata
@pytest.mark.parametrize("name", TUTORIAL_IMAGES)
def test_real_photos_subpixel_refinement_keeps_ids_and_stays_near(realdata, name):
    # Sub-pixel corners sit on the black/white edge, about half a pixel outside the integer
    # contour corners of the ground truth; they must find the same ids and stay within 2 px.
    dictionary, expected, image = _tutorial_case(realdata, name)
    found = MarkerDetector(dictionary).detect(image)
    assert sorted(found) == sorted(expected)
    worst = max(float(np.abs(found[i] - expected[i]).max()) for i in expected)
    assert worst <= 2.0


def test_only_requested_ids_are_reported(realdata):
    dictionary, expected, image = _tutorial_case(realdata, "singlemarkersoriginal.jpg")
    wanted = sorted(expected)[:2]
    found = MarkerDetector(dictionary, ids=wanted).detect(image)
    assert sorted(found) == wanted


def test_dictionary_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="unknown ArUco dictionary"):
        get_dictionary("DICT_9X9_7")
    bad = tmp_path / "not_a_dict.yml"
    bad.write_text("%YAML:1.0\n---\nfoo: 1\n")
    with pytest.raises(ValueError):
        get_dictionary(bad)
    assert get_dictionary("4x4_50").markerSize == 4


# -- a synthetic board -----------------------------------------------------------------------------

SIDE = 50.0
BOARD_W, BOARD_H = 480.0, 480.0
MARGIN = 10.0
PX_PER_MM = 4.0


def board_marker_corners(side=SIDE, w=BOARD_W, h=BOARD_H, m=MARGIN):
    origins = {
        0: (m, m),
        1: (w - m - side, m),
        2: (w - m - side, h - m - side),
        3: (m, h - m - side),
    }
    sq = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float64)
    return {i: sq + np.array(o) for i, o in origins.items()}


def board_canvas():
    """The board at PX_PER_MM, white with the printed markers (from our own sheet renderer)."""
    canvas = np.full((int(BOARD_H * PX_PER_MM), int(BOARD_W * PX_PER_MM)), 235, np.uint8)
    side_px = int(SIDE * PX_PER_MM)
    for i, quad in board_marker_corners().items():
        x, y = (quad[0] * PX_PER_MM).astype(int)
        canvas[y : y + side_px, x : x + side_px] = marker_image(i, side_px)
    # some texture in the middle so the image is not trivially empty
    cv2.circle(canvas, (960, 960), 500, 90, 40)
    return canvas


def mm_to_canvas():
    """board mm -> canvas pixel (pixel-centre convention: the board edge at x=0 is px -0.5)."""
    return np.array([[PX_PER_MM, 0, -0.5], [0, PX_PER_MM, -0.5], [0, 0, 1]], np.float64)


def render(h_board_to_image, size=(1280, 960), noise_seed=None):
    warp = h_board_to_image @ np.linalg.inv(mm_to_canvas())
    img = cv2.warpPerspective(board_canvas(), warp, size, flags=cv2.INTER_AREA, borderValue=128)
    img = cv2.GaussianBlur(img, (3, 3), 0.8)
    if noise_seed is not None:
        rng = np.random.default_rng(noise_seed)
        img = np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8)
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)


def apply_h(H, pts):
    p = np.column_stack([pts, np.ones(len(pts))]) @ H.T
    return p[:, :2] / p[:, 2:]


def camera_and_pose():
    K = np.array([[1000.0, 0, 639.5], [0, 1000.0, 479.5], [0, 0, 1]])
    cam = CameraModel(K, np.zeros(5), (1280, 960))
    # camera 700 mm from the board, looking down at it from the player's side, tilted ~25 deg
    rvec = np.array([0.45, 0.05, 0.03])
    R, _ = cv2.Rodrigues(rvec)
    centre = np.array([BOARD_W / 2, BOARD_H / 2, 0.0])
    tvec = np.array([0.0, 0.0, 760.0]) - R @ centre
    H = K @ np.column_stack([R[:, 0], R[:, 1], tvec])
    return cam, rvec, tvec, H / H[2, 2]


GRID = np.array([[x, y] for x in np.linspace(0, BOARD_W, 9) for y in np.linspace(0, BOARD_H, 9)])


def test_homography_recovered_from_warped_sheet_markers():
    _, _, _, H_true = camera_and_pose()
    image = render(H_true, noise_seed=1)
    found = MarkerDetector().detect(image)
    assert sorted(found) == list(BOARD_MARKER_IDS)
    pose = estimate_board_pose(found, board_marker_corners())
    err = np.abs(pose.board_to_image(GRID) - apply_h(H_true, GRID)).max()
    assert err < 0.5, f"board points off by {err:.2f} px"
    assert pose.reprojection_error_px < 0.6
    back = pose.image_to_board(apply_h(H_true, GRID))
    assert np.abs(back - GRID).max() < 0.5  # mm


def test_3d_pose_recovered_with_camera_model():
    cam, rvec, tvec, H_true = camera_and_pose()
    image = render(H_true, noise_seed=2)
    found = MarkerDetector().detect(image)
    pose = estimate_board_pose(found, board_marker_corners(), cam)
    assert pose.has_3d
    R_true, _ = cv2.Rodrigues(rvec)
    R_est, _ = cv2.Rodrigues(pose.rvec)
    angle = math.degrees(math.acos(np.clip((np.trace(R_true.T @ R_est) - 1) / 2, -1, 1)))
    assert angle < 0.5
    cam_true = -R_true.T @ tvec
    assert np.linalg.norm(pose.camera_position_mm() - cam_true) < 5.0  # mm at ~760 mm away
    # a point 36 mm above the board (one tower tier; z is negative towards the camera)
    top = np.array([[240.0, 240.0, -36.0]])
    expected, _ = cv2.projectPoints(top, rvec, tvec, cam.K, cam.dist)
    assert np.abs(pose.project(top) - expected.reshape(-1, 2)).max() < 1.0


def test_pose_needs_three_markers_and_works_with_three():
    _, _, _, H_true = camera_and_pose()
    found = MarkerDetector().detect(render(H_true))
    three = {i: found[i] for i in (0, 1, 2)}
    pose = estimate_board_pose(three, board_marker_corners())
    assert np.abs(pose.board_to_image(GRID) - apply_h(H_true, GRID)).max() < 1.0
    with pytest.raises(PoseError, match="3 board markers, 2 visible"):
        estimate_board_pose({i: found[i] for i in (0, 1)}, board_marker_corners())


def test_projecting_off_the_plane_without_camera_is_refused():
    _, _, _, H_true = camera_and_pose()
    pose = estimate_board_pose(MarkerDetector().detect(render(H_true)), board_marker_corners())
    with pytest.raises(ValueError, match="camera model"):
        pose.project(np.array([[0.0, 0.0, -10.0]]))


def test_printed_sheet_holds_the_four_board_markers_at_true_size():
    sheet = marker_sheet(50.0, dpi=300)
    assert sheet.shape == (round(297 / 25.4 * 300), round(210 / 25.4 * 300))
    found = MarkerDetector().detect(sheet)
    assert sorted(found) == [0, 1, 2, 3]
    for quad in found.values():
        side_px = np.linalg.norm(quad[1] - quad[0])
        assert abs(side_px / 300 * 25.4 - 50.0) < 0.3  # mm
    with pytest.raises(ValueError, match="do not fit"):
        marker_sheet(150.0)


# -- tracker ------------------------------------------------------------------------------------


def make_tracker(**kw):
    return BoardPoseTracker(MarkerDetector(), board_marker_corners(), **kw)


def test_tracker_cached_path_matches_full_detection():
    _, _, _, H_true = camera_and_pose()
    frame = render(H_true, noise_seed=3)
    tracker = make_tracker(full_every=5, still_px=0.0, cheap_check=False)
    results = [tracker.update(frame) for _ in range(7)]
    assert [r.method for r in results] == ["full", "roi", "roi", "roi", "roi", "full", "roi"]
    # a full detection on the first frame and then at least every 5th frame
    assert [r.full_detection for r in results] == [True, False, False, False, False, True, False]
    assert all(r.status is TrackStatus.OK for r in results)
    full = estimate_board_pose(MarkerDetector().detect(frame), board_marker_corners())
    for r in results:
        assert (
            np.abs(r.pose.homography - full.homography).max()
            < 1e-6 * np.abs(full.homography).max() + 1e-9
        )
        assert np.abs(r.pose.board_to_image(GRID) - full.board_to_image(GRID)).max() < 0.05


def test_tracker_reuses_pose_while_still_and_follows_a_moved_board():
    _, _, _, H_true = camera_and_pose()
    tracker = make_tracker(full_every=100)
    first = tracker.update(render(H_true, noise_seed=4))
    again = tracker.update(render(H_true, noise_seed=40))  # same board, new sensor noise
    assert again.pose is first.pose and again.method == "unchanged"
    shift = np.array([[1, 0, 12.0], [0, 1, -7.0], [0, 0, 1]])  # board nudged by 12 px, -7 px
    moved = tracker.update(render(shift @ H_true, noise_seed=5))
    assert moved.ok and moved.method == "roi"
    err = np.abs(moved.pose.board_to_image(GRID) - apply_h(shift @ H_true, GRID)).max()
    assert err < 0.5


def test_tracker_reports_lost_when_markers_are_covered_and_recovers():
    _, _, _, H_true = camera_and_pose()
    frame = render(H_true, noise_seed=6)
    tracker = make_tracker(full_every=100)
    assert tracker.update(frame).ok
    covered = frame.copy()
    for i in (0, 1):  # two hands over two corners
        quad = apply_h(H_true, board_marker_corners()[i])
        x0, y0 = quad.min(axis=0).astype(int) - 10
        x1, y1 = quad.max(axis=0).astype(int) + 10
        covered[y0:y1, x0:x1] = (60, 90, 150)
    lost = tracker.update(covered)
    assert lost.status is TrackStatus.LOST and lost.pose is None
    assert "2 of 4" in lost.message and "missing [0, 1]" in lost.message
    assert tracker.pose is not None  # the last good pose stays available
    back = tracker.update(frame)
    assert back.ok and back.full_detection


def test_tracker_one_marker_covered_still_gives_a_pose():
    _, _, _, H_true = camera_and_pose()
    frame = render(H_true, noise_seed=7)
    tracker = make_tracker(full_every=100)
    first = tracker.update(frame)

    def cover_marker_3(image, H):
        out = image.copy()
        quad = apply_h(H, board_marker_corners()[3])
        x0, y0 = quad.min(axis=0).astype(int) - 10
        x1, y1 = quad.max(axis=0).astype(int) + 10
        out[y0:y1, x0:x1] = 30
        return out

    r = tracker.update(cover_marker_3(frame, H_true))
    assert r.ok and sorted(r.markers) == [0, 1, 2] and "missing [3]" in r.message
    # the board did not move: the four-marker pose is kept, not replaced by a weaker one
    assert r.pose is first.pose
    # the board moves while marker 3 stays covered: a new pose from the three others
    shift = np.array([[1, 0, -9.0], [0, 1, 6.0], [0, 0, 1]])
    moved = tracker.update(cover_marker_3(render(shift @ H_true, noise_seed=11), shift @ H_true))
    assert moved.ok and moved.pose.marker_ids == (0, 1, 2)
    err = np.abs(moved.pose.board_to_image(GRID) - apply_h(shift @ H_true, GRID)).max()
    assert err < 1.0


@pytest.mark.parametrize(
    "bad",
    [
        None,
        np.zeros((0, 0, 3), np.uint8),
        np.zeros((10, 10, 3), np.float32),
        np.zeros((10, 10, 2), np.uint8),
        "not an image",
    ],
)
def test_tracker_never_raises_on_a_bad_frame(bad):
    _, _, _, H_true = camera_and_pose()
    tracker = make_tracker()
    good = tracker.update(render(H_true))
    r = tracker.update(bad)
    assert r.status is TrackStatus.BAD_FRAME and r.pose is None and r.message
    assert tracker.pose is good.pose  # the last good pose is kept
    blank = tracker.update(np.full((480, 640, 3), 128, np.uint8))
    assert blank.status is TrackStatus.LOST


def test_tracker_cheap_check_notices_a_small_nudge_and_a_covered_marker():
    _, _, _, H_true = camera_and_pose()
    tracker = make_tracker(full_every=100)
    tracker.update(render(H_true, noise_seed=8))
    nudge = np.array([[1, 0, 1.5], [0, 1, 0.0], [0, 0, 1]])  # the camera bumped by 1.5 px
    r = tracker.update(render(nudge @ H_true, noise_seed=9))
    assert r.method == "roi" and r.pose is not None
    assert np.abs(r.pose.board_to_image(GRID) - apply_h(nudge @ H_true, GRID)).max() < 0.5
    covered = render(nudge @ H_true, noise_seed=10)
    quad = apply_h(nudge @ H_true, board_marker_corners()[2])
    x0, y0 = quad.min(axis=0).astype(int) - 6
    x1, y1 = quad.max(axis=0).astype(int) + 6
    covered[y0:y1, x0:x1] = (70, 110, 170)  # a hand over marker 2
    r = tracker.update(covered)
    assert r.method == "full" and sorted(r.markers) == [0, 1, 3]


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["img_00.jpg", "img_01.jpg", "img_02.jpg", "img_03.jpg"])
def test_real_photo_pose_predicts_the_chessboard_corners(realdata, name):
    # OpenCV's real ChArUco photos: the board pose from the ArUco markers alone (with OpenCV's
    # reference camera) must land on the independently detected chessboard corners.
    from companion.vision.calibrate import CharucoPattern, find_charuco

    folder = realdata / "opencv-charuco-calib"
    camera = CameraModel.load(folder / "tutorial_camera_charuco.yml")
    pattern = CharucoPattern(5, 7, 40.0, 20.0, "DICT_6X6_250")
    board = pattern.board()
    corners_mm = {
        int(i): np.asarray(o, np.float64)[:, :2]
        for i, o in zip(board.getIds(), board.getObjPoints(), strict=True)
    }
    image = cv2.imread(str(folder / name))
    found = MarkerDetector("DICT_6X6_250").detect(image)
    chess = find_charuco(image, pattern, board=board)
    assert len(found) == 17 and len(chess.image_points) == 24

    def miss(markers):
        pose = estimate_board_pose(markers, corners_mm, camera)
        predicted = pose.board_to_image(chess.object_points[:, :2])
        return np.linalg.norm(predicted - chess.image_points, axis=1)

    assert miss(found).max() < 1.0  # px, all 17 markers
    # only the four outermost markers, as on the game board
    four = {i: found[i] for i in (0, 1, 12, 14)}
    assert miss(four).max() < 1.5


# -- blurred markers: the lenient second pass --------------------------------------------------


def motion_blur(img, length, angle_deg):
    """A linear motion blur of ``length`` px at ``angle_deg`` (a camera shaken in the exposure)."""
    k = np.zeros((length, length), np.float32)
    k[length // 2, :] = 1.0
    rot = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), angle_deg, 1.0)
    k = cv2.warpAffine(k, rot, (length, length))
    return cv2.filter2D(img, -1, k / k.sum())


def small_board():
    """The board seen from farther away (markers about 17 px on a side): camera, homography,
    frame size."""
    cam, _, _, H = camera_and_pose()
    S = np.diag([0.3, 0.3, 1.0])
    return CameraModel(S @ cam.K, np.zeros(5), (384, 288)), S @ H, (384, 288)


def test_a_shaken_camera_keeps_the_board_where_a_strict_pass_loses_it():
    cam, H, size = small_board()
    frame = motion_blur(render(H, size=size, noise_seed=3), 4, 30)
    strict = MarkerDetector(ids=range(4)).detect(frame)
    assert len(strict) < 3  # the ordinary pass alone: "board lost"
    result = make_tracker(camera=cam).update(frame)
    assert result.ok and sorted(result.markers) == [0, 1, 2, 3]
    # and the pose is right: board points land within a pixel and a half of the truth
    err = np.abs(result.pose.board_to_image(GRID) - apply_h(H, GRID)).max()
    assert err < 1.5


def test_a_lenient_marker_off_the_board_layout_is_not_used():
    cam, H, size = small_board()
    frame = render(H, size=size, noise_seed=4)
    found = MarkerDetector(ids=range(4)).detect(frame)
    assert sorted(found) == [0, 1, 2, 3]
    layout = board_marker_corners()
    side = float(np.linalg.norm(found[2][1] - found[2][0]))
    for missing in range(4):
        strict = {i: q for i, q in found.items() if i != missing}
        # the marker where it belongs is taken; the same id decoded from clutter a marker side
        # or more from its place is not (it would bend the pose)
        assert sorted(consistent_markers(strict, {missing: found[missing]}, layout, cam)) == [
            0,
            1,
            2,
            3,
        ]
        for shift in ((side, 0.0), (0.0, -side), (side, side), (-4 * side, -3 * side)):
            wrong = {missing: found[missing] + np.float32(shift)}
            assert sorted(consistent_markers(strict, wrong, layout, cam)) == sorted(strict)
    # two markers, or no camera model, cannot check a third: the lenient ones are not used
    assert sorted(consistent_markers({0: found[0]}, {1: found[1]}, layout, cam)) == [0]
    strict = {i: found[i] for i in (0, 1, 3)}
    assert sorted(consistent_markers(strict, {2: found[2]}, layout, None)) == [0, 1, 3]
