"""What the console tests share: a node whose BMC is an ipmi_sim, and a screen that keeps
what a console showed."""

from __future__ import annotations

import threading

from django.db import connections

from tests.factories import BMCFactory, NodeFactory


def ipmi_node(bmc, **fields):
    """A node (NodeFactory's fields) whose BMC is the ipmi_sim `bmc`."""
    node = NodeFactory(bmc=None, **fields)
    BMCFactory(
        node=node,
        protocol="ipmi",
        address=bmc.host,
        port=bmc.port,
        username=bmc.username,
        password=bmc.password,
    )
    return node


class Screen:
    """What the console showed, as a terminal would get it (a console's output callback)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self._lock = threading.Lock()

    def __call__(self, data: bytes) -> None:
        with self._lock:
            self.data.extend(data)

    def shows(self, wanted: bytes | str) -> bool:
        if isinstance(wanted, str):
            wanted = wanted.encode()
        with self._lock:
            return wanted in self.data


def sol_machine(ipmi_sim_factory, name: str, echo: bool = False):
    """An ipmi_sim BMC serving a serial line as SOL: (bmc, line), the line closed after
    (a fixture's body: `yield from sol_machine(...)`)."""
    from tests.peers.serial_line import SerialLine

    line = SerialLine(echo=echo)
    bmc = ipmi_sim_factory(name=name, sol=line.port)
    line.wait_connected()
    yield bmc, line
    line.close()


def log_shows(node, text: str) -> bool:
    """Whether the node's latest console log has `text`, as the page shows it."""
    from consoles import selectors
    from consoles.models import ConsoleLog

    log = ConsoleLog.objects.filter(node=node).first()
    return log is not None and text in selectors.readable(selectors.output(log))


def on_own_connection(fn, *args):
    """fn(*args) on a thread of the test's, its database connection closed after."""
    try:
        return fn(*args)
    finally:
        connections.close_all()


PROMPT_AGAIN = 3  # seconds


def qemu_at_ipxe_prompt(netboot, ipmi_sim_factory, name: str, timeout: float = 150):
    """A QEMU machine whose serial port an ipmi_sim serves as SOL, its iPXE waiting at a
    prompt for a key before it boots the kernel and initramfs: (vm, bmc).

    The prompt is asked again every PROMPT_AGAIN seconds until a key comes: a BMC (ipmi_sim
    as a real one) drops what the serial port wrote while no SOL session was active, so a
    prompt written once before the console attached would never be seen. `timeout` bounds
    the machine's life."""
    from tests.peers.util import free_port, wait_for_port, wait_until

    port = free_port()
    files = netboot.files
    script = (
        "#!ipxe\n"
        ":ask\n"
        f"prompt --timeout {PROMPT_AGAIN * 1000} corral-test: press a key to boot && goto go ||\n"
        "goto ask\n"
        ":go\n"
        "echo corral-test: booting the kernel\n"
        f"kernel {files.kernel_url} console=ttyS0 corral.callback=http://10.0.2.100:8800/x\n"
        f"initrd {files.initrd_url}\n"
        "boot\n"
    )
    vm = netboot.start(0, boot_script=script, serial_port=port, timeout=timeout + 30)
    wait_for_port(port, timeout=30)  # QEMU listens: the BMC's first try connects
    bmc = ipmi_sim_factory(name=name, sol=port)
    wait_until(lambda: _connected(port), timeout=30, what="the BMC on the serial port")
    return vm, bmc


def _connected(port: int) -> bool:
    """Whether a client holds a TCP connection to 127.0.0.1:port (QEMU serves one)."""
    needle = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(
            fields[1] == needle and fields[3] == "01"  # ESTABLISHED
            for fields in (line.split() for line in table.readlines()[1:])
        )
