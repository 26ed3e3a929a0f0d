"""Simulated BMCs: many Redfish services on loopback addresses in one asyncio process.

Each BMC answers from a real vendor tree of tests/corpus/redfish (a GB200 compute tray,
an NVSwitch tray, a power shelf...), one document per GET, after a latency drawn from its
range, as a real BMC's web server is slow. Each counts its requests in flight and the most
it ever had at once, and answers 503 (with Retry-After) past its own limit, as real BMCs
do past a few sessions: what the per-BMC limit of Corral's Redfish client
(provisioning/drivers/redfish/gate.py) is proven against, and what `make bench-site`
inspects by the thousand. Sessions are accepted with any credentials (as sushy-static
does). Only loopback addresses are served (127.0.0.0/8).

aiohttp's low-level server: a well-kept HTTP/1.1 server, keep-alive included, that costs
one coroutine per request, so thousands of BMCs fit in one process.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import json
import random
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiohttp import web

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "redfish"
ROOT = "/redfish/v1"
SESSIONS = f"{ROOT}/SessionService/Sessions"


def _json_or_none(body: bytes) -> dict[str, Any] | None:
    try:
        found = json.loads(body or b"null")
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@lru_cache(maxsize=64)
def _documents(tree: Path) -> dict[str, bytes]:
    """Every document of a tree by its path (`/redfish/v1/Systems/1`), read once and
    shared by every BMC serving the tree."""
    docs = {}
    for index in tree.rglob("index.json"):
        relative = index.parent.relative_to(tree).as_posix()
        path = ROOT if relative == "." else f"{ROOT}/{relative}"
        docs[path] = index.read_bytes()
    return docs


@dataclass
class Counts:
    requests: int = 0
    in_flight: int = 0
    most: int = 0  # the most requests in flight at once
    refused: int = 0  # answered 503: past the BMC's limit, or busy (SimBMC.busy)
    logins: int = 0  # sessions created
    logouts: int = 0  # sessions deleted
    unauthorized: int = 0  # answered 401


@dataclass
class SimBMC:
    tree: Path  # a corpus tree's redfish/v1 directory
    host: str
    port: int
    latency: tuple[float, float] = (0.05, 0.5)
    limit: int = 4  # requests at once before it answers 503
    # Documents this BMC answers instead of the tree's (its own serial, say), by path.
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    # With a password, only that password logs in and every request but the service root
    # needs a session this BMC gave and still knows (a real BMC's rules); without one,
    # any credentials do, as sushy-static's.
    password: str | None = None
    retry_after: int = 1  # the seconds its 503 names
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        if not ipaddress.ip_address(self.host).is_loopback:
            raise ValueError(f"{self.host} is not a loopback address: the simulator serves none")
        self._sessions = itertools.count(1)
        self._tokens: set[str] = set()
        self._busy = 0
        self._random = random.Random(f"{self.host}:{self.port}")

    def busy(self, requests: int) -> None:
        """Answer the next `requests` requests 503, as a BMC busy with other clients does."""
        self._busy = requests

    def forget_sessions(self) -> None:
        """Drop every session, as a BMC that restarted or timed them out has."""
        self._tokens.clear()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        counts = self.counts
        counts.requests += 1
        if counts.in_flight >= self.limit or self._busy > 0:
            self._busy = max(0, self._busy - 1)
            counts.refused += 1
            return web.json_response(
                {"error": {"code": "Base.1.0.ServiceTemporarilyUnavailable"}},
                status=503,
                headers={"Retry-After": str(self.retry_after)},
            )
        counts.in_flight += 1
        counts.most = max(counts.most, counts.in_flight)
        try:
            body = await request.read()
            await asyncio.sleep(self._random.uniform(*self.latency))
            path = request.path.rstrip("/") or "/"
            if not self._allowed(request, path, body):
                counts.unauthorized += 1
                return web.json_response({"error": {"message": "unauthorized"}}, status=401)
            expand = request.query.get("$expand", "")
            return self._answer(request.method, path, expand)
        finally:
            counts.in_flight -= 1

    def _allowed(self, request: web.BaseRequest, path: str, body: bytes) -> bool:
        if self.password is None or path == ROOT:
            return True
        if request.method == "POST" and path == SESSIONS:
            return (_json_or_none(body) or {}).get("Password") == self.password
        return request.headers.get("X-Auth-Token") in self._tokens

    def _answer(self, method: str, path: str, expand: str = "") -> web.Response:
        if method == "POST" and path == SESSIONS:
            number = next(self._sessions)
            self.counts.logins += 1
            self._tokens.add(f"sim-{number}")
            body = {"@odata.id": f"{SESSIONS}/{number}", "Id": str(number), "UserName": "sim"}
            headers = {"X-Auth-Token": f"sim-{number}", "Location": f"{SESSIONS}/{number}"}
            return web.json_response(body, status=201, headers=headers)
        if method == "DELETE":
            if path.startswith(f"{SESSIONS}/"):
                self.counts.logouts += 1
                self._tokens.discard(f"sim-{path.rsplit('/', 1)[-1]}")
            return web.Response(status=204)
        if method != "GET":
            return web.json_response({"error": {"message": "not simulated"}}, status=405)
        if path in self.overrides:
            return web.json_response(self.overrides[path])
        document = _documents(self.tree).get(path)
        if document is None:
            return web.json_response({"error": {"message": f"{path} not found"}}, status=404)
        if expand == ".($levels=1)" and self._expands():
            return web.json_response(self._expanded(json.loads(document)))
        return web.Response(body=document, content_type="application/json")

    def _expands(self) -> bool:
        """Whether the tree's service root says it expands one level (as a GB200 tray's
        and a BlueField's bmcweb do; the switch tray's and power shelf's say not)."""
        root = json.loads(_documents(self.tree)[ROOT])
        expand = (root.get("ProtocolFeaturesSupported") or {}).get("ExpandQuery") or {}
        return bool(expand.get("Levels")) and (expand.get("MaxLevels") or 0) >= 1

    def _expanded(self, document: dict[str, Any]) -> dict[str, Any]:
        """A collection with its members' documents in place of their links (DSP0266
        $expand=.($levels=1); a member the tree lacks stays a link)."""
        docs = _documents(self.tree)
        members = []
        for member in document.get("Members") or []:
            path = (member.get("@odata.id") or "").rstrip("/") if isinstance(member, dict) else ""
            members.append(json.loads(self.overrides_or(path, docs)) if path in docs else member)
        return {**document, "Members": members} if "Members" in document else document

    def overrides_or(self, path: str, docs: dict[str, bytes]) -> bytes:
        if path in self.overrides:
            return json.dumps(self.overrides[path]).encode()
        return docs[path]


