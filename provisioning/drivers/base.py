"""Protocol-neutral vocabulary of the BMC drivers: states, errors and capabilities.

Callers (Celery tasks, views) only ever see these names, never sushy's or pyghmi's,
so a protocol can be added or swapped without touching them. Errors are split by what
the caller should do: a BMCTransientError is retried with backoff, a BMCFatalError
needs a technician and is never retried.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provisioning.drivers.results import FirmwareComponent, HardwareFacts, Health
    from provisioning.drivers.updates import UpdateInterface

# Power states, as read back from a BMC.
POWER_ON = "on"
POWER_OFF = "off"
POWER_UNKNOWN = "unknown"

# Power actions a caller may request.
ACTION_ON = "on"
ACTION_OFF = "off"
ACTION_GRACEFUL_OFF = "graceful_off"
ACTION_FORCE_RESTART = "force_restart"
ACTION_CYCLE = "cycle"
POWER_ACTIONS = (ACTION_ON, ACTION_OFF, ACTION_GRACEFUL_OFF, ACTION_FORCE_RESTART, ACTION_CYCLE)

# Boot devices for the next boot.
BOOT_PXE = "pxe"
BOOT_DISK = "disk"
BOOT_HTTP = "http"
BOOT_DEVICES = (BOOT_PXE, BOOT_DISK, BOOT_HTTP)

# Firmware boot modes; None leaves the BMC's current mode alone.
BOOT_MODE_UEFI = "uefi"
BOOT_MODE_LEGACY = "legacy"
BOOT_MODES = (BOOT_MODE_UEFI, BOOT_MODE_LEGACY, None)

# Health roll-up values.
HEALTH_OK = "ok"
HEALTH_WARNING = "warning"
HEALTH_CRITICAL = "critical"
HEALTH_UNKNOWN = "unknown"

PROTOCOL_REDFISH = "redfish"
PROTOCOL_IPMI = "ipmi"
PROTOCOLS = (PROTOCOL_REDFISH, PROTOCOL_IPMI)
# Protocols whose driver attaches to the machine's serial console (ConsoleInterface): a
# live console can be opened on any of them (the BMC may still say it offers none).
LIVE_CONSOLE_PROTOCOLS = frozenset({PROTOCOL_IPMI, PROTOCOL_REDFISH})
# ... and those whose every BMC has one, so a deploy's console is always worth a recording
# task. A Redfish BMC may offer none (SerialConsole.SSH): its deploys are recorded where
# inspection found one (HardwareFacts.serial_console), so a fleet without consoles does
# not cost a task per deploy to find out each time.
CONSOLE_PROTOCOLS = frozenset({PROTOCOL_IPMI})


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """Remove secrets from text that came from a library, before anyone logs it."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


