"""Export: today's fleet as fleet files, from which an apply changes nothing.

Written as `sites.yaml`, `racks.yaml`, `images.yaml`, `gate_profiles.yaml`, `nodes.yaml`,
`baselines.yaml` and `webhooks.yaml`, in the files' own form (fleetfile.forms), keys in the
schema's order; a node's `image` is the one it runs. An empty value is left out: a key
left out of a file is left as it is, so leaving it out says the same and keeps the files
short. No secret is written: a BMC's password and a webhook's secret are left out, which
keeps the stored ones; to manage them from the files, add `password: env:NAME` (or
`file:/path`; `secret:` on a webhook).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from inventory.choices import NodeState
from inventory.models import Rack, Site

from . import baselines, forms, gates, imaging, schema
from . import health as file_health
from . import images as file_images
from . import webhooks as file_webhooks

_DUMPER: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
HEADER = (
    "# Exported by Corral (docs/fleet-as-code.md). A key left out is left as it is; no\n"
    "# secret is written: add `password: env:NAME` under a bmc to manage its password\n"
    "# (`secret: env:NAME` on a webhook).\n"
)


def _tidy(value: Any, shape: dict[str, Any]) -> Any:
    """`value` without its empty keys, except those the schema `shape` requires."""
    if isinstance(value, list):
        return [_tidy(v, shape.get("items", {})) for v in value]
    if not isinstance(value, dict) or "properties" not in shape:
        return value  # a document of its own (a gate profile's spec) is written as it is
    required = set(shape.get("required", ()))
    inner = shape.get("properties", {})
    return {
        k: _tidy(v, inner.get(k, {}))
        for k, v in value.items()
        if k in required or v not in (None, "", [], {})
    }


def documents() -> dict[str, dict[str, list]]:
    """File name -> its document. Decommissioned nodes are not part of the fleet."""
    sites = [_tidy(forms.site_form(s), schema.SITE) for s in Site.objects.order_by("slug")]
    racks = [
        _tidy(forms.rack_form(r), schema.RACK)
        for r in Rack.objects.select_related("site").order_by("site__slug", "name")
    ]
    kept = {
        s: n for s, n in forms.nodes_by_serial(None).items() if n.state != NodeState.DECOMMISSIONED
    }
    node_forms = forms.node_forms(kept)
    for serial, image in imaging.current(kept).items():
        node_forms[serial]["image"] = image
    nodes = [_tidy(form, schema.NODE) for form in node_forms.values()]
    held = file_images.forms_of(file_images.existing())
    images = [_tidy(form, schema.IMAGE) for _, form in sorted(held.items())]
    listed = [_tidy(baselines.form(b), schema.BASELINE) for b in baselines.existing().values()]
    profiles = [_tidy(gates.form(p), schema.GATE_PROFILE) for p in gates.existing().values()]
    rules = [_tidy(file_health.form(r), schema.HEALTH_RULE) for r in file_health.each_key()]
    hooks = [_tidy(file_webhooks.form(s), schema.WEBHOOK) for s in file_webhooks.every()]
    return {
        "sites.yaml": {"sites": sites},
        "racks.yaml": {"racks": racks},
        "images.yaml": {"images": images},
        "gate_profiles.yaml": {"gate_profiles": sorted(profiles, key=lambda p: p["name"])},
        "nodes.yaml": {"nodes": nodes},
        "baselines.yaml": {"baselines": sorted(listed, key=lambda b: b["name"])},
        "health_policy.yaml": {"health_policy": rules},
        "webhooks.yaml": {"webhooks": hooks},
    }


def texts() -> dict[str, str]:
    return {
        name: HEADER + yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
        for name, doc in documents().items()
    }


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts().items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
