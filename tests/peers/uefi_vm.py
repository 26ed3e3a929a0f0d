"""QEMU machines with UEFI measured boot and a software TPM, network-booting through
iPXE into the app under test and attesting with Corral's node agent.

Each VM is a q35 PC under TCG with OVMF (a fresh copy of its variable store per boot:
PCR1 measures the Boot#### variables), a swtpm TPM 2.0 (tests/peers/swtpm.py) and
virtio-net on slirp with restrict=on:

  * OVMF boots iPXE from a read-only vvfat ESP (EFI/BOOT/BOOTX64.EFI = Debian's
    ipxe.efi); iPXE's DHCP answer from slirp names bootfile=<boot_url>, by default
    http://10.0.2.100:8800/boot/chain.ipxe, i.e. the app;
  * guestfwd 10.0.2.100:8800 -> `busybox nc 127.0.0.1 <app_port>` (one nc per
    connection), and 10.0.2.101:8801 -> the file server (UKIs; netboot/uefi.py);
  * the app's deploy script is `chain <uki url> <cmdline>`: the arguments must be on
    the chain line (systemd-stub takes iPXE's LoadOptions over the embedded .cmdline).

The UKI's initramfs runs attestation/agent/corral-attest.sh, whose console markers
("CORRAL: attestation quote made", "CORRAL: no TPM", "CORRAL: phone-home ok") the
tests read. Measured on a shared 2-core box (load ~3): 37-40 s from QEMU start to
power-off: OVMF ~8 s, iPXE + DHCP ~9 s, UKI fetch + measurement + kernel start ~14 s,
DHCP + agent ~6 s (attestation itself: ~4.5 s of it).
"""

from __future__ import annotations

import itertools
import shutil
import uuid as uuidlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.peers import swtpm
from tests.peers.netboot.artifacts import FileServer, serve_files
from tests.peers.netboot.uefi import (
    UKI_NAME,
    UKI_VARIANT_NAME,
    UefiArtifacts,
    build_uefi_artifacts,
)
from tests.peers.netboot.uefi import missing_prerequisites as missing_artifacts
from tests.peers.qemu import GUEST_APP_URL, QEMU, VM, VMResult, guest_forwards

OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
DEFAULT_BOOT_URL = f"{GUEST_APP_URL}/boot/chain.ipxe"
ATTEST_QUOTE_MADE = "CORRAL: attestation quote made"
ATTEST_REFUSED = "CORRAL: attestation challenge refused"
NO_TPM = "CORRAL: no TPM"


def missing_prerequisites() -> list[str]:
    missing = [str(p) for p in (OVMF_CODE, OVMF_VARS) if not p.is_file()]
    if shutil.which(QEMU) is None:
        missing.append(QEMU)
    return missing + missing_artifacts() + swtpm.missing_prerequisites()


class UefiVM(VM):
    """A VM (qemu.py) that also owns its swtpm: stopped with QEMU, whatever happens."""

    def __init__(self, *args: object, tpm: swtpm.SwtpmSocket | None, **kwargs: object) -> None:
        self.tpm = tpm
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def kill(self) -> None:
        super().kill()
        if self.tpm is not None:
            self.tpm.stop()


def _qemu_argv(
    workdir: Path,
    *,
    esp: Path,
    mac: str,
    serial: str,
    uuid: str,
    app_port: int,
    files_port: int | None,
    boot_url: str,
    tpm_sock: Path | None,
    memory_mb: int,
) -> list[str]:
    forwards = guest_forwards(app_port, files_port)
    netdev = ",".join(["user", "id=n0", "restrict=on", f"bootfile={boot_url}", *forwards])
    tpm = []
    if tpm_sock is not None:
        tpm = [
            *("-chardev", f"socket,id=chrtpm,path={tpm_sock}"),
            *("-tpmdev", "emulator,id=tpm0,chardev=chrtpm"),
            *("-device", "tpm-tis,tpmdev=tpm0"),
        ]
    return [
        QEMU,
        *("-accel", "tcg", "-machine", "q35", "-m", str(memory_mb), "-smp", "1"),
        *("-name", workdir.name, "-nographic", "-nodefaults", "-no-reboot"),
        *("-display", "none", "-monitor", "none", "-serial", f"file:{workdir / 'serial.log'}"),
        *("-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={OVMF_CODE}"),
        *("-drive", f"if=pflash,format=raw,unit=1,file={workdir / 'vars.fd'}"),
        *tpm,
        *("-drive", f"if=none,id=esp,format=raw,readonly=on,file=fat:{esp}"),
        *("-device", "virtio-blk-pci,drive=esp,bootindex=0"),
        *("-netdev", netdev, "-device", f"virtio-net-pci,netdev=n0,mac={mac},romfile="),
        *("-smbios", f"type=1,serial={serial.replace(',', ',,')},uuid={uuid}"),
    ]


