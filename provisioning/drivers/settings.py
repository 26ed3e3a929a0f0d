"""BMC connection settings: the schema forms render and the checks run before any call.

Settings are validated up front so that a typo becomes a form error rather than a
retried task that can never succeed.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from provisioning.drivers.base import (
    PROTOCOL_IPMI,
    PROTOCOL_REDFISH,
    PROTOCOLS,
    BMCSettingsError,
)

DEFAULT_TIMEOUT = 10.0
_HOSTNAME = re.compile(r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+$")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class SettingField:
    """One input of a driver's settings form."""

    name: str
    type: str  # "string", "integer", "boolean" or "number"
    required: bool = False
    secret: bool = False
    default: Any = None
    help: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "secret": self.secret,
            "default": self.default,
            "help": self.help,
        }


_COMMON = (
    SettingField("username", "string", required=True, help="BMC user with administrator rights."),
    SettingField(
        "password",
        "string",
        required=True,
        secret=True,
        help="Password of that user; stored encrypted and never shown again.",
    ),
    SettingField(
        "timeout",
        "number",
        default=DEFAULT_TIMEOUT,
        help="Seconds to wait for one BMC answer before giving up and retrying later.",
    ),
)

SCHEMAS: dict[str, tuple[SettingField, ...]] = {
    PROTOCOL_REDFISH: (
        SettingField(
            "address",
            "string",
            required=True,
            help="BMC host name or IP, or a URL such as https://10.0.0.21:8443.",
        ),
        SettingField("port", "integer", help="TCP port, if not 443 (https) or 80 (http)."),
        *_COMMON,
        SettingField(
            "verify_tls",
            "boolean",
            default=True,
            help="Check the BMC's TLS certificate; turn off only for self-signed BMCs.",
        ),
        SettingField(
            "system_id",
            "string",
            help="Redfish System Id; leave empty when the BMC manages one system.",
        ),
        SettingField(
            "gpu_system_id",
            "string",
            help="Redfish System Id of the GPU baseboard that belongs to this node "
            "(GB200/GH200: HGX_Baseboard_0); empty = found from the BMC's vendor.",
        ),
    ),
    PROTOCOL_IPMI: (
        SettingField("address", "string", required=True, help="BMC host name or IP."),
        SettingField("port", "integer", default=623, help="UDP port of IPMI over LAN."),
        *_COMMON,
    ),
}


def settings_schema(protocol: str) -> list[SettingField]:
    """The fields a user fills in for this protocol."""
    if protocol not in SCHEMAS:
        raise BMCSettingsError({"protocol": _protocol_message(protocol)})
    return list(SCHEMAS[protocol])


def _protocol_message(protocol: object) -> str:
    return f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}"


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host))


def _check_address(protocol: str, value: str) -> str | None:
    if "@" in value:
        return "must not contain credentials; use the username and password fields"
    if "://" in value:
        if protocol != PROTOCOL_REDFISH:
            return "must be a host name or IP address"
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https"):
            return "URL must start with https:// or http://"
        if parts.path.rstrip("/") not in ("", "/redfish/v1"):
            return "URL must not have a path other than /redfish/v1"
        try:
            host = parts.hostname or ""
            _ = parts.port
        except ValueError:
            return "URL has an invalid port"
    else:
        host = value
    if not host or not _valid_host(host):
        return f"{host or value!r} is not a valid host name or IP address"
    return None


def _coerce(spec: SettingField, value: Any) -> tuple[Any, str | None]:
    if spec.type == "boolean":
        if isinstance(value, bool):
            return value, None
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE, None
        return None, "must be true or false"
    if spec.type == "integer":
        try:
            if isinstance(value, bool) or float(value) != int(float(value)):
                raise ValueError
            return int(float(value)), None
        except (TypeError, ValueError):
            return None, "must be a whole number"
    if spec.type == "number":
        try:
            if isinstance(value, bool):
                raise ValueError
            return float(value), None
        except (TypeError, ValueError):
            return None, "must be a number"
    return str(value).strip(), None


