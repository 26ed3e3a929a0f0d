"""Every API viewset, declared once: the role table, valid bodies, pinned query counts.

ACCESS is issue #16's role table by hand, checked against docs/roles.md (generated from the
code): reads need `view`; inventory writes `write`; actions and RMA work `act`; profiles,
images, subnets, baselines, webhooks, prices and every delete are admin's."""

from __future__ import annotations

import json

from auditlog.models import LogEntry

from day2 import campaigns
from day2.models import Campaign
from drift.models import Baseline, DriftEvent
from health.models import HealthEvent, HealthPolicy
from inventory.models import LifecycleEvent, NetworkInterface, Node, Operation, Rack, Site
from provisioning.models import BootRequest, Deployment, Image, Subnet
from reports.models import GpuPrice
from rma.models import Case
from tests.api.app_specs import APP_SPECS
from tests.api.base import ACTORS, ADMINS, OPS, READERS, WRITERS, ViewSetSpec
from tests.drift.factories import BaselineFactory, DriftEventFactory
from tests.factories import (
    SHIPPED_PROFILE,
    BootRequestFactory,
    CheckResultFactory,
    DeploymentFactory,
    DraftImageFactory,
    GateProfileFactory,
    GateRunFactory,
    ImageFactory,
    InterfaceFactory,
    LifecycleEventFactory,
    NodeFactory,
    OperationFactory,
    RackFactory,
    RMACaseFactory,
    SiteFactory,
    SubnetFactory,
    audited,
)
from tests.health.factories import make_event, make_policy
from tests.webhooks.factories import make_subscription
from validation.models import CheckResult, GateProfile, GateRun
from webhooks.models import WebhookSubscription

R, W, A, D = READERS, WRITERS, ACTORS, ADMINS
ACCESS: dict[str, tuple[frozenset[str], ...]] = {
    # basename        list retrieve create update delete   (who passes the permission check)
    "site": (R, R, W, W, D),
    "rack": (R, R, W, W, D),
    "node": (R, R, W, W, D),
    "networkinterface": (R, R, W, W, D),
    "lifecycleevent": (R, R, W, W, D),
    "operation": (R, R, A, A, D),  # cancel (a chain) is the one write: act
    "rma-case": (R, R, A, A, D),  # technicians work the RMA queue too
    "image": (R, R, D, D, D),  # what every node boots: admins only
    "deployment": (R, R, W, W, D),
    "bootrequest": (R, R, W, W, D),
    "subnet": (R, R, D, D, D),
    "gateprofile": (R, R, D, D, D),  # the thresholds nodes are admitted on
    "gaterun": (R, R, W, W, D),
    "checkresult": (R, R, W, W, D),
    "webhook": (R, R, D, D, D),  # where the fleet's events are sent
    "baseline": (R, R, D, D, D),  # what every node is held to
    "drift-event": (R, R, W, W, D),
    "gpu-price": (R, R, D, D, D),  # what revenue is priced at
    "health-event": (R, R, A, A, D),  # agents (integration tokens) and technicians report
    "health-policy": (R, R, D, D, D),  # what starts recycles and RMAs by itself
    # Who changed credentials and roles, and when: admins only, and read-only for them too.
    "audit-log": (D, D, D, D, D),
    "campaign": (R, R, A, A, D),  # a rolling reimage is many actions: act
    # Evidence and what BMCs flash (admins), the fleet's applies: in their apps' folders.
    **{s.basename: s.access for s in APP_SPECS},
}
READ_ONLY = frozenset({"list", "retrieve"})


def node_body() -> dict:
    return {
        "rack": RackFactory().pk,
        "rack_unit": 1,
        "u_height": 4,
        "serial": "SN-API-NEW",
        "hostname": "gpu-api-new",
        "model": "HGX H100 8-GPU",
        "gpu_model": "H100-SXM",
        "gpu_count": 8,
        "bmc": {
            "protocol": "redfish",
            "address": "https://10.9.0.21",
            "username": "admin",
            "password": "new-bmc-pass",
        },
        "interfaces": [{"mac": "52:54:00:ee:00:01", "boot": True, "ip": "10.9.1.11"}],
    }


def image_body() -> dict:
    return {
        "name": "rocky-gpu",
        "version": "9.5.0",
        "kernel_url": "http://10.0.0.5/img/rocky/vmlinuz",
        "initrd_url": "http://10.0.0.5/img/rocky/initrd.img",
        "kernel_sha256": "a" * 64,
        "initrd_sha256": "b" * 64,
    }


