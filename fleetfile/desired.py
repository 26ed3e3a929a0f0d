"""What the files ask for, checked before anything is compared with the fleet.

Each object is keyed as the fleet keys it (a site by slug, a rack by site and name, a node
by serial). Everything that can be found wrong without writing is found here, in one pass,
each problem at its file and line: a key given twice (naming both places), a site or rack
named that neither the files nor the fleet hold, a value with no canonical form, a secret
reference with no value where apply runs, and each object's values against the model's
own rules (the same rules, in the same code, as the API and the CSV import). What depends
on the rest of the fleet at write time (a unit another node took, a hostname in use) is
checked by the write itself, and reported the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from core.urlsafe import redact_url
from inventory import enrolment
from inventory.models import Rack, Site

from . import baselines, forms, gates
from . import health as file_health
from . import images as file_images
from . import webhooks as file_webhooks
from .loading import Item, Problem, Source, items, model_problems, path_of
from .schema import KINDS
from .secrets import Secrets, Unresolved


@dataclass
class Wanted:
    """One object of the files: its key, its canonical values and where it is."""

    item: Item
    key: Any
    values: dict[str, Any]
    password: str | None = field(default=None, repr=False)  # resolved; never shown
    # A node to create as the plan checked it (inventory.enrolment.build), for the apply.
    built: Any = field(default=None, repr=False)

    @property
    def where(self) -> str:
        return self.item.where


@dataclass
class Desired:
    sites: dict[str, Wanted] = field(default_factory=dict)
    racks: dict[tuple[str, str], Wanted] = field(default_factory=dict)
    nodes: dict[str, Wanted] = field(default_factory=dict)
    images: dict[str, Wanted] = field(default_factory=dict)
    gate_profiles: dict[str, Wanted] = field(default_factory=dict)
    webhooks: dict[str, Wanted] = field(default_factory=dict)
    health_rules: dict[str, Wanted] = field(default_factory=dict)
    baselines: dict[str, Wanted] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def _once(
    seen: dict, key: Any, item: Item, problems: list[Problem], what: str, *path: str | int
) -> bool:
    """False (and a problem naming both places) when `key` was given before."""
    if key in seen:
        first = seen[key] if isinstance(seen[key], str) else seen[key].where
        problems.append(item.problem(f"{what} is also given at {first}", *path))
        return False
    return True


def collect(sources: list[Source], secrets: Secrets) -> Desired:
    """The files' objects, keyed and canonical, and what is wrong with them (the plan adds
    what the models' rules find, and raises FleetFileError with all of it)."""
    desired = Desired()
    by_kind: dict[str, list[Item]] = {kind: [] for kind in KINDS}
    for item in items(sources):
        by_kind[item.kind].append(item)
    for item in by_kind["sites"]:
        _site(item, desired)
    site_slugs = set(desired.sites) | set(Site.objects.values_list("slug", flat=True))
    for item in by_kind["racks"]:
        _rack(item, desired, site_slugs)
    rack_keys = set(desired.racks) | set(Rack.objects.values_list("site__slug", "name"))
    for item in by_kind["images"]:
        name = file_images.key(item.data["name"], item.data["version"])
        if _once(desired.images, name, item, desired.problems, f"image {name!r}", "version"):
            desired.images[name] = Wanted(item, name, file_images.wanted_values(item))
    _gate_profiles(by_kind["gate_profiles"], desired)
    seen: dict[str, dict[Any, str]] = {"hostname": {}, "mac": {}, "ip": {}}
    for item in by_kind["nodes"]:
        _node(item, desired, rack_keys, seen, secrets)
    _images_named(desired)
    for item in by_kind["webhooks"]:
        _webhook(item, desired, secrets)
    for item in by_kind["health_policy"]:
        values = file_health.wanted_values(item)
        found = file_health.key(values["kind"], values["match"], values["gpu_model"])
        what = f"health rule {found!r}"
        if _once(desired.health_rules, found, item, desired.problems, what, "match"):
            desired.health_rules[found] = Wanted(item, found, values)
    for item in by_kind["baselines"]:
        name = item.data["name"]
        if _once(desired.baselines, name, item, desired.problems, f"baseline {name!r}", "name"):
            values, problems = baselines.wanted_values(item)
            desired.problems += problems
            if not problems:
                desired.baselines[name] = Wanted(item, name, values)
    return desired


