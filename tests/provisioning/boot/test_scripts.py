"""What each script says and, for the unknown-MAC one, what it does not."""

import re

import yaml

from provisioning.boot import (
    BootTarget,
    render_ipxe_chain,
    render_ipxe_deploy,
    render_ipxe_local,
    render_ipxe_unknown,
    render_meta_data,
    render_user_data,
)


def test_unknown_mac_script_reveals_nothing(target, image, phone_home):
    out = render_ipxe_unknown()
    assert out.startswith("#!ipxe\n")
    assert "not enrolled in Corral" in out
    assert out.rstrip().endswith("exit 1")
    assert not re.search(r"https?:|://|\d+\.\d+\.\d+\.\d+", out)
    for secret in (
        target.hostname,
        target.mac,
        target.serial,
        image.name,
        phone_home.token,
        "kernel",
        "chain",
        "initrd",
    ):
        assert secret not in out


def test_deploy_script(target, image, phone_home):
    out = render_ipxe_deploy(target, image, phone_home)
    lines = out.splitlines()
    assert lines[0] == "#!ipxe"
    kernel = next(line for line in lines if line.startswith("kernel "))
    assert kernel.endswith("|| goto failed")
    assert f"corral.callback={phone_home.callback_url}" in kernel
    assert f"corral.token={phone_home.token}" in kernel
    assert f"initrd --name initrd {image.initrd_url} || goto failed" in lines
    assert "boot || goto failed" in lines
    assert ":failed" in lines and ":give_up" in lines


def test_local_boot_script(target):
    out = render_ipxe_local(target)
    assert "sanboot --no-describe --drive 0x80" in out
    assert "iseq ${platform} efi && goto efi ||" in out
    assert out.rstrip().endswith(":efi\nexit 1")


def test_chain_script_expands_on_the_client():
    out = render_ipxe_chain("http://10.0.0.5:8000/")
    assert (
        "chain --replace --autofree http://10.0.0.5:8000/boot/ipxe?mac=${netX/mac}"
        "&uuid=${uuid}&serial=${serial:uristring}&arch=${buildarch}"
    ) in out


def test_user_data_is_valid_cloud_config(target, image, phone_home):
    out = render_user_data(target, image, phone_home)
    assert out.startswith("#cloud-config\n")
    data = yaml.safe_load(out)
    assert data["hostname"] == "gpu001"
    netplan = yaml.safe_load(data["write_files"][0]["content"])
    assert netplan["network"]["ethernets"] == {
        "rail0": {"addresses": ["10.1.0.1/31"]},
        "rail1": {"addresses": ["10.1.1.1/31"]},
    }
    curl = data["runcmd"][-1]
    assert curl[0] == "curl" and curl[-1] == phone_home.callback_url
    assert "--retry" in curl and "--fail" in curl
    body = yaml.safe_load(curl[curl.index("--data") + 1])
    assert body == {
        "hostname": "gpu001",
        "image": "ubuntu-gpu",
        "token": phone_home.token,
        "version": "2025.06.1",
    }


def test_user_data_without_fabric(image, phone_home):
    target = BootTarget(
        hostname="123", mac="52:54:00:aa:00:01", ip=None, serial="SN1", arch="arm64", site="dc1"
    )
    data = yaml.safe_load(render_user_data(target, image, phone_home))
    assert data["hostname"] == "123"  # quoted: YAML would otherwise make it an int
    assert "write_files" not in data
    assert len(data["runcmd"]) == 1


def test_meta_data(target, phone_home):
    data = yaml.safe_load(render_meta_data(target, phone_home))
    assert data["local-hostname"] == "gpu001"
    assert data["instance-id"].startswith("corral-gpu001-")
    assert phone_home.token not in data["instance-id"]
