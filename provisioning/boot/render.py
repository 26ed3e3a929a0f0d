"""Boot-config renderers: one Django template per format, inputs validated first.

The templates run with autoescaping off (these are not HTML), so safety comes from the
validated dataclasses in `types` plus the checks here: a value that could end a line,
open a quote or expand a variable in any target format never reaches a template. The
structured outputs (Kea JSON, cloud-init YAML) are parsed back after rendering, so a
template bug shows up as a RenderError here rather than as a DHCP server that will not
start or a node that never phones home.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import string
from collections.abc import Sequence
from urllib.parse import urlsplit

import yaml
from django.template.loader import render_to_string

from .checks import check_reservations
from .types import (
    BootImage,
    BootLoaders,
    BootTarget,
    PhoneHome,
    RenderError,
    Reservation,
    Subnet,
    check_base_url,
)

TEMPLATE_DIR = "provisioning/boot"
CHAIN_SCRIPT_PATH = "/boot/chain.ipxe"
IPXE_SCRIPT_PATH = "/boot/ipxe"
# x86 and arm64 kernels keep 2048 bytes of command line; the token comes last in most
# templates, so a longer line would silently lose the very thing the callback needs.
MAX_CMDLINE = 2048
CMDLINE_KEYS = (
    "kernel_url",
    "initrd_url",
    "rootfs_url",
    "callback_url",
    "token",
    "hostname",
    "mac",
    "ip",
    "serial",
    "uuid",
    "arch",
    "site",
    "image_name",
    "image_version",
    "rootfs_sha256",
)
_CMDLINE_FORBIDDEN = set("$'\"\\;|{}`<>")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
_TFTP_ROOT_RE = re.compile(r"^/[A-Za-z0-9._/-]*$")


def _render(name: str, context: dict) -> str:
    return render_to_string(f"{TEMPLATE_DIR}/{name}", context)


def render_cmdline(target: BootTarget, image: BootImage, phone_home: PhoneHome) -> str:
    """Fill the image's cmdline template with known keys only.

    str.format would allow `{phone_home.__class__}` or `{token:>500}`; parsing the
    template ourselves allows plain `{key}` and nothing else.
    """
    values = {
        "kernel_url": image.kernel_url,
        "initrd_url": image.initrd_url,
        "rootfs_url": image.rootfs_url,
        "callback_url": phone_home.callback_url,
        "token": phone_home.token,
        "hostname": target.hostname,
        "mac": target.mac,
        "ip": target.ip,
        "serial": target.serial,
        "uuid": target.uuid,
        "arch": target.arch,
        "site": target.site,
        "image_name": image.name,
        "image_version": image.version,
        "rootfs_sha256": image.sha256.get("rootfs"),
    }
    try:
        parsed = list(string.Formatter().parse(image.cmdline))
    except ValueError as exc:
        raise RenderError(f"cmdline template of {image.name} is malformed: {exc}")
    out: list[str] = []
    for literal, key, spec, conversion in parsed:
        out.append(literal)
        if key is None:
            continue
        if conversion is not None or spec:
            raise RenderError(f"cmdline template: {{{key}}} may not carry !conversion or :spec")
        if key not in values:
            raise RenderError(
                f"cmdline template uses unknown key {{{key}}}; known: {', '.join(CMDLINE_KEYS)}"
            )
        if values[key] is None:
            raise RenderError(f"cmdline template uses {{{key}}} but {target.hostname} has none")
        out.append(values[key])
    cmdline = " ".join("".join(out).split())
    if image.mode == "stateless":
        # Where the initrd fetches the root image it runs from RAM, and what it must hash to.
        root_sha256 = image.sha256.get("rootfs")
        if not root_sha256:
            raise RenderError(f"stateless image {image.name} has no rootfs sha256")
        cmdline += f" corral.root={image.rootfs_url} corral.root_sha256={root_sha256}"
    bad = sorted({c for c in cmdline if c in _CMDLINE_FORBIDDEN or not (" " <= c <= "~")})
    if bad:
        raise RenderError(f"cmdline of {image.name} contains characters {bad!r}")
    if "&&" in cmdline.split():
        raise RenderError(f"cmdline of {image.name} contains a bare && (an iPXE operator)")
    if len(cmdline) > MAX_CMDLINE:
        raise RenderError(f"cmdline of {image.name} is {len(cmdline)} bytes; limit {MAX_CMDLINE}")
    return cmdline


def _header(target: BootTarget, image: BootImage) -> dict:
    return {"target": target, "image": image}


def render_ipxe_deploy(target: BootTarget, image: BootImage, phone_home: PhoneHome) -> str:
    """The script a deploying node gets: fetch kernel + initrd, boot, retry a few times."""
    ctx = _header(target, image) | {
        "cmdline": render_cmdline(target, image, phone_home),
        "attempts": 3,
    }
    return _render("deploy.ipxe", ctx)


def render_ipxe_local(target: BootTarget) -> str:
    """For enrolled nodes that are not deploying: leave the network and boot the disk.

    UEFI gets `exit`, which hands control back to the boot manager so the next entry
    (the installed OS) is tried; legacy BIOS gets `sanboot --drive 0x80` because a bare
    exit there can loop straight back into PXE (as Warewulf and Sidero note).
    """
    return _render("local.ipxe", {"target": target})


def render_ipxe_unknown() -> str:
    """For a MAC Corral does not know: say so and reveal nothing about the fleet."""
    return _render("unknown.ipxe", {})


def render_ipxe_chain(boot_base_url: str) -> str:
    """The static script DHCP hands to iPXE: only a script can expand ${netX/mac} etc."""
    base = check_base_url(boot_base_url)
    return _render("chain.ipxe", {"script_url": base + IPXE_SCRIPT_PATH, "base": base})


def _grub_path(url: str, what: str) -> str:
    """GRUB's network devices take `(http,host:port)/path`, not URLs, and speak no TLS."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise RenderError(f"GRUB cannot fetch {what} over {parts.scheme}: {url}")
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    path = parts.path or "/"
    return f"(http,{host}){path}" + (f"?{parts.query}" if parts.query else "")


