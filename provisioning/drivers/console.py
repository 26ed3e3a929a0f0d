"""A machine's serial console through its BMC: a capability like power or inspect.

The console is what a technician looks at first when a deploy hangs or a gate fails
(firmware, boot loader, kernel and init all write there), and what Corral records while a
node deploys or runs its gates (the consoles app). A driver attaches to it (IPMI
serial-over-LAN today) and hands every byte the machine writes to a callback, as it
comes; keystrokes go the other way with `send`. A BMC serves one serial-over-LAN session
at a time: attaching never takes it from another client (no "force"), it fails saying
the console is held.
"""

from __future__ import annotations

import abc
from collections.abc import Callable

from provisioning.drivers.base import BMCUnsupportedError

Output = Callable[[bytes], None]


class ConsoleLink(abc.ABC):
    """An attached console. Output arrives through the callback given to `attach`, from a
    thread of the driver's; `alive` turns False when the BMC ends the session."""

    @abc.abstractmethod
    def send(self, data: bytes) -> None:
        """Type `data` into the console."""

    @abc.abstractmethod
    def close(self) -> None:
        """Give the console back to the BMC (once; a second call does nothing)."""

    @property
    @abc.abstractmethod
    def alive(self) -> bool: ...

    @property
    @abc.abstractmethod
    def why_closed(self) -> str:
        """Why the link is no longer alive, in a technician's words ("" while it is)."""

    def __enter__(self) -> ConsoleLink:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ConsoleInterface(abc.ABC):
    @abc.abstractmethod
    def attach(self, output: Output) -> ConsoleLink:
        """Attach to the machine's serial console, or raise a BMCError: unsupported where
        the BMC offers none, transient where it is held by another client or the BMC did
        not answer."""


class NoConsole(ConsoleInterface):
    """A BMC whose serial console Corral cannot attach to (yet): said, never guessed."""

    def __init__(self, protocol: str, address: str, why: str) -> None:
        self.protocol, self.address, self.why = protocol, address, why

    def attach(self, output: Output) -> ConsoleLink:
        raise BMCUnsupportedError(
            f"BMC at {self.address} offers no serial console Corral can attach to over "
            f"{self.protocol}: {self.why}",
            address=self.address,
        )
