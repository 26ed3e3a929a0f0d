"""The panels other apps provide on another app's pages (on a node: gates, boot,
attestation, RMA, drift, health, changes; on a rack: changes; on a baseline: its firmware
packages), registered by those apps from their `ready()`.

Each panel is a slot the page fills over HTMX from the app's own URL, so inventory's
templates name no higher app: adding a panel touches only the app that draws it. The
slots come in `order`; one whose `capability` the viewer lacks fleet-wide is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse


def _pk(obj: Any) -> tuple:
    return (obj.pk,)


@dataclass(frozen=True)
class Panel:
    page: str  # "node", "rack" or "baseline": the page it is drawn on
    name: str  # the slot's id is "<name>-panel-slot"
    url_name: str  # the app's view that draws the panel
    order: int
    capability: str = ""  # shown only to whoever holds this fleet-wide ("": every reader)
    reloads: bool = True  # drawn again when the node changes (the live region says so)
    swap: str = ""  # hx-swap, when the panel replaces its slot ("outerHTML")
    args: Callable[[Any], tuple] = field(default=_pk, compare=False)  # the URL's, from the object


PANELS: dict[tuple[str, str], Panel] = {}


def register(panel: Panel) -> None:
    key = (panel.page, panel.name)
    if PANELS.get(key, panel) != panel:
        raise ImproperlyConfigured(f"a {panel.page} panel named {panel.name!r} is registered twice")
    PANELS[key] = panel


def slots(page: str, obj: Any, allowed: Callable[[str], bool]) -> list[tuple[Panel, str]]:
    """The panels to draw on `obj`'s page, in order, with the URL each loads from;
    `allowed(capability)` says whether the viewer holds a capability fleet-wide."""
    shown = sorted((p for p in PANELS.values() if p.page == page), key=lambda p: p.order)
    return [
        (p, reverse(p.url_name, args=p.args(obj)))
        for p in shown
        if not p.capability or allowed(p.capability)
    ]
