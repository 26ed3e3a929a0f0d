import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from tests.peers.util import POLL


class ArtifactServer:
    """A plain HTTP file server on loopback, standing in for an image store."""

    def __init__(self, root: Path):
        self.root = root
        handler = type(
            "H",
            (http.server.SimpleHTTPRequestHandler,),
            {
                "log_message": lambda *a: None,
            },
        )
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), lambda *a, **kw: handler(*a, directory=str(root), **kw)
        )
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, name: str, data: bytes) -> tuple[str, str]:
        (self.root / name).write_bytes(data)
        return f"{self.url}/{name}", hashlib.sha256(data).hexdigest()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def artifact_server(tmp_path):
    server = ArtifactServer(tmp_path)
    yield server
    server.stop()
