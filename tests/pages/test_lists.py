"""Every list page, declared once (tests/pages/base.py says what each one is asked)."""

from __future__ import annotations

from auditlog.models import LogEntry

from tests.api.base import ADMINS
from tests.drift.factories import BaselineFactory
from tests.factories import (
    ImageFactory,
    NodeFactory,
    OperationFactory,
    RackFactory,
    RMACaseFactory,
    SiteFactory,
    audited,
)
from tests.pages.base import ListPageSpec, ListPageTests


def node_in(site, **kwargs):
    return NodeFactory(rack=RackFactory(site=site or SiteFactory()), **kwargs)


class TestNodeList(ListPageTests):
    spec = ListPageSpec(
        "inventory:node_list", make=node_in, shows=lambda n: n.hostname, table="node-table"
    )


class TestRmaQueue(ListPageTests):
    spec = ListPageSpec(
        "rma:case_list",
        make=lambda site: RMACaseFactory(node=node_in(site, state="rma")),
        shows=lambda case: case.node.hostname,
        table="case-table",
    )


class TestActivity(ListPageTests):
    spec = ListPageSpec(
        "inventory:activity",
        make=lambda site: OperationFactory(node=node_in(site), kind="power_cycle"),
        shows=lambda op: op.node.hostname,
        table="activity-table",
    )


class TestAuditTrail(ListPageTests):
    spec = ListPageSpec(
        "audit:entry_list",
        make=lambda site: LogEntry.objects.get_for_object(audited(SiteFactory)).get(),
        shows=lambda entry: f"#{entry.object_pk} {entry.object_repr}",
        readers=ADMINS,
        scoped=False,
    )


class TestRackList(ListPageTests):
    spec = ListPageSpec(
        "inventory:rack_list",
        make=lambda site: RackFactory(site=site or SiteFactory(), name=f"rk-{site.slug}"),
        shows=lambda rack: rack.name,
    )


class TestImageList(ListPageTests):
    spec = ListPageSpec(
        "provisioning:image_list",
        make=lambda site: ImageFactory(name=f"img-{site.slug if site else 'x'}"),
        shows=lambda image: f"{image.name}:{image.version}",
        fleet_rows=True,
    )


class TestBaselineList(ListPageTests):
    spec = ListPageSpec(
        "drift:baseline_list",
        make=lambda site: BaselineFactory(name=f"bl-{site.slug if site else 'x'}"),
        shows=lambda baseline: baseline.name,
        fleet_rows=True,
    )
