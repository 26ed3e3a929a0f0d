"""IPMI out-of-band inspection: what FRU 0 and Get System GUID can tell.

IPMI has no standard command that lists CPUs, memory, NICs, drives or GPUs, so those
parts are reported under ``HardwareFacts.unavailable`` with the reason, as the Redfish
path does for parts its BMC cannot deliver: an IPMI-only node must still reach
``ready``; the gates, run in-band on the booted OS, check what matters (GPUs).

FRU 0 is read here rather than through pyghmi's ``get_inventory()``: pyghmi asks for
224 bytes at a time and shrinks the request only on completion codes 0xC9/0xCA, while
ipmi_sim and a number of real BMCs answer 0xC8 ("request too long") above a few dozen
bytes, which would fail the whole inspection. Like ipmitool, the read below halves the
request on any of the "too long" codes. pyghmi's parser still decodes the FRU areas.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from pyghmi import exceptions as pyghmi_exc
from pyghmi.ipmi import command as ipmi_command
from pyghmi.ipmi import fru as ipmi_fru
from pyghmi.ipmi.private import util as ipmi_util

from provisioning.drivers.base import InspectInterface
from provisioning.drivers.ipmi.session import IPMIConnection
from provisioning.drivers.results import HardwareFacts

_NETFN_APP, _GET_SYSTEM_GUID = 0x06, 0x37
_NETFN_STORAGE, _GET_FRU_AREA_INFO, _READ_FRU_DATA = 0x0A, 0x10, 0x11
# Completion codes meaning "ask for fewer bytes": request length invalid, request too
# long, parameter out of range, cannot return that many bytes.
_TOO_LONG = frozenset({0xC7, 0xC8, 0xC9, 0xCA})
# Completion codes meaning "there is no FRU 0 here": invalid command, parameter out of
# range, not present, invalid data field (what ipmi_sim answers without FRU data).
_NO_FRU = frozenset({0xC1, 0xC9, 0xCB, 0xCC})
_FIRST_CHUNK, _MIN_CHUNK = 224, 8
_MAX_FRU_BYTES = 8192  # FRU 0 is a few hundred bytes; refuse to page through a bogus size

IN_BAND_ONLY = {
    part: f"IPMI has no standard command that lists {what}; only the booted OS can"
    for part, what in (
        ("processors", "CPUs"),
        ("memory", "memory modules"),
        ("nics", "NICs"),
        ("storage", "drives"),
        ("gpus", "GPUs"),
    )
}


class IPMIInspect(InspectInterface):
    """Identity from FRU 0 and the system GUID; everything else listed as unavailable."""

    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def inspect(self) -> HardwareFacts:
        facts = HardwareFacts(unavailable=dict(IN_BAND_ONLY))
        raw, missing = self._read_fru()
        if raw is not None:
            try:
                info = ipmi_fru.FRU(rawdata=raw).info
            except (
                pyghmi_exc.PyghmiException,
                IndexError,
                ValueError,
                TypeError,
                struct.error,
            ) as exc:
                missing = f"FRU 0 could not be decoded ({type(exc).__name__}: {exc})"
            else:
                missing = None if info else "FRU 0 is not in the IPMI FRU format"
                _identity(facts, info or {})
        if missing:
            facts.unavailable["identity"] = f"BMC at {self.conn.address}: {missing}"
        facts.uuid = self.conn.call("reading the system GUID", _system_guid)
        return facts

    def _read_fru(self) -> tuple[bytes | None, str | None]:
        """FRU 0's bytes, or None and why the BMC has none."""
        size, missing = self.conn.call("reading the FRU inventory size", _fru_size)
        if size is None:
            return None, missing
        data = bytearray()
        chunk = _FIRST_CHUNK
        while len(data) < size:
            offset, count = len(data), min(chunk, size - len(data))
            code, piece = self.conn.call(
                f"reading FRU 0 at offset {offset}",
                functools.partial(_read_fru_chunk, offset=offset, count=count),
            )
            if code in _TOO_LONG and chunk > _MIN_CHUNK:
                chunk = max(_MIN_CHUNK, count // 2)
                continue
            if code is not None or not piece:
                return None, f"FRU 0 stopped answering at byte {offset} of {size}"
            data.extend(piece)
        return bytes(data), None


def _fru_size(command: ipmi_command.Command) -> tuple[int | None, str | None]:
    reply = command.raw_command(netfn=_NETFN_STORAGE, command=_GET_FRU_AREA_INFO, data=[0])
    if reply.get("code") in _NO_FRU:
        return None, f"no FRU inventory ({reply.get('error')})"
    _raise_on_error(reply)
    data = reply.get("data") or b""
    size = data[0] | data[1] << 8 if len(data) >= 2 else 0
    if not 0 < size <= _MAX_FRU_BYTES:
        return None, f"FRU 0 reports an implausible size of {size} bytes"
    return size, None


def _read_fru_chunk(
    command: ipmi_command.Command, offset: int, count: int
) -> tuple[int | None, bytes]:
    """(completion code if refused for its length, the bytes read)."""
    reply = command.raw_command(
        netfn=_NETFN_STORAGE, command=_READ_FRU_DATA, data=[0, offset & 0xFF, offset >> 8, count]
    )
    if reply.get("code") in _TOO_LONG:
        return reply["code"], b""
    _raise_on_error(reply)
    data = reply.get("data") or b""
    # The first byte is the count actually returned.
    return None, bytes(data[1 : 1 + data[0]]) if data else b""


def _system_guid(command: ipmi_command.Command) -> str | None:
    """The SMBIOS system UUID, as dmidecode and Redfish spell it (lower case)."""
    reply = command.raw_command(netfn=_NETFN_APP, command=_GET_SYSTEM_GUID)
    data = reply.get("data") or b""
    if reply.get("error") or len(data) != 16 or len(set(data)) == 1:
        return None  # optional command; all-zero or all-FF means "not set"
    return ipmi_util.decode_wireformat_uuid(data).lower()


def _raise_on_error(reply: dict[str, Any]) -> None:
    if reply.get("error"):
        raise pyghmi_exc.IpmiException(reply["error"], code=reply.get("code", 0))


def _identity(facts: HardwareFacts, info: dict[str, Any]) -> None:
    """System identity from the product area, falling back to chassis and board areas.

    The product area describes the whole system (its serial is what the vendor's
    support knows); the board area describes only the mainboard.
    """
    facts.manufacturer = _first(info, "Manufacturer", "Board manufacturer")
    facts.model = _first(info, "Product name", "Model", "Board product name")
    facts.serial = _first(info, "Serial Number", "Chassis serial number", "Board serial number")


def _first(info: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = info.get(key)
        if isinstance(value, bytes | bytearray):
            value = value.decode("ascii", errors="replace")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