def _gate_profiles(found: list[Item], desired: Desired) -> None:
    defaults: dict[bool, str] = {}
    for item in found:
        name = item.data["name"]
        what = f"gate profile {name!r}"
        if not _once(desired.gate_profiles, name, item, desired.problems, what, "name"):
            continue
        values = {k: item.data[k] for k in gates.FIELD if k in item.data}
        desired.gate_profiles[name] = Wanted(item, name, values)
        if not values.get("default"):
            continue
        if _once(defaults, True, item, desired.problems, "default: true", "default"):
            defaults[True] = _at(item, "default")


def _webhook(item: Item, desired: Desired, secrets: Secrets) -> None:
    url = item.data["url"]
    what = f"webhook {redact_url(url)!r}"
    if not _once(desired.webhooks, url, item, desired.problems, what, "url"):
        return
    wanted = Wanted(item, url, file_webhooks.wanted_values(item))
    if item.data.get("secret"):
        try:
            wanted.password = secrets.resolve(item.data["secret"])
        except Unresolved as exc:
            desired.problems.append(item.problem(str(exc), "secret"))
    desired.webhooks[url] = wanted


def _images_named(desired: Desired) -> None:
    """Each node's image is one the files or the fleet hold."""
    named = {w.values["image"] for w in desired.nodes.values() if w.values.get("image")}
    if not named:
        return
    known = set(desired.images) | file_images.named(named - set(desired.images))
    for wanted in desired.nodes.values():
        ref = wanted.values.get("image")
        if ref and ref not in known:
            desired.problems.append(
                wanted.item.problem(f"no image {ref!r} in the files or the fleet", "image")
            )


def _site(item: Item, desired: Desired) -> None:
    slug = item.data["slug"]
    if not _once(desired.sites, slug, item, desired.problems, f"site {slug!r}", "slug"):
        return
    try:
        values = forms.wanted_site(item.data)
    except forms.Unreadable as exc:
        desired.problems.append(item.problem(str(exc), "bmc_networks"))
        return
    desired.sites[slug] = Wanted(item, slug, values)


def _rack(item: Item, desired: Desired, site_slugs: set[str]) -> None:
    key = (item.data["site"], item.data["name"])
    what = f"rack {key[1]!r} of site {key[0]!r}"
    if not _once(desired.racks, key, item, desired.problems, what, "name"):
        return
    if key[0] not in site_slugs:
        desired.problems.append(
            item.problem(f"no site {key[0]!r} in the files or the fleet", "site")
        )
    try:
        values = forms.wanted_rack(item.data)
    except forms.Unreadable as exc:
        name = "delivered" if "date" in str(exc) else "power_budget_kw"
        desired.problems.append(item.problem(str(exc), name))
        return
    desired.racks[key] = Wanted(item, key, values)


def _node(
    item: Item,
    desired: Desired,
    rack_keys: set[tuple[str, str]],
    seen: dict[str, dict[Any, str]],
    secrets: Secrets,
) -> None:
    data, problems = item.data, desired.problems
    serial = data["serial"]
    if not _once(desired.nodes, serial, item, problems, f"serial {serial!r}", "serial"):
        return
    before = len(problems)
    rack, site = data.get("rack"), data.get("site")
    if rack is not None and site is None:
        problems.append(item.problem("a rack is named with its site: give site too", "rack"))
    elif site is not None and rack is None:
        problems.append(item.problem("a node's site is its rack's: give rack too", "site"))
    elif rack is not None and (site, rack) not in rack_keys:
        problems.append(
            item.problem(f"no rack {rack!r} in site {site!r} in the files or the fleet", "rack")
        )
    for index, nic in enumerate(data.get("interfaces") or []):
        try:
            forms.mac(nic["mac"])
        except forms.Unreadable as exc:
            problems.append(item.problem(str(exc), "interfaces", index, "mac"))
    if len(problems) > before:
        return
    values = forms.wanted_node(data)
    wanted = Wanted(item, serial, values)
    _unique_in_files(wanted, seen, problems)
    reference = (data.get("bmc") or {}).get("password")
    if reference:
        try:
            wanted.password = secrets.resolve(reference)
        except Unresolved as exc:
            problems.append(item.problem(str(exc), "bmc", "password"))
    desired.nodes[serial] = wanted


