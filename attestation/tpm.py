"""TPM 2.0 structures through tpm2-tools: the only place Corral runs them.

Corral does not parse TPM wire formats itself. tpm2-tools (Debian package `tpm2-tools`,
the TCG's reference tools) does: `tpm2_print` decodes a TPM2B_PUBLIC or a TPMS_ATTEST,
`tpm2_checkquote` verifies a quote's signature and that the PCR values hash to the
quoted digest, `tpm2_eventlog` replays a UEFI (TCG2) event log, `tpm2_makecredential`
seals a secret to an EK for an AK name. This module runs them on files in a private
temporary directory and turns their YAML into plain values. Each call is a few ms.

The one computation done here is an object's TPM name (nameAlg || H(TPMT_PUBLIC)), the
input tpm2_makecredential needs, which is two lines over the bytes tpm2-tools wrote.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey, RSAPublicNumbers

TPM2 = "tpm2"
TIMEOUT_S = 20
SHA256_ALG = 0x000B
# TPMA_OBJECT bits an attestation key must have: fixedTPM, fixedParent,
# sensitiveDataOrigin, restricted, sign (it was made in this TPM and signs only what the
# TPM itself produced, such as quotes).
AK_ATTRIBUTES = 0x2 | 0x10 | 0x20 | 0x10000 | 0x40000


class TPMToolError(ValueError):
    """tpm2-tools could not read what the node sent (a malformed structure)."""


class VerifierUnavailable(RuntimeError):
    """This worker cannot verify quotes (tpm2-tools missing, trust anchors unreadable): a
    fault of the installation, not of the node, and said so in the gate's reason."""


def available() -> bool:
    return shutil.which(TPM2) is not None


@dataclass(frozen=True)
class _Ran:
    code: int
    out: str
    err: str
    files: dict[str, bytes]


def _run(
    args: list[str], files: dict[str, bytes], what: str, collect: tuple[str, ...] = ()
) -> _Ran:
    if not available():
        raise VerifierUnavailable("tpm2-tools is not installed (Debian package tpm2-tools)")
    with tempfile.TemporaryDirectory(prefix="corral-tpm-") as tmp:
        for name, data in files.items():
            Path(tmp, name).write_bytes(data)
        try:
            proc = subprocess.run(
                [TPM2, *args],
                cwd=tmp,
                capture_output=True,
                text=True,
                errors="replace",  # event data is the node's: not necessarily UTF-8
                timeout=TIMEOUT_S,
                env={"PATH": "/usr/bin:/bin", "TPM2TOOLS_TCTI": "none"},
            )
        except subprocess.TimeoutExpired:
            raise TPMToolError(f"{what}: tpm2 {args[0]} took over {TIMEOUT_S} s") from None
        outputs = {n: Path(tmp, n).read_bytes() for n in collect if Path(tmp, n).exists()}
    return _Ran(proc.returncode, proc.stdout, proc.stderr, outputs)


