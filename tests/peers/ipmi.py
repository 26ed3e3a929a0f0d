"""IPMI peer: OpenIPMI's ``ipmi_sim`` (Debian package ``openipmi``) with a chassis program.

Without a chassis program ipmi_sim refuses every power and boot command, so
``chassis_control.sh`` keeps power and boot device in files and logs every call in
``chassis.log``; tests assert on that log (``get_bootdev`` always reads back
``default``, so the log is the only witness of a boot-device request).

Each BMC also answers FRU 0 reads with an identity (``FRUIdentity``: manufacturer,
product name, part number, serial) encoded in the IPMI FRU format, so inspection has a
system serial and model to find; ``fru=None`` starts a BMC without FRU data.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from tests.peers.ipmi_sdr import SimSensor, emu_lines
from tests.peers.util import LOOPBACK, free_port, stop_process, wait_until

CHASSIS_PROGRAM = Path(__file__).with_name("chassis_control.sh")
# ipmi_sim powers a cycled machine back on this long after the off (measured: 1.0 s).
CYCLE_ON_AFTER_S = 1.5

LAN_CONF = """\
name "{name}"
set_working_mc 0x20
  startlan 1
    addr {host} {port}
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "/bin/sh {program} {state}"
{sol}  user 2 true  "{username}" "{password}" admin 10 none md2 md5 straight
"""

EMU_COMMANDS = """\
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
{fru}mc_enable 0x20
"""
# Get System GUID answers the lan.conf guid above; this is how SMBIOS (and so dmidecode,
# Redfish and pyghmi) spells it: the first three fields are little-endian on the wire.
SYSTEM_UUID = "674523a1-ab89-efcd-a123-456789abcdef"


@dataclass(frozen=True)
class FRUIdentity:
    """What FRU 0 of a simulated BMC says about the system."""

    serial: str
    manufacturer: str = "Corral Test Systems"
    product: str = "HGX H100 8-GPU"
    part_number: str = "CTS-8125GS"


def _fru_area(body: bytes) -> bytes:
    """One FRU info area: version, length in 8-byte units, fields, end, pad, checksum."""
    area = bytearray([0x01, 0]) + body + b"\xc1"
    while (len(area) + 1) % 8:
        area.append(0)
    area[1] = (len(area) + 1) // 8
    area.append(-sum(area) & 0xFF)
    return bytes(area)


def _fru_field(text: str) -> bytes:
    raw = text.encode("ascii")
    assert len(raw) < 64, text
    return bytes([0xC0 | len(raw)]) + raw  # type 3: 8-bit ASCII


def fru_bytes(fru: FRUIdentity) -> bytes:
    """FRU 0 per the IPMI Platform Management FRU Information Storage Definition 1.0."""
    chassis = _fru_area(bytes([0x17]) + _fru_field(fru.part_number) + _fru_field(fru.serial))
    board = _fru_area(
        bytes(4)
        + b"".join(
            _fru_field(t)
            for t in (fru.manufacturer, "GPU baseboard", f"BRD-{fru.serial}", "BRD-PN", "")
        )
    )
    product = _fru_area(
        b"\x00"
        + b"".join(
            _fru_field(t)
            for t in (fru.manufacturer, fru.product, fru.part_number, "1.0", fru.serial, "", "")
        )
    )
    header = bytearray(
        [0x01, 0, 1, 1 + len(chassis) // 8, 1 + (len(chassis) + len(board)) // 8, 0, 0]
    )
    header.append(-sum(header) & 0xFF)
    return bytes(header) + chassis + board + product


def _emu_commands(fru: FRUIdentity | None, sensors: Sequence[SimSensor] = ()) -> str:
    extra = emu_lines(list(sensors))
    if fru is not None:
        data = fru_bytes(fru)
        extra += f"mc_add_fru_data 0x20 0 {len(data):#x} data "
        extra += " ".join(f"{b:#04x}" for b in data) + "\n"
    return EMU_COMMANDS.format(fru=extra)


@dataclass
class IPMISim:
    """A running ipmi_sim and the files its chassis program keeps."""

    host: str
    port: int
    username: str
    password: str = field(repr=False)
    fru: FRUIdentity | None = None
    state_dir: Path = field(default=Path())
    log_path: Path = field(default=Path())
    argv: list[str] = field(default_factory=list, repr=False)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return self.host

    def chassis_log(self) -> list[str]:
        """Calls of the chassis program, oldest first, e.g. "set boot pxe"."""
        if not self.log_path.exists():
            return []
        return [line.strip() for line in self.log_path.read_text().splitlines() if line.strip()]

    def _no_cycle_pending(self) -> bool:
        sets = self.sets()
        if not sets or sets[-1] != "set power 0":
            return True
        return time.time() - self.log_path.stat().st_mtime >= CYCLE_ON_AFTER_S

    def sets(self) -> list[str]:
        """Only the state-changing calls ("set power 1", "set boot pxe", ...)."""
        return [line for line in self.chassis_log() if line.startswith("set ")]

    def power(self) -> str:
        """ "on" or "off", as the chassis program last recorded it."""
        path = self.state_dir / "power"
        return "on" if path.exists() and path.read_text().strip() == "1" else "off"

    def boot(self) -> str:
        path = self.state_dir / "boot"
        return path.read_text().strip() if path.exists() else "none"

    def stop(self) -> None:
        """Kill the BMC (a BMC reboot or a cable pull, as the client sees it)."""
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def start(self) -> None:
        """Start the BMC again on the same port, keeping its chassis state."""
        if self.process is None:
            self.process = _spawn(self.argv, self.state_dir.parent / "ipmi_sim.log")
            wait_until(lambda: _answers(self.port), timeout=10, what="ipmi_sim answering")

    def reset(self, power_on: bool = False) -> None:
        """Known state for a test: power off (or on), no boot override, empty log.

        ipmi_sim ends a power cycle by powering the machine on by itself about a second
        after the off (CYCLE_ON_AFTER_S); an earlier test's cycle landing after this reset
        turned the next test's machine on. So a reset after a recent power-off waits
        until that power-on came, or could no longer come."""
        wait_until(self._no_cycle_pending, timeout=10, what="an earlier cycle's power-on")
        (self.state_dir / "power").write_text("1\n" if power_on else "0\n")
        (self.state_dir / "boot").write_text("none\n")
        self.log_path.write_text("")


def _udp_bound(port: int) -> bool:
    """Whether something listens on UDP 127.0.0.1:port (ipmi_sim prints nothing)."""
    needle = f"0100007F:{port:04X}"
    with contextlib.suppress(OSError):
        return any(
            line.split()[1] == needle for line in Path("/proc/net/udp").read_text().splitlines()[1:]
        )
    return False


# IPMI 1.5 "Get Channel Authentication Capabilities" (channel E: this one, admin), outside
# any session: what ipmitool sends first. RMCP header, session header (no auth, sequence 0,
# session 0), then the message to the BMC (0x20) from a remote console (0x81).
_GET_AUTH_CAPS = bytes.fromhex("0600ff07000000000000000000092018c88100380e0435")


def _answers(port: int) -> bool:
    """Whether the BMC answers an IPMI request yet. ipmi_sim binds its port before it has
    run its command file (the FRU data, the SDRs, then mc_enable): a client that asks in
    between gets nothing back and waits out its retries."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.3)
        try:
            sock.sendto(_GET_AUTH_CAPS, (LOOPBACK, port))
            return bool(sock.recv(512))
        except OSError:  # no answer in time, or refused
            return False


