"""Draw the wiring diagram (SVG) of a pin map on the 40-pin header.

``python -m companion.hardware.wiring [pins.toml] > raspberry-pi/wiring.svg`` regenerates the
shipped diagram; the tests check the shipped file is the drawing of the default map.
"""

from __future__ import annotations

import sys
from html import escape

from companion.hardware.pins import BCM_TO_PHYSICAL, PinMap, load_pin_map, read_pin_file

# physical pin -> header label, for the pins that are not plain GPIOs
POWER = {1: "3V3", 17: "3V3", 2: "5V", 4: "5V"}
GROUND = {6, 9, 14, 20, 25, 30, 34, 39}
PHYSICAL_TO_BCM = {phys: bcm for bcm, phys in BCM_TO_PHYSICAL.items()}
NOTES = {0: "ID EEPROM", 1: "ID EEPROM", 2: "I2C SDA", 3: "I2C SCL", 14: "UART TX", 15: "UART RX"}

ROW_H = 30
TOP = 150
WIDTH = 1040
HEAD_X = 520  # centre of the header


def _role_text(role: str) -> tuple[str, str, str]:
    """(label, kind, fill colour) of a pin-map role."""
    if role in ("roll", "done", "undo"):
        return f"{role.upper()} button", "button", "#2a6fdb"
    if role.startswith("pips."):
        return f"pip {role[5:].replace('_', '-')} LED", "led", "#f5f0c8"
    if role.startswith("seats["):
        n = int(role[6:-1]) + 1
        return f"seat {n} LED (seat colour)", "led", "#9ad29a"
    if role == "attention":
        return "attention LED (look at phone)", "led", "#ffb000"
    return "buzzer (active)", "buzzer", "#999999"


def _icon(kind: str, x: float, y: float, fill: str, left: bool) -> str:
    """A small schematic: GPIO -> part -> GND, drawn from the header outwards at (x, y)."""
    d = -1 if left else 1
    parts = []
    x1 = x + d * 14
    parts.append(f'<line x1="{x}" y1="{y}" x2="{x1}" y2="{y}" class="w"/>')
    if kind == "led":
        rx = min(x1, x1 + d * 26)
        parts.append(f'<rect x="{rx}" y="{y - 5}" width="26" height="10" class="r"/>')
        x2 = x1 + d * 26
        x3 = x2 + d * 8
        parts.append(f'<line x1="{x2}" y1="{y}" x2="{x3}" y2="{y}" class="w"/>')
        tip = x3 + d * 14
        parts.append(
            f'<polygon points="{x3},{y - 7} {x3},{y + 7} {tip},{y}" fill="{fill}" class="o"/>'
        )
        parts.append(f'<line x1="{tip}" y1="{y - 7}" x2="{tip}" y2="{y + 7}" class="w"/>')
        end = tip + d * 10
    elif kind == "button":
        x2 = x1 + d * 8
        parts.append(f'<circle cx="{x1 + d * 2}" cy="{y}" r="2.5" class="o" fill="#fff"/>')
        parts.append(f'<circle cx="{x1 + d * 34}" cy="{y}" r="2.5" class="o" fill="#fff"/>')
        parts.append(
            f'<line x1="{x2 - d * 4}" y1="{y - 9}" x2="{x1 + d * 36}" y2="{y - 9}" '
            f'stroke="{fill}" stroke-width="3"/>'
        )
        parts.append(
            f'<line x1="{x1 + d * 18}" y1="{y - 9}" x2="{x1 + d * 18}" y2="{y - 15}" '
            f'stroke="{fill}" stroke-width="3"/>'
        )
        tip = x1 + d * 36
        end = tip + d * 10
        parts.append(f'<line x1="{tip}" y1="{y}" x2="{end}" y2="{y}" class="w"/>')
        tip = end
    else:  # buzzer
        cx = x1 + d * 14
        parts.append(f'<circle cx="{cx}" cy="{y}" r="11" fill="{fill}" class="o"/>')
        parts.append(
            f'<text x="{cx}" y="{y + 4}" class="s" text-anchor="middle" fill="#fff">BZ</text>'
        )
        tip = cx + d * 11
        end = tip + d * 10
    parts.append(f'<line x1="{tip}" y1="{y}" x2="{end}" y2="{y}" class="w"/>')
    # ground symbol
    parts.append(f'<line x1="{end}" y1="{y - 7}" x2="{end}" y2="{y + 7}" class="g"/>')
    parts.append(
        f'<line x1="{end + d * 4}" y1="{y - 4}" x2="{end + d * 4}" y2="{y + 4}" class="g"/>'
    )
    parts.append(
        f'<line x1="{end + d * 8}" y1="{y - 1}" x2="{end + d * 8}" y2="{y + 1}" class="g"/>'
    )
    return "\n".join(parts)