class Farm:
    """Simulated BMCs served by one event loop on a thread of its own (for tests, and for
    a benchmark that starts them in its own process)."""

    def __init__(self) -> None:
        self.bmcs: list[SimBMC] = []
        self._loop = asyncio.new_event_loop()
        self._servers: list[asyncio.base_events.Server] = []
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def add(self, bmc: SimBMC) -> SimBMC:
        future = asyncio.run_coroutine_threadsafe(self._serve(bmc), self._loop)
        self._servers.append(future.result(timeout=30))
        self.bmcs.append(bmc)
        return bmc

    async def _serve(self, bmc: SimBMC) -> asyncio.base_events.Server:
        server = web.Server(bmc.handle, access_log=None)
        return await self._loop.create_server(server, bmc.host, bmc.port, reuse_address=True)

    def stop(self) -> None:
        async def close() -> None:
            for server in self._servers:
                server.close()
            await asyncio.gather(*(s.wait_closed() for s in self._servers))

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)

    def __enter__(self) -> Farm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def system_override(tree: Path, system: str, serial: str) -> dict[str, dict[str, Any]]:
    """The override that makes a BMC of `tree` answer for its own machine: its system's
    document with `serial` as SerialNumber."""
    path = f"{ROOT}/Systems/{system}"
    document = json.loads(_documents(tree)[path])
    return {path: {**document, "SerialNumber": serial}}


# --- a site in a process of its own (`make bench-site`) ------------------------------------


def serve_plan(plan: Path, stats: Path) -> None:
    """Serve every BMC of `plan` (JSON: a list of {tree, host, port, system, serial,
    latency, limit}) until SIGTERM, then write each BMC's counts to `stats`."""
    import resource
    import signal

    specs = json.loads(plan.read_text())
    # A socket per BMC, and one per client connection it holds (clients keep theirs open
    # between operations: redfish/sessions.py): raised past the hard limit where allowed.
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(hard, len(specs) + 20000)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    bmcs = []
    for spec in specs:
        tree = CORPUS / spec["tree"] / "redfish" / "v1"
        bmcs.append(
            SimBMC(
                tree,
                spec["host"],
                spec["port"],
                latency=tuple(spec["latency"]),  # type: ignore[arg-type]
                limit=spec["limit"],
                overrides=system_override(tree, spec["system"], spec["serial"]),
            )
        )
    loop = asyncio.new_event_loop()
    stopping = asyncio.Event()

    async def main() -> None:
        servers = [
            await loop.create_server(
                web.Server(bmc.handle, access_log=None), bmc.host, bmc.port, reuse_address=True
            )
            for bmc in bmcs
        ]
        print(f"serving {len(servers)} simulated BMCs", flush=True)
        loop.add_signal_handler(signal.SIGTERM, stopping.set)
        loop.add_signal_handler(signal.SIGINT, stopping.set)
        await stopping.wait()
        for server in servers:
            server.close()
        counts = {f"{b.host}:{b.port}": vars(b.counts) for b in bmcs}
        stats.write_text(json.dumps(counts))

    loop.run_until_complete(main())


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m devtools.sim_bmcs")
    parser.add_argument("--plan", type=Path, required=True)
    parser.add_argument("--stats", type=Path, required=True)
    args = parser.parse_args()
    serve_plan(args.plan, args.stats)
