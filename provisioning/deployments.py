"""The deploy workflow: one-time PXE + power, then wait for the node to phone home.

    deploy action (ready/drained/failed) -> deploying   [inventory lifecycle]
    task: Deployment row + single-use token, PXE once (or the deploy's ISO in the BMC's
          virtual CD where the site says so: vmedia.py), power on/cycle
    GET /boot/ipxe?mac=  -> kernel + initrd + cmdline(callback URL, token)
    POST /boot/callback  -> Deployment closed, observed facts stored, deploying -> validating
    no phone-home by the node's deadline -> failed ("no phone-home within N min")

The token is random and single-use; it is looked up by its sha256 and kept encrypted at
rest, because the boot script for the node must contain it.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from inventory import facts as observed
from inventory import operations
from inventory.actions import ACTIONS
from inventory.choices import NodeState, OperationStatus
from inventory.lifecycle import IllegalTransition, states_accepting, transition
from inventory.models import Node, Operation

from . import bmc_answers, signals, vmedia
from .bootserver import origin
from .drivers import ACTION_CYCLE, ACTION_ON, BOOT_PXE, POWER_ON, Driver, get_driver
from .models import Deployment, Image
from .models.deployments import DeploymentStatus
from .models.images import DeployMode, ImageState
from .runner import bmc_io
from .services import bmc_settings, wait_for_power

log = logging.getLogger(__name__)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def resolve_image(ref: Any) -> Image:
    """An image by id or "name:version"; it must be published."""
    from django.core.exceptions import ValidationError

    if ref in (None, ""):
        raise ValidationError(
            {
                "params.image": "Say which image to deploy: "
                '{"params": {"image": "name:version"}} or its id.'
            }
        )
    image = None
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        image = Image.objects.filter(pk=int(ref)).first()
    elif isinstance(ref, str) and ":" in ref:
        name, _, version = ref.partition(":")
        image = Image.objects.filter(name=name, version=version).first()
    if image is None:
        raise ValidationError({"params.image": f"No image {ref!r}; give an id or name:version."})
    if image.state != ImageState.PUBLISHED:
        raise ValidationError(
            {"params.image": f"{image} is {image.state}; only published images can be deployed."}
        )
    return image


def image_choices() -> list[tuple[str, str]]:
    """Published images, newest first, for the dashboard's deploy chooser."""
    return [
        (str(i.pk), str(i))
        for i in Image.objects.filter(state=ImageState.PUBLISHED).order_by("-published")
    ]


def validate_deploy_params(params: dict) -> dict:
    """Called by inventory.services.start_action before the node moves (declared on the
    action), so a bad image never leaves a node in `deploying`."""
    image = resolve_image(params.get("image"))
    return {**params, "image": image.pk, "image_name": str(image)}


# The deploy's progress once the one-time network boot is set (its steps read it: plans.py).
PXE_SET = 50


def deploy(node: Node, op: Operation) -> dict:
    """Task body (under the node lock): new Deployment, PXE once, power, then wait."""
    image = Image.objects.get(pk=op.params["image"])
    with transaction.atomic():
        # A redelivered task reuses its own deployment: the token a node may already have
        # been given stays valid.
        deployment = Deployment.objects.filter(
            operation=op, status=DeploymentStatus.WAITING
        ).first()
        if deployment is None:
            Deployment.objects.filter(node=node, status=DeploymentStatus.WAITING).update(
                status=DeploymentStatus.SUPERSEDED, error="superseded by a new deploy"
            )
            token = secrets.token_urlsafe(32)
            deployment = Deployment.objects.create(
                node=node,
                image=image,
                operation=op,
                token=token,
                token_sha256=token_hash(token),
                deadline=node.deadline or timezone.now(),
            )
    driver = get_driver(bmc_settings(node))
    try:
        _set_boot(node, op, driver, deployment)
        with bmc_io():
            action = ACTION_CYCLE if driver.power.get_power_state() == POWER_ON else ACTION_ON
        operations.report_progress(op, PXE_SET, f"power {action}")
        with bmc_io():
            driver.power.set_power(action)
            # What the node list shows from now on is what the BMC says, not the state
            # the last refresh saw before this power-on (bmc_answers).
            state = wait_for_power(driver, POWER_ON)
        health = bmc_answers.health_after_action(driver, node)
    finally:
        with bmc_io():
            driver.close()
    bmc_answers.record(node, state, health)
    Deployment.objects.filter(pk=deployment.pk).update(boot_started=timezone.now())
    operations.report_progress(op, 100, "powered; waiting for the node to phone home")
    return {"deployment": deployment.pk, "image": str(image)}