def generate_svg(pin_map: PinMap) -> str:
    """The wiring diagram of ``pin_map`` as an SVG document (str)."""
    roles = {pin: role for role, pin in pin_map.assignments()}
    height = TOP + 20 * ROW_H + 170
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
        "<style>.w{stroke:#333;stroke-width:1.5}.r{fill:#e8d2a6;stroke:#333}"
        ".o{stroke:#333;stroke-width:1}.g{stroke:#000;stroke-width:2}"
        ".t{font-size:13px;fill:#111}.s{font-size:10px}.h{font-size:20px;font-weight:bold}"
        ".n{font-size:12px;fill:#333}.x{font-size:11px;fill:#999}</style>",
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        '<text x="24" y="30" class="h">Wandering Towers companion — panel wiring on the '
        "Raspberry Pi 40-pin header</text>",
        '<text x="24" y="50" class="n">Board seen from above, turned so the USB/Ethernet ports '
        "point down: the header runs down the right edge, pin 1 at the top of the inner row."
        "</text>",
        '<text x="24" y="68" class="n">Buttons: GPIO → push button → GND (internal pull-up, '
        "pressed = low). LEDs: GPIO → 330 Ω → LED anode, cathode → GND. "
        "Buzzer: active 3.3 V buzzer to GND.</text>",
        '<text x="24" y="86" class="n">Numbers in the circles are physical header pins; labels '
        "give the BCM GPIO number used in pins.toml. Grey pins are reserved or unused.</text>",
        f'<text x="{HEAD_X - 30}" y="{TOP - 22}" class="n" text-anchor="end">'
        "odd pins (1…39)</text>",
        f'<text x="{HEAD_X + 30}" y="{TOP - 22}" class="n">even pins (2…40)</text>',
        f'<rect x="{HEAD_X - 36}" y="{TOP - 15}" width="72" height="{20 * ROW_H}" rx="6" '
        'fill="#222"/>',
    ]
    for phys in range(1, 41):
        row = (phys - 1) // 2
        left = phys % 2 == 1
        y = TOP + row * ROW_H
        cx = HEAD_X - 16 if left else HEAD_X + 16
        bcm = PHYSICAL_TO_BCM.get(phys)
        if phys in POWER:
            fill, label, cls = "#d62728", POWER[phys], "t"
        elif phys in GROUND:
            fill, label, cls = "#000000", "GND", "t"
        elif bcm is not None and bcm in roles:
            text, kind, colour = _role_text(roles[bcm])
            fill, label, cls = colour, f"GPIO{bcm} — {text}", "t"
        else:
            note = NOTES.get(bcm, "") if bcm is not None else ""
            fill = "#bbbbbb"
            label = f"GPIO{bcm}" + (f" ({note}, reserved)" if note else "")
            cls = "x"
        stroke = "#fff" if fill == "#000000" else "#333"
        out.append(
            f'<circle cx="{cx}" cy="{y}" r="11" fill="{fill}" stroke="{stroke}" stroke-width="1"/>'
        )
        tcol = "#fff" if fill in ("#000000", "#d62728", "#2a6fdb") else "#000"
        out.append(
            f'<text x="{cx}" y="{y + 4}" class="s" text-anchor="middle" fill="{tcol}">{phys}</text>'
        )
        if bcm is not None and bcm in roles:
            _, kind, colour = _role_text(roles[bcm])
            x0 = cx - 14 if left else cx + 14
            out.append(_icon(kind, x0, y, colour, left))
            tx = x0 - 110 if left else x0 + 110
        else:
            tx = cx - 24 if left else cx + 24
        anchor = "end" if left else "start"
        out.append(
            f'<text x="{tx}" y="{y + 4}" class="{cls}" text-anchor="{anchor}">'
            f"{escape(label)}</text>"
        )
    y = TOP + 20 * ROW_H + 10
    out.append(
        f'<text x="24" y="{y + 20}" class="n">Die face (pips): top-left · top-right / middle-left '
        "· centre · middle-right / bottom-left · bottom-right — mount the seven LEDs in that "
        "pattern under the ROLL button.</text>"
    )
    out.append(
        f'<text x="24" y="{y + 40}" class="n">Seat LEDs: one per seat, seat 1 first, each in '
        "its player's wizard colour; the lit one shows whose turn it is.</text>"
    )
    out.append(
        f'<text x="24" y="{y + 60}" class="n">Optional LED ring: a Raspberry Pi Pico on USB '
        "(firmware/main.py), WS2812 ring DIN on the Pico's GP16 — no header pins used.</text>"
    )
    # the die face legend
    fx, fy = WIDTH - 150, y + 70
    out.append(f'<rect x="{fx - 40}" y="{fy - 40}" width="80" height="80" rx="10" fill="#f7f7f7" '
               'stroke="#333"/>')  # fmt: skip
    for (dx, dy), name in zip(
        [(-22, -22), (22, -22), (-22, 0), (0, 0), (22, 0), (-22, 22), (22, 22)],
        ("TL", "TR", "ML", "C", "MR", "BL", "BR"),
        strict=True,
    ):
        out.append(f'<circle cx="{fx + dx}" cy="{fy + dy}" r="7" fill="#f5f0c8" stroke="#333"/>')
        out.append(
            f'<text x="{fx + dx}" y="{fy + dy + 3}" font-size="7" '
            f'text-anchor="middle">{name}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    pin_map = read_pin_file(args[0]) if args else load_pin_map()
    sys.stdout.write(generate_svg(pin_map))
    return 0


if __name__ == "__main__":
    sys.exit(main())
