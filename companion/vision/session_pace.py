"""Playing a recorded session like a camera: at its recorded pace, each frame held until the
next one's time.

A recording written by ``companion record`` keeps only the stable frames by default: one image
per still period, seconds apart. Read one after another, such frames look to the stability gate
like a board that never stops moving (each differs from the one before), so the game never
advances. :class:`PacedSessionSource` hands out, at whatever rate the camera thread reads, the
recorded frame whose time has come — the same image object again while it is current, as a
camera over a still board would — with the playback time as ``time_s``. A recording of every
frame plays back at its own pace the same way.
"""

from __future__ import annotations

from bisect import bisect_right
from pathlib import Path
from typing import Any

from companion.vision.sources import Clock, SessionSource, read_image_file

TAIL_S = 5.0
"""Seconds the last recorded frame stays on after its time, so its still period completes."""


class PacedSessionSource(SessionSource):
    """A recorded session folder played at its recorded pace (``session:PATH``).

    Each :meth:`read` returns the latest recorded frame whose recorded time has come (playback
    time = the first frame's ``time_s`` + seconds since the first read, by ``clock``), the same
    image object while it is current, with its own running ``index`` and the playback time as
    ``time_s``. After the last frame's time plus ``tail_s`` the status is ``ended``. An
    unreadable image gives an ``error`` status while it is current (the reads go on).

    :param tail_s: seconds the last frame is held (:data:`TAIL_S`).
    :param speed: playback time factor (2 = twice as fast as recorded).
    :raises FrameSourceError: as :class:`~companion.vision.sources.SessionSource`;
        ``ValueError`` for ``speed`` ≤ 0 or a negative ``tail_s``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        tail_s: float = TAIL_S,
        speed: float = 1.0,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(path, clock=clock)
        if not speed > 0 or not tail_s >= 0:
            raise ValueError("session: speed must be > 0 and tail_s >= 0")
        self.tail_s = tail_s
        self.speed = speed
        self._times = [e.time_s for e in self.entries]
        self._started: float | None = None
        self._held: tuple[int, Any, str] | None = None  # (position, image or None, why)

    def playback_time(self) -> float:
        """Recorded time now playing (s); the first frame's time before the first read."""
        if self._started is None or not self._times:
            return self._times[0] if self._times else 0.0
        return self._times[0] + (self._clock() - self._started) * self.speed

    def _read(self) -> tuple[Any, int, float] | None:
        if not self.entries:
            self._set_status("ended", "the recording holds no frames")
            return None
        if self._started is None:
            self._started = self._clock()
        t = self.playback_time()
        if t > self._times[-1] + self.tail_s:
            self._set_status("ended", f"all {len(self.entries)} recorded frames played")
            return None
        # recording order; a time that went backwards (a restarted source) counts from there
        pos = max(0, bisect_right(self._times, t) - 1)
        self._pos = pos + 1
        if self._held is None or self._held[0] != pos:
            entry = self.entries[pos]
            image, why = read_image_file(self.path / entry.file)
            self._held = (pos, image, f"frame {entry.index}: {why}")
        _, image, why = self._held
        if image is None:
            self._set_status("error", why)
            return None
        index = self._index
        self._index += 1
        return image, index, t

    def _skippable(self) -> bool:
        return bool(self.entries) and self.playback_time() <= self._times[-1] + self.tail_s
