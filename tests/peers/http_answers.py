"""A real HTTP server on 127.0.0.1 that answers each path as the test says (a redirect, a
status, some bytes) and records what it was asked: for redirect hops and for what a
client does next (`answering()`). `TCPListener` holds the other things a port can hold:
a listener that never answers, or one that speaks another protocol."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from tests.peers.util import POLL


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class HTTPAnswers:
    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.asked: list[tuple[str, str]] = []
        peer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                peer.asked.append((self.command, self.path))
                answer = peer.answers.get(self.path, Answer(404, b"not here"))
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = _answer  # noqa: N815

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, path: str, status: int = 200, body: bytes = b"", **headers: str) -> str:
        self.answers[path] = Answer(
            status, body, {k.replace("_", "-"): v for k, v in headers.items()}
        )
        return self.url + path

    def redirect(self, path: str, to: str, status: int = 302) -> str:
        return self.answer(path, status, location=to)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class TCPListener:
    """Accepts on 127.0.0.1 and, per connection, writes `greeting` (if any) and then keeps
    the connection open and silent until the test ends: an SSH-like banner, or nothing."""

    def __init__(self, greeting: bytes = b"") -> None:
        self.greeting = greeting
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            if self.greeting:
                conn.sendall(self.greeting)

    def stop(self) -> None:
        with suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() above
        self.sock.close()
        for conn in self.held:
            conn.close()


@contextmanager
def answering() -> Iterator[HTTPAnswers]:
    server = HTTPAnswers()
    try:
        yield server
    finally:
        server.stop()
