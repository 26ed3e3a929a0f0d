"""Plain inputs for the boot renderers.

Every value here ends up inside a config that a parser (iPXE, GRUB, YAML, JSON, dnsmasq)
reads line by line. Validating at construction means a bad hostname or URL fails where it
was made, with a message naming the field, instead of silently becoming a second line in a
DHCP server's config. The character sets are deliberately narrow: they are what real
hostnames, MACs and image URLs use, and none of them is special to any of the formats.
"""

from __future__ import annotations

import ipaddress
import re
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit


class RenderError(ValueError):
    """An input or a combination of inputs that Corral refuses to turn into boot config."""


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")
_MAC_RE = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$")
_SLUG_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,62})$")
_SERIAL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,63}$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
_TOKEN_RE = re.compile(r"^[A-Za-z0-9._~+/=-]{16,256}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# RFC 3986 characters minus everything some target format treats specially:
# whitespace and quotes (YAML/JSON/GRUB), `$` (iPXE and GRUB expand it), `;` and `|`
# (GRUB/iPXE command separators), `#` (comments), `\`, `{}` (format strings), `<>`, `'`.
_URL_CHARS_RE = re.compile(r"^[A-Za-z0-9\-._~:/?\[\]@!&*+,=%]+$")
_BASE_URL_RE = re.compile(r"^https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~/-]*)?$")
ARCHES = ("x86_64", "arm64")
SHA256_KEYS = ("kernel", "initrd", "rootfs")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def check_hostname(value: str, what: str = "hostname") -> str:
    if not isinstance(value, str) or len(value) > 253 or not _HOSTNAME_RE.fullmatch(value):
        raise RenderError(f"{what} {value!r} is not a valid DNS hostname (RFC 1123)")
    return value


def check_mac(value: str, what: str = "mac") -> str:
    mac = value.lower() if isinstance(value, str) else value
    if not isinstance(mac, str) or not _MAC_RE.fullmatch(mac):
        raise RenderError(f"{what} {value!r} is not a MAC in colon form (aa:bb:cc:dd:ee:ff)")
    return mac


def check_ipv4(value: str, what: str) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except (ipaddress.AddressValueError, ValueError, TypeError):
        raise RenderError(f"{what} {value!r} is not an IPv4 address")


def check_url(value: str, what: str) -> str:
    """Any http(s) URL a golden image may live at, as long as it is one safe token."""
    if not isinstance(value, str) or not _URL_CHARS_RE.fullmatch(value) or len(value) > 1024:
        raise RenderError(
            f"{what} {value!r} is not a URL Corral can place in boot config "
            "(no spaces, quotes, $, ;, |, #, braces or control characters)"
        )
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RenderError(f"{what} {value!r} must be an absolute http:// or https:// URL")
    return value


def check_base_url(value: str, what: str = "boot_base_url") -> str:
    """Stricter than check_url: dnsmasq splits on commas and the base gets paths appended."""
    if not isinstance(value, str) or not _BASE_URL_RE.fullmatch(value):
        raise RenderError(
            f"{what} {value!r} must look like http://host[:port][/path] "
            "(no query, fragment or commas)"
        )
    return value.rstrip("/")


def check_token(value: str, what: str = "token") -> str:
    if not isinstance(value, str) or not _TOKEN_RE.fullmatch(value):
        raise RenderError(
            f"{what} must be 16-256 characters of [A-Za-z0-9._~+/=-] "
            "(a short token is guessable; other characters break the formats)"
        )
    return value


@dataclass(frozen=True)
class FabricAddress:
    """One rail of the GPU fabric: the interface name and its address with prefix."""

    name: str
    address: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _IFNAME_RE.fullmatch(self.name):
            raise RenderError(f"fabric interface name {self.name!r} is not a Linux ifname")
        try:
            iface = ipaddress.ip_interface(self.address)
        except (ValueError, TypeError):
            raise RenderError(f"fabric address {self.address!r} is not ip/prefix")
        if "/" not in str(self.address):
            raise RenderError(f"fabric address {self.address!r} needs a prefix length")
        _set(self, "address", iface.with_prefixlen)


@dataclass(frozen=True)
class BootTarget:
    hostname: str
    mac: str
    ip: str | None
    serial: str
    arch: str
    site: str
    uuid: str | None = None
    fabric: Sequence[FabricAddress | Mapping[str, str]] = ()

    def __post_init__(self) -> None:
        check_hostname(self.hostname)
        _set(self, "mac", check_mac(self.mac))
        if self.ip is not None:
            _set(self, "ip", check_ipv4(self.ip, "ip"))
        if not isinstance(self.serial, str) or not _SERIAL_RE.fullmatch(self.serial):
            raise RenderError(f"serial {self.serial!r} has characters Corral will not render")
        if self.arch not in ARCHES:
            raise RenderError(f"arch {self.arch!r} is not one of {', '.join(ARCHES)}")
        if not isinstance(self.site, str) or not _SLUG_RE.fullmatch(self.site):
            raise RenderError(f"site {self.site!r} is not a slug")
        if self.uuid is not None:
            try:
                _set(self, "uuid", str(uuidlib.UUID(str(self.uuid))))
            except ValueError:
                raise RenderError(f"uuid {self.uuid!r} is not a UUID")
        rails = tuple(
            r if isinstance(r, FabricAddress) else FabricAddress(r.get("name"), r.get("ip"))
            for r in self.fabric
        )
        names = [r.name for r in rails]
        if len(set(names)) != len(names):
            raise RenderError(f"fabric interface names repeat for {self.hostname}: {names}")
        _set(self, "fabric", rails)


@dataclass(frozen=True)
class BootImage:
    name: str
    version: str
    kernel_url: str
    initrd_url: str
    rootfs_url: str
    cmdline: str
    sha256: Mapping[str, str] = field(default_factory=dict)
    # A unified kernel image: UEFI nodes boot it instead (measured boot, attestable).
    uki_url: str = ""
    # "stateless": the initrd runs the root image from RAM (render_cmdline says where it is).
    mode: str = "disk"

    def __post_init__(self) -> None:
        for attr in ("name", "version"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not _SLUG_RE.fullmatch(value):
                raise RenderError(f"image {attr} {value!r} is not a slug ([A-Za-z0-9_.-])")
        for attr in ("kernel_url", "initrd_url", "rootfs_url"):
            check_url(getattr(self, attr), f"image {attr}")
        if self.uki_url:
            check_url(self.uki_url, "image uki_url")
        if not isinstance(self.cmdline, str) or not self.cmdline.strip():
            raise RenderError("image cmdline template is empty")
        sums = {}
        for key, value in dict(self.sha256).items():
            if key not in SHA256_KEYS:
                raise RenderError(f"image sha256 key {key!r} is not one of {SHA256_KEYS}")
            if not isinstance(value, str) or not _SHA256_RE.fullmatch(value.lower()):
                raise RenderError(f"image sha256 of {key} is not 64 hex digits")
            sums[key] = value.lower()
        _set(self, "sha256", sums)


@dataclass(frozen=True)
class PhoneHome:
    """Where a deploying node reports that it booted, and the deployment's one-time token
    it proves itself with (the model behind it is provisioning.models.Deployment)."""

    callback_url: str
    token: str

    def __post_init__(self) -> None:
        check_url(self.callback_url, "callback_url")
        check_token(self.token)


@dataclass(frozen=True)
class Reservation:
    hostname: str
    mac: str
    ip: str

    def __post_init__(self) -> None:
        check_hostname(self.hostname)
        _set(self, "mac", check_mac(self.mac, f"mac of {self.hostname}"))
        _set(self, "ip", check_ipv4(self.ip, f"ip of {self.hostname}"))


@dataclass(frozen=True)
class Subnet:
    """One boot network. `pool` is "first-last" or (first, last); None means only
    reserved hosts get an address. `next_server` (the TFTP server for the iPXE binaries)
    defaults to the host of `boot_base_url` when that host is an IPv4 literal."""

    cidr: str
    gateway: str
    boot_base_url: str
    dns_servers: Sequence[str] = ()
    pool: str | tuple[str, str] | None = None
    next_server: str | None = None

    def __post_init__(self) -> None:
        try:
            net = ipaddress.IPv4Network(self.cidr, strict=True)
        except (ValueError, TypeError) as exc:
            raise RenderError(f"subnet {self.cidr!r} is not an IPv4 network: {exc}")
        if net.prefixlen > 30:
            raise RenderError(f"subnet {net} is too small to boot hosts from")
        _set(self, "cidr", str(net))
        gw = check_ipv4(self.gateway, f"gateway of {net}")
        if ipaddress.IPv4Address(gw) not in net:
            raise RenderError(f"gateway {gw} is outside subnet {net}")
        _set(self, "gateway", gw)
        _set(self, "boot_base_url", check_base_url(self.boot_base_url))
        _set(self, "dns_servers", tuple(check_ipv4(d, f"dns of {net}") for d in self.dns_servers))
        if self.pool is not None:
            first, last = self.pool.split("-", 1) if isinstance(self.pool, str) else self.pool
            first = check_ipv4(first.strip(), f"pool start of {net}")
            last = check_ipv4(last.strip(), f"pool end of {net}")
            a, b = ipaddress.IPv4Address(first), ipaddress.IPv4Address(last)
            if a not in net or b not in net or a > b:
                raise RenderError(f"pool {first}-{last} is not an ordered range inside {net}")
            _set(self, "pool", (first, last))
        next_server = self.next_server
        if next_server is None:
            host = urlsplit(self.boot_base_url).hostname
            try:
                next_server = str(ipaddress.IPv4Address(host))
            except ValueError:
                raise RenderError(
                    f"subnet {net}: boot_base_url host {host!r} is a name; "
                    "give next_server (the TFTP server's IPv4 address) explicitly"
                )
        _set(self, "next_server", check_ipv4(next_server, f"next_server of {net}"))

    @property
    def network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(self.cidr)

    def in_pool(self, ip: str) -> bool:
        if self.pool is None:
            return False
        first, last = (ipaddress.IPv4Address(x) for x in self.pool)
        return first <= ipaddress.IPv4Address(ip) <= last


_LOADER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


@dataclass(frozen=True)
class BootLoaders:
    """iPXE binaries served over TFTP to firmware that is not iPXE yet, by client
    architecture (DHCP option 93): file names relative to the TFTP root.

    UEFI HTTP-boot firmware (arch 16 x86-64, 19 arm64; vendor class HTTPClient) takes no
    TFTP: it is given the URL of an EFI loader instead (an iPXE or GRUB image on an HTTP
    server; Corral does not serve binaries). Empty = such clients get no boot file."""

    bios: str = "undionly.kpxe"
    efi_x64: str = "ipxe.efi"
    efi_arm64: str = "ipxe-arm64.efi"
    http_x64: str = ""
    http_arm64: str = ""

    def __post_init__(self) -> None:
        for attr in ("bios", "efi_x64", "efi_arm64"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not _LOADER_RE.fullmatch(value) or ".." in value:
                raise RenderError(f"loader {attr} {value!r} is not a plain TFTP file name")
        for attr in ("http_x64", "http_arm64"):
            value = getattr(self, attr)
            if value:
                check_base_url(value, f"HTTP-boot loader {attr}")
                # The BOOTP file field holds 128 bytes, NUL included.
                if len(value) > 127:
                    raise RenderError(
                        f"HTTP-boot loader {attr} is {len(value)} characters; "
                        "DHCP's boot-file field holds at most 127"
                    )
