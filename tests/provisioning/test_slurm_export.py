"""Slurm exports from the inventory: the lines, the command, the API, and slurmctld itself
started on what `export_slurm` printed for factory nodes."""

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from inventory.models import Label
from provisioning.slurm_export import SlurmNode, render_nodes
from tests.factories import InterfaceFactory, NodeFactory, RackFactory, SiteFactory
from tests.peers.slurm import running_slurm

pytestmark = pytest.mark.django_db

INSPECTED = {"cpu_count": 2, "cpu_cores": 112, "cpu_threads": 224, "memory_gib": 2048}


@pytest.fixture
def fleet(rack):
    """dc1: r01 (two nodes, one inspected, labelled) and r02 (a node with an awkward GPU
    model name); dc2: one node; one decommissioned node in dc1.

    Only gpu001's boot interface has an address; it is a loopback one (127.0.0.2) so the
    real slurmctld below reaches gpu001's slurmd at exactly what was exported. gpu002's
    address is on a NIC that does not boot; the others' boot NICs have none."""
    rack.fabric, rack.leaf_switches = "ib-400g", ["leaf-a01", "leaf-a02"]
    rack.save()
    r02 = RackFactory(site=rack.site, name="r02")
    gpu001 = NodeFactory(
        rack=rack, hostname="gpu001", hardware_facts=INSPECTED, nic__ip="127.0.0.2"
    )
    InterfaceFactory(node=gpu001, name="ib0", boot=False, ip="127.0.0.9")
    gpu002 = NodeFactory(rack=rack, hostname="gpu002")  # its boot NIC has no address
    InterfaceFactory(node=gpu002, name="ib0", boot=False, ip="127.0.0.3")
    NodeFactory(rack=r02, hostname="gpu003", gpu_model="H100 SXM5/80GB", gpu_count=4)
    NodeFactory(
        rack=RackFactory(site=SiteFactory(name="DC two", slug="dc2"), name="r01"),
        hostname="gpu004",
        gpu_model="",
        gpu_count=1,
    )
    NodeFactory(rack=rack, hostname="gpu005", state="decommissioned")
    NodeFactory(rack=None, hostname="spare01", gpu_count=0)
    gpu001 = rack.nodes.get(hostname="gpu001")
    gpu001.labels.add(Label.objects.create(name="burnin:passed"), Label.objects.create(name="ib"))
    return rack


def export(part, site=None, capsys=None) -> list[str]:
    call_command("export_slurm", "--part", part, *(["--site", site] if site else []))
    return capsys.readouterr().out.splitlines()


def test_nodes_lines(fleet, capsys):
    lines = export("nodes", capsys=capsys)
    assert lines[0] == "# slurm.conf NodeName lines from Corral (every site): 5 nodes"
    assert (
        "# GPU model 'H100 SXM5/80GB' is written 'h100_sxm5_80gb' (Slurm takes [a-z0-9_-])" in lines
    )
    assert "# label 'burnin:passed' is written 'burnin_passed' (Slurm takes [a-z0-9_-])" in lines
    nodes = [line for line in lines if line.startswith("NodeName=")]
    assert nodes == [
        "NodeName=gpu001 NodeAddr=127.0.0.2 CPUs=224 RealMemory=2097152 Gres=gpu:h100-sxm:8 "
        "Features=h100-sxm,burnin_passed,ib State=UNKNOWN",
        "NodeName=gpu002 Gres=gpu:h100-sxm:8 Features=h100-sxm State=UNKNOWN",
        "NodeName=gpu003 Gres=gpu:h100_sxm5_80gb:4 Features=h100_sxm5_80gb State=UNKNOWN",
        "NodeName=gpu004 Gres=gpu:1 State=UNKNOWN",
        "NodeName=spare01 State=UNKNOWN",
    ]
    assert "# gpu002: not inspected yet, CPUs/RealMemory left to Slurm" in lines
    assert not [line for line in lines if "gpu005" in line]  # decommissioned


