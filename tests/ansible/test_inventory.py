"""The inventory plugin corral.fleet.corral run by the real `ansible-inventory` against a
real Corral: one host per node, grouped by site, rack, state, GPU model and label, the
corral_* host variables with the boot IP as ansible_host, compose and keyed_groups, the
site filter, decommissioned nodes left out, and never a BMC password."""

from __future__ import annotations

import json

import pytest

from inventory.models import Label
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.util import free_port

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "s3cret-bmc-pass"  # tests.factories.BMCFactory's


def labelled(node, *names: str):
    node.labels.set([Label.objects.get_or_create(name=name)[0] for name in names])
    return node


def walk_keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from walk_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from walk_keys(inner)


def test_inventory_groups_hostvars_filters_and_no_password(ansible, corral_web, users):
    from tests.conftest import token_for

    dc1, dc2 = SiteFactory(slug="dc1"), SiteFactory(slug="dc2")
    r01 = RackFactory(site=dc1, name="r01")
    r02 = RackFactory(site=dc1, name="r02")
    gx1 = NodeFactory(
        rack=r01, rack_unit=1, hostname="gx-001", serial="SN-1", state="in_service",
        nic__ip="10.30.0.11", nic__name="eno1", bmc__address="https://10.20.0.11",
    )  # fmt: skip
    labelled(gx1, "pool-a", "env=prod")
    gx2 = NodeFactory(
        rack=r02, rack_unit=5, hostname="gx-002", serial="SN-2", state="failed",
        gpu_model="H200-SXM", gpu_count=4,
    )  # fmt: skip
    labelled(gx2, "pool-a")
    NodeFactory(rack=RackFactory(site=dc2, name="r07"), hostname="gy-001", serial="SN-3")
    NodeFactory(rack=r01, rack_unit=9, hostname="gx-old", serial="SN-4", state="decommissioned")
    manager = token_for(users["manager"])  # reading needs no more than a manager's role

    ansible.write(
        "dc1.corral.yml",
        {
            "plugin": "corral.fleet.corral",
            "token": "{{ lookup('ansible.builtin.env', 'CORRAL_READ_TOKEN') }}",  # a template
            "sites": ["dc1"],
            "compose": {"big": "corral_gpu_count >= 8"},
            "keyed_groups": [{"key": "corral_role", "prefix": "role"}],
            "groups": {"failing": "corral_state == 'failed'"},
        },
    )
    ran = ansible(
        "ansible-inventory", "-i", "dc1.corral.yml", "--list",
        CORRAL_URL=f"{corral_web}/api/v1/", CORRAL_READ_TOKEN=manager,
        ANSIBLE_INVENTORY_UNPARSED_FAILED="1",
    )  # fmt: skip
    assert ran.code == 0, ran.text
    assert PASSWORD not in ran.unwrapped
    assert manager not in ran.unwrapped
    found = json.loads(ran.out)
    hostvars = found["_meta"]["hostvars"]
    assert sorted(hostvars) == ["gx-001", "gx-002"]  # dc1 only; the decommissioned one left out
    assert "password" not in set(walk_keys(hostvars))

    def hosts(group: str) -> list[str]:
        return sorted(found.get(group, {}).get("hosts", []))

    assert hosts("site_dc1") == ["gx-001", "gx-002"]
    assert hosts("rack_dc1_r01") == ["gx-001"]
    assert hosts("rack_dc1_r02") == ["gx-002"]
    assert hosts("state_in_service") == ["gx-001"]
    assert hosts("state_failed") == ["gx-002"]
    assert hosts("gpu_h100_sxm") == ["gx-001"]
    assert hosts("gpu_h200_sxm") == ["gx-002"]
    assert hosts("label_pool_a") == ["gx-001", "gx-002"]
    assert hosts("label_env_prod") == ["gx-001"]
    assert hosts("role_compute") == ["gx-001", "gx-002"]  # keyed_groups
    assert hosts("failing") == ["gx-002"]  # groups
    assert not hosts("site_dc2") and not hosts("state_decommissioned")

    one = hostvars["gx-001"]
    assert one["ansible_host"] == "10.30.0.11"  # the boot interface's IP
    assert one["corral_id"] == gx1.pk
    assert (one["corral_serial"], one["corral_state"]) == ("SN-1", "in_service")
    assert (one["corral_site"], one["corral_rack"], one["corral_rack_unit"]) == ("dc1", "r01", 1)
    assert (one["corral_gpu_model"], one["corral_gpu_count"]) == ("H100-SXM", 8)
    assert sorted(one["corral_labels"]) == ["env=prod", "pool-a"]
    assert one["corral_bmc_address"] == "https://10.20.0.11"
    assert one["corral_bmc"] == {
        "protocol": "redfish", "address": "https://10.20.0.11", "port": None, "username": "admin"
    }  # fmt: skip
    assert one["big"] is True  # compose
    assert hostvars["gx-002"]["big"] is False
    assert "ansible_host" not in hostvars["gx-002"]  # its interface has no IP

    # With Ansible's inventory cache, a second run is answered from the cache (Corral is
    # not asked: here it could not be reached), which holds neither token nor password.
    cache = ansible.root / "cache"
    ansible.write(
        "cached.corral.yml",
        {
            "plugin": "corral.fleet.corral",
            "cache": True,
            "cache_plugin": "ansible.builtin.jsonfile",
            "cache_connection": str(cache),
        },
    )
    for url in (corral_web, f"http://127.0.0.1:{free_port()}"):
        cached = ansible(
            "ansible-inventory", "-i", "cached.corral.yml", "--list",
            CORRAL_URL=url, CORRAL_TOKEN=manager, ANSIBLE_INVENTORY_UNPARSED_FAILED="1",
        )  # fmt: skip
        assert cached.code == 0, cached.text
        assert sorted(json.loads(cached.out)["_meta"]["hostvars"]) == ["gx-001", "gx-002", "gy-001"]
    stored = "".join(path.read_text() for path in cache.iterdir())
    assert "gy-001" in stored and manager not in stored and PASSWORD not in stored

    # A refused token: the inventory fails naming why, and never shows the token.
    refused = ansible(
        "ansible-inventory", "-i", "dc1.corral.yml", "--list",
        CORRAL_URL=corral_web, CORRAL_READ_TOKEN="not-a-token",
        ANSIBLE_INVENTORY_UNPARSED_FAILED="1",
    )  # fmt: skip
    assert refused.code != 0
    assert "the token was refused" in " ".join(refused.err.split())  # warnings are wrapped
    assert "not-a-token" not in refused.unwrapped
