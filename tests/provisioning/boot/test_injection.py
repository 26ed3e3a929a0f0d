"""Values that could end a line, open a quote or expand a variable are refused."""

from dataclasses import replace

import pytest

from provisioning.boot import (
    BootImage,
    BootLoaders,
    BootTarget,
    FabricAddress,
    PhoneHome,
    RenderError,
    Reservation,
    Subnet,
    render_dnsmasq,
    render_grub,
    render_ipxe_chain,
    render_ipxe_deploy,
    render_kea,
)

TARGET = dict(mac="52:54:00:aa:00:01", ip=None, serial="SN1", arch="x86_64", site="dc1")


@pytest.mark.parametrize(
    "hostname",
    [
        "gpu001\nboot",
        "gpu001\r",
        "gpu 001",
        "gpu001;reboot",
        "gpu001'",
        'gpu"1',
        "${x}",
        "-gpu",
        "gpu_001",
        "",
        "a" * 64,
    ],
)
def test_bad_hostname_refused(hostname):
    with pytest.raises(RenderError, match="hostname"):
        BootTarget(hostname=hostname, **TARGET)
    with pytest.raises(RenderError, match="hostname"):
        Reservation(hostname=hostname, mac="52:54:00:aa:00:01", ip="10.0.0.11")


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5/a b",
        "http://10.0.0.5/a\nkernel http://evil/x",
        "http://10.0.0.5/${x}",
        "http://10.0.0.5/a;b",
        "http://10.0.0.5/a'b",
        'http://10.0.0.5/a"b',
        "http://10.0.0.5/a|b",
        "http://10.0.0.5/{token}",
        "ftp://10.0.0.5/x",
        "/relative",
        "http:///nohost",
    ],
)
def test_bad_url_refused(url):
    with pytest.raises(RenderError):
        PhoneHome(callback_url=url, token="t" * 20)


def test_bad_image_url_refused(image):
    with pytest.raises(RenderError, match="kernel_url"):
        replace(image, kernel_url="http://10.0.0.5/vmlinuz initrd=http://evil/x")


@pytest.mark.parametrize(
    "base",
    [
        "http://10.0.0.5:8000/?x=1",
        "http://10.0.0.5,evil",
        "http://10.0.0.5/a b",
        "10.0.0.5",
    ],
)
def test_bad_boot_base_url_refused(base):
    with pytest.raises(RenderError, match="boot_base_url"):
        Subnet(cidr="10.0.0.0/24", gateway="10.0.0.1", boot_base_url=base)
    with pytest.raises(RenderError, match="boot_base_url"):
        render_ipxe_chain(base)


@pytest.mark.parametrize("token", ["short", "a" * 20 + "\n", "a" * 20 + " x", "a" * 20 + "'"])
def test_bad_token_refused(token):
    with pytest.raises(RenderError, match="token"):
        PhoneHome(callback_url="http://10.0.0.5/cb", token=token)


@pytest.mark.parametrize(
    "cmdline, match",
    [
        ("console=ttyS0 token={phone_home.token}", "unknown key"),
        ("x={token.__class__}", "unknown key"),
        ("x={token[0]}", "unknown key"),
        ("x={0}", "unknown key"),
        ("x={}", "unknown key"),
        ("x={token:>3000}", "conversion or :spec"),
        ("x={token!r}", "conversion or :spec"),
        ("x={uuid}", "has none"),
        ("x={{literal}}", "characters"),
        ("x=$y", "characters"),
        ("x=1 || shell", "characters"),
        ("x=1 && shell", "bare &&"),
        ("x={token", "malformed"),
        ("x=" + "a" * 2100, "limit 2048"),
    ],
)
def test_cmdline_template_is_limited(image, phone_home, cmdline, match):
    target = BootTarget(hostname="gpu001", **TARGET)
    with pytest.raises(RenderError, match=match):
        render_ipxe_deploy(target, replace(image, cmdline=cmdline), phone_home)


def test_cmdline_keys_render(image, phone_home, target):
    image = replace(
        image,
        cmdline="h={hostname} m={mac} s={serial} u={uuid} a={arch} "
        "site={site} v={image_version} sum={rootfs_sha256}",
    )
    out = render_ipxe_deploy(target, image, phone_home)
    assert (
        "h=gpu001 m=52:54:00:aa:00:01 s=SN-GPU001 u=11111111-2222-3333-4444-555555555555"
        " a=x86_64 site=dc1 v=2025.06.1 sum=" + "ab" * 32
    ) in out


