"""The service's memory: frames and the detector's per-frame arrays are big and short-lived."""

from __future__ import annotations

import sys


def return_big_buffers_to_the_system() -> bool:
    """glibc only: freed multi-megabyte buffers (frames, the detector's per-frame arrays) go back
    to the system instead of staying in the allocator.

    By default glibc raises its mmap threshold after the first big buffer is freed, so later
    frames are carved from per-thread heaps (arenas) that keep their memory; with several
    threads handling frames the service's RSS grows by tens of MB. A fixed 256 KiB threshold
    and at most 2 arenas keep it down. Returns False where this is not glibc (nothing changed).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold, m_arena_max = -3, -8  # <malloc.h>
    return bool(mallopt(m_mmap_threshold, 256 * 1024)) and bool(mallopt(m_arena_max, 2))