def _yaml(text: str, what: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TPMToolError(f"{what}: unreadable tpm2-tools output ({exc})") from None


def _last_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "no detail"


@dataclass(frozen=True)
class PublicKey:
    """A TPM object's public area (TPM2B_PUBLIC as tpm2-tools writes it)."""

    raw: bytes
    attributes: int
    name_alg: int
    key_type: str
    modulus: bytes
    exponent: int

    @property
    def name(self) -> bytes:
        """The TPM name: nameAlg || H(TPMT_PUBLIC) (the TPM2B size prefix left out)."""
        if self.name_alg != SHA256_ALG:
            raise TPMToolError("only sha256-named keys are supported")
        return self.name_alg.to_bytes(2, "big") + hashlib.sha256(self.raw[2:]).digest()

    def rsa_public_key(self) -> RSAPublicKey:
        return RSAPublicNumbers(self.exponent, int.from_bytes(self.modulus, "big")).public_key()


def read_public(data: bytes, what: str) -> PublicKey:
    ran = _run(["print", "-t", "TPM2B_PUBLIC", "key.pub"], {"key.pub": data}, what)
    if ran.code != 0:
        raise TPMToolError(f"{what} is not a TPM2B_PUBLIC: {_last_line(ran.err)}")
    doc = _yaml(ran.out, what)
    try:
        key_type = doc["type"]["value"]
        if key_type != "rsa":
            raise TPMToolError(f"{what}: only RSA keys are supported, not {key_type}")
        return PublicKey(
            raw=data,
            attributes=int(doc["attributes"]["raw"]),
            name_alg=int(doc["name-alg"]["raw"]),
            key_type=key_type,
            modulus=bytes.fromhex(str(doc["rsa"])),
            exponent=int(doc.get("exponent") or 65537),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise TPMToolError(f"{what}: unexpected public area ({exc})") from None


@dataclass(frozen=True)
class Attest:
    """What a quote (TPMS_ATTEST) says: the nonce it answers and the PCRs it covers."""

    extra_data: bytes
    pcr_digest: bytes
    reset_count: int


def read_attest(data: bytes) -> Attest:
    ran = _run(["print", "-t", "TPMS_ATTEST", "quote.msg"], {"quote.msg": data}, "quote")
    if ran.code != 0:
        raise TPMToolError(f"the quote is not a TPMS_ATTEST: {_last_line(ran.err)}")
    doc = _yaml(ran.out, "quote")
    try:
        if str(doc["type"]) != "8018":
            raise TPMToolError("the attestation is not a quote (TPM_ST_ATTEST_QUOTE)")
        return Attest(
            extra_data=bytes.fromhex(str(doc.get("extraData") or "")),
            pcr_digest=bytes.fromhex(str(doc["attested"]["quote"]["pcrDigest"])),
            reset_count=int(doc["clockInfo"]["resetCount"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise TPMToolError(f"quote: unexpected structure ({exc})") from None


_PCR_LINE = re.compile(r"^\s*(\d+)\s*:\s*0x([0-9A-Fa-f]+)\s*$")


def _pcr_values(text: str, bank: str = "sha256") -> dict[int, str]:
    """The `pcrs: sha256: N : 0x..` block tpm2-tools prints, as {index: hex}."""
    values: dict[int, str] = {}
    in_bank = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.rstrip(":") == bank:
            in_bank = True
            continue
        if in_bank:
            match = _PCR_LINE.match(line)
            if match:
                values[int(match.group(1))] = match.group(2).lower()
            elif stripped and not stripped[0].isdigit():
                in_bank = False
    return values


def check_quote(
    ak: bytes, quote: bytes, signature: bytes, pcrs: bytes, nonce: bytes
) -> tuple[bool, str, dict[int, str]]:
    """(verified, why not, quoted PCR values): the AK signed this quote over these PCR
    values with this nonce (tpm2_checkquote)."""
    ran = _run(
        ["checkquote", "-u", "ak.pub", "-m", "quote.msg", "-s", "quote.sig", "-f", "quote.pcrs"]
        + ["-g", "sha256", "-q", nonce.hex()],
        {"ak.pub": ak, "quote.msg": quote, "quote.sig": signature, "quote.pcrs": pcrs},
        "quote",
    )
    if ran.code != 0:
        return False, _last_line(ran.err), {}
    return True, "", _pcr_values(ran.out)


@dataclass(frozen=True)
class Event:
    number: int
    pcr: int
    type: str
    digest: str  # sha256, hex
    data: Any  # what tpm2_eventlog decoded of the event (a string, a dict, or hex)


def replay_eventlog(data: bytes) -> tuple[list[Event], dict[int, str]]:
    """The events of a UEFI TCG2 event log and the sha256 PCR values they replay to."""
    ran = _run(["eventlog", "eventlog.bin"], {"eventlog.bin": data}, "event log")
    if ran.code != 0:
        raise TPMToolError(f"the event log does not parse: {_last_line(ran.err)}")
    doc = _yaml(ran.out, "event log") or {}
    events = []
    for item in doc.get("events") or []:
        digest = next(
            (
                str(d.get("Digest", ""))
                for d in item.get("Digests") or []
                if d.get("AlgorithmId") == "sha256"
            ),
            "",
        )
        events.append(
            Event(
                number=int(item.get("EventNum", 0)),
                pcr=int(item.get("PCRIndex", -1)),
                type=str(item.get("EventType", "")),
                digest=digest.lower(),
                data=item.get("Event"),
            )
        )
    replayed = _pcr_values(ran.out)
    return events, replayed


def make_credential(ek: bytes, ak_name: bytes, secret: bytes) -> bytes:
    """The credential blob only the TPM holding this EK can open, and only for an AK with
    this name (tpm2_makecredential, offline)."""
    ran = _run(
        ["makecredential", "-T", "none", "-u", "ek.pub", "-s", "secret.bin"]
        + ["-n", ak_name.hex(), "-o", "cred.out"],
        {"ek.pub": ek, "secret.bin": secret},
        "credential",
        collect=("cred.out",),
    )
    if ran.code != 0 or "cred.out" not in ran.files:
        raise TPMToolError(f"cannot make a credential for this EK: {_last_line(ran.err)}")
    return ran.files["cred.out"]
