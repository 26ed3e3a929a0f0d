"""The attested-boot peer against a tiny protocol-faithful server: OVMF + swtpm -> iPXE
-> /boot/chain.ipxe -> /boot/ipxe -> `chain uki.efi <cmdline>` -> the UKI's initramfs
runs Corral's node agent, which asks /boot/attest for a challenge, activates the
credential, quotes PCRs 0-9 with the nonce and phones home with the evidence.

The server here is what Corral's attestation app must do, reduced to the protocol
(tpm2_makecredential -T none, as in HARNESS-attestation.md); the checks are a
verifier's: tpm2_checkquote with the issued nonce, the activated secret, the EK
certificate's chain to the session CA, and PCR4/PCR9 predicted from the artifacts.
"""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.peers.netboot.uefi import predict_pcr4, predict_pcr9
from tests.peers.qemu import GUEST_APP_URL
from tests.peers.swtpm import name_of, quoted_pcr_values
from tests.peers.uefi_vm import ATTEST_QUOTE_MADE, uefi_netboot  # noqa: F401
from tests.peers.util import LOOPBACK

pytestmark = pytest.mark.slow
CMDLINE = "console=ttyS0 quiet loglevel=3 panic=-1"
# fixedTPM fixedParent sensitiveDataOrigin restricted sign: an AK the TPM made and
# will not let out, fit only to sign TPM-made structures (quotes).
AK_ATTRIBUTES = 0x2 | 0x10 | 0x20 | 0x10000 | 0x40000


class ProtocolServer:
    """Corral's boot endpoints reduced to the attestation protocol, for one token."""

    def __init__(self, uki_url: str, token: str) -> None:
        self.uki_url, self.token = uki_url, token
        self.issued: dict[str, object] = {}  # nonce, secret, ek_public, ak_public
        self.callbacks: list[dict] = []
        self.times: dict[str, float] = {}
        self.work = Path(tempfile.mkdtemp(prefix="attest-server-"))

    def script(self, path: str) -> str | None:
        if path == "/boot/chain.ipxe":
            return f"#!ipxe\nchain {GUEST_APP_URL}/boot/ipxe?mac=${{net0/mac}}\n"
        if path.startswith("/boot/ipxe"):
            return f"#!ipxe\nchain {self.uki_url} {self.chain_args}\n"
        return None

    @property
    def chain_args(self) -> str:
        """The kernel command line, as the deploy script's `chain` line carries it."""
        callback = f"{GUEST_APP_URL}/boot/callback"
        return f"{CMDLINE} corral.callback={callback} corral.token={self.token} corral.hostname=a1"

    def challenge(self, request: dict) -> tuple[int, dict]:
        self.times["challenge"] = time.monotonic()
        if request.get("token") != self.token:
            return 403, {"detail": "Token refused."}
        ek_pub = base64.b64decode(request["ek_public"])
        ak_tpub = base64.b64decode(request["ak_public"])
        if int.from_bytes(ak_tpub[6:10], "big") & AK_ATTRIBUTES != AK_ATTRIBUTES:
            return 400, {"detail": "AK attributes"}
        secret = secrets.token_bytes(32)
        (self.work / "ek.pub").write_bytes(ek_pub)
        (self.work / "secret").write_bytes(secret)
        subprocess.run(
            [
                *("tpm2_makecredential", "-T", "none", "-u", "ek.pub", "-s", "secret"),
                *("-n", name_of(ak_tpub).hex(), "-o", "cred.out"),
            ],
            cwd=self.work,
            check=True,
            capture_output=True,
        )
        nonce = secrets.token_hex(16)
        self.issued = {"nonce": nonce, "secret": secret, "request": request}
        credential = base64.b64encode((self.work / "cred.out").read_bytes()).decode()
        return 200, {"nonce": nonce, "credential": credential}

    def callback(self, report: dict) -> tuple[int, dict]:
        self.times["callback"] = time.monotonic()
        if report.get("token") != self.token:
            return 403, {"detail": "Token refused."}
        self.callbacks.append(report)
        return 200, {"status": "recorded", "node": report.get("hostname")}