def test_grub_refuses_https(target, image, phone_home):
    image = replace(image, kernel_url="https://10.0.0.5/vmlinuz")
    with pytest.raises(RenderError, match="GRUB cannot fetch the kernel over https"):
        render_grub(target, image, phone_home)


@pytest.mark.parametrize(
    "field, value",
    [
        ("mac", "52:54:00:aa:00"),
        ("mac", "52-54-00-aa-00-01"),
        ("ip", "10.0.0.256"),
        ("serial", "SN 1"),
        ("serial", "SN\n1"),
        ("arch", "riscv64"),
        ("site", "dc 1"),
        ("uuid", "not-a-uuid"),
    ],
)
def test_bad_target_fields_refused(field, value):
    with pytest.raises(RenderError, match=field):
        BootTarget(hostname="gpu001", **(TARGET | {field: value}))


@pytest.mark.parametrize(
    "rail",
    [
        {"name": "rail0\n", "ip": "10.1.0.1/31"},
        {"name": "rail0", "ip": "10.1.0.1"},
        {"name": "rail0", "ip": "10.1.0.1/31\n- x"},
    ],
)
def test_bad_fabric_refused(rail):
    with pytest.raises(RenderError, match="fabric"):
        BootTarget(hostname="gpu001", **TARGET, fabric=[rail])


def test_fabric_accepts_dataclass_and_dict():
    t = BootTarget(
        hostname="gpu001",
        **TARGET,
        fabric=[FabricAddress("rail0", "10.1.0.1/31"), {"name": "r1", "ip": "fd00::1/64"}],
    )
    assert [r.address for r in t.fabric] == ["10.1.0.1/31", "fd00::1/64"]


def test_image_fields_refused(image):
    with pytest.raises(RenderError, match="name"):
        replace(image, name="ubuntu\ngpu")
    with pytest.raises(RenderError, match="sha256"):
        replace(image, sha256={"rootfs": "zz"})
    with pytest.raises(RenderError, match="sha256 key"):
        replace(image, sha256={"bios": "ab" * 32})
    with pytest.raises(RenderError, match="empty"):
        BootImage(
            name="x",
            version="1",
            kernel_url="http://h/k",
            initrd_url="http://h/i",
            rootfs_url="http://h/r",
            cmdline=" ",
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(cidr="10.0.0.0/33"), "not an IPv4 network"),
        (dict(cidr="10.0.0.1/24"), "not an IPv4 network"),
        (dict(gateway="10.9.0.1"), "outside subnet"),
        (dict(pool="10.0.0.200-10.0.0.100"), "ordered range"),
        (dict(pool="10.0.0.100-10.0.1.10"), "ordered range"),
        (dict(dns_servers=["10.0.0.2\nx"]), "dns"),
        (dict(boot_base_url="http://corral.example:8000"), "next_server"),
    ],
)
def test_bad_subnet_refused(kwargs, match):
    base = dict(cidr="10.0.0.0/24", gateway="10.0.0.1", boot_base_url="http://10.0.0.5:8000")
    with pytest.raises(RenderError, match=match):
        Subnet(**(base | kwargs))


def test_export_options_refused(subnets, reservations):
    with pytest.raises(RenderError, match="interface"):
        render_kea(subnets, reservations, interfaces=["eth0\n"])
    with pytest.raises(RenderError, match="tftp_root"):
        render_dnsmasq(subnets, reservations, tftp_root="/srv/tftp\nport=53")
    with pytest.raises(RenderError, match="loader"):
        BootLoaders(bios="../../etc/passwd")
    with pytest.raises(RenderError, match="loader"):
        BootLoaders(efi_x64="ipxe.efi,evil")


@pytest.mark.parametrize(
    "build",
    [
        lambda: BootTarget(hostname="gpu001\n", **TARGET),
        lambda: BootTarget(hostname="gpu001", **(TARGET | {"mac": "52:54:00:aa:00:01\n"})),
        lambda: BootTarget(hostname="gpu001", **(TARGET | {"serial": "SN1\n"})),
        lambda: Reservation(hostname="gpu001", mac="52:54:00:aa:00:01", ip="10.0.0.11\n"),
        lambda: PhoneHome(callback_url="http://10.0.0.5/cb\n", token="t" * 20),
        lambda: Subnet(cidr="10.0.0.0/24", gateway="10.0.0.1", boot_base_url="http://10.0.0.5\n"),
        lambda: BootLoaders(bios="undionly.kpxe\n"),
    ],
)
def test_trailing_newline_refused(build):
    """Python's `$` matches before a final newline; the validators must not."""
    with pytest.raises(RenderError):
        build()