def test_topology_is_a_tree_of_racks_sites_and_a_spine(fleet, capsys):
    lines = [line for line in export("topology", capsys=capsys) if not line.startswith("# t")]
    assert lines == [
        "# one leaf switch per rack, one switch per site over its racks, one spine",
        "# dc1-r01: rack dc1/r01; fabric ib-400g; leaf switches leaf-a01, leaf-a02",
        "SwitchName=dc1-r01 Nodes=gpu[001-002]",
        "# dc1-r02: rack dc1/r02",
        "SwitchName=dc1-r02 Nodes=gpu003",
        "# dc2-r01: rack dc2/r01",
        "SwitchName=dc2-r01 Nodes=gpu004",
        "# unracked: nodes in no rack",
        "SwitchName=unracked Nodes=spare01",
        "SwitchName=dc1 Switches=dc1-r[01-02]",
        "SwitchName=dc2 Switches=dc2-r01",
        "SwitchName=spine Switches=dc[1-2],unracked",
    ]


def test_gres_lines(fleet, capsys):
    lines = export("gres", capsys=capsys)
    assert [line for line in lines if not line.startswith("#")] == [
        "NodeName=gpu001 Name=gpu Type=h100-sxm File=/dev/nvidia[0-7]",
        "NodeName=gpu002 Name=gpu Type=h100-sxm File=/dev/nvidia[0-7]",
        "NodeName=gpu003 Name=gpu Type=h100_sxm5_80gb File=/dev/nvidia[0-3]",
        "NodeName=gpu004 Name=gpu File=/dev/nvidia0",
    ]


def test_site_filter_by_slug_or_name(fleet, capsys):
    by_slug = export("topology", site="dc2", capsys=capsys)
    assert by_slug == export("topology", site="DC two", capsys=capsys)
    assert by_slug[-3:] == [
        "SwitchName=dc2-r01 Nodes=gpu004",
        "SwitchName=dc2 Switches=dc2-r01",
        "SwitchName=spine Switches=dc2",
    ]
    nodes = export("nodes", site="dc1", capsys=capsys)
    assert nodes[0] == "# slurm.conf NodeName lines from Corral (site dc1): 3 nodes"
    assert export("nodes", site="dc2", capsys=capsys)[0] == (
        "# slurm.conf NodeName lines from Corral (site dc2): 1 node"
    )
    assert export("gres", site="dc2", capsys=capsys)[0] == (
        "# gres.conf from Corral (site dc2): 1 node with GPUs"
    )


def test_an_inspected_node_without_cpus_or_memory_says_what_its_bmc_left_out(rack, capsys):
    """Inspection ran, but the BMC's answer lacked the figures: 'not inspected yet' would
    send the operator to inspect again, which reads the same BMC."""
    now = timezone.now()
    NodeFactory(rack=rack, hostname="gpu001", inspected_at=now, hardware_facts={"gpus": []})
    NodeFactory(rack=rack, hostname="gpu002", inspected_at=now, hardware_facts={"cpu_cores": 64})
    NodeFactory(rack=rack, hostname="gpu003", inspected_at=now, hardware_facts={"memory_gib": 512})
    NodeFactory(rack=rack, hostname="gpu004")
    comments = [line for line in export("nodes", capsys=capsys) if line.startswith("# gpu")]
    assert comments == [
        "# gpu001: inspected, but its BMC reported no CPU cores or memory: "
        "CPUs/RealMemory left to Slurm",
        "# gpu002: inspected, but its BMC reported no memory: RealMemory left to Slurm",
        "# gpu003: inspected, but its BMC reported no CPU cores: CPUs left to Slurm",
        "# gpu004: not inspected yet, CPUs/RealMemory left to Slurm",
    ]


def test_node_addr_is_written_only_where_corral_knows_it():
    """The renderer alone: a node without an address gets no NodeAddr (Slurm then
    resolves its NodeName, as before)."""
    lines = render_nodes(
        [SlurmNode(hostname="a1", address="10.0.0.5"), SlurmNode(hostname="a2")]
    ).splitlines()
    assert "NodeName=a1 NodeAddr=10.0.0.5 State=UNKNOWN" in lines
    assert "NodeName=a2 State=UNKNOWN" in lines


