"""What slurmctld reads about the fleet, written from the inventory: slurm.conf NodeName
lines (`nodes`), a topology.conf tree (`topology`) and gres.conf GPU lines (`gres`).

Corral knows the hosts, their GPUs, racks and sites; Slurm has to be told. Generating the
three parts keeps them in step with the inventory (a decommissioned node drops out, a new
rack appears as a leaf). Rendering is pure (`render_*` take `SlurmNode` rows), so the test
cluster is started on exactly these lines; `export()` reads the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import OuterRef, Q, Subquery

from inventory.choices import NodeState
from inventory.models import NetworkInterface, Node, Site

from .schedulers.slurm_text import compress_hostlist

PARTS = ("nodes", "topology", "gres")
SPINE = "spine"
UNRACKED = "unracked"
DEVICE_PREFIX = "/dev/nvidia"


class ExportError(Exception):
    """The export cannot be made as asked; the message says what to change."""


@dataclass(frozen=True)
class SlurmNode:
    """One node as the exports see it (no model instance, so tests and the fixture can
    render without a database)."""

    hostname: str
    address: str = ""  # NodeAddr: the boot interface's IP, "" where Corral has none
    gpu_model: str = ""
    gpu_count: int = 0
    cpus: int | None = None
    memory_mb: int | None = None
    inspected: bool = False
    labels: tuple[str, ...] = ()
    site: str = ""  # slug; "" for a node in no rack
    rack: str = ""
    rack_fabric: str = ""
    leaf_switches: tuple[str, ...] = field(default_factory=tuple)


_NOT_SLURM = re.compile(r"[^a-z0-9_-]+")


def slurm_word(name: str) -> str:
    """A name Slurm takes as a Gres type, feature or switch: lowercase, [a-z0-9_-]; any
    other run of characters becomes one "_" ("H100 SXM5/80GB" → "h100_sxm5_80gb")."""
    return _NOT_SLURM.sub("_", name.strip().lower()).strip("_")


def _renamed(names: Iterable[str], what: str) -> list[str]:
    """Comment lines naming every name the Slurm files spell differently from Corral."""
    lines = []
    for name in sorted({n for n in names if n and slurm_word(n) != n}):
        lines.append(f"# {what} {name!r} is written {slurm_word(name)!r} (Slurm takes [a-z0-9_-])")
    return lines


def _where(site: str | None) -> str:
    return f"site {site}" if site else "every site"


def _nodes(count: int) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"


def _defaults_note(node: SlurmNode) -> str | None:
    """Why CPUs or RealMemory are left to Slurm's defaults, if they are: a node not
    inspected yet wants an inspection; one inspected without them has a BMC that does not
    report them, and inspecting again would read the same answer."""
    missing = [
        (what, word)
        for what, word, value in (
            ("CPU cores", "CPUs", node.cpus),
            ("memory", "RealMemory", node.memory_mb),
        )
        if not value
    ]
    if not missing:
        return None
    left = "/".join(word for _, word in missing)
    if not node.inspected:
        return f"# {node.hostname}: not inspected yet, {left} left to Slurm"
    reported = " or ".join(what for what, _ in missing)
    return f"# {node.hostname}: inspected, but its BMC reported no {reported}: {left} left to Slurm"


def render_nodes(nodes: Iterable[SlurmNode], site: str | None = None) -> str:
    """slurm.conf NodeName lines. NodeAddr is written where Corral knows the address:
    without it slurmctld resolves each NodeName, and one its resolver does not know costs
    ~10 s and leaves the node out. CPUs and RealMemory come from inspection; where they
    are missing Slurm's defaults apply, and a comment says why."""
    nodes = sorted(nodes, key=lambda n: n.hostname)
    lines = [f"# slurm.conf NodeName lines from Corral ({_where(site)}): {_nodes(len(nodes))}"]
    lines += _renamed((n.gpu_model for n in nodes if n.gpu_count), "GPU model")
    lines += _renamed((label for n in nodes for label in n.labels), "label")
    for node in nodes:
        words = [f"NodeName={node.hostname}"]
        if node.address:
            words.append(f"NodeAddr={node.address}")
        if node.cpus:
            words.append(f"CPUs={node.cpus}")
        if node.memory_mb:
            words.append(f"RealMemory={node.memory_mb}")
        # A node without GPUs gets no GPU feature, whatever model it was enrolled with.
        gpu_type = slurm_word(node.gpu_model) if node.gpu_count else ""
        if node.gpu_count:
            words.append(
                f"Gres=gpu:{gpu_type}:{node.gpu_count}"
                if gpu_type
                else f"Gres=gpu:{node.gpu_count}"
            )
        features = list(dict.fromkeys(w for w in map(slurm_word, (gpu_type, *node.labels)) if w))
        if features:
            words.append(f"Features={','.join(features)}")
        words.append("State=UNKNOWN")
        if note := _defaults_note(node):
            lines.append(note)
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def _leaf(node: SlurmNode) -> str:
    return slurm_word(f"{node.site}-{node.rack}") if node.rack else UNRACKED


