"""The detector: one camera frame -> an :class:`~companion.rules.observation.Observation`.

What it uses is exactly what a real table setup has: the frame, the calibrated
:class:`~companion.vision.camera.CameraModel`, the :class:`~companion.vision.geometry.BoardGeometry`
(measured sizes, marker layout) and the :class:`~companion.vision.profile.ColourProfile` sampled
from the setup frame. Nothing else.

Pipeline per frame (all vectorised; no per-pixel Python):

1. **Check the frame** (None, wrong type/shape/dtype, truncated JPEG grey rows) -> a status.
2. **Board pose** from the four ArUco markers (:class:`~companion.vision.markers.BoardPoseTracker`:
   cached, re-checked in small ROIs each frame) and ``cv2.solvePnP`` with the camera model.
3. **White reference** from the white cells of the markers (colour temperature and brightness
   cancel, see :mod:`companion.vision.profile`).
4. **Height of each stack from the oblique view**: for every space and every candidate tier
   ``k = 1..10`` the crenellated rim of the roof of tier ``k`` (a circle of the roof's radius at
   ``k * tier_height + merlon_height``, from the geometry) is projected into the image with the
   pose; the median Sobel gradient across that projected rim (along its image normal, on the
   smoothed grey frame, scaled by the markers' white) is the evidence for a roof there. Each
   tier projects to a different ellipse (parallax and scale), so only the true top roof lines up
   with a strong edge all round. These rim measurements, the colour shares inside each candidate
   roof and on each tier's camera-facing wall (the shipped model leaves the wall shares out:
   a near-overhead setup frame shows too little wall to learn its colour), and the camera's
   elevation go to a small trained
   network (:mod:`companion.vision.detect_height`, shipped as ``detect_height.json``) that gives
   each space a probability per tower count; the heights chosen are the most probable ones that
   add up to the towers counted at setup (every tower stays on the board), and the chosen
   count's probability is the space's confidence. Without the model file the best tier wins when
   its edge is strong (``roof_threshold``) and stands out (``roof_contrast``).
   Rim points on the ArUco markers or inside the raven castle's silhouette are ignored.
   The **raven castle** (there is one) is where the raven-castle network
   (:mod:`companion.vision.castle_cnn`, ``castle_method = "cnn"``) finds it most probable on
   the spaces' tier stacks, its tier one of the counts that add up to the setup's total; with
   ``castle_method = "hand"`` the space whose black probes on the castle's camera-facing side
   score highest at the tier the rim test on the castle's roof points to.
   All probe positions depend only on the pose:
   they are computed once and reused while the camera stays put (``pose_tolerance_px``).
5. **Top kind**: crest roofs carry a yellow crest disc with a printed raven (dark grey ink),
   plain roofs neither. The ink decides first, relative to the bare roof outside the disc on
   the same roof (the same light on both): dark grey pixels there say crest, the raven's place
   in view and bare says plain. Where wizards hide the raven, the disc's yellow-blue chroma
   above the bare roof around it decides, compared with what the crest roofs with their raven
   in view measure in the same frame (or the last frames); over-exposed frames shrink that
   contrast, so no fixed threshold from the setup frame is used. The magic roof by its colour
   class. For an empty space the track kind is a property of the track (crest / plain /
   fountain / web). A roof under the castle cannot be seen: it is reported from the colour
   vote, with the castle flag set (the tracker knows it from history).
6. **Wizards** on the top surface: the pixels of the projected cylinder the wizards stand in are
   labelled by the nearest class of the profile with one shared spread and no reject (a
   blurred edge pixel counts for the wizard when it is more than half wizard, which keeps the
   area unbiased; a dark pixel's noisy chroma weighs less); per colour the wizard-coloured
   area divided by the projected area of one wizard gives the count (<= 6 in total, R-WIZ-4);
   where hulls overlap in the image the higher top surface owns the pixels; on crest tops the
   colour nearest the disc loses the disc's share (``crest_leak``); a faint colour next to its
   hard-pair partner (yellow/orange, red/orange, blue/purple) is the partner's shading and is
   dropped.
   **Expansion pieces**: insert spaces (fountain, web) never hold a tower or the castle
   (R-MOD-FOUNTAIN-4, R-MOD-WEB-3) and a web holds nothing; the one magic tower is the roof
   whose outer ring (outside its star, inside its merlons) shows most of its field's or its
   violet merlons' colour; on fountains and magic roofs those colours are measured in the
   frame before wizards are counted (the merlons are no purple wizard, the star no yellow
   one); the one witch and the one raven are the spaces where most of their colour shows (the
   raven: its white disc next to the grey ink of its printed raven, after the frame's colour
   drift against the setup is taken off, and whiter than this frame's crest discs). A roof
   under the raven token is crest when the roof just outside the token is yellower than its
   bare rim (the crest disc is wider than the token).
7. A small top-down **board view** (for the stability gate's frame differencing).

Geometry conventions: board mm with z up (geometry); :meth:`BoardPose.project` takes z *down*
(OpenCV's right-handed frame), so heights are negated when projecting.

The stages, each a module of this package: :mod:`~companion.vision.detector.pose` (probe tables
of one pose), :mod:`~companion.vision.detector.frame` (the values passed between stages, the
probes measured once per frame), :mod:`~companion.vision.detector.heights` (step 4),
:mod:`~companion.vision.detector.tops` (step 5), :mod:`~companion.vision.detector.wizards` and
:mod:`~companion.vision.detector.tokens` (step 6); :mod:`~companion.vision.detector.core` runs
them (:class:`Detector`).
"""

from companion.vision.detector.config import (
    BAD_FRAME,
    BOARD_LOST,
    CASTLE_CLASS,
    HARD_PAIRS,
    INSERT_CLASSES,
    INSERT_KINDS,
    MAGIC_CLASSES,
    NO_FRAME,
    OK,
    ROOF_CLASSES,
    SHIPPED,
    TOKEN_CLASSES,
    UNSURE,
    Detection,
    DetectorConfig,
    SpaceDetail,
    check_frame,
)
from companion.vision.detector.core import Detector, wizard_area_gain

__all__ = [
    "BAD_FRAME",
    "BOARD_LOST",
    "CASTLE_CLASS",
    "HARD_PAIRS",
    "INSERT_CLASSES",
    "INSERT_KINDS",
    "MAGIC_CLASSES",
    "NO_FRAME",
    "OK",
    "ROOF_CLASSES",
    "SHIPPED",
    "TOKEN_CLASSES",
    "UNSURE",
    "Detection",
    "Detector",
    "DetectorConfig",
    "SpaceDetail",
    "check_frame",
    "wizard_area_gain",
]
