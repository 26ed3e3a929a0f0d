"""Writes to the trail that signals cannot make.

An enrolment (the API's create, the CSV import, the admin) inserts its nodes, BMCs and NICs
with bulk_create, which sends no post_save, so auditlog's receivers never see them. The
enrolment announces them (`inventory.enrolment.nodes_enrolled`, in its transaction) and
this writes their create entries through auditlog's own diff (the registry's masks and
exclusions apply) with one INSERT per thousand entries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from auditlog import get_logentry_model
from auditlog.diff import model_instance_diff
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.utils import timezone

from inventory.models import BMC, NetworkInterface, Node

from . import actors

CHUNK = 5000
BATCH = 1000


def _entry(obj: Model, changes: dict | None, user: Any, name: str, now: Any) -> Any:
    log_entry = get_logentry_model()
    pk = obj.pk
    return log_entry(
        content_type=ContentType.objects.get_for_model(type(obj)),
        object_pk=str(pk),
        object_id=pk,
        object_repr=str(obj),
        action=log_entry.Action.CREATE,
        changes=changes,
        actor=user,
        additional_data={"actor": name},
        timestamp=now,
    )


def log_enrolled(sender: Any, nodes: Sequence[Node], **kwargs: Any) -> None:
    """Create entries for enrolled nodes with their labels, BMCs and interfaces."""
    user, name = actors.current()
    now = timezone.now()
    entries = []
    through = Node.labels.through
    for start in range(0, len(nodes), CHUNK):
        chunk = nodes[start : start + CHUNK]
        ids = [n.pk for n in chunk]
        labels: dict[int, list[str]] = defaultdict(list)
        for node_id, label in (
            through.objects.filter(node_id__in=ids)
            .order_by("label__name")
            .values_list("node_id", "label__name")
        ):
            labels[node_id].append(label)
        for node in chunk:
            changes = model_instance_diff(None, node, use_json_for_changes=True) or {}
            if labels[node.pk]:
                changes["labels"] = {"type": "m2m", "operation": "add", "objects": labels[node.pk]}
            entries.append(_entry(node, changes, user, name, now))
        for model in (BMC, NetworkInterface):
            for obj in model.objects.filter(node_id__in=ids).order_by("pk"):
                diff = model_instance_diff(None, obj, use_json_for_changes=True)
                entries.append(_entry(obj, diff, user, name, now))
    get_logentry_model().objects.bulk_create(entries, batch_size=BATCH)