def _spawn(argv: list[str], log_path: Path) -> subprocess.Popen:
    with log_path.open("ab") as log:
        return subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


def ipmi_sim_binary() -> str:
    binary = shutil.which("ipmi_sim")
    if binary is None:
        pytest.fail("ipmi_sim not installed: apt-get install openipmi (.ci/run does)")
    return binary


@contextlib.contextmanager
def run_ipmi_sim(
    workdir: Path,
    username: str = "admin",
    password: str = "password",
    name: str = "gpu001",
    fru: FRUIdentity | None | Literal["default"] = "default",
    sensors: Sequence[SimSensor] = (),
    sol: int | None = None,
) -> Iterator[IPMISim]:
    """Start one ipmi_sim BMC on a free loopback UDP port; stop it on exit.

    ``sol``: a TCP port on 127.0.0.1 where the machine's serial port listens (a QEMU
    serial chardev with telnet=on, or tests/peers/serial_line.py); the BMC connects to it
    and serves it as serial-over-LAN. Its "telnet:" form, because in OpenIPMI 2.0.33 the
    plain "tcp:" one never writes what the remote console types.

    ``fru`` defaults to an identity with serial ``SIM-<NAME>``; None leaves FRU 0 empty.
    ``sensors`` go into its SDR repository with their readings (tests/peers/ipmi_sdr.py).
    """
    if fru == "default":
        fru = FRUIdentity(serial=f"SIM-{name.upper()}")
    binary = ipmi_sim_binary()
    chassis_dir = workdir / "chassis"
    sim_state = workdir / "sim-state"
    chassis_dir.mkdir(parents=True, exist_ok=True)
    sim_state.mkdir(exist_ok=True)
    (workdir / "gpu.emu").write_text(_emu_commands(fru, sensors))
    for _attempt in range(3):
        port = free_port(kind=socket.SOCK_DGRAM)
        (workdir / "lan.conf").write_text(
            LAN_CONF.format(
                name=name,
                host=LOOPBACK,
                port=port,
                program=CHASSIS_PROGRAM,
                state=chassis_dir,
                username=username,
                password=password,
                sol=f'  sol "telnet:{LOOPBACK}:{sol}" 115200\n' if sol else "",
            )
        )
        argv = [
            binary,
            "-c",
            str(workdir / "lan.conf"),
            "-f",
            str(workdir / "gpu.emu"),
            "-s",
            str(sim_state),
            "-n",
        ]
        proc = _spawn(argv, workdir / "ipmi_sim.log")
        try:
            wait_until(
                lambda p=port, pr=proc: _udp_bound(p) or pr.poll() is not None,
                timeout=10,
                what="ipmi_sim listening",
            )
            if proc.poll() is None:
                wait_until(lambda p=port: _answers(p), timeout=10, what="ipmi_sim answering")
                break
        except TimeoutError:
            pass
        stop_process(proc)
        time.sleep(0.1)
    else:
        raise RuntimeError(f"ipmi_sim did not start, see {workdir / 'ipmi_sim.log'}")
    sim = IPMISim(
        host=LOOPBACK,
        port=port,
        username=username,
        password=password,
        fru=fru,
        state_dir=chassis_dir,
        log_path=chassis_dir / "chassis.log",
        argv=argv,
        process=proc,
    )
    sim.reset()
    try:
        yield sim
    finally:
        sim.stop()


