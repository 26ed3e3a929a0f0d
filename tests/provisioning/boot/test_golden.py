"""Exact output per format for one fixed input. UPDATE_GOLDEN=1 rewrites the files;
review the diff before committing it."""

import pytest

from provisioning import boot

from .conftest import GOLDEN, UPDATE

FORMATS = {
    "deploy.ipxe": lambda t, i, d, s, r: boot.render_ipxe_deploy(t, i, d),
    "local.ipxe": lambda t, i, d, s, r: boot.render_ipxe_local(t),
    "unknown.ipxe": lambda t, i, d, s, r: boot.render_ipxe_unknown(),
    "chain.ipxe": lambda t, i, d, s, r: boot.render_ipxe_chain(s[0].boot_base_url),
    "grub.cfg": lambda t, i, d, s, r: boot.render_grub(t, i, d),
    "meta-data": lambda t, i, d, s, r: boot.render_meta_data(t, d),
    "user-data": lambda t, i, d, s, r: boot.render_user_data(t, i, d),
    "kea-dhcp4.json": lambda t, i, d, s, r: boot.render_kea(s, r),
    "dnsmasq.conf": lambda t, i, d, s, r: boot.render_dnsmasq(s, r),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_golden(name, target, image, phone_home, subnets, reservations):
    out = FORMATS[name](target, image, phone_home, subnets, reservations)
    path = GOLDEN / name
    if UPDATE:
        path.write_text(out)
    assert path.exists(), f"no golden file {path}; run with UPDATE_GOLDEN=1"
    assert out == path.read_text()


def test_rendering_is_deterministic(target, image, phone_home, subnets, reservations):
    for render in FORMATS.values():
        args = (target, image, phone_home, subnets, reservations)
        assert render(*args) == render(*args)
