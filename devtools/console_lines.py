"""Machines' serial ports for `make bench-console`: a TCP listener on 127.0.0.1 per machine,
all on one asyncio loop in a thread of the bench, for ipmi_sim's serial-over-LAN to
connect to (as tests/peers/serial_line.py does for one machine in the tests).

`stream` makes every machine print a synthetic boot log at a rate, each line unique (its
machine and number), and returns what each printed, so the bench can look for every line
in the recordings. Machine 0 answers what is typed on it with `#<bytes typed so far>#`,
which is how the bench's browser knows its key came back.
"""

from __future__ import annotations

import asyncio
import threading
import time

from tests.peers.serial_line import strip_telnet
from tests.peers.util import LOOPBACK

LINE_FILL = "systemd[1]: Started corral-bench.service - a line of a machine's boot log"


class Lines:
    def __init__(self, count: int) -> None:
        self.ports: list[int] = []  # each listener's, as the kernel gave it (no two alike)
        self._writers: list[asyncio.StreamWriter | None] = [None] * count
        self.typed = 0  # bytes typed on machine 0
        self.loop = asyncio.new_event_loop()
        self._servers: list[asyncio.base_events.Server] = []
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(count), self.loop).result(timeout=60)

    async def _listen(self, count: int) -> None:
        for index in range(count):
            server = await asyncio.start_server(
                lambda r, w, i=index: self._serve(i, r, w), LOOPBACK, 0, backlog=4
            )
            self._servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])

    async def _serve(self, index: int, reader, writer) -> None:
        self._writers[index] = writer
        while data := await reader.read(4096):
            typed = strip_telnet(data)
            if index == 0 and typed:
                self.typed += len(typed)
                writer.write(f"#{self.typed}#".encode())
        self._writers[index] = None

    def connected(self) -> int:
        return sum(writer is not None for writer in self._writers)

    def write(self, index: int, data: bytes) -> None:
        writer = self._writers[index]
        if writer is not None:
            self.loop.call_soon_threadsafe(writer.write, data.replace(b"\xff", b"\xff\xff"))

    def stream(self, seconds: float, rate: int) -> list[list[bytes]]:
        """Every machine prints about `rate` bytes a second for `seconds`; the lines each
        printed, in order."""
        future = asyncio.run_coroutine_threadsafe(self._stream(seconds, rate), self.loop)
        return future.result(timeout=seconds + 60)

    async def _stream(self, seconds: float, rate: int) -> list[list[bytes]]:
        printed: list[list[bytes]] = [[] for _ in self.ports]
        owed = [0.0] * len(self.ports)
        start = time.monotonic()
        tick = 0.1
        while (elapsed := time.monotonic() - start) < seconds:
            for index, writer in enumerate(self._writers):
                if writer is None:
                    continue
                owed[index] += rate * tick
                chunk = []
                while owed[index] > 0:
                    seq = len(printed[index])
                    line = f"[{elapsed:11.6f}] m{index:04d} {seq:06d} {LINE_FILL}\r\n".encode()
                    printed[index].append(line)
                    chunk.append(line)
                    owed[index] -= len(line)
                writer.write(b"".join(chunk))
            await asyncio.sleep(tick - (time.monotonic() - start - elapsed) % tick)
        return printed

    def close(self) -> None:
        async def shut() -> None:
            for server in self._servers:
                server.close()
            for writer in self._writers:
                if writer is not None:
                    writer.close()

        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
