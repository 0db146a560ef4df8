"""Table companion for *The Wandering Towers* (Kramer & Kiesling, 2022) and its 2025 expansion.

Sub-packages: ``rules`` (pure rules core and tracker), ``vision`` (frames to observations, the
table renderer), ``hardware`` (dice buttons, LEDs, serial peripheral), ``web`` (phone pages).
"""

__version__ = "0.1.0"
