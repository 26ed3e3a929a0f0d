"""A small misbehaving Redfish BMC on loopback, for the faults emulators cannot produce.

It serves one system ("sys1", with two GPUs listed as Processors) from memory and
can be told, per (method, path), to answer with an HTTP status (optionally after
applying the change anyway), with malformed JSON, or only after a delay.
"""

from __future__ import annotations

import contextlib
import email.policy
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.peers.util import LOOPBACK

SYSTEM = "/redfish/v1/Systems/sys1"
RESET = f"{SYSTEM}/Actions/ComputerSystem.Reset"
SESSIONS = "/redfish/v1/SessionService/Sessions"
MACS = ["0C:42:A1:00:00:01", "0C-42-A1-00-00-02"]


@dataclass
class Fault:
    status: int = 200
    apply: bool = False  # carry out the request although answering `status`
    malformed: bool = False
    delay: float = 0.0
    drop: bool = False  # close the connection without answering


@dataclass
class FaultyRedfish:
    """Handle on the running server: its state, the faults to inject, what arrived."""

    host: str = LOOPBACK
    port: int = 0
    power: str = "Off"
    boot: dict[str, Any] = field(
        default_factory=lambda: {
            "BootSourceOverrideTarget": "None",
            "BootSourceOverrideEnabled": "Disabled",
            "BootSourceOverrideMode": "UEFI",
        }
    )
    faults: dict[tuple[str, str], Fault] = field(default_factory=dict)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        return self.url

    def inject(self, method: str, path: str, **fault: Any) -> None:
        """Make `method path` misbehave, e.g. inject("GET", SYSTEM, status=500)."""
        self.faults[(method, path.rstrip("/"))] = Fault(**fault)

    def sent(self, method: str) -> list[tuple[str, Any]]:
        return [(path, body) for m, path, body in self.requests if m == method]

    # -- resources ----------------------------------------------------------------
    def resource(self, path: str) -> dict[str, Any] | None:
        members = lambda *ids: [{"@odata.id": i} for i in ids]  # noqa: E731
        table: dict[str, dict[str, Any]] = {
            "/redfish/v1": {
                "@odata.id": "/redfish/v1",
                "Id": "RootService",
                "Name": "Faulty BMC",
                "RedfishVersion": "1.15.0",
                "Systems": {"@odata.id": "/redfish/v1/Systems"},
                "Links": {"Sessions": {"@odata.id": SESSIONS}},
            },
            "/redfish/v1/Systems": {"Members": members(SYSTEM), "Members@odata.count": 1},
            SYSTEM: self._system(),
            f"{SYSTEM}/Processors": {
                "Members": members(
                    f"{SYSTEM}/Processors/CPU0",
                    f"{SYSTEM}/Processors/GPU0",
                    f"{SYSTEM}/Processors/GPU1",
                )
            },
            f"{SYSTEM}/Processors/CPU0": {
                "Id": "CPU0",
                "ProcessorType": "CPU",
                "Model": "AMD EPYC 9654",
                "TotalCores": 96,
                "TotalThreads": 192,
                "Status": {"State": "Enabled"},
            },
            f"{SYSTEM}/EthernetInterfaces": {
                "Members": members(
                    f"{SYSTEM}/EthernetInterfaces/1", f"{SYSTEM}/EthernetInterfaces/2"
                )
            },
        }
        for n in (0, 1):
            table[f"{SYSTEM}/Processors/GPU{n}"] = {
                "Id": f"GPU{n}",
                "ProcessorType": "GPU",
                "Manufacturer": "NVIDIA",
                "Model": "H100 80GB HBM3",
                "Status": {"State": "Enabled", "Health": "OK"},
            }
            table[f"{SYSTEM}/EthernetInterfaces/{n + 1}"] = {
                "Id": str(n + 1),
                "MACAddress": MACS[n],
                "LinkStatus": "LinkUp",
            }
        return table.get(path)

    def _system(self) -> dict[str, Any]:
        return {
            "@odata.id": SYSTEM,
            "Id": "sys1",
            "Name": "faulty",
            "Manufacturer": "Faulty Inc",
            "Model": "FX-1",
            "SerialNumber": "FX1-0001",
            "UUID": "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
            "PowerState": self.power,
            "Status": {"State": "Enabled", "Health": "OK"},
            "MemorySummary": {"TotalSystemMemoryGiB": 2048},
            "ProcessorSummary": {"Count": 1, "Model": "AMD EPYC 9654"},
            "Processors": {"@odata.id": f"{SYSTEM}/Processors"},
            "EthernetInterfaces": {"@odata.id": f"{SYSTEM}/EthernetInterfaces"},
            "Boot": {
                **self.boot,
                "BootSourceOverrideTarget@Redfish.AllowableValues": [
                    "None",
                    "Pxe",
                    "Hdd",
                    "UefiHttp",
                ],
            },
            "Actions": {
                "#ComputerSystem.Reset": {
                    "target": RESET,
                    "ResetType@Redfish.AllowableValues": [
                        "On",
                        "ForceOff",
                        "GracefulShutdown",
                        "ForceRestart",
                        "PowerCycle",
                    ],
                }
            },
        }

    def unreachable(self) -> bool:
        """True while the BMC drops connections (tests/peers/updating_bmc.py: a restart)."""
        return False

    def answer(self, method: str, path: str, body: Any) -> tuple[int, dict, Any] | None:
        """A subclass's answer to a request before faults apply; None: the usual one."""
        return None

    def apply(self, method: str, path: str, body: Any) -> bool:
        if method == "POST" and path == RESET and isinstance(body, dict):
            reset = body.get("ResetType")
            self.power = "Off" if reset in ("ForceOff", "GracefulShutdown") else "On"
            return True
        if method == "PATCH" and path == SYSTEM and isinstance(body, dict):
            boot = body.get("Boot") or {}
            self.boot.update({k: v for k, v in boot.items() if k.startswith("BootSource")})
            return True
        return False