def render_topology(nodes: Iterable[SlurmNode], site: str | None = None) -> str:
    """topology.conf for topology/tree: a leaf switch per rack (its nodes), a switch per
    site over its racks, one spine over the sites. A rack's fabric and physical leaf
    switches are named in a comment: Corral does not know which node hangs off which."""
    nodes = sorted(nodes, key=lambda n: n.hostname)
    leaves: dict[str, list[SlurmNode]] = {}
    for node in nodes:
        leaves.setdefault(_leaf(node), []).append(node)
    lines = [
        f"# topology.conf (TopologyPlugin=topology/tree) from Corral ({_where(site)}):",
        "# one leaf switch per rack, one switch per site over its racks, one spine",
    ]
    sites: dict[str, list[str]] = {}
    for leaf, members in sorted(leaves.items()):
        first = members[0]
        if first.rack:
            notes = [f"rack {first.site}/{first.rack}"]
            if first.rack_fabric:
                notes.append(f"fabric {first.rack_fabric}")
            if first.leaf_switches:
                notes.append(f"leaf switches {', '.join(first.leaf_switches)}")
            lines.append(f"# {leaf}: {'; '.join(notes)}")
            sites.setdefault(slurm_word(first.site), []).append(leaf)
        else:
            lines.append(f"# {leaf}: nodes in no rack")
        lines.append(f"SwitchName={leaf} Nodes={compress_hostlist(n.hostname for n in members)}")
    for site_switch, site_leaves in sorted(sites.items()):
        lines.append(f"SwitchName={site_switch} Switches={compress_hostlist(site_leaves)}")
    top = sorted(sites) + ([UNRACKED] if UNRACKED in leaves else [])
    if top:
        lines.append(f"SwitchName={SPINE} Switches={compress_hostlist(top)}")
    return "\n".join(lines) + "\n"


def render_gres(nodes: Iterable[SlurmNode], site: str | None = None) -> str:
    """gres.conf: each node's GPUs as /dev/nvidia0..N-1 (what the NVIDIA driver creates)."""
    nodes = sorted((n for n in nodes if n.gpu_count), key=lambda n: n.hostname)
    lines = [f"# gres.conf from Corral ({_where(site)}): {_nodes(len(nodes))} with GPUs"]
    lines += _renamed((n.gpu_model for n in nodes), "GPU model")
    for node in nodes:
        files = (
            f"{DEVICE_PREFIX}0"
            if node.gpu_count == 1
            else f"{DEVICE_PREFIX}[0-{node.gpu_count - 1}]"
        )
        gpu_type = slurm_word(node.gpu_model)
        kind = f" Type={gpu_type}" if gpu_type else ""
        lines.append(f"NodeName={node.hostname} Name=gpu{kind} File={files}")
    return "\n".join(lines) + "\n"


RENDERERS = {"nodes": render_nodes, "topology": render_topology, "gres": render_gres}


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None


def slurm_node(node: Node) -> SlurmNode:
    """The export's view of a node: CPUs are logical CPUs (threads, else cores) and memory
    is MiB, as slurm.conf counts them, from the last inspection's hardware facts. The
    address is `export()`'s `boot_ip` annotation: the boot NIC's IP, the one the DHCP
    exports reserve for the host (other NICs' addresses are fabric rails and the like)."""
    facts = node.hardware_facts or {}
    gib = facts.get("memory_gib")
    rack = node.rack
    return SlurmNode(
        hostname=node.hostname,
        address=getattr(node, "boot_ip", None) or "",
        gpu_model=node.gpu_model,
        gpu_count=node.gpu_count,
        cpus=_int(facts.get("cpu_threads")) or _int(facts.get("cpu_cores")),
        memory_mb=_int(int(gib * 1024)) if isinstance(gib, int | float) else None,
        inspected=node.inspected_at is not None,
        labels=tuple(label.name for label in node.labels.all()),
        site=rack.site.slug if rack else "",
        rack=rack.name if rack else "",
        rack_fabric=rack.fabric if rack else "",
        leaf_switches=tuple(str(s) for s in rack.leaf_switches or ()) if rack else (),
    )


def find_site(site: str) -> Site:
    found = Site.objects.filter(Q(slug=site) | Q(name=site)).first()
    if found is None:
        known = ", ".join(Site.objects.values_list("slug", flat=True)) or "none yet"
        raise ExportError(f"no site {site!r} (by slug or name); sites: {known}")
    return found


def export(part: str, site: str | None = None) -> str:
    """One part for the fleet, or for one site (slug or name); decommissioned nodes are
    left out, so the next slurm.conf drops them."""
    if part not in RENDERERS:
        raise ExportError(f"unknown part {part!r}; use one of: {', '.join(PARTS)}")
    nodes = Node.objects.exclude(state=NodeState.DECOMMISSIONED)
    slug = None
    if site:
        slug = find_site(site).slug
        nodes = nodes.filter(rack__site__slug=slug)
    boot_ip = NetworkInterface.objects.filter(node=OuterRef("pk"), boot=True).values("ip")[:1]
    rows = (
        nodes.select_related("rack__site")
        .prefetch_related("labels")
        .annotate(boot_ip=Subquery(boot_ip))
        .order_by("hostname")
    )
    return RENDERERS[part]([slurm_node(n) for n in rows], slug)
