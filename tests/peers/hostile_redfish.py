"""A Redfish BMC on loopback that serves a tree of documents and misbehaves where told.

For the bad input sushy-static cannot produce: an HTTP 500, a body of 20 MB, bytes that
are not UTF-8, an answer dripped a byte at a time, every answer slow, a BMC that stops
answering mid-walk (it takes the connection and never replies, or closes it). It counts
the GETs of every path, so a test can say each document was fetched once.

faulty_http.py is the same idea for power and boot control of one fixed system; this one
serves any tree: a dict of path -> document (``small_tree()`` is a GPU server with a bit
of everything), or a mockup directory (``tree_from(tests/corpus/redfish/<t>/redfish/v1)``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.peers.util import LOOPBACK

ROOT = "/redfish/v1"
SYSTEM = f"{ROOT}/Systems/sys1"
CHASSIS = f"{ROOT}/Chassis/chassis0"
SESSIONS = f"{ROOT}/SessionService/Sessions"
PIECE = 64 * 1024


def normal(path: str) -> str:
    """A path as the tree and the counts key it: no query, fragment or trailing slash."""
    return path.split("?", 1)[0].split("#", 1)[0].rstrip("/") or "/"


def ref(path: str) -> dict[str, str]:
    return {"@odata.id": path}


def collection(*paths: str) -> dict[str, Any]:
    return {"Members": [ref(p) for p in paths], "Members@odata.count": len(paths)}


def small_tree() -> dict[str, dict[str, Any]]:
    """One system (sys1): a CPU and two GPUs, two NICs, two drives, one chassis, and a
    firmware inventory of two components."""
    tree: dict[str, dict[str, Any]] = {
        ROOT: {
            "@odata.id": ROOT,
            "Id": "RootService",
            "RedfishVersion": "1.15.0",
            "Systems": ref(f"{ROOT}/Systems"),
            "Chassis": ref(f"{ROOT}/Chassis"),
            "UpdateService": ref(f"{ROOT}/UpdateService"),
            "Links": {"Sessions": ref(SESSIONS)},
        },
        f"{ROOT}/Systems": collection(SYSTEM),
        SYSTEM: {
            "@odata.id": SYSTEM,
            "Id": "sys1",
            "Manufacturer": "Hostile Inc",
            "Model": "HX-1",
            "SerialNumber": "HX1-0001",
            "UUID": "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
            "BiosVersion": "1.2.3",
            "MemorySummary": {"TotalSystemMemoryGiB": 2048},
            "Processors": ref(f"{SYSTEM}/Processors"),
            "EthernetInterfaces": ref(f"{SYSTEM}/EthernetInterfaces"),
            "Storage": ref(f"{SYSTEM}/Storage"),
            "Links": {"Chassis": [ref(CHASSIS)]},
        },
        f"{SYSTEM}/Processors": collection(*(f"{SYSTEM}/Processors/{p}" for p in PROCESSORS)),
        f"{SYSTEM}/EthernetInterfaces": collection(
            f"{SYSTEM}/EthernetInterfaces/1", f"{SYSTEM}/EthernetInterfaces/2"
        ),
        f"{SYSTEM}/Storage": collection(f"{SYSTEM}/Storage/1"),
        f"{SYSTEM}/Storage/1": {
            "Id": "1",
            "Drives": [ref(f"{SYSTEM}/Storage/1/Drives/{d}") for d in ("d0", "d1")],
        },
        f"{ROOT}/Chassis": collection(CHASSIS),
        CHASSIS: {"@odata.id": CHASSIS, "Id": "chassis0", "ChassisType": "RackMount"},
        f"{ROOT}/UpdateService": {"FirmwareInventory": ref(f"{ROOT}/UpdateService/FI")},
        f"{ROOT}/UpdateService/FI": collection(
            f"{ROOT}/UpdateService/FI/BMC", f"{ROOT}/UpdateService/FI/BIOS"
        ),
    }
    for ident, kind, model in PROCESSORS.values():
        tree[f"{SYSTEM}/Processors/{ident}"] = {
            "@odata.id": f"{SYSTEM}/Processors/{ident}",
            "Id": ident,
            "ProcessorType": kind,
            "Model": model,
            "TotalCores": 96 if kind == "CPU" else None,
            "Status": {"State": "Enabled", "Health": "OK"},
        }
    for n in (1, 2):
        tree[f"{SYSTEM}/EthernetInterfaces/{n}"] = {
            "Id": str(n),
            "MACAddress": f"0C:42:A1:00:00:0{n}",
            "LinkStatus": "LinkUp",
        }
    for n, drive in enumerate(("d0", "d1")):
        tree[f"{SYSTEM}/Storage/1/Drives/{drive}"] = {
            "Id": drive,
            "Name": f"Disk {n}",
            "CapacityBytes": 960197124096,
        }
    for ident, version in (("BMC", "2.15.0"), ("BIOS", "1.2.3")):
        tree[f"{ROOT}/UpdateService/FI/{ident}"] = {
            "@odata.id": f"{ROOT}/UpdateService/FI/{ident}",
            "Id": ident,
            "Version": version,
        }
    return tree


PROCESSORS = {
    "CPU0": ("CPU0", "CPU", "AMD EPYC 9654"),
    "GPU0": ("GPU0", "GPU", "H100 80GB HBM3"),
    "GPU1": ("GPU1", "GPU", "H100 80GB HBM3"),
}


def tree_from(directory: Path, prefix: str = ROOT) -> dict[str, dict[str, Any]]:
    """A mockup directory (``<dir>/index.json`` is ``prefix``) as a tree."""
    tree = {}
    for index in directory.rglob("index.json"):
        rel = index.parent.relative_to(directory).as_posix()
        path = prefix if rel == "." else f"{prefix}/{rel}"
        tree[normal(path)] = json.loads(index.read_text(encoding="utf-8"))
    return tree


@dataclass
class Misbehave:
    """What one path answers instead of its document (one field set at a time)."""

    status: int = 0  # this HTTP status, with a Redfish error body
    body: bytes | None = None  # these bytes, as a 200 application/json answer
    size: int = 0  # a JSON document of this many bytes, made as it is sent
    declare: bool = True  # with size: say Content-Length (False: chunked, no length)
    drip: float = 0.0  # the document, one byte per this many seconds


@dataclass
class HostileRedfish:
    """Handle on the running server: the tree, what to break, what arrived."""

    tree: dict[str, dict[str, Any]]
    host: str = LOOPBACK
    port: int = 0
    faults: dict[str, Misbehave] = field(default_factory=dict)
    gets: Counter[str] = field(default_factory=Counter)
    sent: Counter[str] = field(default_factory=Counter)  # body bytes written, per path
    delay: float = 0.0  # every GET answered this many seconds late
    answers: int | None = None  # GETs answered before the BMC stops answering (None: all)
    drop: bool = False  # when stopped: close each connection (False: never reply)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    address = url

    @property
    def hostport(self) -> str:
        """How the driver names this BMC in messages."""
        return f"{self.host}:{self.port}"

    def misbehave(self, path: str, **how: Any) -> None:
        """Make GET path misbehave, e.g. misbehave(path, status=500)."""
        self.faults[normal(path)] = Misbehave(**how)

    def stop_answering(self, after: int, drop: bool = False) -> None:
        """Answer ``after`` more GETs, then take connections and never reply (or close)."""
        with self.lock:
            self.answers = sum(self.gets.values()) + after
            self.drop = drop

    def total(self) -> int:
        return sum(self.gets.values())


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up on a 20 MB answer is the point, not an error


def _handler(peer: HostileRedfish) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _head(self, status: int, length: int | None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if length is None:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(length))
            self.send_header("Connection", "close")  # no pooled socket about to be closed
            self.close_connection = True
            self.end_headers()

        def _reply(self, status: int, payload: bytes, path: str = "") -> None:
            self._head(status, len(payload))
            self.wfile.write(payload)
            peer.sent[path] += len(payload)

        def do_GET(self) -> None:  # noqa: N802
            path = normal(self.path)
            with peer.lock:
                peer.gets[path] += 1
                dead = peer.answers is not None and peer.total() > peer.answers
            if dead:
                if not peer.drop:
                    peer.stopping.wait()  # took the connection; never replies
                self.close_connection = True
                return
            if peer.delay and peer.stopping.wait(peer.delay):
                return
            fault = peer.faults.get(path)
            document = peer.tree.get(path)
            if fault is None and document is None:
                self._reply(404, _error(f"{path} not found"), path)
            elif fault is None:
                self._reply(200, json.dumps(document).encode(), path)
            elif fault.status:
                self._reply(fault.status, _error(f"HTTP {fault.status} for {path}"), path)
            elif fault.body is not None:
                self._reply(200, fault.body, path)
            elif fault.size:
                self._big(path, fault.size, fault.declare)
            elif fault.drip:
                self._drip(path, json.dumps(document or {}).encode(), fault.drip)

        def _big(self, path: str, size: int, declare: bool) -> None:
            head = json.dumps({"@odata.id": path, "Id": "big", "Filler": ""})[:-2].encode()
            tail = b'"}'
            self._head(200, size if declare else None)
            left = size - len(head) - len(tail)
            filler = (b"x" * min(PIECE, left - n) for n in range(0, left, PIECE))
            for piece in itertools.chain([head], filler, [tail]):  # made as sent
                data = piece if declare else b"%x\r\n%s\r\n" % (len(piece), piece)
                self.wfile.write(data)
                peer.sent[path] += len(piece)
            if not declare:
                self.wfile.write(b"0\r\n\r\n")

        def _drip(self, path: str, payload: bytes, every: float) -> None:
            self._head(200, len(payload))
            for byte in payload:
                if peer.stopping.wait(every):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                peer.sent[path] += 1

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if normal(self.path) != SESSIONS:
                self._reply(405, _error("not allowed"))
                return
            # Redfish session login: token in a header, session URI in Location.
            self.send_response(201)
            self.send_header("X-Auth-Token", "token-1")
            self.send_header("Location", f"{SESSIONS}/1")
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()

        def do_DELETE(self) -> None:  # noqa: N802
            self._head(204, 0)

    return Handler


def _error(message: str) -> bytes:
    return json.dumps({"error": {"code": "Base.1.0.GeneralError", "message": message}}).encode()


@contextlib.contextmanager
def serve(tree: dict[str, dict[str, Any]]) -> Iterator[HostileRedfish]:
    """Serve tree on 127.0.0.1 (a thread of this process) until the block ends."""
    peer = HostileRedfish(tree={normal(p): d for p, d in tree.items()})
    server = _Server((LOOPBACK, 0), _handler(peer))
    peer.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="hostile-redfish",
        daemon=True,
    )
    thread.start()
    try:
        yield peer
    finally:
        peer.stopping.set()  # releases handlers that hang, drip or wait
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
