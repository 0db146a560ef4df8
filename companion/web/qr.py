"""QR codes for the join links (segno): inline SVG for the host page, blocks for a terminal."""

from __future__ import annotations

import sys
from typing import TextIO


def qr_svg(url: str) -> str:
    """The QR code of ``url`` as an inline ``<svg viewBox=…>`` element without a fixed size (the
    page scales it); error correction M, 2-module quiet zone."""
    import segno

    svg: str = segno.make(url, error="m").svg_inline(
        omitsize=True, border=2, dark="#111", light="#fff"
    )
    return svg


def print_terminal_qr(url: str, out: TextIO | None = None) -> None:
    """Print the QR code of ``url`` with segno's terminal output (two modules per character
    row, so a phone can scan it off an ordinary terminal)."""
    import segno

    stream = out if out is not None else sys.stdout
    segno.make(url, error="m").terminal(out=stream, compact=True, border=2)
