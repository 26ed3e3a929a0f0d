"""Software TPMs (swtpm) for attestation tests: an EK CA of our own, TPM states with
EK + platform certificates, a socket for a QEMU guest, and a TPM the host can drive.

Why a CA per session: swtpm_setup's stock config keeps its CA in /var/lib/swtpm-localca,
shared by every run on the machine. Corral must be told which roots to trust, so each
session makes its own (LocalCA.root_pem, LocalCA.intermediate_pem) in a temp dir.

HostTPM runs the node agent's TPM steps from Python (tpm2-tools through the swtpm TCTI):
"a quote from a different TPM" and other evidence a real node would never send.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.peers.util import LOOPBACK, stop_process, wait_for_port

SWTPM = "swtpm"
SWTPM_SETUP = "swtpm_setup"
SWTPM_LOCALCA = "/usr/bin/swtpm_localca"
APT_HINT = "apt-get install --no-install-recommends swtpm swtpm-tools tpm2-tools"
EK_CERT_NV_INDEX = "0x1c00002"  # RSA EK certificate (TCG EK Credential Profile)
QUOTE_PCRS = "sha256:0,1,2,3,4,5,6,7,8,9"


def missing_prerequisites() -> list[str]:
    """What is missing to make and run software TPMs, with the package names."""
    tools = (SWTPM, SWTPM_SETUP, SWTPM_LOCALCA, "tpm2", "openssl")
    return [f"{t} ({APT_HINT})" for t in tools if shutil.which(t) is None]


@dataclass(frozen=True)
class LocalCA:
    """A swtpm_localca CA living in `root`; every TPM made through it chains to it."""

    root: Path

    @property
    def setup_conf(self) -> Path:
        return self.root / "swtpm_setup.conf"

    @property
    def root_pem(self) -> Path:
        """The self-signed root: what Corral must trust for EK certificates."""
        return self.root / "state" / "swtpm-localca-rootca-cert.pem"

    @property
    def intermediate_pem(self) -> Path:
        """The intermediate that signs the EK certificates (sent by nobody: configure it)."""
        return self.root / "state" / "issuercert.pem"

    def make_tpm(self, state_dir: Path) -> Path:
        """A fresh TPM 2.0 state with RSA+ECC EK certs and a platform cert (~1 s)."""
        return make_tpm(state_dir, self)


def make_ca(root: Path) -> LocalCA:
    """Write a swtpm_setup config whose CA lives under root, and create the CA now.

    swtpm_localca creates root and intermediate on first use, so a throwaway TPM is
    made here: Corral can be told the trust anchors before any node boots.
    """
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    ca = LocalCA(root)
    ca.setup_conf.write_text(
        f"create_certs_tool = {SWTPM_LOCALCA}\n"
        f"create_certs_tool_config = {root / 'swtpm-localca.conf'}\n"
        f"create_certs_tool_options = {root / 'swtpm-localca.options'}\n"
        "active_pcr_banks = sha256\n"
    )
    (root / "swtpm-localca.conf").write_text(
        f"statedir = {state}\n"
        f"signingkey = {state / 'signkey.pem'}\n"
        f"issuercert = {state / 'issuercert.pem'}\n"
        f"certserial = {state / 'certserial'}\n"
    )
    (root / "swtpm-localca.options").write_text(
        "--platform-manufacturer Corral\n--platform-version 2.1\n--platform-model QEMU\n"
    )
    make_tpm(root / "first-tpm", ca)
    shutil.rmtree(root / "first-tpm", ignore_errors=True)
    return ca


def make_tpm(state_dir: Path, ca: LocalCA) -> Path:
    """swtpm_setup a TPM 2.0 in state_dir (sha256 bank only, NV locked), certs by ca."""
    state_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            SWTPM_SETUP,
            "--tpm2",
            "--config",
            str(ca.setup_conf),
            "--tpmstate",
            str(state_dir),
            "--create-ek-cert",
            "--create-platform-cert",
            "--lock-nvram",
            "--overwrite",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(ca.root)},  # no ~/.config lookups
    )
    if result.returncode != 0:
        raise RuntimeError(f"swtpm_setup failed: {result.stdout}{result.stderr}")
    return state_dir


class SwtpmSocket:
    """swtpm for one QEMU run: a unix control socket, exits when QEMU disconnects.

    QEMU: -chardev socket,id=chrtpm,path=<sock> -tpmdev emulator,... ; see uefi_vm.py.
    stop() is always safe (swtpm usually has exited on its own by then).
    """

    def __init__(self, state_dir: Path, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir = state_dir
        self.sock = run_dir / "swtpm.sock"
        self.log = run_dir / "swtpm.log"
        self.sock.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [
                SWTPM,
                "socket",
                "--tpm2",
                "--tpmstate",
                f"dir={state_dir}",
                "--ctrl",
                f"type=unixio,path={self.sock}",
                "--log",
                f"file={self.log},level=1",
                "--flags",
                "startup-clear",  # OVMF tolerates an already started TPM
                "--terminate",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not self.sock.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"swtpm did not start: {self.log.read_text(errors='replace')}")
            time.sleep(0.02)

    def stop(self) -> None:
        stop_process(self.proc, timeout=5)


def _two_free_ports() -> int:
    """A port P with P+1 free too: the swtpm TCTI talks to P and controls on P+1."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind((LOOPBACK, 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind((LOOPBACK, port + 1))
                except OSError:
                    continue
                return port
    raise RuntimeError("no two consecutive free loopback ports")


