"""Is this boot's TPM evidence genuine, fresh, and what Corral expects? One pass, all checks.

Every check runs that can (so the evidence shows everything wrong, not only the first
thing) and the first failure, in this order, is the one-line reason a technician reads:

  challenge    Corral issued a nonce for this boot, and the quote came in time
  ek           the EK certificate chains to a trusted TPM CA and is this TPM's EK
  tpm          the EK is the one pinned for this node at its first attested boot
  nonce        the quote answers this boot's nonce (else: a replayed quote)
  signature    the AK signed the quote over the PCR values sent (tpm2_checkquote)
  credential   the AK lives in that TPM (credential activation returned our secret)
  event log    the UEFI event log replays to exactly those PCR values
  image        PCR 4 holds the image's UKI and kernel, PCR 9 its initrd and command line
  firmware     PCRs 0, 2, 3, 5, 6, 7 and the boot loader match the platform's reference

The TPM structures are read by tpm2-tools (attestation.tpm); this module only compares.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

from . import tpm

QUOTED_PCRS = tuple(range(10))
FIRMWARE_PCRS = (0, 2, 3, 5, 6, 7)
APPLICATION = "EV_EFI_BOOT_SERVICES_APPLICATION"
ZERO = "0" * 64


@dataclass
class Evidence:
    nonce: bytes
    secret: bytes
    ek_public: bytes
    ek_certificate: bytes
    ak_public: bytes
    quote: bytes
    signature: bytes
    pcrs: bytes
    eventlog: bytes
    answered_secret: bytes
    age_s: float = 0.0  # from the challenge to the quote's arrival


@dataclass
class Expected:
    image: str  # "name:version", for messages
    uki: str = ""  # Authenticode sha256 of the UKI
    kernel: str = ""  # ... of the kernel inside it
    initrd: str = ""  # sha256 of the initrd inside it
    load_options: str = ""  # the kernel command line as the stub measures it
    platform: str = ""
    firmware: dict[int, str] | None = None  # None: no reference signed off yet
    loader: list[str] = field(default_factory=list)
    pinned_ek: str = ""  # the node's EK fingerprint, if one is pinned
    ca_certificates: list[x509.Certificate] = field(default_factory=list)
    max_age_s: float = 600.0  # CORRAL_ATTESTATION_CHALLENGE_SECONDS


@dataclass
class Check:
    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    pcrs: dict[int, str] = field(default_factory=dict)
    loader: list[str] = field(default_factory=list)
    applications: list[str] = field(default_factory=list)
    pcr9: list[str] = field(default_factory=list)
    ek_fingerprint: str = ""
    ek_issuer: str = ""

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(Check(name, ok, detail))
        return ok

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def reason(self) -> str:
        failed = next((c for c in self.checks if not c.ok), None)
        return f"attestation failed: {failed.detail}" if failed else "attested"


def fingerprint(key: PublicKeyTypes) -> str:
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def _span(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def load_options_digest(options: str) -> str:
    """What the kernel's EFI stub extends into PCR 9 for its command line."""
    return hashlib.sha256((options + "\0").encode("utf-16-le")).hexdigest()


def _chain(cert: x509.Certificate, cas: list[x509.Certificate]) -> str:
    """'' if cert chains to a self-signed certificate among cas, else why not."""
    current, seen = cert, 0
    while seen < 8:
        issuer = next((ca for ca in cas if ca.subject == current.issuer), None)
        if issuer is None:
            return f"issuer {current.issuer.rfc4514_string()!r} is not a trusted TPM CA"
        try:
            current.verify_directly_issued_by(issuer)
        except (InvalidSignature, ValueError, TypeError) as exc:
            return f"signature by {issuer.subject.rfc4514_string()!r} does not verify ({exc})"
        if issuer.subject == issuer.issuer:
            return ""
        current, seen = issuer, seen + 1
    return "certificate chain too long"


def _check_ek(ev: Evidence, exp: Expected, report: Report) -> tpm.PublicKey | None:
    try:
        ek = tpm.read_public(ev.ek_public, "EK")
    except tpm.TPMToolError as exc:
        report.add("ek", False, str(exc))
        return None
    report.ek_fingerprint = fingerprint(ek.rsa_public_key())
    if not exp.ca_certificates:
        report.add("ek", True, "EK certificate not chain-checked (no CORRAL_TPM_CA_FILES)")
    elif not ev.ek_certificate:
        report.add("ek", False, "the TPM has no EK certificate to check against the TPM CAs")
    else:
        try:
            cert = x509.load_der_x509_certificate(ev.ek_certificate)
        except ValueError:
            report.add("ek", False, "the EK certificate is not DER X.509")
            return ek
        report.ek_issuer = cert.issuer.rfc4514_string()
        cert_key = cert.public_key()
        if fingerprint(cert_key) != report.ek_fingerprint:
            report.add("ek", False, "the EK certificate is for another key than this TPM's EK")
        elif why := _chain(cert, exp.ca_certificates):
            report.add("ek", False, f"EK certificate not trusted: {why}")
        else:
            report.add("ek", True, f"EK certificate issued by {report.ek_issuer}")
    if exp.pinned_ek and exp.pinned_ek != report.ek_fingerprint:
        report.add(
            "tpm",
            False,
            f"TPM changed: EK {report.ek_fingerprint[:16]}, this node's is "
            f"{exp.pinned_ek[:16]} (another board or TPM; an admin must accept it)",
        )
    else:
        report.add("tpm", True, "EK pinned" if exp.pinned_ek else "first attested boot")
    return ek


