"""The node agent (attestation/agent/corral-attest.sh) against a tiny protocol-faithful
server. Booted for real (OVMF + swtpm -> iPXE -> the UKI's initramfs) it is proven
against Corral itself in tests/e2e/test_attest_boot.py; here its protocol paths run on
this host.

The server here is what Corral's attestation app must do, reduced to the protocol
(tpm2_makecredential -T none, as in HARNESS-attestation.md); the checks are a
verifier's: tpm2_checkquote with the issued nonce, the activated secret, the EK
certificate's chain to the session CA, and PCR4/PCR9 predicted from the artifacts.

The agent's protocol paths that need no firmware (a refused challenge, no TPM, a
refused callback, evidence from a host swtpm) run it on this host, with busybox's
tools as in the initramfs: seconds, not a VM boot.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.peers.netboot.artifacts import BUSYBOX
from tests.peers.netboot.uefi import AGENT
from tests.peers.qemu import GUEST_APP_URL
from tests.peers.swtpm import HostTPM, make_ca, name_of
from tests.peers.uefi_vm import (
    ATTEST_QUOTE_MADE,
    ATTEST_REFUSED,
    NO_TPM,
)
from tests.peers.util import LOOPBACK, POLL

CMDLINE = "console=ttyS0 quiet loglevel=3 panic=-1"
# fixedTPM fixedParent sensitiveDataOrigin restricted sign: an AK the TPM made and
# will not let out, fit only to sign TPM-made structures (quotes).
AK_ATTRIBUTES = 0x2 | 0x10 | 0x20 | 0x10000 | 0x40000


class ProtocolServer:
    """Corral's boot endpoints reduced to the attestation protocol, for one token."""

    def __init__(self, work: Path, uki_url: str = "", refuse_challenge: bool = False) -> None:
        self.work, self.uki_url, self.refuse = work, uki_url, refuse_challenge
        self.token = secrets.token_urlsafe(16)
        self.issued: dict = {}  # nonce, secret, request
        self.callbacks: list[dict] = []
        self.times: dict[str, float] = {}
        work.mkdir(parents=True, exist_ok=True)

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
        if request.get("token") != self.token or self.refuse:
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


@contextmanager
def serve_protocol(proto: ProtocolServer) -> Iterator[int]:
    """proto on 127.0.0.1 (HTTP/1.0: one request per connection); yields the port."""

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
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
    )
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def verify_evidence(proto: ProtocolServer, report: dict, ca_root: Path, ca_inter: Path) -> dict:
    """A verifier's checks on one callback; returns the decoded evidence."""
    evidence = {k: base64.b64decode(v) for k, v in report["attestation"].items()}
    assert set(evidence) == {"quote", "signature", "pcrs", "eventlog", "secret"}
    # The AK in the TPM holding that EK decrypted the credential: EK<->AK binding.
    assert evidence["secret"] == proto.issued["secret"]
    # The quote verifies with the AK (TPM2B_PUBLIC as sent) and carries the nonce.
    work, request = proto.work, proto.issued["request"]
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
    verify = ["openssl", "verify", "-CAfile", str(ca_root), "-untrusted", str(ca_inter)]
    assert subprocess.run(verify, input=pem, capture_output=True).returncode == 0
    return evidence


def run_agent(tmp_path: Path, port: int, token: str, **env: str) -> str:
    """Corral's agent on this host, with busybox's applets first on PATH (as in the
    initramfs) and no TPM device; returns its output."""
    tools = tmp_path / "busybox-bin"
    if not tools.is_dir():
        tools.mkdir()
        subprocess.run([str(BUSYBOX), "--install", "-s", str(tools)], check=True)
    agent_env = {
        "PATH": f"{tools}:{os.environ['PATH']}",
        "CORRAL_CALLBACK": f"http://{LOOPBACK}:{port}/boot/callback",
        "CORRAL_TOKEN": token,
        "CORRAL_HOSTNAME": "host-agent",
        "CORRAL_WORKDIR": str(tmp_path / "agent"),
        "CORRAL_TPM_DEVICE": str(tmp_path / "no-tpmrm0"),
        **env,
    }
    run = subprocess.run(
        [str(tools / "sh"), str(AGENT)], env=agent_env, capture_output=True, text=True, timeout=90
    )
    return run.stdout + run.stderr


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_attest_agent_sends_evidence_from_a_host_tpm(tmp_path):
    """The whole protocol through the product's agent, minus firmware: a swtpm on TCP."""
    ca = make_ca(tmp_path / "ca")
    proto = ProtocolServer(tmp_path / "server")
    with HostTPM(ca, tmp_path / "tpm") as tpm, serve_protocol(proto) as port:
        out = run_agent(tmp_path, port, proto.token, TPM2TOOLS_TCTI=tpm.env["TPM2TOOLS_TCTI"])
    assert "CORRAL: phone-home ok" in out and ATTEST_QUOTE_MADE in out, out
    (report,) = proto.callbacks
    evidence = verify_evidence(proto, report, ca.root_pem, ca.intermediate_pem)
    assert evidence["eventlog"] == b""  # no securityfs log for a TPM on TCP
    assert report["hostname"] == "host-agent"


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_attest_agent_refused_challenge_phones_home_without_attestation(tmp_path):
    ca = make_ca(tmp_path / "ca")
    proto = ProtocolServer(tmp_path / "server", refuse_challenge=True)
    with HostTPM(ca, tmp_path / "tpm") as tpm, serve_protocol(proto) as port:
        out = run_agent(tmp_path, port, proto.token, TPM2TOOLS_TCTI=tpm.env["TPM2TOOLS_TCTI"])
    assert f'{ATTEST_REFUSED}: {{"detail": "Token refused."}}' in out, out
    assert out.count("attestation challenge") == 1  # no retry after a 4xx
    assert "CORRAL: phone-home ok" in out, out
    (report,) = proto.callbacks
    assert "attestation" not in report


def test_attest_agent_without_tpm_phones_home_without_attestation(tmp_path):
    proto = ProtocolServer(tmp_path / "server")
    with serve_protocol(proto) as port:
        out = run_agent(tmp_path, port, proto.token)
        refused = run_agent(tmp_path, port, "not-the-token")
    assert NO_TPM in out and "CORRAL: phone-home ok" in out, out
    (report,) = proto.callbacks
    assert "attestation" not in report and report["token"] == proto.token
    assert "challenge" not in proto.times  # never asked for one
    # A 4xx on the callback is final: one attempt, then "phone-home failed".
    assert refused.count("callback attempt") == 1 and "CORRAL: phone-home failed" in refused