def name_of(tpub: bytes) -> bytes:
    """The TPM name of a TPM2B_PUBLIC (nameAlg sha256): what makecredential binds to."""
    public = tpub[2:]
    name_alg = public[2:4]
    assert name_alg == b"\x00\x0b", "only sha256 names"
    return name_alg + hashlib.sha256(public).digest()


def quoted_pcr_values(blob: bytes) -> list[bytes]:
    """The PCR values in a `tpm2_quote -o` file (tpm2-tools 5.4 writes its tpm2_pcrs
    struct little-endian: TPML_PCR_SELECTION padded to 132 bytes, a u32 list count,
    then TPML_DIGESTs of a u32 count and 8 slots of u16 size + 64 bytes), in the order
    of the selection (sha256:0-9 here: PCR0 first)."""
    (lists,) = struct.unpack_from("<I", blob, 132)
    values, offset = [], 136
    for _ in range(lists):
        (count,) = struct.unpack_from("<I", blob, offset)
        for slot in range(count):
            start = offset + 4 + 66 * slot
            (size,) = struct.unpack_from("<H", blob, start)
            values.append(blob[start + 2 : start + 2 + size])
        offset += 4 + 8 * 66
    return values


class HostTPM:
    """A swtpm the host drives with tpm2-tools: the node agent's steps, run from Python.

    Each step flushes transient objects afterwards (no resource manager on a direct
    TCTI connection: they would pile up until TPM_RC_OBJECT_MEMORY). Files (ek.pub,
    ak.tpub, ak.pub PEM, ekcert.der, quote.*) are written in workdir.
    """

    def __init__(self, ca: LocalCA, workdir: Path) -> None:
        self.workdir = workdir
        self.state = make_tpm(workdir / "state", ca)
        self.port = _two_free_ports()
        self.proc = subprocess.Popen(
            [
                SWTPM,
                "socket",
                "--tpm2",
                "--tpmstate",
                f"dir={self.state}",
                "--server",
                f"type=tcp,port={self.port},bindaddr={LOOPBACK}",
                "--ctrl",
                f"type=tcp,port={self.port + 1},bindaddr={LOOPBACK}",
                "--flags",
                "not-need-init,startup-clear",
                "--log",
                f"file={workdir / 'swtpm.log'},level=1",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, proc=self.proc)
        wait_for_port(self.port + 1, proc=self.proc)
        self.env = {**os.environ, "TPM2TOOLS_TCTI": f"swtpm:host={LOOPBACK},port={self.port}"}

    def run(self, *argv: str) -> subprocess.CompletedProcess[bytes]:
        """One tpm2 command in workdir, then a flush of transient objects."""
        result = subprocess.run(argv, cwd=self.workdir, env=self.env, capture_output=True)
        subprocess.run(["tpm2_flushcontext", "-t"], env=self.env, capture_output=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {result.stderr.decode(errors='replace')}")
        return result

    def file(self, name: str) -> bytes:
        return (self.workdir / name).read_bytes()

    def create_keys(self) -> None:
        """EK, a fresh AK (as the agent makes them) and the EK certificate from NV."""
        self.run("tpm2_createek", "-c", "ek.ctx", "-G", "rsa", "-u", "ek.pub")
        self.run(
            *("tpm2_createak", "-C", "ek.ctx", "-c", "ak.ctx", "-G", "rsa", "-g", "sha256"),
            *("-s", "rsassa", "-u", "ak.pub", "-n", "ak.name", "-f", "pem"),
        )
        self.run("tpm2_readpublic", "-c", "ak.ctx", "-o", "ak.tpub")
        self.run("tpm2_nvread", EK_CERT_NV_INDEX, "-o", "ekcert.der")

    def challenge_request(self, token: str) -> dict[str, str]:
        """The JSON body the agent POSTs to /boot/attest (create_keys first)."""
        b64 = self._b64
        return {
            "token": token,
            "ek_public": b64("ek.pub"),
            "ek_certificate": b64("ekcert.der"),
            "ak_public": b64("ak.tpub"),
        }

    def activate(self, credential: bytes) -> bytes:
        """tpm2_activatecredential of a makecredential blob: the secret, if bound to us."""
        (self.workdir / "cred.out").write_bytes(credential)
        (self.workdir / "secret.out").unlink(missing_ok=True)
        # One shell: the policy session must live across the three commands.
        script = (
            "tpm2_startauthsession --policy-session -S s.ctx && "
            "tpm2_policysecret -S s.ctx -c e >/dev/null && "
            "tpm2_activatecredential -c ak.ctx -C ek.ctx -i cred.out -o secret.out "
            '-P "session:s.ctx"; rc=$?; tpm2_flushcontext s.ctx; exit $rc'
        )
        self.run("sh", "-c", script)
        return self.file("secret.out")

    def quote(self, nonce_hex: str) -> dict[str, bytes]:
        """tpm2_quote over sha256 PCRs 0-9 with the nonce: quote, signature, pcrs."""
        self.run(
            *("tpm2_quote", "-c", "ak.ctx", "-l", QUOTE_PCRS, "-q", nonce_hex, "-g", "sha256"),
            *("-m", "quote.msg", "-s", "quote.sig", "-o", "quote.pcrs"),
        )
        return {
            "quote": self.file("quote.msg"),
            "signature": self.file("quote.sig"),
            "pcrs": self.file("quote.pcrs"),
        }

    def attestation(
        self, nonce_hex: str, credential: bytes, eventlog: bytes = b""
    ) -> dict[str, str]:
        """The callback's "attestation" value, as the agent would send it from this TPM."""
        secret = self.activate(credential)
        parts = {**self.quote(nonce_hex), "eventlog": eventlog, "secret": secret}
        return {k: base64.b64encode(v).decode() for k, v in parts.items()}

    def _b64(self, name: str) -> str:
        return base64.b64encode(self.file(name)).decode()

    def stop(self) -> None:
        stop_process(self.proc, timeout=5)

    def __enter__(self) -> HostTPM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# The session's EK CA lives at a fixed place under pytest's base temp dir, so the Celery
# worker (started before any attestation test) can be told where its trust anchors will be.
SESSION_CA_DIR = "tpm-ca"


def tpm_ca_files(tmp_path_factory) -> list[Path]:
    """Root and intermediate of the session CA, as CORRAL_TPM_CA_FILES lists them."""
    ca = LocalCA(tmp_path_factory.getbasetemp() / SESSION_CA_DIR)
    return [ca.root_pem, ca.intermediate_pem]


def session_ca(tmp_path_factory) -> LocalCA:
    """The session's EK CA, made on first use (~1 s)."""
    ca = LocalCA(tmp_path_factory.getbasetemp() / SESSION_CA_DIR)
    return ca if ca.root_pem.exists() else make_ca(ca.root)
