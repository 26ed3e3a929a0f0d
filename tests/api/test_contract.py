"""The API as a whole: every route is declared (a new one cannot slip in untested), the
routes beyond CRUD follow the role table, and no response ever carries a secret."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import get_resolver
from django.utils import timezone

from inventory.imports import COLUMNS
from inventory.models import BMC, Fact, Node, Operation
from provisioning.models import Deployment, Image
from rma.models import Case
from tests.api.base import ACTORS, ADMINS, CALLER_IDS, CALLERS, READERS, WRITERS
from tests.api.specs import SPECS
from tests.attestation.routes import forget_tpm, sign_off
from tests.converge.routes import artifact_upload
from tests.day2.routes import campaign_move, campaign_plan
from tests.drift.factories import BaselineFactory
from tests.factories import (
    DraftImageFactory,
    GateRunFactory,
    ImageFactory,
    InterfaceFactory,
    NodeFactory,
    RackFactory,
    RMACaseFactory,
    SubnetFactory,
    api_token,
    start_deploy,
    user_in,
)
from tests.fleetfile.specs import fleet_apply, fleet_export, fleet_plan, fleet_schema
from tests.health.routes import breaker_close, breaker_state, node_health_events
from tests.webhooks.factories import make_delivery, make_subscription
from validation.models import GateRun
from webhooks.models import Delivery, WebhookSubscription


@dataclass(frozen=True)
class Route:
    """A route outside list/detail. `setup()` makes what it acts on and returns the URL, the
    body, and `observe()`: a snapshot of what the call changes (unchanged when refused)."""

    name: str
    method: str
    setup: Callable[[], tuple[str, dict, Callable[[], object]]]
    allowed: frozenset[str]
    success: int
    format: str = "json"
    writes: bool = True  # a POST that only answers (a plan) changes nothing even when allowed


def token_rotate():
    from knox.models import AuthToken

    return ("/api/v1/auth/token/rotate/", {}, lambda: set(AuthToken.objects.values_list("pk")))


def node_action():
    node = NodeFactory()
    return (
        f"/api/v1/nodes/{node.pk}/actions/decommission/",
        {"reason": "end of life"},
        lambda: Node.objects.get(pk=node.pk).state,
    )


def bulk_action():
    node = NodeFactory()
    return (
        "/api/v1/nodes/actions/decommission/",
        {"nodes": [node.pk], "reason": "hall closed"},
        lambda: Node.objects.get(pk=node.pk).state,
    )


def rack_action():
    node = NodeFactory()
    return (
        f"/api/v1/racks/{node.rack_id}/actions/decommission/",
        {"reason": "rack gone"},
        lambda: Node.objects.get(pk=node.pk).state,
    )


def list_actions():
    return f"/api/v1/nodes/{NodeFactory().pk}/actions/", {}, lambda: None


def publish():
    image = DraftImageFactory()
    return (
        f"/api/v1/images/{image.pk}/publish/",
        {},
        lambda: Operation.objects.filter(kind="publish_image").count(),
    )


def deprecate():
    image = ImageFactory()
    return (
        f"/api/v1/images/{image.pk}/deprecate/",
        {},
        lambda: Image.objects.get(pk=image.pk).state,
    )


def cancel_gate():
    run = GateRunFactory()
    return (
        f"/api/v1/gate-runs/{run.pk}/cancel/",
        {},
        lambda: GateRun.objects.get(pk=run.pk).cancel_requested,
    )


def node_import():
    rack = RackFactory()
    csv = (
        f"{','.join(COLUMNS)}\n"
        f"{rack.site.slug},{rack.name},1,SN-IMP,gpu-imp,M,H100-SXM,8,redfish,10.0.0.1,"
        "admin,pw,52:54:00:00:0f:01\n"
    )
    upload = SimpleUploadedFile("nodes.csv", csv.encode(), content_type="text/csv")
    return "/api/v1/nodes/import/", {"file": upload}, lambda: Node.objects.count()


def rma_transition():
    case = RMACaseFactory()
    return (
        f"/api/v1/rma-cases/{case.pk}/transitions/triaged/",
        {"note": "ECC confirmed"},
        lambda: Case.objects.get(pk=case.pk).status,
    )


def rma_note():
    case = RMACaseFactory()
    return (
        f"/api/v1/rma-cases/{case.pk}/notes/",
        {"body": "vendor asked for nvidia-bug-report"},
        lambda: case.events.count(),
    )


def rma_part():
    case = RMACaseFactory()
    return (
        f"/api/v1/rma-cases/{case.pk}/parts/",
        {"component": "GPU 3", "old_serial": "1650923007581", "new_serial": "1650923009999"},
        lambda: case.parts.count(),
    )


def rma_assign():
    case = RMACaseFactory()
    user = user_in("technician", "tech-on-call")  # cases go to someone who may work them
    return (
        "/api/v1/rma-cases/assign/",
        {"cases": [case.pk], "assignee": user.username},
        lambda: Case.objects.get(pk=case.pk).assignee_id,
    )


def rma_events():
    return f"/api/v1/rma-cases/{RMACaseFactory().pk}/events/", {}, lambda: None


def rma_evidence():
    return f"/api/v1/rma-cases/{RMACaseFactory().pk}/evidence.tar.gz", {}, lambda: None


def rotate_secret():
    sub = make_subscription()
    return (
        f"/api/v1/webhooks/{sub.pk}/rotate-secret/",
        {},
        lambda: WebhookSubscription.objects.get(pk=sub.pk).secret,
    )


def webhook_deliveries():
    delivery = make_delivery()
    return f"/api/v1/webhooks/{delivery.subscription_id}/deliveries/", {}, lambda: None


def redeliver():
    delivery = make_delivery(status="failed", next_attempt=timezone.now() + timedelta(days=1))
    return (
        f"/api/v1/webhooks/{delivery.subscription_id}/deliveries/{delivery.pk}/redeliver/",
        {},
        lambda: Delivery.objects.get(pk=delivery.pk).status,
    )


def operation_cancel():
    rack = RackFactory()
    node = NodeFactory(rack=rack, rack_unit=5, state="in_service")
    op = Operation.objects.create(kind="recycle", node=node, actor="x", status="running")
    return (
        f"/api/v1/operations/{op.pk}/cancel/",
        {},
        lambda: Operation.objects.get(pk=op.pk).status,
    )


def drift_rows():
    return "/api/v1/drift/", {}, lambda: None


def drift_summary():
    return "/api/v1/drift/summary/", {}, lambda: None


def report(name):
    return lambda: (f"/api/v1/reports/{name}/", {}, lambda: None)


def baseline_revisions():
    return f"/api/v1/baselines/{BaselineFactory().pk}/revisions/", {}, lambda: None


def node_drift():
    return f"/api/v1/nodes/{NodeFactory().pk}/drift/", {}, lambda: None


def node_console():
    node = NodeFactory(bmc__protocol="ipmi")  # a console Corral can attach to
    return f"/api/v1/nodes/{node.pk}/console/", {}, lambda: None


def node_facts_list():
    return f"/api/v1/nodes/{NodeFactory().pk}/facts/", {}, lambda: None


def node_facts_post():
    node = NodeFactory()
    return (
        f"/api/v1/nodes/{node.pk}/facts/",
        {"source": "ansible", "facts": {"kernel": "6.8.0-45-generic"}},
        lambda: list(Fact.objects.filter(node=node).values_list("key", "value")),
    )


def dhcp_export():
    SubnetFactory()
    return "/api/v1/dhcp/kea/", {}, lambda: None


def slurm_export():
    NodeFactory()
    return "/api/v1/exports/slurm/nodes/", {}, lambda: None


# Today's rules (see specs.ACCESS for CRUD); issue #16 may tighten them.
ROUTES = (
    Route("node-run-action", "post", node_action, ACTORS, 202),
    Route("node-bulk-action", "post", bulk_action, ACTORS, 202),
    Route("rack-run-action", "post", rack_action, ACTORS, 202),
    Route("node-list-actions", "get", list_actions, READERS, 200),
    Route("image-publish", "post", publish, ADMINS, 202),
    Route("image-deprecate", "post", deprecate, ADMINS, 200),
    Route("gaterun-cancel", "post", cancel_gate, ACTORS, 202),
    Route("node-import", "post", node_import, WRITERS, 202, format="multipart"),
    Route("dhcp-export", "get", dhcp_export, READERS, 200),
    Route("slurm-export", "get", slurm_export, READERS, 200),
    Route("rma-case-transition", "post", rma_transition, ACTORS, 200),
    Route("rma-case-notes", "post", rma_note, ACTORS, 201),
    Route("rma-case-parts", "post", rma_part, ACTORS, 201),
    Route("rma-case-assign", "post", rma_assign, ACTORS, 200),
    Route("rma-case-events", "get", rma_events, READERS, 200),
    Route("rma-case-evidence", "get", rma_evidence, READERS, 200),
    Route("webhook-rotate-secret", "post", rotate_secret, ADMINS, 200),
    Route("webhook-deliveries", "get", webhook_deliveries, READERS, 200),
    Route("webhook-redeliver", "post", redeliver, ADMINS, 202),
    Route("drift-list", "get", drift_rows, READERS, 200),
    Route("drift-summary", "get", drift_summary, READERS, 200),
    Route("baseline-revisions", "get", baseline_revisions, READERS, 200),
    Route("node-drift", "get", node_drift, READERS, 200),
    Route("node-facts", "get", node_facts_list, READERS, 200),
    Route("node-console", "get", node_console, ACTORS, 200),
    Route("node-facts", "post", node_facts_post, WRITERS, 201),
    Route("report-gpu-hours", "get", report("gpu-hours"), READERS, 200),
    Route("report-racks", "get", report("rack-to-revenue"), READERS, 200),
    Route("report-yield", "get", report("yield"), READERS, 200),
    Route("report-reliability", "get", report("reliability"), READERS, 200),
    Route("report-revenue", "get", report("revenue"), READERS, 200),
    Route("report-summary", "get", report("summary"), READERS, 200),
    Route("campaign-pause", "post", campaign_move("pause"), ACTORS, 200),
    Route("campaign-resume", "post", campaign_move("resume"), ACTORS, 200),
    Route("campaign-cancel", "post", campaign_move("cancel"), ACTORS, 200),
    Route("campaign-plan", "post", campaign_plan, ACTORS, 200, writes=False),
    Route("firmware-artifact-upload", "post", artifact_upload, ADMINS, 201, format="multipart"),
    Route("operation-cancel", "post", operation_cancel, ACTORS, 200),
    Route("api-root", "get", lambda: ("/api/v1/", {}, lambda: None), READERS, 200),
    Route("token-rotate", "post", token_rotate, READERS, 201),  # any caller, its own token
    Route("node-health-events", "post", node_health_events, ACTORS, 201),
    Route("health-breaker", "get", breaker_state, READERS, 200),
    Route("health-breaker-close", "post", breaker_close, ADMINS, 200),
    Route("attestation-sign-off", "post", sign_off, ADMINS, 201),
    Route("node-tpm-forget", "post", forget_tpm, ADMINS, 204),
    Route("fleet-plan", "post", fleet_plan, WRITERS, 200, writes=False),
    Route("fleet-apply", "post", fleet_apply, ADMINS, 200),
    Route("fleet-export", "get", fleet_export, READERS, 200),
    Route("fleet-schema", "get", fleet_schema, READERS, 200),
)


def test_every_api_route_is_declared():
    _, resolver = get_resolver().namespace_dict["api"]
    served = {name for name in resolver.reverse_dict if isinstance(name, str)}
    declared = {f"{s.basename}-{kind}" for s in SPECS for kind in ("list", "detail")}
    assert served == declared | {r.name for r in ROUTES}


@pytest.mark.django_db
@pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_routes_beyond_crud_follow_the_role_table(api, route, role):
    url, body, observe = route.setup()
    before = observe()
    resp = getattr(api(role), route.method)(url, body, format=route.format)
    expected = 401 if role is None else route.success if role in route.allowed else 403
    assert resp.status_code == expected, resp.content
    if route.method == "post":
        assert (observe() != before) == (expected == route.success and route.writes)


BMC_PASSWORD = "Walk-S3cret-BMC-pass"
DEPLOY_TOKEN = "tok-walk-" + "5ec2e7" * 8
FERNET = re.compile(r"gAAAAA[A-Za-z0-9_=-]{20,}")
WEBHOOK_SECRET = re.compile(r"whsec_[A-Za-z0-9+/=]{20,}")


@pytest.fixture
def fleet_with_secrets(users):
    """One of everything, a BMC password, a waiting deployment's token, every role's API
    token; returns those plaintexts and the ciphertexts the database holds for them."""
    for spec in SPECS:
        spec.make()
    node = NodeFactory(bmc__password=BMC_PASSWORD, nic=None)
    InterfaceFactory(node=node, ip="10.77.0.11")
    SubnetFactory(cidr="10.77.0.0/24", gateway="10.77.0.1")
    start_deploy(node, ImageFactory(), DEPLOY_TOKEN)
    make_delivery()
    api_tokens = [api_token(user) for user in users.values()]
    plaintexts = [
        *BMC.objects.exclude(password="").values_list("password", flat=True),
        *Deployment.objects.values_list("token", flat=True),
        *(sub.secret for sub in WebhookSubscription.objects.all()),
    ]
    assert {BMC_PASSWORD, DEPLOY_TOKEN} <= set(plaintexts)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT password FROM inventory_bmc WHERE password <> ''"
            " UNION ALL SELECT token FROM provisioning_deployment"
            " UNION ALL SELECT secret FROM core_webhooksubscription"
        )
        ciphertexts = [row[0] for row in cursor.fetchall()]
    assert ciphertexts and all(FERNET.fullmatch(c) for c in ciphertexts)
    return [*plaintexts, *api_tokens, *ciphertexts, settings.SECRET_KEY]


def every_get_url(client) -> list[str]:
    urls = ["/api/v1/", "/api/v1/dhcp/kea/", "/api/v1/dhcp/dnsmasq/", "/api/schema/"]
    for spec in SPECS:
        rows = client.get(spec.url, {"page_size": 1000}).data["results"]
        assert rows, spec.url
        urls.append(spec.url)
        urls += [spec.detail_url(row["id"]) for row in rows]
    urls += [f"/api/v1/nodes/{pk}/actions/" for pk in Node.objects.values_list("pk", flat=True)]
    hooks = WebhookSubscription.objects.values_list("pk", flat=True)
    return urls + [f"/api/v1/webhooks/{pk}/deliveries/" for pk in hooks]


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
@pytest.mark.django_db
def test_no_secret_in_any_list_or_detail_response(audited_scene, api, fleet_with_secrets):
    client = api("admin")
    urls = every_get_url(client)
    assert len(urls) > 2 * len(SPECS)
    for url in urls:
        resp = client.get(url)
        assert resp.status_code == 200, (url, resp.content)
        body = resp.content.decode()
        leaked = [secret[:12] for secret in fleet_with_secrets if secret in body]
        assert not leaked, (url, leaked)
        assert not FERNET.search(body), url
        assert not WEBHOOK_SECRET.search(body), url
