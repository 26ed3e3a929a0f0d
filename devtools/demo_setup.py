"""`make run`'s second half, once the emulator, artifact server, sshd, demo machines,
worker and web server are up: publish the demo image, make the demo gate profile the
default, and walk the demo fleet to mixed starting states through the real actions.

Every step goes where a technician's click goes: `start_action` (inventory.services)
records an Operation and the worker does the work against the emulator; the demo
machines answer the deploys' power-ons by phoning home to the web server; the gates run
over SSH on the demo sshd. Nothing writes Node.state. Idempotent: an image that exists
is reused, and a fleet that has any history is not walked again.

Usage: python -m devtools.demo_setup --artifacts URL --ssh-dir DIR --ssh-port N [--no-gates]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import django

ACTOR = "demo"


def say(msg: str) -> None:
    print(f"corral: {msg}", flush=True)


def wait_ops(ops: Iterable, timeout: float = 60) -> list:
    from inventory.models import Operation

    ids = [op.pk for op in ops]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = list(Operation.objects.filter(pk__in=ids))
        if all(op.is_finished for op in done):
            return done
        time.sleep(0.3)
    raise SystemExit(f"corral: demo operations {ids} did not finish in {timeout:g} s")


def ensure_image(base_url: str, artifacts_dir: Path):
    """The demo image, published through the publish task (download + sha256 check)."""
    from devtools import demo_image
    from provisioning import images
    from provisioning.models import Image, ImageState

    fields = demo_image.image_fields(base_url, demo_image.write_artifacts(artifacts_dir))
    image = Image.objects.filter(name=fields["name"], version=fields["version"]).first()
    if image is not None and image.state == ImageState.PUBLISHED:
        return image
    # A draft is one left by a run that stopped before its publish finished.
    image = images.create_image(**fields) if image is None else images.update_image(image, **fields)
    (op,) = wait_ops([images.start_publish(image, ACTOR)])
    image.refresh_from_db()
    if image.state != ImageState.PUBLISHED:
        raise SystemExit(f"corral: the demo image was not published: {op.error}")
    say(f"published the demo image {image} (artifacts downloaded and checked)")
    return image


def ensure_profile(spec: dict) -> None:
    """The demo's gate profile (stand-in commands, seconds of soak) as the default."""
    from django.db import transaction

    from validation.models import GateProfile

    with transaction.atomic():
        GateProfile.objects.exclude(name=spec["name"]).update(is_default=False)
        profile = GateProfile.objects.filter(name=spec["name"]).first() or GateProfile(
            name=spec["name"]
        )
        profile.spec, profile.is_default = spec, True
        profile.full_clean()
        profile.save()


def act(hostnames: list[str], action: str, **params):
    from inventory import services
    from inventory.models import Node

    return [
        services.start_action(Node.objects.get(hostname=h), action, ACTOR, params=params)
        for h in hostnames
    ]


def wait_states(hostnames: list[str], states: set[str], timeout: float) -> None:
    from inventory.models import Node

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = dict(Node.objects.filter(hostname__in=hostnames).values_list("hostname", "state"))
        if all(s in states for s in now.values()):
            return
        time.sleep(0.5)
    raise SystemExit(f"corral: demo nodes did not settle in {timeout:g} s: {now}")


def walk(image, gates: bool) -> None:
    """Some in service, one failed with a reason, one in RMA, some ready, some enrolled."""
    from inventory import demo
    from inventory.models import LifecycleEvent

    if LifecycleEvent.objects.filter(node__rack__site__slug=demo.SITE["slug"]).exists():
        return
    started = time.monotonic()
    deploy = (demo.START_IN_SERVICE + demo.START_RMA) if gates else []
    inspect = deploy + demo.START_READY + demo.START_FAILED
    say(f"walking the demo fleet: inspecting {len(inspect)} nodes, deploying {len(deploy)}")
    wait_ops(act(inspect, "inspect"), timeout=90)
    if deploy:
        act(deploy, "deploy", image=image.pk)
        wait_states(deploy, {"in_service", "rma", "failed"}, timeout=150)
    say(f"demo fleet walked in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True, help="base URL of the artifact server")
    parser.add_argument("--artifacts-dir", type=Path, required=True)
    parser.add_argument("--ssh-dir", type=Path, required=True)
    parser.add_argument("--ssh-port", type=int, required=True)
    parser.add_argument("--no-gates", action="store_true", help="no sshd: do not deploy")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
    django.setup()
    from devtools.demo_gates import DemoSSH, profile_spec

    image = ensure_image(args.artifacts, args.artifacts_dir)
    ensure_profile(profile_spec(DemoSSH(args.ssh_dir, args.ssh_port)))
    walk(image, gates=not args.no_gates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