@pytest.fixture
def attest_server(uefi_netboot) -> Iterator[tuple[ProtocolServer, int]]:  # noqa: F811
    proto = ProtocolServer(uefi_netboot.uki_url, token=secrets.token_urlsafe(16))

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            script = proto.script(self.path)
            if script is None:
                self._answer(404, b"not found\n", "text/plain")
            else:
                self._answer(200, script.encode(), "text/plain")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            route = {"/boot/attest": proto.challenge, "/boot/callback": proto.callback}
            status, answer = route[self.path](body) if self.path in route else (404, {})
            self._answer(status, json.dumps(answer).encode(), "application/json")

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield proto, httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _timings(serial_log: str) -> dict[str, float]:
    """The agent's "CORRAL: timing <step> <seconds>" lines."""
    found = {}
    for line in serial_log.splitlines():
        if line.startswith("CORRAL: timing "):
            step, seconds = line.removeprefix("CORRAL: timing ").rsplit(" ", 1)
            found[step] = float(seconds)
    return found


def test_attest_peer_boots_quotes_and_phones_home(uefi_netboot, attest_server):  # noqa: F811
    proto, port = attest_server
    result = uefi_netboot.boot(port, timeout=150)
    assert result.phoned_home, result.tail(40)
    assert ATTEST_QUOTE_MADE in result.serial_log, result.tail(40)
    (report,) = proto.callbacks
    evidence = {k: base64.b64decode(v) for k, v in report["attestation"].items()}
    assert set(evidence) == {"quote", "signature", "pcrs", "eventlog", "secret"}

    # The AK in the TPM holding that EK decrypted the credential: EK<->AK binding.
    assert evidence["secret"] == proto.issued["secret"]
    # The quote verifies with the AK (TPM2B_PUBLIC as sent) and carries the nonce.
    work = proto.work
    request = proto.issued["request"]
    (work / "ak.tpub").write_bytes(base64.b64decode(request["ak_public"]))
    for key, name in (
        *(("quote", "quote.msg"), ("signature", "quote.sig")),
        *(("pcrs", "quote.pcrs"), ("eventlog", "eventlog.bin")),  # kept for a look by hand
    ):
        (work / name).write_bytes(evidence[key])
    check = [*("tpm2_checkquote", "-u", "ak.tpub", "-m", "quote.msg", "-s", "quote.sig")]
    check += ["-f", "quote.pcrs", "-g", "sha256"]
    ok = subprocess.run([*check, "-q", proto.issued["nonce"]], cwd=work, capture_output=True)
    assert ok.returncode == 0, ok.stderr
    stale = subprocess.run([*check, "-q", secrets.token_hex(16)], cwd=work, capture_output=True)
    assert stale.returncode != 0

    # The EK certificate chains to this session's CA.
    pem = subprocess.run(
        ["openssl", "x509", "-inform", "der"],
        input=base64.b64decode(request["ek_certificate"]),
        capture_output=True,
        check=True,
    ).stdout
    ca = uefi_netboot.ca
    verify = [
        "openssl",
        "verify",
        "-CAfile",
        str(ca.root_pem),
        "-untrusted",
        str(ca.intermediate_pem),
    ]
    assert subprocess.run(verify, input=pem, capture_output=True).returncode == 0

    # PCR4 (iPXE, UKI, kernel) and PCR9 (LoadOptions, initrd) follow from the artifacts.
    pcr = dict(enumerate(v.hex() for v in quoted_pcr_values(evidence["pcrs"])))
    assert len(pcr) == 10
    assert pcr[4] == predict_pcr4(uefi_netboot.artifacts)
    # iPXE's LoadOptions are "<image name> <chain args>"; systemd-stub hands them to the
    # kernel as its command line, and the kernel's stub measures them into PCR9.
    load_options = f"uki.efi {proto.chain_args}"
    assert report["facts"]["cmdline"] == load_options
    assert pcr[9] == predict_pcr9(load_options, uefi_netboot.artifacts.initrd)
    assert report["facts"]["mac"] == result.mac

    timings = _timings(result.serial_log)
    server_side = proto.times["callback"] - proto.times["challenge"]
    print(
        f"\nattest peer: QEMU {result.elapsed:.1f} s, phoned home after "
        f"{result.phoned_home_after:.1f} s; agent {timings}; "
        f"server saw challenge -> callback in {server_side:.2f} s"
    )
