"""A baseline naming the artifact for a firmware component (BaselineArtifact): checked
when an admin names it, and again whenever a converge plans or runs, because the
baseline (its expected versions, its model) may change after.

Without one, the converge finds the artifact (targets.artifact_for: component pattern,
version, model). With one, that artifact and only it is used: a named artifact that no
longer fits is a reason to skip the node, never a reason to fall back to another package
the admin did not choose.
"""

from __future__ import annotations

from collections import defaultdict
from fnmatch import fnmatchcase

from drift.engine import accepted
from drift.models import Baseline
from drift.services import matching
from drift.versions import same
from inventory.models import Node

from .models import ArtifactState, BaselineArtifact, FirmwareArtifact

FIRMWARE = "firmware."
NAMED = ("baseline", "component", "artifact")  # what a choice says


def problems(baseline: Baseline, component: str, artifact: FirmwareArtifact) -> dict[str, str]:
    """field -> what to fix, for naming `artifact` for `component` of `baseline`."""
    if not component.startswith(FIRMWARE):
        return {
            "component": f"{component!r} is not a firmware component: only firmware.<Id> "
            "components are flashed from an artifact (BIOS settings are written, not flashed)"
        }
    versions = accepted(baseline.components.get(component))
    if not versions:
        return {
            "component": f"baseline {baseline} expects no {component}; add it to the "
            "baseline's components first"
        }
    name = component.removeprefix(FIRMWARE)
    if artifact.state == ArtifactState.REFUSED:
        return {"artifact": f"{artifact} was refused ({artifact.reason}); name an accepted one"}
    if not fnmatchcase(name, artifact.component):
        return {"artifact": f"{artifact} updates {artifact.component!r}, not {name!r}"}
    if not any(same(artifact.version, v) for v in versions):
        return {
            "artifact": f"{artifact} is version {artifact.version}; baseline {baseline} "
            f"expects {component} {' or '.join(versions)}"
        }
    if (
        artifact.fits
        and baseline.node_model
        and not fnmatchcase(baseline.node_model, artifact.fits)
    ):
        return {
            "artifact": f"{artifact} fits {artifact.fits!r}, not the baseline's model "
            f"{baseline.node_model!r}"
        }
    return {}


def problem(pin: BaselineArtifact, node: Node, versions: tuple[str, ...]) -> str:
    """Why the named artifact cannot bring this node's component to its baseline now
    ("" when it can): the reason a plan skips the node, or a converge fails."""
    artifact, component = pin.artifact, pin.component
    said = f"baseline {pin.baseline} names {artifact} for {component}"
    if artifact.state != ArtifactState.ACCEPTED:
        return f"{said}, which is {artifact.get_state_display().lower()}"
    if not any(same(artifact.version, v) for v in versions):
        return f"{said}, but expects {' or '.join(versions)} now"
    if artifact.fits and not fnmatchcase(node.model, artifact.fits):
        return f"{said}, which fits {artifact.fits!r}, not {node.model or 'a node of no model'!r}"
    return ""


def for_nodes(nodes: list[Node]) -> dict[int, dict[str, BaselineArtifact]]:
    """Each node's named artifacts (FirmwareInventory name -> choice), from the baseline
    that matches it, in two reads for any number of nodes."""
    every = list(Baseline.objects.all())
    chosen: dict[int, dict[str, BaselineArtifact]] = defaultdict(dict)
    for pin in BaselineArtifact.objects.select_related("artifact", "baseline"):
        chosen[pin.baseline_id][pin.component.removeprefix(FIRMWARE)] = pin
    found: dict[int, dict[str, BaselineArtifact]] = {}
    for node in nodes:
        baseline = matching(every, node.model, node.gpu_model)
        found[node.pk] = chosen.get(baseline.pk, {}) if baseline else {}
    return found