IPMISimFactory = Callable[..., IPMISim]


@pytest.fixture(scope="session")
def ipmi_sim_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IPMISimFactory]:
    """Start extra BMCs: ``factory(username="admin", password="password", name="gpu001",
    fru="default", sensors=(), sol=None)`` (see ``run_ipmi_sim`` for the last three).

    One ipmi_sim process per BMC (~4 MB each); all are stopped at session end.
    """
    stack = contextlib.ExitStack()

    def start(
        username: str = "admin",
        password: str = "password",
        name: str = "gpu001",
        fru: FRUIdentity | None | Literal["default"] = "default",
        sensors: Sequence[SimSensor] = (),
        sol: int | None = None,
    ) -> IPMISim:
        workdir = tmp_path_factory.mktemp("ipmi-sim")
        return stack.enter_context(
            run_ipmi_sim(workdir, username, password, name, fru, sensors, sol)
        )

    with stack:
        yield start


@pytest.fixture(scope="session")
def ipmi_sim(ipmi_sim_factory: IPMISimFactory) -> IPMISim:
    """One BMC for the whole session (user admin, password in ``.password``)."""
    return ipmi_sim_factory(password="ipmi-Test-pw")


@pytest.fixture
def ipmi_bmc(ipmi_sim: IPMISim) -> IPMISim:
    """The session BMC reset to power off, no boot override and an empty chassis log."""
    ipmi_sim.reset()
    return ipmi_sim
