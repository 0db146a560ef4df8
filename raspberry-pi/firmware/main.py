# Reference firmware for the Wandering Towers companion's LED ring.
# MicroPython on a Raspberry Pi Pico (RP2040) driving a WS2812 ring; USB serial to the Pi.
# Copy to the Pico as main.py (e.g. `mpremote cp main.py :main.py`).
#
# Protocol: see PROTOCOL.md beside this file. The framing part (COBS, CRC-16/CCITT-FALSE,
# frame reader with resync, device replies) behaves exactly like the companion's
# companion/hardware/protocol.py (DeviceLink); the test suite checks that by running the pure
# part of this file under CPython against it. Only run() touches the hardware.

VERSION = 1
MAX_FRAME = 250
NAME = b"wt-ring"

HELLO = 0x01
PING = 0x02
ACK = 0x03
NAK = 0x04
SET_STATE = 0x05

NAK_CRC = 1
NAK_BAD_PAYLOAD = 2
NAK_UNKNOWN_TYPE = 3
NAK_BAD_VERSION = 4

RING_PIN = 16  # GP16 -> ring DIN (through a 330 ohm resistor)
RING_PIXELS = 16
BLINK_MS = 500


def crc16(data):
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data):
    out = bytearray(b"\x00")
    code_at = 0
    code = 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at = len(out)
                out.append(0)
                code = 1
    out[code_at] = code
    return bytes(out)


def cobs_decode(data):
    """Raises ValueError on a malformed packet."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("zero byte in packet")
        i += 1
        end = i + code - 1
        if end > n:
            raise ValueError("not enough input bytes for length code")
        for j in range(i, end):
            if data[j] == 0:
                raise ValueError("zero byte in packet")
        out += data[i:end]
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(msg_type, seq, payload=b"", version=VERSION):
    body = bytes((version, seq, msg_type)) + bytes(payload)
    crc = crc16(body)
    body += bytes(((crc >> 8) & 0xFF, crc & 0xFF))
    return cobs_encode(body) + b"\x00"


# A decoded packet: ("ok", version, seq, type, payload), ("crc", version, seq, type) when only
# the CRC is wrong, or ("bad",) for anything else.
def decode_frame(packet):
    try:
        body = cobs_decode(packet)
    except ValueError:
        return ("bad",)
    if len(body) < 5:
        return ("bad",)
    if crc16(body[:-2]) != (body[-2] << 8) | body[-1]:
        return ("crc", body[0], body[1], body[2])
    return ("ok", body[0], body[1], body[2], bytes(body[3:-2]))


class Reader:
    """Split the byte stream at 0x00; drop overlong runs; skip empty packets."""

    def __init__(self):
        self.buf = bytearray()
        self.overflow = False

    def feed(self, data):
        out = []
        for b in data:
            if b == 0:
                if self.overflow:
                    out.append(("bad",))
                elif len(self.buf):
                    out.append(decode_frame(bytes(self.buf)))
                self.buf = bytearray()
                self.overflow = False
            elif not self.overflow:
                if len(self.buf) >= MAX_FRAME:
                    self.buf = bytearray()
                    self.overflow = True
                else:
                    self.buf.append(b)
        return out


def decode_state(p):
    """LED state payload -> (pips, current or None, attention, brightness, seats) or None."""
    if len(p) < 5:
        return None
    pips, current, attention, brightness, n = p[0], p[1], p[2], p[3], p[4]
    if len(p) != 5 + 3 * n or n > 6:
        return None
    if pips > 0x7F or attention > 1 or (current != 0xFF and current >= n):
        return None
    seats = [(p[5 + 3 * i], p[6 + 3 * i], p[7 + 3 * i]) for i in range(n)]
    return (pips, None if current == 0xFF else current, bool(attention), brightness, seats)


class Device:
    """Protocol state of the board: receive(bytes) -> reply bytes; .state = LED state."""

    def __init__(self, version=VERSION):
        self.version = version
        self.reader = Reader()
        self.state = None
        self.applied = 0

    def hello(self):
        return encode_frame(HELLO, 0, bytes((self.version,)) + NAME, self.version)

    def receive(self, data):
        out = b""
        for f in self.reader.feed(data):
            if f[0] == "crc":
                out += encode_frame(NAK, f[2], bytes((NAK_CRC,)))
            elif f[0] == "ok":
                out += self.frame(f[1], f[2], f[3], f[4])
        return out

    def frame(self, version, seq, msg_type, payload):
        if msg_type == HELLO:
            return self.hello()
        if version != self.version:
            return encode_frame(NAK, seq, bytes((NAK_BAD_VERSION,)), self.version)
        if msg_type == PING:
            return encode_frame(ACK, seq)
        if msg_type == SET_STATE:
            state = decode_state(payload)
            if state is None:
                return encode_frame(NAK, seq, bytes((NAK_BAD_PAYLOAD,)))
            self.state = state
            self.applied += 1
            return encode_frame(ACK, seq)
        return encode_frame(NAK, seq, bytes((NAK_UNKNOWN_TYPE,)))


def ring_colours(state, n, blink_on):
    """Pixel colours for a LED state: seat arcs (current seat bright, others dim), the lit
    pips as white dots at pip index * n / 7, all amber while attention blinks on."""
    px = [(0, 0, 0)] * n
    if state is None:
        return px
    pips, current, attention, brightness, seats = state
    scale = brightness / 255
    if seats:
        for i in range(n):
            s = i * len(seats) // n
            r, g, b = seats[s]
            k = scale if s == current else scale / 8
            px[i] = (int(r * k), int(g * k), int(b * k))
    for i in range(7):
        if pips & (1 << i):
            w = int(255 * scale)
            px[(i * n) // 7] = (w, w, w)
    if attention and blink_on:
        a = int(255 * scale)
        px = [(a, a * 6 // 10, 0)] * n
    return px


def run():
    import micropython
    import neopixel
    import select
    import sys
    import time
    from machine import Pin

    micropython.kbd_intr(-1)  # 0x03 in a frame must not raise KeyboardInterrupt
    ring = neopixel.NeoPixel(Pin(RING_PIN), RING_PIXELS)
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    poll = select.poll()
    poll.register(stdin, select.POLLIN)
    device = Device()
    stdout.write(device.hello())  # ready: greet the host
    shown = None
    while True:
        data = bytearray()
        while poll.poll(10 if not data else 0):
            data += stdin.read(1)
            if len(data) >= 64:
                break
        if data:
            reply = device.receive(bytes(data))
            if reply:
                stdout.write(reply)
        blink_on = (time.ticks_ms() // BLINK_MS) % 2 == 0
        px = ring_colours(device.state, RING_PIXELS, blink_on)
        if px != shown:
            for i, c in enumerate(px):
                ring[i] = c
            ring.write()
            shown = px


if __name__ == "__main__":
    run()
