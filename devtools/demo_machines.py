"""The demo's 16 servers: what their firmware and the booted image do, and nothing else.

Tails the Redfish emulator's journal (every POST/PATCH it accepted, written by
tests/peers/sushy_emulator_launcher.py). When a demo system is powered on or reset and
its BMC then says it is on, the machine "boots" as a PXE-first server does: it asks
Corral's boot server `GET /boot/ipxe?mac=<its boot MAC>`. A local-boot answer means it
boots its disk: nothing more to do. A deploy answer carries `corral.callback=` and
`corral.token=` on its kernel line: the machine fetches the kernel and initrd the script
names (from the demo's artifact server), "boots" for a few seconds, and POSTs the
phone-home `{"token", "hostname", "kernel", "version", "image"}` as
tests/peers/netboot/init.sh does in a real VM. Every step is logged (.demo/logs/machines.log).

Usage: python -m devtools.demo_machines --journal PATH --redfish URL --web URL [--boot-seconds S]
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import threading
import time
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter

from devtools.demo_image import KERNEL
from inventory.demo import BMC_PASSWORD, BMC_USERNAME, DemoNode, demo_nodes

log = logging.getLogger("demo-machines")
RESET = re.compile(r"^/redfish/v1/Systems/([^/]+)/Actions/ComputerSystem\.Reset$")
BOOTS = {"On", "ForceOn", "ForceRestart", "GracefulRestart", "PowerCycle"}


class _FromAddress(HTTPAdapter):
    """Connections from one local address: a demo machine's own (127.20.x.y, loopback on
    Linux), as a real node phones home from its interface; Corral refuses a phone-home from
    an address that is not the node's (issue 36)."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def from_address(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", _FromAddress(address))
    session.mount("https://", _FromAddress(address))
    return session


def kernel_args(script: str) -> dict[str, str]:
    """`corral.<name>=<value>` words of the script's kernel line."""
    line = next((ln for ln in script.splitlines() if ln.strip().startswith("kernel ")), "")
    return dict(re.findall(r"\bcorral\.(\w+)=(\S+)", line))


def artifact_urls(script: str) -> list[str]:
    return re.findall(r"^\s*(?:kernel|initrd)\s+(?:--name\s+\S+\s+)?(https?://\S+)", script, re.M)


class Machines:
    def __init__(self, redfish: str, web: str, boot_seconds: float) -> None:
        self.redfish, self.web, self.boot_seconds = (
            redfish.rstrip("/"),
            web.rstrip("/"),
            boot_seconds,
        )
        self.nodes = {n.uuid: n for n in demo_nodes()} | {n.hostname: n for n in demo_nodes()}
        self.booting: set[str] = set()
        self.lock = threading.Lock()

    def power_state(self, node: DemoNode) -> str:
        url = f"{self.redfish}/redfish/v1/Systems/{node.uuid}"
        reply = requests.get(url, auth=(BMC_USERNAME, BMC_PASSWORD), timeout=10)
        reply.raise_for_status()
        return str(reply.json().get("PowerState"))

    def on_entry(self, entry: dict) -> None:
        match = RESET.match(entry.get("path", ""))
        body = entry.get("body") or {}
        if entry.get("method") != "POST" or not match or body.get("ResetType") not in BOOTS:
            return
        node = self.nodes.get(match.group(1))
        if node is None:
            return
        log.info("%s: BMC got %s", node.hostname, body["ResetType"])
        threading.Thread(target=self.boot, args=(node,), daemon=True).start()

    def boot(self, node: DemoNode) -> None:
        with self.lock:
            if node.hostname in self.booting:
                log.info("%s: already booting; this reset restarts the same boot", node.hostname)
                return
            self.booting.add(node.hostname)
        try:
            self._boot(node)
        except Exception:  # one machine's trouble is logged, the others keep going
            log.exception("%s: boot failed", node.hostname)
        finally:
            with self.lock:
                self.booting.discard(node.hostname)

    def _boot(self, node: DemoNode) -> None:
        time.sleep(0.5)  # POST, then the NIC's option ROM
        if self.power_state(node) != "On":
            log.info("%s: BMC says it is off; not booting", node.hostname)
            return
        script = self.ask(f"{self.web}/boot/ipxe", {"mac": node.mac, "arch": "x86_64"})
        args = kernel_args(script)
        if "token" not in args or "callback" not in args:
            log.info("%s: boot server says boot the local disk; booted", node.hostname)
            return
        image = f"{args.get('image', '?')}:{args.get('version', '?')}"
        for url in artifact_urls(script):
            size = len(requests.get(url, timeout=30).content)
            log.info("%s: fetched %s (%d bytes)", node.hostname, url, size)
        log.info("%s: booting %s (%g s)", node.hostname, image, self.boot_seconds)
        time.sleep(self.boot_seconds)
        report = {
            "token": args["token"],
            "hostname": args.get("hostname", node.hostname),
            "kernel": KERNEL,
            "image": args.get("image", ""),
            "version": args.get("version", ""),
        }
        for attempt in range(1, 6):
            try:
                reply = from_address(node.ip).post(args["callback"], json=report, timeout=15)
            except requests.RequestException as exc:
                log.warning("%s: phone-home attempt %d: %s", node.hostname, attempt, exc)
            else:
                log.info(
                    "%s: phoned home: HTTP %d %s",
                    node.hostname,
                    reply.status_code,
                    reply.text[:200],
                )
                if reply.status_code < 500:  # a 4xx is the server's considered answer
                    return
            time.sleep(2)

    def ask(self, url: str, params: dict) -> str:
        for attempt in range(1, 6):
            try:
                reply = requests.get(url, params=params, timeout=15)
                reply.raise_for_status()
                return reply.text
            except requests.RequestException as exc:
                log.warning("%s attempt %d: %s", url, attempt, exc)
                time.sleep(2)
        return ""


def follow(path: Path, machines: Machines, stop: threading.Event | None = None) -> None:
    """Tail the journal from its current end (a restarted player does not replay boots)."""
    path.touch()
    with path.open(encoding="utf-8") as fh:
        fh.seek(0, 2)
        pending = ""
        while not (stop and stop.is_set()):
            chunk = fh.readline()
            if not chunk:
                time.sleep(0.2)
                continue
            pending += chunk
            if not pending.endswith("\n"):
                continue
            try:
                machines.on_entry(json.loads(pending))
            except ValueError:
                log.warning("unreadable journal line: %r", pending[:200])
            pending = ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--journal", type=Path, required=True)
    parser.add_argument("--redfish", required=True)
    parser.add_argument("--web", required=True)
    parser.add_argument("--boot-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    logging.getLogger("urllib3").setLevel(logging.WARNING)
    log.info("playing %d demo machines; journal %s", len(demo_nodes()), args.journal)
    follow(args.journal, Machines(args.redfish, args.web, args.boot_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
