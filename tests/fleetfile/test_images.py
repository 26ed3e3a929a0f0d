"""Images in the fleet files: created and published by the apply (the bytes checked by
provisioning's own publish), immutable once published, deprecated by state or by a prune;
exported; a failed publish tried again by the next apply. Expected values are the files'
own (the artifact server's sha256s are computed from the bytes it serves)."""

from __future__ import annotations

import pytest
import yaml

from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts
from inventory.models import Operation
from provisioning import images as provisioning
from provisioning.models import Image
from tests.factories import DraftImageFactory, ImageFactory
from tests.provisioning.conftest import ArtifactServer

from .fleet import SECRETS

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(tmp_path):
    server = ArtifactServer(tmp_path)
    yield server
    server.stop()


def image_file(store: ArtifactServer, initrd_sha: str | None = None, **more: str) -> str:
    kernel_url, kernel_sha = store.add("vmlinuz", b"kernel-bytes" * 1000)
    initrd_url, real_sha = store.add("initrd.gz", b"initrd-bytes" * 1000)
    extra = "".join(f"    {k}: {v}\n" for k, v in more.items())
    return (
        "images:\n"
        "  - name: rocky-gpu\n"
        '    version: "9.4"\n'
        f"    kernel_url: {kernel_url}\n"
        f'    kernel_sha256: "{kernel_sha}"\n'
        f"    initrd_url: {initrd_url}\n"
        f'    initrd_sha256: "{initrd_sha or real_sha}"\n'
        "    baseline: {driver: 550.90.07}\n" + extra
    )


def files(text: str, name: str = "fleet/images.yaml"):
    return read_texts([(name, text)])


def apply(text: str, **kwargs):
    return applying.apply(files(text), SECRETS, actor="user:alice", **kwargs)


def publish_started() -> Operation:
    return Operation.objects.filter(kind="publish_image").latest("pk")


def test_an_image_in_the_files_is_created_then_published_by_the_apply(store):
    text = image_file(store)
    plan = planning.make(files(text), SECRETS)
    assert "+ image rocky-gpu:9.4  (fleet/images.yaml:2)" in plan.text()
    assert (
        "> starts: publish of image rocky-gpu:9.4: each artifact downloaded and checked"
        in plan.text()
    )
    apply(text, revision=plan.revision)
    image = Image.objects.get()
    assert (image.state, image.baseline) == ("draft", {"driver": "550.90.07"})
    op = publish_started()
    assert (op.actor, op.params["image"]) == ("user:alice", image.pk)

    again = planning.make(files(text), SECRETS)  # publishing: on its way, nothing to do
    assert (again.changes, again.work) == ([], [])
    provisioning.publish_task_body(op.pk)  # the task body, as the worker runs it
    assert Image.objects.get().state == "published"
    assert planning.make(files(text), SECRETS).changes == []


def test_a_failed_publish_is_tried_again_by_the_next_apply_saying_why(store):
    text = image_file(store, initrd_sha="0" * 64)
    apply(text)
    provisioning.publish_task_body(publish_started().pk)
    assert publish_started().status == "failed"

    plan = planning.make(files(text), SECRETS)
    assert [(f.name, f.old, f.new) for f in plan.changes[0].fields] == [
        ("state", "draft", "published")
    ]
    assert "(its last publish failed: not published: initrd: sha256 mismatch" in plan.text()
    fixed = image_file(store)
    apply(fixed)  # a draft's content may change; the publish starts again
    provisioning.publish_task_body(publish_started().pk)
    assert Image.objects.get().state == "published"
    assert Operation.objects.filter(kind="publish_image").count() == 2


def test_a_published_image_never_changes_and_states_only_move_forward(store):
    text = image_file(store)
    ImageFactory(name="rocky-gpu", version="9.4")
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(text), SECRETS)
    messages = {p.path: p.message for p in caught.value.problems}
    assert messages["images[0].kernel_url"] == (
        "rocky-gpu:9.4 is published and never changes: give the new content a new version"
    )
    assert set(messages) >= {"images[0].kernel_sha256", "images[0].initrd_sha256"}

    back = 'images:\n  - name: rocky-gpu\n    version: "9.4"\n    state: draft\n'
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(back), SECRETS)
    assert [str(p) for p in caught.value.problems] == [
        "fleet/images.yaml:4 images[0].state: rocky-gpu:9.4 is published: it cannot become "
        "draft (draft -> published -> deprecated; give a new version instead)"
    ]
    new = image_file(store, initrd_sha=None).replace("state: x", "") + "    state: deprecated\n"
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(new.replace('"9.4"', '"9.5"')), SECRETS)
    assert [p.message for p in caught.value.problems] == [
        "an image is published before it is deprecated"
    ]


def test_deprecated_by_its_state_and_by_a_prune_drafts_deleted_unlisted_kinds_left_alone():
    ImageFactory(name="rocky-gpu", version="9.3")
    ImageFactory(name="rocky-gpu", version="9.4")
    DraftImageFactory(name="scratch", version="1")
    old = 'images:\n  - name: rocky-gpu\n    version: "9.3"\n    state: deprecated\n'
    plan = planning.make(files(old), SECRETS)
    assert [(c.label, [(f.name, f.old, f.new) for f in c.fields]) for c in plan.changes] == [
        ("image rocky-gpu:9.3", [("state", "published", "deprecated")])
    ]
    apply(old)
    assert Image.objects.get(version="9.3").state == "deprecated"

    sites = read_texts([("fleet/sites.yaml", "sites: []\n")])
    assert not planning.make(sites, SECRETS, prune=True).changes  # no images: key

    pruned = planning.make(files(old), SECRETS, prune=True)
    assert sorted((c.label, c.action) for c in pruned.changes) == [
        ("image rocky-gpu:9.4", "update"),
        ("image scratch:1", "delete"),
    ]
    apply(old, prune=True, allow_destructive=True)
    assert dict(Image.objects.values_list("version", "state")) == {
        "9.3": "deprecated",
        "9.4": "deprecated",
    }


def test_export_writes_every_image_and_a_plan_of_the_export_changes_nothing(store):
    apply(image_file(store))
    ImageFactory(name="ubuntu-gpu", version="24.04")
    texts = export.texts()
    listed = yaml.safe_load(texts["images.yaml"])["images"]
    assert [(i["name"], i["version"], i["state"]) for i in listed] == [
        ("rocky-gpu", "9.4", "published"),  # its publish is on its way
        ("ubuntu-gpu", "24.04", "published"),
    ]
    plan = planning.make(read_texts(list(texts.items())), SECRETS)
    assert (plan.changes, plan.work) == ([], [])