def profile_spec(name: str, **changes) -> dict:
    return {**json.loads(SHIPPED_PROFILE.read_text()), "name": name, **changes}


def spec(basename: str, **fields) -> ViewSetSpec:
    return ViewSetSpec(basename=basename, access=ACCESS[basename], **fields)


SITES = spec(
    "site",
    url="/api/v1/sites/",
    model=Site,
    make=SiteFactory,
    create=lambda: {"name": "Hall API", "slug": "hall-api"},
    update=lambda site: {"description": "east wing, row B"},
    list_queries=6,
    detail_queries=5,
)
RACKS = spec(
    "rack",
    url="/api/v1/racks/",
    model=Rack,
    make=RackFactory,
    create=lambda: {"site": SiteFactory().pk, "name": "r-api", "u_height": 42},
    update=lambda rack: {"row": "B", "fabric": "ib-400g"},
    list_queries=6,
    detail_queries=5,
)
NODES = spec(
    "node",
    url="/api/v1/nodes/",
    model=Node,
    make=NodeFactory,
    create=node_body,
    update=lambda node: {"model": "HGX H200 8-GPU", "gpu_count": 4},
    list_queries=8,
    detail_queries=7,  # + labels, interfaces (prefetched)
)
INTERFACES = spec(
    "networkinterface",
    url="/api/v1/interfaces/",
    model=NetworkInterface,
    make=lambda: InterfaceFactory(node=NodeFactory(nic=None)),
    create=lambda: {"node": NodeFactory(nic=None).pk, "mac": "52:54:00:ee:00:02", "boot": True},
    update=lambda nic: {"fabric_rail": 3, "name": "eth0"},
    list_queries=6,
    detail_queries=5,
)
EVENTS = spec(
    "lifecycleevent",
    url="/api/v1/events/",
    model=LifecycleEvent,
    make=LifecycleEventFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)
OPERATIONS = spec(
    "operation",
    url="/api/v1/operations/",
    model=Operation,
    make=OperationFactory,
    offers=READ_ONLY,
    list_queries=7,
    detail_queries=6,  # + children (prefetched)
)
RMA_CASES = spec(
    "rma-case",
    url="/api/v1/rma-cases/",
    model=Case,
    make=RMACaseFactory,
    offers=frozenset({"list", "retrieve", "update"}),
    update=lambda case: {"ticket": "VEND-4711", "vendor": "Supermicro", "priority": "p1"},
    list_queries=7,  # + parts (prefetched)
    detail_queries=6,
)
IMAGES = spec(
    "image",
    url="/api/v1/images/",
    model=Image,
    make=DraftImageFactory,
    create=image_body,
    update=lambda image: {"cmdline": "console=ttyS0 corral.token={token}"},
    list_queries=6,
    detail_queries=5,
)
DEPLOYMENTS = spec(
    "deployment",
    url="/api/v1/deployments/",
    model=Deployment,
    make=DeploymentFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)
BOOT_REQUESTS = spec(
    "bootrequest",
    url="/api/v1/boot-requests/",
    model=BootRequest,
    make=BootRequestFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)
SUBNETS = spec(
    "subnet",
    url="/api/v1/subnets/",
    model=Subnet,
    make=SubnetFactory,
    create=lambda: {
        "site": SiteFactory().pk,
        "cidr": "10.250.0.0/24",
        "gateway": "10.250.0.1",
        "boot_base_url": "http://10.250.0.5:8000",
    },
    update=lambda subnet: {"boot_base_url": "http://10.20.0.6:8000"},
    list_queries=6,
    detail_queries=5,
)
GATE_PROFILES = spec(
    "gateprofile",
    url="/api/v1/gate-profiles/",
    model=GateProfile,
    make=GateProfileFactory,
    create=lambda: {"name": "api-profile", "spec": profile_spec("api-profile")},
    update=lambda p: {"spec": profile_spec(p.name, title="Renamed over the API")},
    list_queries=6,
    detail_queries=5,
)
GATE_RUNS = spec(
    "gaterun",
    url="/api/v1/gate-runs/",
    model=GateRun,
    make=GateRunFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)
CHECK_RESULTS = spec(
    "checkresult",
    url="/api/v1/check-results/",
    model=CheckResult,
    make=CheckResultFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)
