"""QEMU machines that network-boot through iPXE into the app under test and phone home.

Each VM is a software-emulated PC (`-accel tcg`: CI has no usable KVM) with an e1000
NIC running Debian's iPXE ROM and user-mode networking with restrict=on, so the guest
can reach nothing but what slirp gives it:

  * DHCP + TFTP from slirp itself; TFTP serves a boot.ipxe that chains to
    http://10.0.2.100:8800/boot/ipxe?mac=...&uuid=...&serial=...&arch=...&platform=...
  * guestfwd 10.0.2.100:8800 -> `busybox nc 127.0.0.1 <app_port>`: the app under test,
    which must answer both the iPXE script and the phone-home callback on that port;
  * guestfwd 10.0.2.101:8801 -> the artifact server (kernel + initrd, see
    tests/peers/netboot/artifacts.py).

The app's iPXE script boots the kernel with `console=ttyS0 corral.callback=<URL>
corral.token=<TOKEN>`; the initramfs POSTs JSON there and powers off. The serial
console goes to a file, whose "CORRAL: phone-home ok" marker is the guest's own word
that the callback got a 2xx. Measured on a 2-vCPU box: iPXE asks for its script
~5.5 s after QEMU starts, one VM phones home and powers off in 16-21 s, 2 in parallel
in ~17 s, 4 in parallel in 27-30 s (TCG is CPU-bound: more VMs than cores queue up).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import uuid as uuidlib
from dataclasses import dataclass
from pathlib import Path

from tests.peers.netboot.artifacts import (
    BUSYBOX,
    GUEST_FILES_ADDR,
    GUEST_FILES_PORT,
    ArtifactServer,
    BootArtifacts,
    NetbootUnavailable,
    build_boot_artifacts,
    installed_kernel,
    serve_artifacts,
)
from tests.peers.util import LOOPBACK, stop_process

__all__ = [
    "BootArtifacts",
    "ArtifactServer",
    "VM",
    "VMResult",
    "boot_vm",
    "build_boot_artifacts",
    "missing_prerequisites",
    "serve_artifacts",
    "start_vm",
]

QEMU = "qemu-system-x86_64"
IPXE_ROM = Path("/usr/lib/ipxe/qemu/efi-e1000.rom")
GUEST_APP_ADDR = "10.0.2.100"
GUEST_APP_PORT = 8800
GUEST_APP_URL = f"http://{GUEST_APP_ADDR}:{GUEST_APP_PORT}"
# What the harness recipe proved on Debian's 2019 iPXE. Callers may pass Corral's own
# form (${netX/mac}, ${serial:uristring}, chain --replace --autofree); both work.
DEFAULT_CHAIN_URL = (
    f"{GUEST_APP_URL}/boot/ipxe?mac=${{net0/mac}}&uuid=${{uuid}}"
    "&serial=${serial}&arch=${buildarch}&platform=${platform}"
)
PHONE_HOME_OK = "CORRAL: phone-home ok"
PHONE_HOME_FAILED = "CORRAL: phone-home failed"
APT_HINT = (
    "apt-get install --no-install-recommends qemu-system-x86 ipxe-qemu "
    "busybox-static linux-image-amd64 cpio"
)


def missing_prerequisites() -> list[str]:
    """What is missing to boot a VM, each with the Debian package that provides it."""
    missing = []
    if shutil.which(QEMU) is None:
        missing.append(f"{QEMU} (qemu-system-x86)")
    if not IPXE_ROM.is_file():
        missing.append(f"{IPXE_ROM} (ipxe-qemu)")
    if not BUSYBOX.is_file():
        missing.append(f"{BUSYBOX} (busybox-static)")
    if shutil.which("cpio") is None:
        missing.append("cpio (cpio)")
    if shutil.which("timeout") is None:
        missing.append("timeout (coreutils)")
    try:
        installed_kernel()
    except NetbootUnavailable as exc:
        missing.append(f"Debian kernel (linux-image-amd64): {exc}")
    return missing


@dataclass
class VMResult:
    """How one VM's boot went, for assertions; serial_log is the whole console."""

    name: str
    mac: str
    serial: str
    uuid: str
    workdir: Path
    serial_log: str
    elapsed: float  # QEMU start to QEMU exit (or kill), seconds
    phoned_home_after: float | None  # QEMU start to the ok marker, if it was seen
    powered_off: bool  # the guest ended QEMU itself (poweroff -f), before the timeout
    timed_out: bool
    returncode: int | None
    qemu_log: str = ""

    @property
    def phoned_home(self) -> bool:
        return PHONE_HOME_OK in self.serial_log

    @property
    def phone_home_failed(self) -> bool:
        """The initramfs ran and gave up (no lease, or the callback never got a 2xx)."""
        return PHONE_HOME_FAILED in self.serial_log

    def tail(self, lines: int = 40) -> str:
        """The end of the console and QEMU's own messages, for failure messages."""
        console = "\n".join(self.serial_log.splitlines()[-lines:])
        return (
            f"--- {self.name} serial (last {lines} lines) ---\n{console}\n"
            f"--- {self.name} qemu ---\n{self.qemu_log[-2000:]}"
        )


