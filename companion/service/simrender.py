"""The simulated table's camera: a fixed, seeded camera setup filmed by the table renderer.

:class:`SimCamera` chooses once per game (from the seed) where the camera hangs (tilt 5-25° from
vertical, any side), the room light and the look of the pieces — like a real session — and draws
each scene of the simulated game from it (``companion.vision.render.render``), with a hand and arm
reaching from the active player's seat while a piece moves. The detector gets only what a
calibrated real camera would give: the camera file (:attr:`SimCamera.camera_model`), the board
geometry, and a colour profile sampled from a rendered frame of the setup position
(:meth:`SimCamera.profile_from_setup`, through ``companion.vision.profile.build_profile``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from companion.service.parts import Parts

TILT_RANGE_DEG = (5.0, 25.0)
"""Camera tilt of the simulated table (a camera on an arm beside the table, looking down)."""


class SimCamera:
    """Camera, pose, light and look of one simulated session (see the module doc).

    :param seed: fixes the setup and, with the scene number, every frame.
    :param size: frame size ``(w, h)`` px.
    """

    def __init__(self, parts: Parts, seed: int, size: tuple[int, int]) -> None:
        render = parts.get("render")
        geometry_mod = parts.get("geometry")
        if render is None or geometry_mod is None:
            raise RuntimeError("the simulated camera needs " + parts.missing_line("render"))
        self._render = render
        self.seed = seed
        self.size = size
        rng = np.random.default_rng([seed, 0x5EED])
        self.geometry = geometry_mod.BoardGeometry.default()
        self.camera_model = render.simulated_camera(size)
        self.setup = render.random_setup(
            rng, self.geometry, size=size, camera=self.camera_model, tilt_range=TILT_RANGE_DEG
        )

    def _for_state(self, state: Any) -> None:
        length = state.table.length
        if self.geometry.n_spaces != length:
            from companion.rules import dump_state

            track = dump_state(state)["track"]
            self.geometry = self.geometry.with_track(track)

    def render_scene(self, scene: Any, number: int) -> np.ndarray:
        """The frame ``(H, W, 3) uint8 BGR`` of one scene (seeded by the scene number)."""
        self._for_state(scene.state)
        rng = np.random.default_rng([self.seed, number])
        hand: Any = False
        if scene.hand is not None:
            n = max(1, int(scene.state.table.n))
            angle = 2 * math.pi * scene.hand.seat / n + math.pi / 2
            target = self.geometry.space_centre(scene.hand.space)
            hand = self._render.random_hand(rng, self.geometry, target_mm=target, from_angle=angle)
        result = self._render.render(
            scene.state, rng, setup=self.setup, hand=hand, frame_index=number
        )
        frame: np.ndarray = result.frame
        return frame

    def setup_frame(self, state: Any) -> np.ndarray:
        """A still frame of ``state`` (the setup position) without a hand."""
        self._for_state(state)
        rng = np.random.default_rng([self.seed, 0xCA1])
        frame: np.ndarray = self._render.render(state, rng, setup=self.setup, hand=False).frame
        return frame

    def profile_from_setup(self, state: Any, colours: list[str]) -> Any:
        """The colour profile sampled from a rendered frame of the setup position, exactly as
        ``companion calibrate profile`` samples it from a real camera's setup frame."""
        from companion.vision.profile import build_profile

        return build_profile(self.setup_frame(state), self.camera_model, self.geometry, colours)