class Part(bytes):
    """One part's bytes, with the file name its Content-Disposition gave ("" if none)."""

    filename: str = ""


def multipart(content_type: str, raw: bytes) -> dict[str, Part]:
    """A multipart/form-data body as {part name: its bytes}, read with the standard
    library's MIME parser (a BMC's own parser is stricter than none)."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    if not message.is_multipart():
        raise ValueError("not a multipart body")
    parts = {}
    for part in message.iter_parts():
        name = str(part.get_param("name", header="content-disposition"))
        parts[name] = Part(part.get_payload(decode=True))
        parts[name].filename = part.get_filename() or ""
    return parts


def _handler(peer: FaultyRedfish) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

        def _reply(self, status: int, payload: bytes | None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload or b"")))
            # sushy asks for Connection: close; saying so back stops urllib3 from
            # pooling a socket this server is about to close (a flaky RemoteDisconnected).
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            if payload:
                self.wfile.write(payload)

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            content_type = self.headers.get("Content-Type") or ""
            try:
                if content_type.startswith("multipart/form-data"):
                    body = multipart(content_type, raw)
                else:
                    body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            path = self.path.split("?")[0].rstrip("/") or "/"
            peer.requests.append((method, path, body))
            if peer.unreachable():  # restarting: it drops every connection for a while
                self.close_connection = True
                return
            answer = peer.answer(method, path, body)
            if answer is not None:  # a subclass's own answer: (status, headers, document)
                status, headers, document = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                payload = json.dumps(document).encode() if document is not None else b""
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                self.wfile.write(payload)
                return
            fault = peer.faults.get((method, path), Fault())
            if fault.delay and peer.stopping.wait(fault.delay):
                return
            if fault.drop:
                self.close_connection = True
                return
            if fault.malformed:
                self._reply(200, b'{"Id": "sys1", "PowerState": "On", ')
                return
            if fault.status != 200:
                if fault.apply:
                    peer.apply(method, path, body)
                error = {
                    "error": {
                        "code": "Base.1.0.GeneralError",
                        "message": f"injected HTTP {fault.status}",
                    }
                }
                self._reply(fault.status, json.dumps(error).encode())
                return
            if method == "GET":
                resource = peer.resource(path)
                if resource is None:
                    self._reply(404, json.dumps({"error": {"message": "not found"}}).encode())
                else:
                    self._reply(200, json.dumps(resource).encode())
            elif method == "POST" and path == SESSIONS:
                # Redfish session login: token in a header, session URI in Location.
                self.send_response(201)
                self.send_header("X-Auth-Token", "token-1")
                self.send_header("Location", f"{SESSIONS}/1")
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
            elif (method == "DELETE" and path == f"{SESSIONS}/1") or peer.apply(method, path, body):
                self._reply(204, None)
            else:
                self._reply(405, json.dumps({"error": {"message": "not allowed"}}).encode())

        def do_GET(self) -> None:  # noqa: N802
            self._handle("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._handle("POST")

        def do_PATCH(self) -> None:  # noqa: N802
            self._handle("PATCH")

        def do_DELETE(self) -> None:  # noqa: N802
            self._handle("DELETE")

    return Handler


@contextlib.contextmanager
def serving(peer: FaultyRedfish) -> Iterator[FaultyRedfish]:
    """Serve `peer` from a thread of this process on loopback until the block ends."""
    server = ThreadingHTTPServer((LOOPBACK, 0), _handler(peer))
    server.daemon_threads = True
    peer.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name=f"{type(peer).__name__}",
        daemon=True,
    )
    thread.start()
    try:
        yield peer
    finally:
        peer.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def faulty_redfish() -> Iterator[FaultyRedfish]:
    """A fresh misbehaving Redfish BMC per test (thread in this process, loopback only)."""
    with serving(FaultyRedfish()) as peer:
        yield peer
