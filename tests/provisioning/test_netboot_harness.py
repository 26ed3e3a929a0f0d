"""Self-test of the QEMU network-boot peer (tests/peers/qemu.py) against a stand-in app.

The stand-in plays Corral's two boot endpoints on ONE loopback port (slirp's guestfwd
maps a single guest address to a single host port): GET /boot/ipxe answers a per-node
iPXE script that boots the served kernel + initrd, POST /boot/callback records what the
booted initramfs reports. Two VMs boot side by side, one per chain-URL dialect:

  * the harness default: ${net0/mac} and a raw ${serial};
  * Corral's own (chain.ipxe + deploy.ipxe constructs): chain --replace --autofree
    with ${netX/mac} and ${serial:uristring}, and a serial holding a space and a "#"
    that only URI-escaping survives (a raw ${serial} would end the URL at the "#").
    NB: this 2019 iPXE's uristring leaves "&", "=" and "+" unescaped, so serials with
    those cannot round-trip in a query string.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.peers.qemu import GUEST_APP_URL
from tests.peers.qemu_fixture import NetBoot
from tests.peers.util import LOOPBACK, POLL

# Corral's chain.ipxe and deploy.ipxe dialects (templates/provisioning/boot/), so the
# second VM also proves that this iPXE build runs typed settings, inc, iseq, goto,
# imgfree and --name on kernel/initrd.
CORRAL_CHAIN = f"""#!ipxe
set corral-attempt:int32 0
:fetch
chain --replace --autofree {GUEST_APP_URL}/boot/ipxe?mac=${{netX/mac}}&uuid=${{uuid}}\
&serial=${{serial:uristring}}&arch=${{buildarch}}&platform=${{platform}} || goto failed
:failed
inc corral-attempt
iseq ${{corral-attempt}} 3 && goto give_up ||
sleep 2
goto fetch
:give_up
exit 1
"""
CORRAL_DEPLOY = """#!ipxe
set corral-attempt:int32 0
:fetch
imgfree
kernel --name kernel {kernel_url} initrd=initrd {cmdline} || goto failed
initrd --name initrd {initrd_url} || goto failed
boot || goto failed
:failed
inc corral-attempt
iseq ${{corral-attempt}} 3 && goto give_up ||
sleep 2
goto fetch
:give_up
exit 1
"""


@dataclass
class StandInApp:
    """Records every iPXE script request and every callback, keyed by nothing: tests
    match them up by MAC (query) and token (body)."""

    kernel_url: str
    initrd_url: str
    port: int = 0
    ipxe_requests: list[dict] = field(default_factory=list)
    callbacks: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def token_for(mac: str) -> str:
        return "abc123" + mac.replace(":", "").lower()

    def script_for(self, mac: str) -> str:
        """The simplest deploy script for the first VM, Corral's dialect for the rest."""
        cmdline = (
            f"console=ttyS0 corral.callback={GUEST_APP_URL}/boot/callback"
            f" corral.token={self.token_for(mac)}"
            " corral.image=standin-os corral.version=1.2.3"
            f" corral.hostname=node-{mac.replace(':', '')[-4:]}"
        )
        if mac.endswith(":01"):
            return f"#!ipxe\nkernel {self.kernel_url} {cmdline}\ninitrd {self.initrd_url}\nboot\n"
        return CORRAL_DEPLOY.format(
            kernel_url=self.kernel_url, initrd_url=self.initrd_url, cmdline=cmdline
        )


def _handler(app: StandInApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, body: str, content_type: str = "text/plain") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path != "/boot/ipxe":
                self._reply(404, "not found")
                return
            query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            with app.lock:
                app.ipxe_requests.append(
                    {
                        "at": time.monotonic(),
                        "raw_query": url.query,
                        "query": query,
                        "user_agent": self.headers.get("User-Agent", ""),
                    }
                )
            self._reply(200, app.script_for(query.get("mac", "")))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            with app.lock:
                app.callbacks.append(
                    {
                        "at": time.monotonic(),
                        "path": self.path,
                        "raw": raw.decode(errors="replace"),
                        "content_type": self.headers.get("Content-Type", ""),
                        "body": json.loads(raw),
                    }
                )
            self._reply(200, '{"status": "ok"}', "application/json")

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def stand_in(netboot: NetBoot) -> Iterator[StandInApp]:
    app = StandInApp(kernel_url=netboot.files.kernel_url, initrd_url=netboot.files.initrd_url)
    httpd = ThreadingHTTPServer((LOOPBACK, 0), _handler(app))
    httpd.daemon_threads = True
    app.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
    )
    thread.start()
    try:
        yield app
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.slow
def test_two_vms_netboot_and_phone_home(netboot: NetBoot, stand_in: StandInApp) -> None:
    # The artifact server is shared by the session: count only this test's downloads.
    already = len(netboot.files.requests)
    plain = dict(
        mac="52:54:00:aa:00:01", serial="SN-GPU001", uuid="11111111-2222-3333-4444-555555555555"
    )
    corral = dict(
        mac="52:54:00:aa:00:02", serial="SN GPU#002", uuid="66666666-7777-4888-9999-aaaaaaaaaaaa"
    )
    vms = [
        netboot.start(stand_in.port, timeout=75, **plain),
        netboot.start(stand_in.port, timeout=75, boot_script=CORRAL_CHAIN, **corral),
    ]
    results = [vm.wait() for vm in vms]
    for vm, result in zip(vms, results, strict=True):
        ipxe = [
            r["at"] - vm.started for r in stand_in.ipxe_requests if r["query"].get("mac") == vm.mac
        ]
        print(
            f"\n{result.name}: iPXE script fetched at {ipxe} s, phoned home at "
            f"{result.phoned_home_after} s, powered off at {result.elapsed:.1f} s"
        )
    print("iPXE queries:", [r["raw_query"] for r in stand_in.ipxe_requests])

    for want, result in zip((plain, corral), results, strict=True):
        assert result.phoned_home, result.tail()
        assert result.powered_off and not result.timed_out, result.tail()
        requests = [r for r in stand_in.ipxe_requests if r["query"].get("mac") == want["mac"]]
        assert len(requests) == 1, stand_in.ipxe_requests
        query, agent = requests[0]["query"], requests[0]["user_agent"]
        assert agent.startswith("iPXE/"), agent
        assert query["serial"] == want["serial"], requests[0]["raw_query"]
        assert query["uuid"] == want["uuid"], requests[0]["raw_query"]
        assert query["platform"] == "pcbios"
        assert query["arch"] in {"i386", "x86_64"}

        token = StandInApp.token_for(want["mac"])
        callbacks = [c for c in stand_in.callbacks if c["body"].get("token") == token]
        assert len(callbacks) == 1, stand_in.callbacks
        callback = callbacks[0]
        assert callback["path"] == "/boot/callback"
        assert callback["content_type"] == "application/json"
        body = callback["body"]
        assert body["kernel"] == netboot.artifacts.kernel_version
        assert body["image"] == "standin-os" and body["version"] == "1.2.3"
        assert body["hostname"] == f"node-{want['mac'].replace(':', '')[-4:]}"
        assert body["facts"]["mac"] == want["mac"]
        assert body["facts"]["serial"] == want["serial"]
        assert body["facts"]["uuid"] == want["uuid"]

    fetched = [r["path"] for r in netboot.files.requests[already:]]
    assert fetched.count("/vmlinuz") == 2 and fetched.count("/initrd.gz") == 2, fetched
