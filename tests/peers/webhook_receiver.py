"""A webhook receiver in a process of its own on 127.0.0.1, as an integrator would write
one: every request is verified with `standardwebhooks.Webhook(secret).verify(body,
headers)`, the library Corral's docs tell receivers to use, and written to a JSON-lines log
that the test reads: accepted ones (msg id, type, time) and rejected ones (the library's
reason).

Modes (POST /__mode {"mode": ..., "sleep": s}): `ok` answers 200, `500` answers 500,
`sleep` waits `sleep` seconds then answers 200 (a slow receiver; the sender times out).
Stopping the process makes the port refuse connections; `start()` again on the same port.

    WEBHOOK_SECRET=whsec_... python -m tests.peers.webhook_receiver --port 8123 --log out.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from standardwebhooks import Webhook, WebhookVerificationError

from tests.peers.util import LOOPBACK, POLL, REPO_ROOT, free_port, stop_process_group, wait_for_port


def serve(port: int, secret: str, log_path: Path, mode: str, sleep: float) -> None:
    signer = Webhook(secret)
    state = {"mode": mode, "sleep": sleep}
    lock = threading.Lock()
    out = open(log_path, "a", buffering=1)  # noqa: SIM115  (open for the process's life)

    def record(entry: dict[str, Any]) -> None:
        with lock:
            out.write(json.dumps(entry) + "\n")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver behind a proxy
        # Headers and body go out in two writes; with Nagle on, the second waits for the
        # client's delayed ACK (40 ms per request on Linux). Real servers set this too.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int) -> None:
            payload = b'{"ok":true}' if status < 300 else b'{"ok":false}'
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path == "/__mode":
                state.update(json.loads(body))
                return self._answer(200)
            headers = dict(self.headers.items())
            received = time.time()
            msg_id = headers.get("webhook-id") or headers.get("Webhook-Id")
            try:
                payload = signer.verify(body, headers)
            except (WebhookVerificationError, ValueError) as exc:
                record({"msg_id": msg_id, "t": received, "ok": False, "error": str(exc)})
                return self._answer(400)
            mode = state["mode"]
            answered = 500 if mode == "500" else 200
            entry = {"msg_id": msg_id, "type": payload["type"], "t": received, "ok": True}
            record({**entry, "answered": answered, "mode": mode, "path": self.path})
            if mode == "sleep":
                time.sleep(float(state["sleep"]))
            self._answer(answered)

    server = ThreadingHTTPServer((LOOPBACK, port), Handler)
    server.daemon_threads = True
    server.serve_forever(poll_interval=POLL)


@dataclass
class WebhookReceiver:
    """Handle on a receiver process: start/stop it, switch its mode, read what it saw."""

    secret: str
    log: Path
    port: int = field(default_factory=free_port)
    mode: str = "ok"
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/hook"

    def start(self) -> None:
        args = ["--port", str(self.port), "--log", str(self.log), "--mode", self.mode]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.peers.webhook_receiver", *args],
            cwd=REPO_ROOT,
            env={**os.environ, "WEBHOOK_SECRET": self.secret},  # not on a command line
            start_new_session=True,
        )
        wait_for_port(self.port, timeout=15, proc=self.process)

    def stop(self) -> None:
        """Gone: its port refuses connections until start()."""
        if self.process is not None:
            stop_process_group(self.process)
            self.process = None

    def set_mode(self, mode: str, sleep: float = 0) -> None:
        requests.post(f"http://{LOOPBACK}:{self.port}/__mode", json={"mode": mode, "sleep": sleep})

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def accepted(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["ok"]]

    def rejected(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if not r["ok"]]


@pytest.fixture
def webhook_receiver_factory(tmp_path) -> Iterator:
    """make(secret, mode="ok") -> a started WebhookReceiver; all stopped at the end."""
    made: list[WebhookReceiver] = []

    def make(secret: str, mode: str = "ok") -> WebhookReceiver:
        peer = WebhookReceiver(secret, tmp_path / f"receiver-{len(made)}.jsonl", mode=mode)
        peer.start()
        made.append(peer)
        return peer

    yield make
    for peer in made:
        peer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--mode", default="ok", choices=["ok", "500", "sleep"])
    parser.add_argument("--sleep", type=float, default=0)
    ns = parser.parse_args()
    serve(ns.port, os.environ["WEBHOOK_SECRET"], ns.log, ns.mode, ns.sleep)


if __name__ == "__main__":
    main()