def _check_quote(ev: Evidence, report: Report) -> bool:
    try:
        attest = tpm.read_attest(ev.quote)
    except tpm.TPMToolError as exc:
        return report.add("nonce", False, str(exc))
    if attest.extra_data != ev.nonce:
        report.add(
            "nonce",
            False,
            f"the quote answers nonce {attest.extra_data.hex()[:16]}…, not the one Corral "
            "issued for this boot (a replayed quote)",
        )
        return False
    report.add("nonce", True, "fresh: answers this boot's nonce")
    ok, why, quoted = tpm.check_quote(ev.ak_public, ev.quote, ev.signature, ev.pcrs, ev.nonce)
    if not ok:
        return report.add(
            "signature",
            False,
            "the quote is not signed by this boot's attestation key over the PCRs sent "
            f"(another TPM, or altered values): {why}",
        )
    report.pcrs = {i: quoted.get(i, ZERO) for i in QUOTED_PCRS}
    report.add("signature", True, "signed by the AK over PCRs 0-9 (sha256)")
    if ev.secret and ev.answered_secret == ev.secret:
        report.add("credential", True, "the AK is resident in the TPM holding this EK")
    else:
        report.add(
            "credential",
            False,
            "the attestation key is not bound to this TPM (credential not activated)",
        )
    return True


def _check_log(ev: Evidence, report: Report) -> list[tpm.Event] | None:
    try:
        events, replayed = tpm.replay_eventlog(ev.eventlog)
    except tpm.TPMToolError as exc:
        report.add("event log", False, f"event log unreadable: {exc}")
        return None
    differ = [i for i in QUOTED_PCRS if replayed.get(i, ZERO) != report.pcrs.get(i)]
    if differ:
        report.add(
            "event log",
            False,
            f"the event log does not replay to the quoted PCRs (PCR {', '.join(map(str, differ))}"
            " differs): tampered with, or from another boot",
        )
        return None
    report.add("event log", True, f"{len(events)} events replay to the quoted PCRs")
    return events


def _check_image(events: list[tpm.Event], exp: Expected, report: Report) -> None:
    apps = [e.digest for e in events if e.pcr == 4 and e.type == APPLICATION]
    pcr4 = [e.digest for e in events if e.pcr == 4]
    image = {exp.uki, exp.kernel}
    first = next((i for i, d in enumerate(pcr4) if d in image), len(pcr4))
    report.loader, report.applications = pcr4[:first], apps
    report.pcr9 = [e.digest for e in events if e.pcr == 9]
    if not exp.uki:
        report.add(
            "image",
            False,
            f"image {exp.image} has no unified kernel image, so its boot cannot be attested",
        )
        return
    unknown = [d for d in pcr4[first:] if d not in image]
    if exp.kernel not in apps:
        report.add("image", False, f"PCR 4 differs (kernel ≠ image {exp.image})")
    elif exp.uki not in apps:
        report.add("image", False, f"PCR 4 differs (boot image ≠ image {exp.image})")
    elif unknown:
        report.add(
            "image",
            False,
            f"PCR 4 differs (an EFI application not in image {exp.image} ran after it: "
            f"{unknown[0][:16]}…)",
        )
    elif exp.initrd not in report.pcr9:
        report.add("image", False, f"PCR 9 differs (initrd ≠ image {exp.image})")
    elif exp.load_options and load_options_digest(exp.load_options) not in report.pcr9:
        report.add(
            "image",
            False,
            "PCR 9 differs (kernel command line ≠ the one Corral rendered for this deploy)",
        )
    else:
        report.add("image", True, f"kernel, initrd and command line of image {exp.image}")


def _check_firmware(exp: Expected, report: Report) -> None:
    if exp.firmware is None:
        report.add(
            "firmware",
            False,
            f"no firmware reference for platform {exp.platform or '(no model)'} yet: an admin "
            "signs off a reference boot (this one, if it is known good)",
        )
        return
    differ = [i for i in FIRMWARE_PCRS if exp.firmware.get(i) != report.pcrs.get(i)]
    if differ:
        report.add(
            "firmware",
            False,
            f"PCR {', '.join(map(str, differ))} differs (firmware ≠ the reference for "
            f"{exp.platform})",
        )
    elif exp.loader != report.loader:
        report.add(
            "firmware",
            False,
            f"PCR 4 differs (boot loader ≠ the reference for {exp.platform})",
        )
    else:
        report.add("firmware", True, f"firmware and boot loader match {exp.platform}")


def verify(ev: Evidence, exp: Expected) -> Report:
    report = Report()
    if not ev.nonce:
        report.add("challenge", False, "a quote came without a challenge for this boot")
        return report
    if ev.age_s > exp.max_age_s:
        report.add(
            "challenge",
            False,
            f"the quote came {_span(ev.age_s)} after its challenge; the limit is "
            f"{_span(exp.max_age_s)} (CORRAL_ATTESTATION_CHALLENGE_SECONDS)",
        )
        return report
    report.add("challenge", True, "nonce issued for this boot")
    _check_ek(ev, exp, report)
    if not _check_quote(ev, report):
        return report
    events = _check_log(ev, report)
    if events is None:
        return report
    _check_image(events, exp, report)
    _check_firmware(exp, report)
    return report