class BMCError(Exception):
    """A BMC operation failed; the message is written for a technician.

    ``address`` is the BMC the message is about and ``retryable`` tells the caller
    whether trying again later can help. Messages never contain passwords.
    """

    retryable = False

    def __init__(self, message: str, *, address: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.address = address

    def __str__(self) -> str:
        return self.message


class BMCFatalError(BMCError):
    """Retrying will not help: wrong credentials, unsupported request, bad settings."""


class BMCAuthError(BMCFatalError):
    """The BMC rejected the username or password."""


class BMCUnsupportedError(BMCFatalError):
    """The BMC (or protocol) does not offer what was asked for."""


class BMCResponseError(BMCFatalError):
    """The BMC answered with something that cannot be understood."""


class BMCSettingsError(BMCFatalError):
    """The stored settings are incomplete or invalid; ``errors`` maps field → message."""

    def __init__(self, errors: dict[str, str], *, address: str | None = None) -> None:
        detail = "; ".join(f"{name}: {msg}" for name, msg in sorted(errors.items()))
        super().__init__(f"Invalid BMC settings ({detail})", address=address)
        self.errors = dict(errors)


class BMCTransientError(BMCError):
    """Unreachable, timed out, busy (5xx, 409): retry later with backoff."""

    retryable = True


def no_answer(address: str, protocol: str, doing: str) -> BMCTransientError:
    """The one message for every way a BMC can fail to answer: nothing listening, no answer
    in time, the connection reset, another service (or no TLS) on that port. Whoever may
    point a BMC at an address must not learn from Corral's words which ports of a host are
    open, closed or something else (issue 36); the driver logs what happened for admins.
    Always transient, so retries do not tell the cases apart either."""
    return BMCTransientError(
        f"Could not reach the BMC at {address} while {doing}: no {protocol} answer "
        "(nothing listening, no answer in time, or another service); "
        "the server log has the details",
        address=address,
    )


class PowerInterface(abc.ABC):
    """Read and change the chassis power state."""

    @abc.abstractmethod
    def get_power_state(self) -> str:
        """Return one of POWER_ON, POWER_OFF, POWER_UNKNOWN."""

    @abc.abstractmethod
    def set_power(self, action: str) -> None:
        """Request one of POWER_ACTIONS; returns once the BMC accepted it."""


class ManagementInterface(abc.ABC):
    """Choose what the machine boots from next."""

    @abc.abstractmethod
    def set_boot_device(self, device: str, once: bool = True, mode: str | None = None) -> None:
        """Set the boot device (BOOT_DEVICES), for the next boot only when ``once``."""


class InspectInterface(abc.ABC):
    """Out-of-band hardware inventory."""

    @abc.abstractmethod
    def inspect(self) -> HardwareFacts:
        """Return what the BMC knows about the machine's hardware."""


class FirmwareInterface(abc.ABC):
    """Firmware inventory, used to detect drift from an image's baseline."""

    @abc.abstractmethod
    def firmware(self) -> list[FirmwareComponent]:
        """Return the firmware components the BMC reports."""

    def unavailable_parts(self) -> dict[str, str]:
        """What the last ``firmware()`` could not read (part -> why); empty when complete."""
        return {}


class HealthInterface(abc.ABC):
    """Overall health and sensor readings."""

    @abc.abstractmethod
    def health(self) -> Health:
        """Return the health roll-up and the sensors behind it."""


def check_power_action(action: str, address: str | None) -> None:
    if action not in POWER_ACTIONS:
        raise BMCUnsupportedError(
            f"Unknown power action {action!r} for BMC at {address}; "
            f"expected one of {', '.join(POWER_ACTIONS)}",
            address=address,
        )


def check_boot_request(device: str, mode: str | None, address: str | None) -> None:
    if device not in BOOT_DEVICES:
        raise BMCUnsupportedError(
            f"Unknown boot device {device!r} for BMC at {address}; "
            f"expected one of {', '.join(BOOT_DEVICES)}",
            address=address,
        )
    if mode not in BOOT_MODES:
        raise BMCUnsupportedError(
            f"Unknown boot mode {mode!r} for BMC at {address}; expected uefi, legacy or none",
            address=address,
        )


# --- the serial console ------------------------------------------------------------------
# What a technician looks at first when a deploy hangs or a gate fails (firmware, boot
# loader, kernel and init all write there), and what Corral records while a node deploys
# or runs its gates (the consoles app). A driver attaches (IPMI serial-over-LAN today) and
# hands every byte the machine writes to a callback, as it comes; keystrokes go the other
# way with `send`. A BMC serves one serial-over-LAN session at a time: attaching never
# takes it from another client (no "force"), it fails saying the console is held.

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


class VirtualMediaInterface(abc.ABC):
    """A boot image the BMC serves the machine as a CD from a URL (Redfish VirtualMedia):
    how a machine boots where its site has no DHCP/PXE (docs/boot-modes.md)."""

    @abc.abstractmethod
    def insert(self, url: str) -> None:
        """Insert the image at `url` as the machine's CD and boot from it once, next; a
        BMCError with the BMC's own answer where it refuses."""

    @abc.abstractmethod
    def eject(self) -> None:
        """Take the image out (nothing to do where none is in)."""

    @abc.abstractmethod
    def inserted(self) -> str:
        """The URL of the image in the machine's CD now; "" when none is."""


class NoVirtualMedia(VirtualMediaInterface):
    """A BMC without virtual media Corral can use: said, never guessed."""

    def __init__(self, protocol: str, address: str, why: str) -> None:
        self.protocol, self.address, self.why = protocol, address, why

    def _refuse(self) -> BMCUnsupportedError:
        return BMCUnsupportedError(
            f"BMC at {self.address} offers no virtual media over {self.protocol}: {self.why}",
            address=self.address,
        )

    def insert(self, url: str) -> None:
        raise self._refuse()

    def eject(self) -> None:
        raise self._refuse()

    def inserted(self) -> str:
        raise self._refuse()


class Driver:
    """One BMC, seen through the capability interfaces of its protocol.

    Use as a context manager, or call ``close()``: Redfish sessions occupy one of the
    few session slots a BMC has until they are closed.
    """

    def __init__(
        self,
        *,
        protocol: str,
        address: str,
        power: PowerInterface,
        management: ManagementInterface,
        inspect: InspectInterface,
        firmware: FirmwareInterface,
        health: HealthInterface,
        updates: UpdateInterface,
        console: ConsoleInterface,
        media: VirtualMediaInterface,
        closer: object | None = None,
    ) -> None:
        self.protocol = protocol
        self.address = address
        self.power = power
        self.management = management
        self.inspect = inspect
        self.firmware = firmware
        self.health = health
        # Firmware updates and BIOS settings (updates.NoUpdates where a protocol has none).
        self.updates = updates
        # The machine's serial console (ConsoleInterface; NoConsole where there is none).
        self.console = console
        # Boot images served from a URL (VirtualMediaInterface; NoVirtualMedia if none).
        self.media = media
        self._closer = closer

    def close(self) -> None:
        closer, self._closer = self._closer, None
        if closer is not None:
            closer.close()  # type: ignore[attr-defined]

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Driver {self.protocol} {self.address}>"
