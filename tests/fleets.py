"""Large fleets for the tests that measure how a page or a query grows (query counts), made
with one INSERT per table instead of one factory call per node: 990 nodes took 12 s one by
one and prove nothing more than the bulk-made ones (the pages read rows, not how they got
there). Same shape as NodeFactory: each node with a BMC and a boot NIC."""

from __future__ import annotations

from inventory.models import BMC, Label, NetworkInterface, Node, Rack, Site


def grow_fleet(site: Site, n: int, prefix: str, labels: tuple[str, ...] = ("h100", "prod")) -> None:
    """n nodes over racks of 10 (4U each), each with a BMC, a NIC and the labels."""
    tags = [Label.objects.get_or_create(name=x)[0] for x in labels]
    racks = Rack.objects.bulk_create(
        Rack(site=site, name=f"{prefix}{i:03d}") for i in range((n + 9) // 10)
    )
    nodes = Node.objects.bulk_create(
        Node(
            rack=racks[i // 10],
            rack_unit=(i % 10) * 4 + 1,
            u_height=4,
            serial=f"SN-{prefix}{i:06d}",
            hostname=f"{prefix}-gpu{i:05d}",
            model="HGX H100 8-GPU",
            gpu_model="H100-SXM",
            gpu_count=8,
        )
        for i in range(n)
    )
    BMC.objects.bulk_create(
        BMC(
            node=node,
            protocol="redfish",
            address=f"https://10.{100 + len(prefix)}.{i // 250}.{i % 250 + 1}",
            username="admin",
            password="s3cret-bmc-pass",
        )
        for i, node in enumerate(nodes)
    )
    NetworkInterface.objects.bulk_create(
        NetworkInterface(node=node, mac=_mac(prefix, i), boot=True) for i, node in enumerate(nodes)
    )
    through = Node.labels.through
    through.objects.bulk_create(
        through(node_id=node.pk, label_id=tag.pk) for node in nodes for tag in tags
    )


def _mac(prefix: str, i: int) -> str:
    tag = sum(map(ord, prefix)) & 255
    return f"52:55:{tag:02x}:{(i >> 16) & 255:02x}:{(i >> 8) & 255:02x}:{i & 255:02x}"