def render_grub(
    target: BootTarget,
    image: BootImage,
    phone_home: PhoneHome,
    on_device: tuple[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> str:
    """grub.cfg for UEFI HTTP boot. Each argument is single-quoted because GRUB would
    otherwise treat `&`, `$` and friends in image URLs as its own syntax. `on_device`:
    the kernel's and initrd's paths on GRUB's own device instead (a boot ISO, iso.py);
    `extra_args` follow the image's command line (its static address, iso.py)."""
    kernel, initrd = on_device or (
        _grub_path(image.kernel_url, "the kernel"),
        _grub_path(image.initrd_url, "the initrd"),
    )
    ctx = _header(target, image) | {
        "args": render_cmdline(target, image, phone_home).split() + list(extra_args),
        "kernel": kernel,
        "initrd": initrd,
    }
    return _render("grub.cfg", ctx)


def _instance_id(target: BootTarget, phone_home: PhoneHome) -> str:
    # New per deployment, so cloud-init runs again on a reimage, without exposing the token.
    digest = hashlib.sha256(phone_home.token.encode()).hexdigest()[:12]
    return f"corral-{target.hostname}-{digest}"


def render_meta_data(target: BootTarget, phone_home: PhoneHome) -> str:
    """NoCloud meta-data."""
    out = _render(
        "meta-data.yaml", {"target": target, "instance_id": _instance_id(target, phone_home)}
    )
    _parse_yaml(out, "meta-data")
    return out


def render_user_data(target: BootTarget, image: BootImage, phone_home: PhoneHome) -> str:
    """NoCloud user-data: hostname, fabric rails as netplan, and the phone-home POST.

    The POST is an argv list (no shell), and curl retries only transient failures, so a
    refused token fails fast instead of hammering Corral.
    """
    body = json.dumps(
        {
            "hostname": target.hostname,
            "image": image.name,
            "token": phone_home.token,
            "version": image.version,
        },
        sort_keys=True,
    )
    out = _render(
        "user-data.yaml",
        {"target": target, "image": image, "phone_home": phone_home, "body": body},
    )
    _parse_yaml(out, "user-data")
    return out


def _parse_yaml(text: str, what: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RenderError(f"rendered {what} is not valid YAML: {exc}")


def _subnet_views(subnets: Sequence[Subnet], reservations: Sequence[Reservation]) -> list[dict]:
    views = []
    for s in subnets:
        net = s.network
        tag = "corral-" + str(net).replace(".", "-").replace("/", "-")
        views.append(
            {
                "subnet": s,
                # Kea keys leases by subnet id: derive it from the prefix so it stays the same
                # however the list is ordered or grown.
                "id": int(net.network_address),
                "network": str(net.network_address),
                "netmask": str(net.netmask),
                "tag": tag,
                "chain_url": s.boot_base_url + CHAIN_SCRIPT_PATH,
                "reservations": [r for r in reservations if ipaddress.IPv4Address(r.ip) in net],
            }
        )
    return views


def _check_all(subnets: Sequence[Subnet], reservations: Sequence[Reservation]) -> None:
    if not subnets:
        raise RenderError("no subnets to export")
    problems = check_reservations(reservations, subnets)
    if problems:
        raise RenderError("DHCP reservations have problems:\n" + "\n".join(problems))


def render_kea(
    subnets: Sequence[Subnet],
    reservations: Sequence[Reservation],
    *,
    loaders: BootLoaders | None = None,
    interfaces: Sequence[str] = (),
) -> str:
    """Kea DHCPv4 config. `interfaces` empty means Kea listens nowhere until told to."""
    _check_all(subnets, reservations)
    return _render_kea(subnets, reservations, loaders=loaders, interfaces=interfaces)


def _render_kea(
    subnets: Sequence[Subnet],
    reservations: Sequence[Reservation],
    *,
    loaders: BootLoaders | None = None,
    interfaces: Sequence[str] = (),
) -> str:
    """Without Corral's own checks: tests use it to prove Kea's validator is real."""
    loaders = loaders or BootLoaders()
    for name in interfaces:
        if not _IFNAME_RE.fullmatch(name):
            raise RenderError(f"interface {name!r} is not a Linux ifname")
    out = _render(
        "kea-dhcp4.json",
        {
            "subnets": _subnet_views(subnets, reservations),
            "loaders": loaders,
            "interfaces": list(interfaces),
        },
    )
    try:
        json.loads(out)
    except ValueError as exc:
        raise RenderError(f"rendered Kea config is not valid JSON: {exc}")
    return out


def render_dnsmasq(
    subnets: Sequence[Subnet],
    reservations: Sequence[Reservation],
    *,
    loaders: BootLoaders | None = None,
    tftp_root: str = "/srv/corral/tftp",
) -> str:
    """dnsmasq fragment: DHCP + TFTP only. It never names interfaces or binds: where
    dnsmasq listens is the host's decision, not the export's."""
    _check_all(subnets, reservations)
    return _render_dnsmasq(subnets, reservations, loaders=loaders, tftp_root=tftp_root)


def _render_dnsmasq(
    subnets: Sequence[Subnet],
    reservations: Sequence[Reservation],
    *,
    loaders: BootLoaders | None = None,
    tftp_root: str = "/srv/corral/tftp",
) -> str:
    """Without Corral's own checks, for tests of dnsmasq's own validation."""
    if not _TFTP_ROOT_RE.fullmatch(tftp_root) or ".." in tftp_root:
        raise RenderError(f"tftp_root {tftp_root!r} must be an absolute plain path")
    loaders = loaders or BootLoaders()
    return _render(
        "dnsmasq.conf",
        {
            "subnets": _subnet_views(subnets, reservations),
            "loaders": loaders,
            "tftp_root": tftp_root,
        },
    )