class VM:
    """One running QEMU. wait() returns its VMResult; kill() is always safe to call.

    A watcher thread per VM notes when the phone-home marker appears and kills QEMU at
    its deadline even if nobody waits, so timings stay exact when several VMs run side
    by side. QEMU also runs under coreutils `timeout`: should the test process die
    without tearing down, the VM is gone shortly after its own timeout anyway.
    """

    def __init__(
        self,
        workdir: Path,
        argv: list[str],
        *,
        name: str,
        mac: str,
        serial: str,
        uuid: str,
        timeout: float,
    ) -> None:
        self.workdir, self.name, self.mac, self.serial, self.uuid = (
            workdir,
            name,
            mac,
            serial,
            uuid,
        )
        self.timeout = timeout
        self.serial_path = workdir / "serial.log"
        self.qemu_log_path = workdir / "qemu.log"
        self._qemu_log = self.qemu_log_path.open("wb")
        self._deadline_hit = threading.Event()
        self._stop = threading.Event()
        self._killed = threading.Event()  # we ended QEMU (it exits 0 on SIGTERM too)
        self.phoned_home_after: float | None = None
        self.exited_after: float | None = None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["timeout", "-k", "5", str(int(timeout) + 30), *argv],
            stdin=subprocess.DEVNULL,
            stdout=self._qemu_log,
            stderr=subprocess.STDOUT,
        )
        self._watcher = threading.Thread(target=self._watch, name=f"qemu-{name}", daemon=True)
        self._watcher.start()
        self._result: VMResult | None = None

    def console(self) -> str:
        """The serial console so far (QEMU writes it unbuffered)."""
        try:
            return self.serial_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _watch(self) -> None:
        deadline = self.started + self.timeout
        while self.proc.poll() is None and not self._stop.is_set():
            if self.phoned_home_after is None and PHONE_HOME_OK in self.console():
                self.phoned_home_after = time.monotonic() - self.started
            if time.monotonic() >= deadline:
                self._deadline_hit.set()
                break
            time.sleep(0.1)
        if self.proc.poll() is not None:
            self.exited_after = time.monotonic() - self.started
        self.kill()
        if self.exited_after is None:
            self.exited_after = time.monotonic() - self.started
        if self.phoned_home_after is None and PHONE_HOME_OK in self.console():
            self.phoned_home_after = self.exited_after

    def wait(self, timeout: float | None = None) -> VMResult:
        """Block until the guest powers off, or is killed at its deadline.

        timeout: seconds from now, to give up sooner than the VM's own timeout (the VM
        is then killed too, and counts as timed out).
        """
        if self._result is None:
            self._watcher.join(timeout)
            if self._watcher.is_alive():
                self._deadline_hit.set()
                self._stop.set()
                self._watcher.join()
            timed_out = self._deadline_hit.is_set()
            self._result = VMResult(
                name=self.name,
                mac=self.mac,
                serial=self.serial,
                uuid=self.uuid,
                workdir=self.workdir,
                serial_log=self.console(),
                elapsed=self.exited_after or 0.0,
                phoned_home_after=self.phoned_home_after,
                powered_off=not self._killed.is_set() and self.proc.returncode == 0,
                timed_out=timed_out,
                returncode=self.proc.returncode,
                qemu_log=self.qemu_log_path.read_text(errors="replace"),
            )
        return self._result

    def kill(self) -> None:
        """Stop QEMU now (SIGTERM, then SIGKILL); a no-op once it has exited."""
        if self.proc.poll() is None:
            self._killed.set()
        stop_process(self.proc, timeout=5)
        self._qemu_log.close()

    def __enter__(self) -> VM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def guest_forwards(app_port: int, files_port: int | None) -> list[str]:
    """slirp guestfwd options: the guest's app and file-server addresses, each connection
    a fresh `busybox nc` to the host's loopback port (one chardev would serve only the
    first connection)."""
    forwards = [
        f"guestfwd=tcp:{GUEST_APP_ADDR}:{GUEST_APP_PORT}-cmd:{BUSYBOX} nc {LOOPBACK} {app_port}"
    ]
    if files_port is not None:
        forwards.append(
            f"guestfwd=tcp:{GUEST_FILES_ADDR}:{GUEST_FILES_PORT}"
            f"-cmd:{BUSYBOX} nc {LOOPBACK} {files_port}"
        )
    return forwards