def _set_boot(node: Node, op: Operation, driver: Driver, deployment: Deployment) -> None:
    """One-time network boot, or this deploy's ISO in the BMC's virtual CD (vmedia)."""
    how, note = vmedia.how_to_boot(node, driver)
    if how == vmedia.PXE:
        operations.report_progress(op, 20, note or "setting one-time network boot")
        with bmc_io():
            driver.management.set_boot_device(BOOT_PXE, once=True)
        return
    operations.report_progress(op, 20, "building the boot ISO")
    url = vmedia.prepare(deployment, node)
    # Recorded before the BMC has it: the sweep ejects whatever a deploy may have inserted.
    Deployment.objects.filter(pk=deployment.pk).update(media_url=url)
    operations.report_progress(op, 35, "inserting the boot ISO in the BMC's virtual CD")
    with bmc_io():
        driver.media.insert(url)


def running_image(node_id: int) -> Image | None:
    """The image the node last phoned home with: what it runs now."""
    last = (
        Deployment.objects.select_related("image")
        .filter(node_id=node_id, status=DeploymentStatus.SUCCEEDED, phoned_home__isnull=False)
        .order_by("-phoned_home", "-pk")
        .first()
    )
    return last.image if last is not None else None


def reboot(node_id: int) -> Deployment | None:
    """A stateless node asked for its boot script while no deploy waits for it: it runs
    from RAM, so this boot is a deploy of its image again (`rebooted`: ready or in service
    -> deploying), with a token of its own; its phone-home ends it as any deploy's does,
    and the gate profile's `after_reboot` says whether the gates run again. The deployment
    now waiting, or None: the node is not stateless, not in a state a reboot moves (a
    drained node stays out of service: it is answered as today), or another request moved
    it first (the caller then finds the waiting deployment as for any deploy)."""
    node = Node.objects.filter(
        pk=node_id, stateless=True, state__in=states_accepting("rebooted")
    ).first()
    image = running_image(node_id) if node is not None else None
    if node is None or image is None or image.deploy_mode != DeployMode.STATELESS:
        return None
    now = timezone.now()
    words = f"booted on its own: a stateless node's every boot is a deploy of {image}"
    try:
        with transaction.atomic():
            op = Operation.objects.create(
                kind="deploy",
                node=node,
                actor="system",
                params={"image": image.pk, "image_name": str(image), "reboot": True},
                status=OperationStatus.SUCCEEDED,
                progress=100,
                message="the node booted; waiting for it to phone home",
                started=now,
                finished=now,
            )
            transition(node, "rebooted", "system", words, operation=op)
            token = secrets.token_urlsafe(32)
            return Deployment.objects.create(
                node=node,
                image=image,
                operation=op,
                token=token,
                token_sha256=token_hash(token),
                deadline=node.deadline or now,
                boot_started=now,
                reboot=True,
            )
    except IllegalTransition:
        return None


@dataclass
class CallbackRefused(Exception):
    reason: str

    def __str__(self) -> str:
        return self.reason


class WrongAddress(CallbackRefused):
    """A phone-home with a good token from an address that is not the node's
    (bootserver.origin); `address` is where it came from."""

    def __init__(self, reason: str, address: str | None) -> None:
        super().__init__(reason)
        self.address = address


def _check_origin(token: str, remote_addr: str | None) -> None:
    """WrongAddress, recorded as the deployment's problem (the node page shows it), for a
    token presented from anywhere but its node. Written outside the phone-home's
    transaction, which a refusal rolls back; a failed or superseded deployment keeps its
    own reason (its token is refused anyway)."""
    deployment = (
        Deployment.objects.select_related("node").filter(token_sha256=token_hash(token)).first()
    )
    if deployment is None:
        return
    reason = origin.refusal(deployment.node, remote_addr)
    if reason is None:
        return
    open_or_done = (DeploymentStatus.WAITING, DeploymentStatus.SUCCEEDED)
    Deployment.objects.filter(pk=deployment.pk, status__in=open_or_done).update(error=reason)
    raise WrongAddress(reason, remote_addr)


