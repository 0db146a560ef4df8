"""The shipped wiring diagram is the drawing of the default pin map."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from companion.hardware.pins import BCM_TO_PHYSICAL, load_pin_map
from companion.hardware.wiring import generate_svg

SVG = Path(__file__).resolve().parents[2] / "raspberry-pi" / "wiring.svg"


def test_shipped_svg_is_up_to_date() -> None:
    assert SVG.read_text() == generate_svg(load_pin_map()), (
        "regenerate: python -m companion.hardware.wiring raspberry-pi/pins.toml "
        "> raspberry-pi/wiring.svg"
    )


def test_every_used_pin_is_labelled_at_its_header_pin() -> None:
    root = ET.fromstring(generate_svg(load_pin_map({"roll": 9, "buzzer": -1})))
    ns = "{http://www.w3.org/2000/svg}"
    texts = ["".join(t.itertext()) for t in root.iter(f"{ns}text")]
    assert "GPIO9 — ROLL button" in texts
    assert not any("— buzzer" in t for t in texts)
    assert "GPIO18" in texts  # now a free pin
    numbers = [t for t in texts if t.isdigit()]
    assert sorted(map(int, numbers)) == list(range(1, 41))
    pm = load_pin_map()
    default = ET.fromstring(generate_svg(pm))
    labels = " ".join("".join(t.itertext()) for t in default.iter(f"{ns}text"))
    for role, bcm in pm.assignments():
        assert f"GPIO{bcm} — " in labels, role
        assert BCM_TO_PHYSICAL[bcm] in range(1, 41)
