"""One rendered frame: optics, light, shadows, noise, JPEG; and its ground truth."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.rules import observe
from companion.rules.model import GameState
from companion.rules.observation import Observation
from companion.rules.serialize import dump_state
from companion.sim.render.camera import (
    FRAME_SIZE,
    TABLE_PPM,
    TABLE_SIZE,
    TEXTURE_PAD,
    TEXTURE_PPM,
    CameraPose,
)
from companion.sim.render.hands import HandPose, _draw_hand, _hand_parts, random_hand
from companion.sim.render.light import Lighting, TableSetup, random_setup
from companion.sim.render.scene import _as_state, _Board, _board_of, _build_scene, _paint
from companion.sim.render_textures import (
    board_texture,
    table_texture,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry

# --------------------------------------------------------------------------------------------
# the frame


@dataclass
class RenderResult:
    """A rendered frame and its ground truth.

    :param frame: ``(H, W, 3) uint8`` BGR, the only thing a detector may look at (plus the
        camera file of :attr:`camera`).
    :param observation: what the camera truly shows (``companion.rules.observe`` of the state).
    :param hand_mask: ``(H, W) uint8``, 255 where a hand or arm covers the frame.
    :param hand: a hand or arm is in view.
    """

    frame: np.ndarray
    observation: Observation
    camera: CameraModel
    pose: CameraPose
    lighting: Lighting
    hand_mask: np.ndarray
    hand: bool
    hand_pose: HandPose | None
    jpeg_quality: int | None
    blur_px: float
    noise: float
    state: dict[str, Any]

    def truth_json(self) -> dict[str, Any]:
        """Ground truth (observation, camera, pose, light, hand) as JSON-ready data."""
        return {
            "observation": self.observation.to_json(),
            "camera": self.camera.to_dict(),
            "pose": self.pose.to_json(),
            "lighting": self.lighting.to_json(),
            "hand": self.hand,
            "hand_pixels": int(np.count_nonzero(self.hand_mask)),
            "jpeg_quality": self.jpeg_quality,
            "blur_px": self.blur_px,
            "noise": self.noise,
            "state": self.state,
        }

    def save(self, folder: str | Path, stem: str) -> Path:
        """Write ``stem.png`` (the frame), ``stem.json`` (truth) and, with a hand,
        ``stem.hand.png`` into ``folder``; returns the frame's path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}.png"
        cv2.imwrite(str(path), self.frame)
        (folder / f"{stem}.json").write_text(json.dumps(self.truth_json(), indent=1) + "\n")
        if self.hand:
            cv2.imwrite(str(folder / f"{stem}.hand.png"), self.hand_mask)
        return path


_CACHE_LOCK = threading.Lock()
"""Guards the module-level caches (noise banks, artwork textures, geometries): the renderer may
be called from several threads; a :class:`TableSetup` belongs to one thread at a time."""

NOISE_LEVELS = (1.2, 2.0, 3.0, 4.5)
"""Standard deviations (DN) of the sensor noise banks; each frame uses one."""
_NOISE_BANK: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray]] = {}
_NOISE_SLACK = 128


def _noise_bank(h: int, w: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """A fixed bank of Gaussian sensor noise of ``sigma`` DN, a few rows taller than the frame,
    split into its positive and negative parts (uint8, for saturating add/subtract). Seeded
    once per frame size and level; frames take windows at random row offsets."""
    key = (h, w, sigma)
    with _CACHE_LOCK:
        if key not in _NOISE_BANK:
            if len(_NOISE_BANK) >= len(NOISE_LEVELS):
                _NOISE_BANK.clear()
            rng = np.random.default_rng([20221, int(sigma * 10)])
            n = rng.standard_normal((h + _NOISE_SLACK, w, 3), np.float32) * sigma
            pos = np.clip(np.round(n), 0, 255).astype(np.uint8)
            neg = np.clip(np.round(-n), 0, 255).astype(np.uint8)
            _NOISE_BANK[key] = (pos, neg)
        return _NOISE_BANK[key]


def _add_noise(frame: np.ndarray, rng: np.random.Generator, level: float) -> np.ndarray:
    """``frame`` plus Gaussian noise of about ``level`` DN (nearest bank), saturating."""
    h, w = frame.shape[:2]
    sigma = min(NOISE_LEVELS, key=lambda s: abs(s - level))
    pos, neg = _noise_bank(h, w, sigma)
    oy = int(rng.integers(0, _NOISE_SLACK + 1))
    if rng.random() < 0.5:
        pos, neg = neg, pos
    out = cv2.add(frame, pos[oy : oy + h])
    return cv2.subtract(out, neg[oy : oy + h])


_TEXTURES: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, float]] = {}
_TEXTURE_CACHE_SIZE = 12