def phone_home(token: str, report: dict, remote_addr: str | None) -> tuple[Deployment, bool]:
    """Close the deployment the token belongs to. Returns (deployment, changed).

    A report with `failed` (what went wrong, in the node's words) fails the deploy at once.
    Refuses (CallbackRefused -> 403) a token that is unknown, expired, superseded, or
    presented for another node, or from an address that is not its node's (WrongAddress);
    the node is untouched. A repeat of the call that already succeeded is answered without
    change, so a node retrying after a lost reply is safe.
    """
    if not isinstance(token, str) or not 16 <= len(token) <= 256:
        raise CallbackRefused("no valid token")
    _check_origin(token, remote_addr)
    with transaction.atomic():
        deployment = (
            Deployment.objects.select_for_update()
            .select_related("node", "image")
            .filter(token_sha256=token_hash(token))
            .first()
        )
        if deployment is None:
            raise CallbackRefused("unknown token")
        node = deployment.node
        claimed = str(report.get("hostname") or "")
        if claimed and claimed.split(".")[0] != node.hostname:
            raise CallbackRefused(f"token of {node.hostname} presented by {claimed!r}")
        if deployment.status == DeploymentStatus.SUCCEEDED:
            return deployment, False
        if deployment.status != DeploymentStatus.WAITING:
            raise CallbackRefused(f"token already {deployment.status}")
        if timezone.now() > deployment.deadline or node.state != NodeState.DEPLOYING:
            raise CallbackRefused("token expired")
        if report.get("failed"):
            _node_failed(deployment, node, report["failed"])
            return deployment, True
        now = timezone.now()
        booted = {
            k: report[k] for k in ("image", "version", "kernel", "facts", "hostname") if k in report
        }
        booted["remote_addr"] = remote_addr
        Deployment.objects.filter(pk=deployment.pk).update(
            status=DeploymentStatus.SUCCEEDED, phoned_home=now, booted=booted
        )
        facts = dict(report.get("facts") or {}) if isinstance(report.get("facts"), dict) else {}
        facts.update({k: report[k] for k in ("kernel",) if report.get(k)})
        facts["image"] = str(deployment.image)
        stateless = deployment.image.deploy_mode == DeployMode.STATELESS
        Node.objects.filter(pk=node.pk).update(
            observed_facts=facts, observed_at=now, stateless=stateless
        )
        signals.phoned_home.send(sender=Deployment, deployment=deployment, report=report)
        observed.record(node, "phone-home", observed.lenient(facts), at=now)
        minutes = (now - deployment.created).total_seconds() / 60
        try:
            transition(
                node,
                "booted",
                "system",
                f"phoned home with {deployment.image} after {minutes:.1f} min",
                operation=deployment.operation,
            )
        except IllegalTransition:
            raise CallbackRefused(f"node is {node.state}, not deploying") from None
        deployment.status = DeploymentStatus.SUCCEEDED
        if deployment.media_url:
            transaction.on_commit(lambda: vmedia.eject_soon(node))
        if settings.CORRAL_GATE_ON_PHONE_HOME:
            # A deploy that is a step of a chain (recycle) has its gates in that chain too.
            parent_id = (
                Operation.objects.filter(pk=deployment.operation_id)
                .values_list("parent_id", flat=True)
                .first()
                if deployment.operation_id is not None
                else None
            )
            gate = Operation.objects.create(
                kind="validate",
                node=node,
                parent_id=parent_id,
                actor="system",
                message="acceptance gates after a reboot"
                if deployment.reboot
                else "acceptance gates after deploy",
                params={"after": "reboot"} if deployment.reboot else {},
            )
            # The gates' task, as the validation app registered it (provisioning imports no app
            # above it).
            operations.enqueue_on_commit(ACTIONS["validate"].task_name, gate)
    return deployment, True


def _node_failed(deployment: Deployment, node: Node, said: object) -> None:
    """The node's own report that its boot cannot go on (a root image whose sha256 is not
    the image's, say): the deploy fails now, with its words, not at the deadline. The
    transition closes the deployment (signals.close_deployment)."""
    words = "".join(c if " " <= c <= "~" else " " for c in str(said))[:500].strip()
    reason = f"the node reported: {words or 'a failure, without saying what'}"
    transition(node, "fail", "system", reason, operation=deployment.operation)


def waiting_deployment(node: Node | int) -> Deployment | None:
    return (
        Deployment.objects.select_related("image")
        .filter(node=node, status=DeploymentStatus.WAITING)
        .first()
    )