def test_nodes_export_queries_do_not_grow_with_the_fleet(fleet, capsys, django_assert_num_queries):
    """Addresses and labels come with the nodes, not a query per node."""
    export("nodes", capsys=capsys)
    with django_assert_num_queries(2) as small:  # the nodes (with addresses), labels
        export("nodes", capsys=capsys)
    for i in range(6, 12):
        NodeFactory(rack=fleet, hostname=f"gpu{i:03d}", nic__ip=f"10.1.0.{i}")
    with django_assert_num_queries(len(small.captured_queries)):
        export("nodes", capsys=capsys)


def test_command_refuses_an_unknown_site_naming_the_known_ones(fleet):
    with pytest.raises(CommandError, match="no site 'dc9' \\(by slug or name\\); sites: dc1, dc2"):
        call_command("export_slurm", "--part", "nodes", "--site", "dc9")


def test_api_serves_text_and_explains_bad_requests(api, fleet):
    resp = api("manager").get("/api/v1/exports/slurm/gres/", {"site": "dc1"})
    assert resp.status_code == 200 and resp["Content-Type"] == "text/plain; charset=utf-8"
    assert b"NodeName=gpu003 Name=gpu Type=h100_sxm5_80gb" in resp.content
    assert b"gpu004" not in resp.content
    nodes = api("technician").get("/api/v1/exports/slurm/nodes/", {"site": "dc1"})
    assert b"NodeName=gpu001 NodeAddr=127.0.0.2 " in nodes.content

    bad_part = api("manager").get("/api/v1/exports/slurm/partitions/")
    assert bad_part.status_code == 404
    assert bad_part.json()["detail"] == "No part 'partitions'; parts: nodes, topology, gres."
    bad_site = api("manager").get("/api/v1/exports/slurm/nodes/", {"site": "dc9"})
    assert bad_site.status_code == 400
    assert bad_site.json()["site"] == ["No site with slug or name 'dc9'; sites: dc1, dc2."]
    assert api(None).get("/api/v1/exports/slurm/nodes/").status_code == 401


def test_schema_declares_text_plain(api):
    schema = api("manager").get("/api/schema/", {"format": "json"}).json()
    get = schema["paths"]["/api/v1/exports/slurm/{part}/"]["get"]
    assert "text/plain" in get["responses"]["200"]["content"]


def test_slurmctld_starts_on_the_exported_files(fleet, capsys, tmp_path):
    """What export_slurm printed, with only loopback addresses added where Corral wrote
    none, is a cluster that comes up: every node idle (gpu001 reached at the NodeAddr
    Corral exported), the GPU types and the topology as exported."""
    parts = {
        part: "\n".join(export(part, site="dc1", capsys=capsys)) + "\n"
        for part in ("nodes", "topology", "gres")
    }
    names = ["gpu001", "gpu002", "gpu003"]
    with running_slurm(tmp_path, parts["nodes"], parts["topology"], parts["gres"], names) as c:
        sinfo = c.run("sinfo", "-N", "-h", "-o", "%N %T %G").stdout.splitlines()
        assert sinfo == [
            "gpu001 idle gpu:h100-sxm:8",
            "gpu002 idle gpu:h100-sxm:8",
            "gpu003 idle gpu:h100_sxm5_80gb:4",
        ]
        addrs = c.run("sinfo", "-N", "-h", "-o", "%N %o").stdout.splitlines()
        assert addrs == ["gpu001 127.0.0.2", "gpu002 127.0.0.1", "gpu003 127.0.0.1"]
        topology = c.run("scontrol", "show", "topology").stdout
        assert "SwitchName=dc1-r01 Level=0" in topology and "Nodes=gpu[001-002]" in topology
        assert "SwitchName=spine Level=2" in topology
