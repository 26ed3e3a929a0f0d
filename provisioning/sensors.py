"""A node's telemetry, kept from what its BMC answers (docs/metrics.md, BMC sensors).

Every time Corral reads a BMC's health (the periodic refresh, within its per-site budget;
a power action; an inspection) the sensors come with it at no extra request, so the
readings are kept then: the latest of each on the node (NodeSensors), and a short history
of what matters across a fleet (power draw, intake and hottest temperatures) for the node
page's chart, the rack's power against its budget and the per-site metrics. A GPU that
goes over CORRAL_GPU_TEMPERATURE_LIMIT_C is announced once (signals.gpu_too_hot), and the
health policy decides what to do (docs/health.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from inventory.models import Node

from . import signals
from .drivers.results import POWER, TEMPERATURE, Sensor
from .models import NodeSensors, SensorSample


@dataclass(frozen=True)
class Summary:
    power_w: float | None
    intake_c: float | None
    hottest_c: float | None
    gpu_hottest_c: float | None
    gpu_hottest: str  # the GPU sensor's name, for the health event's message


def _where(sensor: Sensor) -> str:
    """Its place, one spelling for both protocols: Redfish's PhysicalContext
    ("PowerSupply") and the IPMI SDR's sensor type ("Power Supply") alike."""
    return (sensor.context or "").lower().replace(" ", "")


def _is_gpu(sensor: Sensor) -> bool:
    return _where(sensor) == "gpu" or "gpu" in sensor.name.lower()


def _is_intake(sensor: Sensor) -> bool:
    # IPMI's sensor type says only "Temperature": the inlet is known by its name there.
    name = sensor.name.lower()
    return _where(sensor) == "intake" or "inlet" in name or "intake" in name


def summarize(sensors: list[Sensor]) -> Summary:
    """The figures kept per refresh. Power: the chassis' draw where the BMC gives one,
    else the sum of its power supplies' input; intake: the coolest intake sensor (the
    room's, where it has none); hottest: of every temperature."""
    temps = [s for s in sensors if s.kind == TEMPERATURE and s.reading is not None]
    power = [s for s in sensors if s.kind == POWER and s.reading is not None]
    chassis = [s.reading for s in power if _where(s) == "chassis"]
    supplies = [
        s.reading for s in power if _where(s) == "powersupply" and "input" in s.name.lower()
    ]
    intake = [s.reading for s in temps if _is_intake(s)]
    intake = intake or [s.reading for s in temps if _where(s) == "room"]
    gpus = sorted((s for s in temps if _is_gpu(s)), key=lambda s: s.reading or 0.0)
    return Summary(
        power_w=chassis[0] if chassis else (sum(supplies) if supplies else None),  # type: ignore[arg-type]
        intake_c=min(intake) if intake else None,  # type: ignore[type-var]
        hottest_c=max((s.reading for s in temps), default=None),  # type: ignore[type-var]
        gpu_hottest_c=gpus[-1].reading if gpus else None,
        gpu_hottest=gpus[-1].name if gpus else "",
    )


def record(node: Node, sensors: list[Sensor], at: datetime | None = None) -> Summary | None:
    """Keep what the BMC said (nothing when it gave no sensor: an IPMI BMC without an SDR
    says nothing about its temperatures, not that they are fine)."""
    if not sensors:
        return None
    at = at or timezone.now()
    found = summarize(sensors)
    limit = settings.CORRAL_GPU_TEMPERATURE_LIMIT_C
    over = found.gpu_hottest_c is not None and found.gpu_hottest_c > limit
    figures = {
        "power_w": found.power_w,
        "intake_c": found.intake_c,
        "hottest_c": found.hottest_c,
        "gpu_hottest_c": found.gpu_hottest_c,
    }
    kept = NodeSensors.objects.filter(node=node)
    was_over = kept.values_list("gpu_over_limit", flat=True).first()
    latest = {"at": at, "gpu_over_limit": over, "readings": [s.to_dict() for s in sensors]}
    # An UPDATE, not update_or_create's locked read and savepoint: this runs after every
    # power action of every node (one row per node; two writers: the later one stands).
    if was_over is None or not kept.update(**latest, **figures):
        NodeSensors.objects.update_or_create(node=node, defaults={**latest, **figures})
    SensorSample.objects.create(node=node, at=at, **figures)
    if over and not was_over:
        signals.gpu_too_hot.send_robust(
            sender=Node,
            node=node,
            detail=f"{found.gpu_hottest}: {found.gpu_hottest_c:g} °C, over the limit of "
            f"{limit:g} °C (CORRAL_GPU_TEMPERATURE_LIMIT_C)",
        )
    return found


def prune(now: datetime | None = None) -> int:
    """A sweep part: drop the samples older than CORRAL_SENSOR_HISTORY_HOURS."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.CORRAL_SENSOR_HISTORY_HOURS)
    deleted, _ = SensorSample.objects.filter(at__lt=cutoff).delete()
    return deleted