def _unique_in_files(wanted: Wanted, seen: dict, problems: list[Problem]) -> None:
    item, values = wanted.item, wanted.values
    host = values["hostname"]
    if _once(seen["hostname"], host, item, problems, f"hostname {host!r}", "hostname"):
        seen["hostname"][host] = _at(item, "hostname")
    for index, nic in enumerate(item.data.get("interfaces") or []):
        for name in ("mac", "ip"):
            value = forms.mac(nic["mac"]) if name == "mac" else nic.get("ip")
            if value in (None, ""):
                continue
            what = f"{'MAC' if name == 'mac' else 'IP'} {value}"
            if _once(seen[name], value, item, problems, what, "interfaces", index, name):
                seen[name][value] = _at(item, "interfaces", index, name)


def _at(item: Item, *path: str | int) -> str:
    """file:line of a key of `item`."""
    line = item.source.line_of((item.kind, item.index, *path))
    return f"{item.source.name}:{line}" if line else item.source.name


# --- the model's own rules, on the values an object will have (what it has, with what the
# files change): called by the plan, which knows what it has ------------------------------


def check_site(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    values = {**(current or {}), **wanted.values}
    try:
        Site(**values).full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return model_problems(wanted.item, exc)
    return []


def check_rack(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    values = {**(current or {}), **wanted.values}
    fields = {k: v for k, v in values.items() if k not in ("site", "delivered")}
    try:
        Rack(**fields).full_clean(
            exclude=["site"], validate_unique=False, validate_constraints=False
        )
    except ValidationError as exc:
        return model_problems(wanted.item, exc)
    return []


def check_node(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    """By the enrolment's rules (no query). The rack is left out: it may be one the same
    apply creates; the write places the node and checks its unit. A password the files
    leave out is the stored one (`obj`'s), which the write keeps."""
    values = {**(current or {}), **wanted.values}
    fields = {
        forms.NODE_FIELD.get(k, k): v
        for k, v in values.items()
        if k not in ("site", "rack", "labels", "bmc", "interfaces", "image")
    }
    bmc = {**((current or {}).get("bmc") or {}), **(wanted.values.get("bmc") or {})} or None
    if bmc is not None:
        stored = getattr(getattr(obj, "bmc", None), "password", "") if obj is not None else ""
        # A reference with no value here is named already: not "Password is required" too.
        unresolved = "password" in (wanted.values.get("bmc") or {}) and not wanted.password
        bmc["password"] = wanted.password or stored or ("unresolved" if unresolved else "")
    if "interfaces" in wanted.item.data:  # in the file's order, so an error names its index
        nics = [{**n, "mac": forms.mac(n["mac"])} for n in wanted.item.data["interfaces"]]
    else:
        nics = values.get("interfaces") or []
    found = enrolment.build(
        bmc=bmc,
        interfaces=[nic_fields(n) for n in nics],
        labels=values.get("labels"),
        **fields,
    )
    errors = found.errors.errors
    if values.get("rack") is not None and "rack_unit" in errors:  # the write sets the rack
        errors["rack_unit"] = [m for m in errors["rack_unit"] if "needs a rack" not in str(m)]
        if not errors["rack_unit"]:
            del errors["rack_unit"]
    wanted.built = found
    problems = []
    for name, messages in errors.items():
        path = ["unit"] if name == "rack_unit" else path_of(name)
        for message in messages:
            text = message.messages[0] if isinstance(message, ValidationError) else str(message)
            problems.append(wanted.item.problem(text, *path))
    return problems


def nic_fields(nic: dict[str, Any]) -> dict[str, Any]:
    """The model's fields of a file's interface (what the file gave of them)."""
    return {k: nic[k] for k in forms.NIC_KEYS if k in nic}