def _frame_maps(setup: TableSetup, board_shape: tuple[int, int], origin: float) -> dict[str, Any]:
    """Remap tables of the board plane (z = 0) for this camera and pose, cached per setup:
    the table texture at half resolution and the board texture over its bounding box."""
    if "maps" in setup._cache:
        return setup._cache["maps"]  # type: ignore[no-any-return]
    w, h = setup.camera.size
    step = 8
    # a coarse grid at the centres of step x step cells, covering the frame (the last cell may
    # stick out): upsampling it by exactly ``step`` and cropping keeps every pixel on its own
    # ray at any frame size (a frame size not divisible by 8 must not stretch the board)
    nx, ny = -(-w // step), -(-h // step)
    xs = np.arange(nx) * step + (step - 1) / 2
    ys = np.arange(ny) * step + (step - 1) / 2
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx, gy], axis=-1).reshape(-1, 1, 2)
    und = cv2.undistortPoints(pts, setup.camera.K, setup.camera.dist).reshape(-1, 2)
    rays = np.concatenate([und, np.ones((len(und), 1))], axis=1) @ setup.pose.rotation
    c = setup.pose.centre
    dz = np.where(rays[:, 2] > 1e-6, rays[:, 2], 1e-6)
    s = -c[2] / dz
    bx = (c[0] + s * rays[:, 0]).reshape(gy.shape).astype(np.float32)
    by = (c[1] + s * rays[:, 1]).reshape(gy.shape).astype(np.float32)
    # table: half resolution (the table texture is coarse), later upscaled (x2, cropped)
    hw, hh = -(-w // 2), -(-h // 2)
    hx = cv2.resize(bx, (nx * step // 2, ny * step // 2), interpolation=cv2.INTER_LINEAR)
    hy = cv2.resize(by, (nx * step // 2, ny * step // 2), interpolation=cv2.INTER_LINEAR)
    hx, hy = np.ascontiguousarray(hx[:hh, :hw]), np.ascontiguousarray(hy[:hh, :hw])
    tmap = cv2.convertMaps(
        (hx - origin) * TABLE_PPM - 0.5, (hy - origin) * TABLE_PPM - 0.5, cv2.CV_16SC2
    )
    # board: only the frame's bounding box of the board texture
    th, tw = board_shape
    lo_mm, hi_mm = -TEXTURE_PAD, np.array([tw, th]) / TEXTURE_PPM - TEXTURE_PAD
    inside = (bx >= lo_mm) & (bx <= hi_mm[0]) & (by >= lo_mm) & (by <= hi_mm[1])
    rows, cols = np.nonzero(inside)
    if len(rows):
        y0, y1 = max(rows.min() * step - step, 0), min((rows.max() + 2) * step, h)
        x0, x1 = max(cols.min() * step - step, 0), min((cols.max() + 2) * step, w)
        full = (nx * step, ny * step)
        mx = cv2.resize(bx, full, interpolation=cv2.INTER_LINEAR)[y0:y1, x0:x1]
        my = cv2.resize(by, full, interpolation=cv2.INTER_LINEAR)[y0:y1, x0:x1]
        bmap = cv2.convertMaps(
            (mx + TEXTURE_PAD) * TEXTURE_PPM - 0.5,
            (my + TEXTURE_PAD) * TEXTURE_PPM - 0.5,
            cv2.CV_16SC2,
        )
        roi = (y0, y1, x0, x1)
    else:
        bmap, roi = None, None
    out = {"table": tmap, "board": bmap, "roi": roi}
    setup._cache["maps"] = out
    return out


def _textures(setup: TableSetup) -> tuple[np.ndarray, np.ndarray, float]:
    """Table texture, board texture (unlit, no shadows), both ``uint8`` BGR, and the table
    origin in board mm. Cached per (geometry, art variant) across setups."""
    g = setup.geometry
    key = (g.signature(), setup.appearance.art_seed)
    with _CACHE_LOCK:
        if key in _TEXTURES:
            return _TEXTURES[key]
    trng = np.random.default_rng([setup.appearance.art_seed, 1])
    origin = g.board_size[0] / 2 - TABLE_SIZE / 2
    table = table_texture(trng, setup.appearance.art, TABLE_SIZE, TABLE_PPM)
    board = board_texture(
        g, setup.appearance.art, trng, table, TABLE_PPM, origin, TEXTURE_PPM, TEXTURE_PAD
    )
    out = (
        np.clip(table, 0, 255).astype(np.uint8),
        np.clip(board, 0, 255).astype(np.uint8),
        origin,
    )
    with _CACHE_LOCK:
        while len(_TEXTURES) >= _TEXTURE_CACHE_SIZE:
            _TEXTURES.pop(next(iter(_TEXTURES)))
        _TEXTURES[key] = out
    return out


def _shadow_map(
    setup: TableSetup,
    casters: list[tuple[float, float, float, float, float]],
    hand: HandPose | None,
    shape: tuple[int, int],
) -> np.ndarray:
    """Multiplier for the board texture, ``(h, w, 3) uint8``: 255 lit, less in cast shadows."""
    light = setup.lighting
    scale = 0.25
    ppm = TEXTURE_PPM * scale
    sh, sw = max(shape[0] // 4, 1), max(shape[1] // 4, 1)
    mask = np.zeros((sh, sw), np.float32)
    lx, ly, lz = light.direction
    off = np.array([lx, ly]) / max(lz, 0.2)
    ang = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    circ = np.stack([np.cos(ang), np.sin(ang)], -1)

    def to_px(p: np.ndarray) -> np.ndarray:
        return np.round((p + TEXTURE_PAD) * ppm * 16).astype(np.int32)

    for x, y, rb, rt, hgt in casters:
        c = np.array([x, y])
        pts = np.concatenate([c + rb * circ, c - off * hgt + rt * circ])
        hull = cv2.convexHull(to_px(pts).reshape(-1, 1, 2))
        cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA, 4)
    if hand is not None:
        for a, b, radii, _part in _hand_parts(hand):
            pa = np.array(a[:2]) - off * a[2]
            pb = np.array(b[:2]) - off * b[2]
            quad_n = pb - pa
            ln = max(float(np.linalg.norm(quad_n)), 1e-6)
            n = np.array([-quad_n[1], quad_n[0]]) / ln
            quad = np.array(
                [pa + n * radii[0], pb + n * radii[1], pb - n * radii[1], pa - n * radii[0]]
            )
            cv2.fillConvexPoly(mask, to_px(quad), 0.8, cv2.LINE_AA, 4)
    sigma = max(light.softness_mm * ppm, 0.6)
    soft = cv2.GaussianBlur(mask, (0, 0), sigma)
    lit = np.clip(255.0 * (1.0 - light.shadow * soft), 0, 255).astype(np.uint8)
    lit = cv2.resize(lit, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)
    return np.asarray(cv2.cvtColor(lit, cv2.COLOR_GRAY2BGR), dtype=np.uint8)


def _vignette(setup: TableSetup, h: int, w: int) -> np.ndarray:
    """Lens vignetting as a ``(h, w, 3) uint8`` multiplier (255 = no loss), cached per setup."""
    if "vignette" in setup._cache:
        return setup._cache["vignette"]  # type: ignore[no-any-return]
    sh, sw = h // 8, w // 8
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    r2 = ((xx - sw / 2) / (sw / 2)) ** 2 + ((yy - sh / 2) / (sw / 2)) ** 2
    vig = 255.0 * (1.0 - setup.lighting.vignette * np.clip(r2 / 1.3, 0, 1))
    small = cv2.cvtColor(vig.astype(np.uint8), cv2.COLOR_GRAY2BGR)
    out = np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), dtype=np.uint8)
    setup._cache["vignette"] = out
    return out


def _optical_image(
    setup: TableSetup,
    board: _Board,
    hp: HandPose | None,
    rng: np.random.Generator,
    blur: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """The image the lens forms (table, board, pieces, hand, lens blur unless ``blur`` is
    False; before the sensor): ``(H, W, 3) uint8`` and the hand mask ``(H, W) uint8``."""
    g = setup.geometry
    w, h = setup.camera.size
    table, board_tex, origin = _textures(setup)
    maps = _frame_maps(setup, board_tex.shape[:2], origin)
    scene = _build_scene(board, g, setup.appearance, setup.pose.centre[:2])
    shadows = _shadow_map(setup, scene.shadow_casters, hp, board_tex.shape[:2])
    lit_board = cv2.multiply(board_tex, shadows, scale=1.0 / 255.0)
    tm1, tm2 = maps["table"]
    half = cv2.remap(table, tm1, tm2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    hh, hw = half.shape[:2]
    frame = np.ascontiguousarray(
        cv2.resize(half, (2 * hw, 2 * hh), interpolation=cv2.INTER_LINEAR)[:h, :w]
    )
    if maps["roi"] is not None:
        y0, y1, x0, x1 = maps["roi"]
        bm1, bm2 = maps["board"]
        cv2.remap(
            lit_board,
            bm1,
            bm2,
            cv2.INTER_LINEAR,
            dst=frame[y0:y1, x0:x1],
            borderMode=cv2.BORDER_TRANSPARENT,
        )
    _paint(frame, scene.faces, setup.pose, setup.camera, setup.lighting)
    if hp is not None:
        hand_mask = _draw_hand(
            frame, hp, setup.pose, setup.camera, setup.lighting, float(rng.uniform(1.0, 4.0))
        )
    else:
        hand_mask = np.zeros((h, w), np.uint8)
    if blur and setup.blur_px > 0.3:
        frame = cv2.GaussianBlur(frame, (0, 0), setup.blur_px)
    return np.asarray(frame, dtype=np.uint8), hand_mask


def render(
    state: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    geometry: BoardGeometry | None = None,
    size: tuple[int, int] = FRAME_SIZE,
    hand: bool | float | HandPose = 0.0,
    jpeg_quality: int | None | bool = True,
    frame_index: int = 0,
    time_s: float = 0.0,
    ideal: bool = False,
) -> RenderResult:
    """Draw one camera frame of ``state``.

    :param state: a :class:`~companion.rules.model.GameState` or the state JSON
        (docs/state-model.md §1-§2, as :func:`companion.rules.serialize.dump_state` writes it).
    :param rng: all randomness of this frame (and of the setup when ``setup`` is None).
    :param setup: camera, pose, light and look to keep (a session); default: a random one
        (:func:`random_setup` with ``geometry`` and ``size``).
    :param hand: ``True`` draws a hand over the board, a float is the probability of one, a
        :class:`HandPose` draws that hand.
    :param jpeg_quality: ``True`` = the setup's camera setting (70-95), an int = that quality,
        ``None``/``False`` = no compression.
    :param ideal: the image the lens forms under the room light, without the setup's lens blur,
        vignetting, exposure flicker, sensor noise or compression: the input of a camera model
        (:func:`companion.sim.render.camera_model.apply_camera`). ``jpeg_quality`` is ignored.
    :returns: the frame ``(H, W, 3) uint8`` BGR (default 1536x864) and its ground truth.
    :raises RenderError: when the state is malformed.
    """
    gs = _as_state(state)
    data = dump_state(gs)
    if setup is None:
        g = _geometry_for(geometry, data["track"])
        setup = random_setup(rng, g, size=size)
    else:
        g = setup.geometry
        if g.track.to_json() != _track_norm(data["track"]):
            g = g.with_track(data["track"])
            setup = dataclasses.replace(setup, geometry=g, _cache={})
    board = _board_of(data)
    w, h = setup.camera.size
    # hand
    hp: HandPose | None
    if isinstance(hand, HandPose):
        hp = hand
    elif hand is True or (
        not isinstance(hand, bool) and float(hand) > 0 and rng.random() < float(hand)
    ):
        hp = random_hand(rng, g, min_height_mm=_clear_height(board, g))
    else:
        hp = None
    # a still board without a hand draws the same optical image as last time: reuse it
    still_key = None
    if hp is None:
        still_key = json.dumps(
            [data["stacks"], data["wizards"], data["castle"], data["witch"], data["raven"]],
            sort_keys=True,
        ) + ("|ideal" if ideal else "")
    cached = setup._cache.get("still")
    if still_key is not None and cached is not None and cached[0] == still_key:
        frame = cached[1].copy()
        hand_mask = np.zeros((h, w), np.uint8)
    else:
        frame, hand_mask = _optical_image(setup, board, hp, rng, blur=not ideal)
        if still_key is not None:
            setup._cache["still"] = (still_key, frame.copy())
    obs = observe(gs, time=time_s, frame=frame_index)
    if ideal:
        gains = np.diag(setup.lighting.gains()).astype(np.float32)
        return RenderResult(
            frame=np.asarray(cv2.transform(frame, gains), dtype=np.uint8),
            observation=obs,
            camera=setup.camera,
            pose=setup.pose,
            lighting=setup.lighting,
            hand_mask=hand_mask,
            hand=bool(hand_mask.any()),
            hand_pose=hp,
            jpeg_quality=None,
            blur_px=0.0,
            noise=0.0,
            state=data,
        )
    frame = cv2.multiply(frame, _vignette(setup, h, w), scale=1.0 / 255.0)
    # auto-exposure hunting / mains flicker: the whole frame a little brighter or darker
    flicker = float(np.clip(rng.normal(1.0, 0.012), 0.96, 1.04))
    frame = cv2.transform(frame, np.diag(setup.lighting.gains() * flicker).astype(np.float32))
    noise_level = setup.noise
    out = _add_noise(frame, rng, noise_level)
    q: int | None
    if jpeg_quality is True:
        q = setup.jpeg_quality
    elif jpeg_quality is False or jpeg_quality is None:
        q = None
    else:
        q = int(jpeg_quality)
    if q is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        dec = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if dec is not None:
            out = np.asarray(dec, dtype=np.uint8)
    return RenderResult(
        frame=out,
        observation=obs,
        camera=setup.camera,
        pose=setup.pose,
        lighting=setup.lighting,
        hand_mask=hand_mask,
        hand=bool(hand_mask.any()),
        hand_pose=hp,
        jpeg_quality=q,
        blur_px=setup.blur_px,
        noise=noise_level,
        state=data,
    )


_GEOMETRIES: dict[tuple[str, str], BoardGeometry] = {}


def _geometry_for(base: BoardGeometry | None, track: Mapping[str, Any]) -> BoardGeometry:
    """``base`` (default: the built-in geometry) laid out for ``track``; cached."""
    b = base if base is not None else BoardGeometry.default()
    key = (b.signature(), json.dumps(_track_norm(track), sort_keys=True))
    with _CACHE_LOCK:
        if key not in _GEOMETRIES:
            if len(_GEOMETRIES) > 16:
                _GEOMETRIES.clear()
            _GEOMETRIES[key] = b.with_track(track)
        return _GEOMETRIES[key]


def _track_norm(track: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "length": int(track["length"]),
        "raven_crest": sorted(int(s) for s in track.get("raven_crest", [])),
        "special": {
            str(s): k
            for s, k in sorted((track.get("special") or {}).items(), key=lambda kv: int(kv[0]))
        },
    }


def _clear_height(board: _Board, g: BoardGeometry) -> float:
    """Lowest palm height (mm) that clears every stack, castle and wizard on the board."""
    top = max((len(t) for t in board.stacks.values()), default=0) * g.tower.height
    return top + max(g.castle.height, g.wizard.height) + 45.0