def _qemu_argv(
    workdir: Path,
    *,
    name: str,
    mac: str,
    serial: str,
    uuid: str,
    app_port: int,
    files_port: int | None,
    memory_mb: int,
    serial_port: int | None = None,
    cdrom: Path | None = None,
) -> list[str]:
    forwards = guest_forwards(app_port, files_port)
    serial_log = workdir / "serial.log"
    # The serial port is a file, or (serial_port) a telnet server on 127.0.0.1 that a BMC's
    # serial-over-LAN connects to (tests/peers/ipmi.py sol=), still logged to the file.
    console = (
        ["-serial", f"file:{serial_log}"]
        if serial_port is None
        else [
            "-chardev",
            f"socket,id=ser0,host=127.0.0.1,port={serial_port},server=on,wait=off,telnet=on,"
            f"logfile={serial_log}",
            "-serial",
            "chardev:ser0",
        ]
    )
    netdev = ",".join(
        [
            "user",
            "id=n0",
            "restrict=on",
            f"tftp={workdir / 'tftp'}",
            "bootfile=boot.ipxe",
            *forwards,
        ]
    )
    smbios_serial = serial.replace(",", ",,")  # QEMU option syntax escapes commas
    return [
        QEMU,
        "-accel",
        "tcg",
        "-machine",
        "pc",
        "-m",
        str(memory_mb),
        "-name",
        name,
        "-nographic",
        "-nodefaults",
        "-no-reboot",
        "-display",
        "none",
        "-monitor",
        "none",
        *console,
        "-netdev",
        netdev,
        "-device",
        f"e1000,netdev=n0,mac={mac},romfile={IPXE_ROM}",
        "-smbios",
        f"type=1,serial={smbios_serial},uuid={uuid}",
        # A CD (what a BMC's virtual media serves) boots first; else the network.
        *(["-cdrom", str(cdrom), "-boot", "d"] if cdrom else ["-boot", "n"]),
    ]


def start_vm(
    workdir: Path,
    *,
    mac: str,
    app_port: int,
    files_port: int | None = None,
    serial: str = "SN-NETBOOT-01",
    uuid: str | None = None,
    chain_url: str = DEFAULT_CHAIN_URL,
    boot_script: str | None = None,
    timeout: float = 90.0,
    memory_mb: int = 512,
    serial_port: int | None = None,
    cdrom: Path | None = None,
) -> VM:
    """Start a VM that PXE-boots into iPXE and chains to the app on app_port.

    serial_port: its serial console as a telnet server on that loopback port (for a BMC's
    serial-over-LAN) instead of only a file; serial.log has it either way.

    cdrom: an ISO the VM boots from instead of the network (a BMC's virtual media).

    files_port: the artifact server's host port (ArtifactServer.port), reachable from the
    guest at http://10.0.2.101:8801. boot_script replaces the whole TFTP boot.ipxe
    (then chain_url is unused). Returns at once; several VMs may run side by side,
    each in its own workdir.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "tftp").mkdir(exist_ok=True)
    (workdir / "serial.log").unlink(missing_ok=True)
    uuid = uuid or str(uuidlib.uuid4())
    script = boot_script or f"#!ipxe\nchain {chain_url} || shell\n"
    (workdir / "tftp" / "boot.ipxe").write_text(script)
    name = workdir.name
    argv = _qemu_argv(
        workdir,
        name=name,
        mac=mac,
        serial=serial,
        uuid=uuid,
        app_port=app_port,
        files_port=files_port,
        memory_mb=memory_mb,
        serial_port=serial_port,
        cdrom=cdrom,
    )
    (workdir / "qemu.argv").write_text("\n".join(argv) + "\n")  # to rerun by hand
    return VM(workdir, argv, name=name, mac=mac, serial=serial, uuid=uuid, timeout=timeout)


def boot_vm(
    workdir: Path,
    *,
    mac: str,
    app_port: int,
    files_port: int | None = None,
    serial: str = "SN-NETBOOT-01",
    uuid: str | None = None,
    timeout: float = 90.0,
    **options: object,
) -> VMResult:
    """Start a VM and wait until it powers off (or is killed at timeout)."""
    with start_vm(
        workdir,
        mac=mac,
        app_port=app_port,
        files_port=files_port,
        serial=serial,
        uuid=uuid,
        timeout=timeout,
        **options,
    ) as vm:  # type: ignore[arg-type]
        return vm.wait()