WEBHOOKS = spec(
    "webhook",
    url="/api/v1/webhooks/",
    model=WebhookSubscription,
    make=make_subscription,
    create=lambda: {"url": "https://tickets.example.net/hook", "events": ["gate.finished"]},
    update=lambda sub: {"description": "ticketing", "events": ["operation.finished"]},
    list_queries=6,
    detail_queries=5,
)
BASELINES = spec(
    "baseline",
    url="/api/v1/baselines/",
    model=Baseline,
    make=BaselineFactory,
    create=lambda: {
        "name": "hgx-h200",
        "node_model": "HGX H200 8-GPU",
        "components": {"firmware.BMC": "1.45", "gpu.vbios": ["96.00.89.00.01"]},
    },
    update=lambda b: {"description": "Nov 2026 roll-out", "gpu_model": "H200-SXM"},
    list_queries=6,
    detail_queries=5,
)
DRIFT_EVENTS = spec(
    "drift-event",
    url="/api/v1/drift/events/",
    model=DriftEvent,
    make=DriftEventFactory,
    offers=READ_ONLY,
    list_queries=6,
    detail_queries=5,
)

GPU_PRICES = spec(
    "gpu-price",
    url="/api/v1/reports/prices/",
    model=GpuPrice,
    make=lambda: GpuPrice.objects.create(gpu_model="H100-SXM", price_per_gpu_hour="2.5000"),
    create=lambda: {"gpu_model": "B200", "price_per_gpu_hour": "3.9000", "currency": "EUR"},
    update=lambda p: {"price_per_gpu_hour": "2.7500"},
    list_queries=6,
    detail_queries=5,
)
AUDIT_LOG = spec(
    "audit-log",
    url="/api/v1/audit-log/",
    model=LogEntry,
    make=lambda: LogEntry.objects.get_for_object(audited(SiteFactory)).get(),  # its create
    offers=READ_ONLY,
    list_queries=6,  # the entries' content types and actors are joined in
    detail_queries=5,
)
HEALTH_EVENTS = spec(
    "health-event",
    url="/api/v1/health-events/",
    model=HealthEvent,
    make=make_event,
    offers=frozenset({"list", "retrieve", "create"}),
    create=lambda: {
        "events": [
            {"node": NodeFactory().hostname, "source": "dcgm-exporter", "kind": "xid", "code": 13}
        ]
    },
    created_ids=lambda rows: {row["id"] for row in rows},  # type: ignore[attr-defined]
    list_queries=6,  # node, rack, site, policy and operation joined in
    detail_queries=5,
)
HEALTH_POLICIES = spec(
    "health-policy",
    url="/api/v1/health-policies/",
    model=HealthPolicy,
    make=make_policy,
    create=lambda: {"kind": "nvlink", "match": "74", "action": "rma", "priority": 7},
    update=lambda row: {"priority": 8, "note": "bad batch of NVSwitch trays"},
    list_queries=6,
    detail_queries=5,
)


def campaign_body() -> dict:
    rack = RackFactory()
    NodeFactory(rack=rack, rack_unit=1, state="in_service")
    return {"name": "api", "image": str(ImageFactory().pk), "selection": {"rack": rack.pk}}


def make_campaign() -> Campaign:
    rack = RackFactory()
    return campaigns.create(
        name="spec",
        image_ref=ImageFactory().pk,
        selection={"nodes": [NodeFactory(rack=rack, rack_unit=3).pk]},
        actor="user:spec",
    )


CAMPAIGNS = spec(
    "campaign",
    url="/api/v1/campaigns/",
    model=Campaign,
    make=make_campaign,
    create=campaign_body,
    offers=frozenset({"list", "retrieve", "create"}),
    list_queries=8,
    detail_queries=7,
)

SPECS = (
    SITES,
    RACKS,
    NODES,
    INTERFACES,
    EVENTS,
    OPERATIONS,
    RMA_CASES,
    IMAGES,
    DEPLOYMENTS,
    BOOT_REQUESTS,
    SUBNETS,
    GATE_PROFILES,
    GATE_RUNS,
    CHECK_RESULTS,
    WEBHOOKS,
    BASELINES,
    DRIFT_EVENTS,
    GPU_PRICES,
    HEALTH_EVENTS,
    HEALTH_POLICIES,
    AUDIT_LOG,
    CAMPAIGNS,
    *APP_SPECS,
)
assert {s.basename for s in SPECS} == set(ACCESS) and all(
    len(r) == len(OPS) for r in ACCESS.values()
)
