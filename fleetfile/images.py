"""Images in the fleet files: golden images, keyed `name:version` (docs/fleet-as-code.md).

A file's image is one the apply publishes: created as a draft, then verified and published
by provisioning's own publish (each artifact downloaded and its sha256 compared, the
signature checked), started as an operation inside the apply's transaction. Its `state`
says what the fleet should hold: `published` (the default), `draft` (kept unpublished) or
`deprecated`. A published image never changes, here as everywhere: a change to one is
refused, naming the version to add instead. A draft whose publish is running reads as
published (it is on its way), so a second apply does not start another; one whose last
publish failed reads as the draft it is, so the next apply tries again and the plan says
why the last one failed. A prune deprecates published images the files do not list and
deletes drafts, only when the files have an `images:` key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError

from engine.choices import ACTIVE_OPERATION_STATUSES
from engine.models import Operation
from provisioning import images as provisioning
from provisioning.models import Image, ImageState
from provisioning.selectors import latest_publish

from .loading import Item, Problem, Source, model_problems

if TYPE_CHECKING:
    from .desired import Wanted

CONTENT = (
    "kernel_url",
    "kernel_sha256",
    "initrd_url",
    "initrd_sha256",
    "rootfs_url",
    "rootfs_sha256",
    "uki_url",
    "uki_sha256",
    "cmdline",
    "baseline",
    "signature",
)
KEYS = ("name", "version", *CONTENT, "state")
STATES = (ImageState.DRAFT, ImageState.PUBLISHED, ImageState.DEPRECATED)
# (from, to) the files may ask for; anything else is named as refused.
MOVES = {
    (ImageState.DRAFT, ImageState.PUBLISHED),
    (ImageState.PUBLISHED, ImageState.DEPRECATED),
}


def key(name: str, version: str) -> str:
    return f"{name}:{version}"


def listed(sources: list[Source]) -> bool:
    """Whether any file lists images (then a prune manages them all)."""
    return any(isinstance(s.data, dict) and "images" in s.data for s in sources)


def wanted_values(item: Item) -> dict[str, Any]:
    """The keys the file gives; `state` is `published` unless it says otherwise."""
    values = {k: item.data[k] for k in KEYS if k in item.data}
    values.setdefault("state", ImageState.PUBLISHED.value)
    return values


def named(refs: set[str]) -> set[str]:
    """Those of `refs` (name:version) the fleet holds."""
    names = {ref.partition(":")[0] for ref in refs}
    found = Image.objects.filter(name__in=names).values_list("name", "version")
    return {key(name, version) for name, version in found} & refs


def existing() -> dict[str, Image]:
    return {str(image): image for image in Image.objects.all()}


def publishing() -> dict[int, Operation]:
    """Each image's last publish operation (the newest first wins)."""
    found: dict[int, Operation] = {}
    for op in Operation.objects.filter(kind="publish_image").order_by("-pk"):
        found.setdefault(op.params.get("image"), op)
    return found


def form(image: Image, last_publish: Operation | None = None) -> dict[str, Any]:
    """An image as the files write it (a draft on its way to published reads published)."""
    found = {k: getattr(image, k) for k in KEYS}
    on_its_way = last_publish is not None and last_publish.status in ACTIVE_OPERATION_STATUSES
    if image.state == ImageState.DRAFT and on_its_way:
        found["state"] = ImageState.PUBLISHED.value
    return found


def forms_of(known: dict[str, Image]) -> dict[str, dict[str, Any]]:
    last = publishing() if known else {}
    return {k: form(image, last.get(image.pk)) for k, image in known.items()}


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Image | None = None) -> list:
    """By the model's rules and the image's life: content changes only while a draft,
    states move only forward (draft -> published -> deprecated)."""
    values, item = wanted.values, wanted.item
    state = values["state"]
    if obj is None:
        found = _clean(item, {k: values[k] for k in ("name", "version", *CONTENT) if k in values})
        if state == ImageState.DEPRECATED:
            found.append(item.problem("an image is published before it is deprecated", "state"))
        return found
    assert current is not None
    changed = [k for k in CONTENT if k in values and values[k] != current[k]]
    if changed and obj.state != ImageState.DRAFT:
        return [
            item.problem(
                f"{obj} is {obj.state} and never changes: give the new content a new version",
                name,
            )
            for name in changed
        ]
    found = []
    if changed:
        fields = {k: getattr(obj, k) for k in ("name", "version", *CONTENT)}
        found += _clean(item, {**fields, **{k: values[k] for k in changed}})
    if state != current["state"] and (current["state"], state) not in MOVES:
        found.append(
            item.problem(
                f"{obj} is {current['state']}: it cannot become {state} "
                "(draft -> published -> deprecated; give a new version instead)",
                "state",
            )
        )
    return found


def _clean(item: Item, fields: dict[str, Any]) -> list[Problem]:
    try:
        Image(**fields).full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return model_problems(item, exc)
    return []


def save(wanted: Wanted, obj: Image | None, actor: str) -> Image:
    """Create or change the image; its publish, when asked, is started (an operation the
    apply's commit sends to the worker)."""
    values = wanted.values
    content = {k: values[k] for k in CONTENT if k in values}
    if obj is None:
        obj = provisioning.create_image(name=values["name"], version=values["version"], **content)
    elif any(getattr(obj, k) != v for k, v in content.items()):
        obj = provisioning.update_image(obj, **content)
    return move(obj, values["state"], actor)


def move(image: Image, state: str, actor: str) -> Image:
    if state == ImageState.PUBLISHED and image.state == ImageState.DRAFT:
        last = latest_publish(image)
        if last is None or last.status not in ACTIVE_OPERATION_STATUSES:
            provisioning.start_publish(image, actor)
    elif state == ImageState.DEPRECATED and image.state == ImageState.PUBLISHED:
        image = provisioning.deprecate(image)
    return image


def remove(image: Image, actor: str) -> None:
    """A prune's: a draft is deleted, a published image deprecated (nodes may run it)."""
    if image.state == ImageState.DRAFT:
        image.delete()
    elif image.state == ImageState.PUBLISHED:
        provisioning.deprecate(image)


@dataclass
class Publish:
    """An image the apply publishes (work the plan lists)."""

    image: str
    failed_before: str = ""  # why its last publish failed, if it did
    nodes: tuple = ()  # none drained: the shape of the plan's work
    in_service: tuple = ()

    def as_api(self) -> dict[str, Any]:
        return {
            "kind": "publish",
            "baseline": None,
            "image": self.image,
            "nodes": 0,
            "hostnames": [],
            "limits": {},
            "last_failure": self.failed_before,
        }

    def text(self) -> str:
        again = f" (its last publish failed: {self.failed_before})" if self.failed_before else ""
        return f"publish of image {self.image}: each artifact downloaded and checked{again}"


def planned(changes: list, known: dict[str, Image]) -> list[Publish]:
    """The publishes an apply of `changes` starts."""
    last = publishing()
    found = []
    for c in changes:
        if c.kind != "image" or c.wanted is None:
            continue
        if c.wanted.values["state"] != ImageState.PUBLISHED:
            continue
        obj = known.get(c.key)
        if obj is not None and obj.state != ImageState.DRAFT:
            continue
        failed = last.get(obj.pk) if obj is not None else None
        why = failed.error if failed is not None and failed.status == "failed" else ""
        found.append(Publish(c.key, why[:300]))
    return found
