"""A minimal DHCPDISCOVER client for the serving tests (run inside a network namespace).

usage: python dhcp_probe.py IFACE MAC [CODE=HEX ...]
  -> prints yiaddr, siaddr, file and vendor_class (option 60, or null) as JSON
It sends one DISCOVER with the broadcast flag and reads the OFFER off a packet socket,
so it needs no address on IFACE and no real client package.
"""

import json
import random
import socket
import struct
import sys


def discover(iface: str, mac: str, options: list[tuple[int, bytes]]) -> dict:
    xid = random.randint(0, 2**32 - 1)
    chaddr = bytes.fromhex(mac.replace(":", "")).ljust(16, b"\0")
    pkt = struct.pack(
        "!BBBBIHH16s16s64s128s",
        1,
        1,
        6,
        0,
        xid,
        0,
        0x8000,
        b"\0" * 16,
        chaddr,
        b"\0" * 64,
        b"\0" * 128,
    )
    pkt += b"\x63\x82\x53\x63\x35\x01\x01"
    for code, value in options:
        pkt += bytes([code, len(value)]) + value
    pkt += b"\xff"
    listen = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    listen.bind((iface, 0))
    listen.settimeout(5)
    send = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    send.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    send.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
    send.bind(("0.0.0.0", 68))
    send.sendto(pkt, ("255.255.255.255", 67))
    while True:
        frame = listen.recv(4096)
        udp = frame[14 + (frame[14] & 0xF) * 4 :]
        if frame[23] != 17 or struct.unpack("!H", udp[2:4])[0] != 68:
            continue
        data = udp[8:]
        if data[0] == 2 and struct.unpack("!I", data[4:8])[0] == xid:
            options = parse_options(data[240:])
            return {
                "yiaddr": socket.inet_ntoa(data[16:20]),
                "siaddr": socket.inet_ntoa(data[20:24]),
                "file": data[108:236].rstrip(b"\0").decode(),
                "vendor_class": options[60].decode() if 60 in options else None,
            }


def parse_options(raw: bytes) -> dict[int, bytes]:
    options, i = {}, 0
    while i < len(raw) and raw[i] != 255:
        if raw[i] == 0:  # pad
            i += 1
            continue
        code, length = raw[i], raw[i + 1]
        options[code] = raw[i + 2 : i + 2 + length]
        i += 2 + length
    return options


if __name__ == "__main__":
    opts = [(int(c), bytes.fromhex(v)) for c, v in (a.split("=") for a in sys.argv[3:])]
    print(json.dumps(discover(sys.argv[1], sys.argv[2], opts)))
