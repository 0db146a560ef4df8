"""The table renderer: a camera frame of any game state, with ground truth beside it.

No photos of *The Wandering Towers* exist that the project can use, so development, tests,
benchmarks and the laptop demo's simulated table draw their own camera frames. A frame is a
perspective image of the board (:mod:`companion.vision.geometry`) seen by a pinhole camera with
mild lens distortion (OpenCV's model), tilted 0-35 degrees from vertical, from any side, at any
roll; lit by a light of 2700-6500 K at 0.3-1.5x intensity with soft shadows; with sensor
noise, blur and JPEG compression; and sometimes a hand and arm over the board.

Content: the track tiles (texture, crest marks, setup marks, fountain/web inserts), tapered
crenellated towers in 3-D (meshes projected with :func:`cv2.projectPoints`, painter's algorithm
by depth, Lambert shading) with crest / plain / magic roofs, stacks up to 10 high, wizards in the
six colours (hue, saturation and value varied per render), the black raven castle, the witch and
raven tokens, and the four ArUco markers (``cv2.aruco.generateImageMarker``).

Use::

    table = random_setup(rng)                      # camera, pose, light, look: one session
    res = render(state, rng, setup=table)          # res.frame (H, W, 3) uint8 BGR, res.observation
    render_hand_sequence(state, rng, setup=table)  # a hand passes over a still board
    render_move_sequence(before, after, rng, setup=table)  # a move made under a hand
    write_camera_file("sim.yml", table.camera)     # what a calibration would give the detector

``state`` is a :class:`~companion.rules.model.GameState` or the state JSON of docs/state-model.md.
Everything random comes from the ``numpy.random.Generator`` passed in: the same seed gives the
same frame; within a session a still board draws the same pieces frame after frame (only noise
and a little exposure flicker change). ``python -m companion.sim.render sample|time`` writes
example frames or measures the time per frame.

The detector may use the frame and the camera file (:func:`write_camera_file`), as a
calibrated real camera would give; everything else in :class:`RenderResult` is ground truth for
tests and benchmarks only.

Coordinates: board mm as in :mod:`companion.vision.geometry` (x right, y down, z up). Camera
poses are OpenCV's (``rvec``, ``tvec`` map the right-handed board frame, where above the board is
negative z, into the camera frame).

The renderer's parts: :mod:`~companion.sim.render.camera` (camera models and poses),
:mod:`~companion.sim.render.light` (light, the pieces' look, a table setup),
:mod:`~companion.sim.render.scene` (the board state as 3-D faces),
:mod:`~companion.sim.render.hands`, :mod:`~companion.sim.render.frame` (one frame and its truth),
:mod:`~companion.sim.render.sequences` and :mod:`~companion.sim.render.cli`.
:mod:`~companion.sim.render.camera_model` is a Raspberry Pi camera as a separate stage after
``render(..., ideal=True)`` (sensor noise, colour pipeline, glare, shadows, blur, compression,
sensor modes, board fill, a bumped camera), for benchmarks that must hold at a real table.
"""

from __future__ import annotations

from companion.sim.render.camera import (
    ART_VARIANTS,
    FRAME_SIZE,
    INTENSITY_RANGE,
    JPEG_RANGE,
    KELVIN_RANGE,
    TABLE_PPM,
    TABLE_SIZE,
    TEXTURE_PAD,
    TEXTURE_PPM,
    TILT_RANGE,
    WIZARD_HSV,
    CameraPose,
    RenderError,
    fit_pose,
    look_at,
    random_camera,
    random_pose,
    simulated_camera,
    write_camera_file,
)
from companion.sim.render.frame import (
    NOISE_LEVELS,
    RenderResult,
    render,
)
from companion.sim.render.hands import (
    HandPose,
    random_hand,
)
from companion.sim.render.light import (
    Appearance,
    Lighting,
    TableSetup,
    kelvin_to_bgr,
    random_appearance,
    random_lighting,
    random_setup,
)
from companion.sim.render.sequences import (
    render_hand_sequence,
    render_move_sequence,
)

__all__ = [
    "ART_VARIANTS",
    "Appearance",
    "CameraPose",
    "FRAME_SIZE",
    "HandPose",
    "INTENSITY_RANGE",
    "JPEG_RANGE",
    "KELVIN_RANGE",
    "Lighting",
    "NOISE_LEVELS",
    "RenderError",
    "RenderResult",
    "TABLE_PPM",
    "TABLE_SIZE",
    "TEXTURE_PAD",
    "TEXTURE_PPM",
    "TILT_RANGE",
    "TableSetup",
    "WIZARD_HSV",
    "fit_pose",
    "kelvin_to_bgr",
    "look_at",
    "random_appearance",
    "random_camera",
    "random_hand",
    "random_lighting",
    "random_pose",
    "random_setup",
    "render",
    "render_hand_sequence",
    "render_move_sequence",
    "simulated_camera",
    "write_camera_file",
]