def start_uefi_vm(
    workdir: Path,
    *,
    esp: Path,
    mac: str,
    app_port: int,
    files_port: int | None = None,
    tpm_state: Path | None = None,
    serial: str = "SN-ATTEST-01",
    uuid: str | None = None,
    boot_url: str = DEFAULT_BOOT_URL,
    timeout: float = 120.0,
    memory_mb: int = 1024,
) -> UefiVM:
    """Start one VM; returns at once. tpm_state: a swtpm state dir (make_tpm), or None
    for a machine without a TPM (the agent then phones home without attestation)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "serial.log").unlink(missing_ok=True)
    shutil.copyfile(OVMF_VARS, workdir / "vars.fd")
    tpm = swtpm.SwtpmSocket(tpm_state, workdir / "tpm-run") if tpm_state else None
    uuid = uuid or str(uuidlib.uuid4())
    argv = _qemu_argv(
        workdir,
        esp=esp,
        mac=mac,
        serial=serial,
        uuid=uuid,
        app_port=app_port,
        files_port=files_port,
        boot_url=boot_url,
        tpm_sock=tpm.sock if tpm else None,
        memory_mb=memory_mb,
    )
    (workdir / "qemu.argv").write_text("\n".join(argv) + "\n")  # to rerun by hand
    try:
        return UefiVM(
            workdir,
            argv,
            name=workdir.name,
            mac=mac,
            serial=serial,
            uuid=uuid,
            timeout=timeout,
            tpm=tpm,
        )
    except Exception:
        if tpm:
            tpm.stop()
        raise


@dataclass
class UefiNetBoot:
    """What `uefi_netboot` yields: artifacts, the file server (already serving uki.efi
    and uki-variant.efi; swap with files.serve()), the EK CA, and VM starters."""

    artifacts: UefiArtifacts
    files: FileServer
    ca: swtpm.LocalCA
    root: Path
    _vms: list[UefiVM] = field(default_factory=list)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def uki_url(self) -> str:
        return self.files.url(UKI_NAME)

    @property
    def uki_variant_url(self) -> str:
        return self.files.url(UKI_VARIANT_NAME)

    def identity(self) -> tuple[str, str, str]:
        """MAC 52:54:00:a7:NN:NN, serial SN-ATTEST-NN, random UUID: never reused."""
        n = next(self._counter)
        return (
            f"52:54:00:a7:{n // 256 % 256:02x}:{n % 256:02x}",
            f"SN-ATTEST-{n:02d}",
            str(uuidlib.uuid4()),
        )

    def make_tpm(self, name: str | None = None) -> Path:
        """A fresh TPM state (EK cert by self.ca); pass it to start(tpm=) to reuse it."""
        return self.ca.make_tpm(self.root / "tpms" / (name or uuidlib.uuid4().hex[:12]))

    def start(
        self,
        app_port: int,
        *,
        mac: str | None = None,
        serial: str | None = None,
        uuid: str | None = None,
        tpm: Path | None | bool = True,
        **options: object,
    ) -> UefiVM:
        """Start one VM against the app on app_port (loopback). tpm: True = a fresh TPM,
        a state dir = that TPM (same EK as its last boot), None/False = no TPM.
        Options: boot_url, timeout, memory_mb (see start_uefi_vm)."""
        auto_mac, auto_serial, auto_uuid = self.identity()
        mac = mac or auto_mac
        tpm_state = self.make_tpm() if tpm is True else (tpm or None)
        vm = start_uefi_vm(
            self.root / f"vm-{mac.replace(':', '')}-{len(self._vms)}",
            esp=self.artifacts.esp,
            mac=mac,
            app_port=app_port,
            files_port=self.files.port,
            tpm_state=tpm_state,
            serial=serial or auto_serial,
            uuid=uuid or auto_uuid,
            **options,
        )  # type: ignore[arg-type]
        self._vms.append(vm)
        return vm

    def boot(self, app_port: int, **options: object) -> VMResult:
        return self.start(app_port, **options).wait()  # type: ignore[arg-type]

    def kill_all(self) -> None:
        for vm in self._vms:
            vm.kill()


@pytest.fixture(scope="session")
def uefi_netboot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UefiNetBoot]:
    """UKIs + ESP (built once per session), their file server, an EK CA, VM starters.
    Fails (never skips) when a Debian package is missing."""
    missing = missing_prerequisites()
    if missing:
        pytest.fail(f"attested-boot peer needs: {', '.join(missing)}")
    root = tmp_path_factory.mktemp("uefi-netboot")
    artifacts = build_uefi_artifacts(root / "artifacts")
    ca = swtpm.session_ca(tmp_path_factory)
    routes = {UKI_NAME: artifacts.uki, UKI_VARIANT_NAME: artifacts.uki_variant}
    with ExitStack() as stack:
        files = stack.enter_context(serve_files(routes))
        nb = UefiNetBoot(artifacts=artifacts, files=files, ca=ca, root=root)
        stack.callback(nb.kill_all)
        yield nb