def _clean(protocol: str, mapping: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    if protocol not in SCHEMAS:
        return {}, {"protocol": _protocol_message(protocol)}
    specs = {spec.name: spec for spec in SCHEMAS[protocol]}
    errors: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for name in mapping:
        if name not in specs and name != "protocol":
            errors[name] = f"is not a setting of the {protocol} driver"
    for name, spec in specs.items():
        raw = mapping.get(name)
        if raw is None or (isinstance(raw, str) and raw.strip() == "" and spec.type != "boolean"):
            if spec.required:
                errors[name] = "is required"
            cleaned[name] = spec.default
            continue
        value, error = _coerce(spec, raw)
        if error:
            errors[name] = error
            continue
        cleaned[name] = value
    address = cleaned.get("address")
    if address and "address" not in errors:
        error = _check_address(protocol, address)
        if error:
            errors["address"] = error
    port = cleaned.get("port")
    if port is not None and "port" not in errors and not 1 <= port <= 65535:
        errors["port"] = "must be between 1 and 65535"
    timeout = cleaned.get("timeout")
    if timeout is not None and "timeout" not in errors and not 0 < timeout <= 300:
        errors["timeout"] = "must be more than 0 and at most 300 seconds"
    username = cleaned.get("username")
    if protocol == PROTOCOL_IPMI and username and len(username.encode()) > 16:
        errors["username"] = "IPMI user names are at most 16 bytes"
    password = cleaned.get("password")
    if protocol == PROTOCOL_IPMI and password and len(password.encode()) > 20:
        errors["password"] = "IPMI passwords are at most 20 bytes"
    return cleaned, errors


def validate_settings(protocol: str, mapping: Mapping[str, Any]) -> dict[str, str]:
    """Check settings without contacting the BMC; returns field → message, empty if fine."""
    return _clean(protocol, mapping)[1]


@dataclass(frozen=True)
class BMCSettings:
    """Everything needed to reach one BMC; the password never shows in repr or logs."""

    protocol: str
    address: str
    username: str
    password: str = field(repr=False)
    port: int | None = None
    verify_tls: bool = True
    system_id: str | None = None
    gpu_system_id: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    # A requests adapter the Redfish driver mounts for every connection it makes, redirect
    # hops included: the caller's egress policy (core.egress_http.GuardedAdapter). None:
    # requests' own.
    http_adapter: Any = field(default=None, repr=False, compare=False)
    # The most requests in flight on this BMC from one process (redfish/gate.py): the
    # deployment's CORRAL_BMC_MAX_IN_FLIGHT.
    max_in_flight: int = field(default=2, compare=False)
    # Not a setting: the label its calls are counted under (provisioning.metrics.vendor_label).
    vendor: str = field(default="unknown", compare=False)

    @classmethod
    def from_mapping(cls, protocol: str, mapping: Mapping[str, Any]) -> BMCSettings:
        """Validate and coerce form or database values; raises BMCSettingsError."""
        cleaned, errors = _clean(protocol, mapping)
        if errors:
            raise BMCSettingsError(errors, address=str(mapping.get("address") or "") or None)
        return cls(
            protocol=protocol,
            address=cleaned["address"],
            username=cleaned["username"],
            password=cleaned["password"],
            port=cleaned.get("port"),
            verify_tls=cleaned.get("verify_tls", True),
            system_id=cleaned.get("system_id") or None,
            gpu_system_id=cleaned.get("gpu_system_id") or None,
            timeout=cleaned.get("timeout") or DEFAULT_TIMEOUT,
        )

    def validate(self) -> None:
        """Raise BMCSettingsError when the fields do not pass validate_settings."""
        errors = validate_settings(self.protocol, self.as_mapping())
        if errors:
            raise BMCSettingsError(errors, address=self.address)

    def as_mapping(self) -> dict[str, Any]:
        keys = [spec.name for spec in SCHEMAS.get(self.protocol, ())]
        return {key: getattr(self, key) for key in keys}

    def __str__(self) -> str:
        return f"{self.protocol}://{self.username}@{self.address}"
