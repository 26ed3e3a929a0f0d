"""Redfish firmware updates (UpdateService.SimpleUpdate and its task) and BIOS settings.

Starting an update and writing BIOS settings go through sushy (its UpdateService and
Bios resources know the action targets, ETags and transfer protocols). Following the
task reads the monitor directly, because the answer's status is what DSP0266 defines
(202: still working) and BMCs differ in what they return there: Dell and HPE give the
Task itself (a 200 with `TaskState`), others a monitor that answers 202 until it ends.

The BIOS attribute registry is found by the name `Bios.AttributeRegistry` gives, among
the service's Registries: the file whose Id is that name, else a file whose document has
that Id (sushy-tools names its file `BiosAttributeRegistry.v1_0_0` and the document
`BiosAttributeRegistryP89.v1_0_0`; Dell names both alike).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import BMCResponseError, BMCUnsupportedError
from provisioning.drivers.redfish.client import ROOT_PREFIX, RedfishClient
from provisioning.drivers.redfish.reader import link
from provisioning.drivers.updates import (
    Attribute,
    Progress,
    UpdateInterface,
    UpdateTask,
    attribute_from,
    progress_from,
)

MAX_REGISTRY_FILES = 50  # registry files read while looking for the BIOS one


class RedfishUpdates(UpdateInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self._bios_document: dict[str, Any] | None = None  # read once per driver

    # -- firmware ---------------------------------------------------------------------
    def start(self, image_uri: str, targets: Sequence[str] = ()) -> UpdateTask:
        scheme = urlsplit(image_uri).scheme.upper() or "HTTP"
        with self.client.translate("starting a firmware update"):
            service = self.client.root.get_update_service()
            try:
                monitor = service.simple_update(
                    image_uri, targets=list(targets) or None, transfer_protocol=scheme
                )
            except sushy_exc.MissingHeaderError:
                # 204 without a Location: the BMC says the update is done already.
                return UpdateTask("", image_uri, tuple(targets))
        return UpdateTask(monitor.task_monitor_uri, image_uri, tuple(targets))

    def progress(self, task: UpdateTask) -> Progress:
        if not task.monitor:
            return progress_from(204, None)
        with self.client.translate("following a firmware update"):
            response = self.client.root._conn.get(path=task.monitor)
            document = response.json() if response.content else None
        if document is not None and not isinstance(document, dict):
            raise BMCResponseError(
                f"BMC at {self.client.address} answered the update task {task.monitor} "
                "with JSON that is not an object",
                address=self.client.address,
            )
        return progress_from(response.status_code, document)

    # -- BIOS -------------------------------------------------------------------------
    def _bios(self) -> dict[str, Any]:
        if self._bios_document is None:
            self._bios_document = self._read_bios()
        return self._bios_document

    def _read_bios(self) -> dict[str, Any]:
        system = self.client.get_json(self.client.system_path)
        path = link(system, "Bios")
        if not path:
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} has no Bios resource for {self.client.system_path}",
                address=self.client.address,
            )
        return self.client.get_json(path)

    def bios_attributes(self) -> dict[str, Any]:
        with self.client.translate("reading the BIOS attributes"):
            self._bios_document = None  # always read afresh: it is what a check compares
            attributes = self._bios().get("Attributes")
        return dict(attributes) if isinstance(attributes, dict) else {}

    def bios_registry_name(self) -> str:
        with self.client.translate("reading the BIOS attributes"):
            return str(self._bios().get("AttributeRegistry") or "")

    def bios_registry(self) -> dict[str, Attribute]:
        with self.client.translate("reading the BIOS attribute registry"):
            name = str(self._bios().get("AttributeRegistry") or "")
            document = self._registry(name) if name else None
        if document is None:
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} publishes no BIOS attribute registry"
                + (f" named {name!r}" if name else ""),
                address=self.client.address,
            )
        entries = (document.get("RegistryEntries") or {}).get("Attributes") or []
        specs = [attribute_from(e) for e in entries if isinstance(e, Mapping)]
        return {spec.name: spec for spec in specs if spec.name}

    def _registry(self, name: str) -> dict[str, Any] | None:
        root = self.client.get_json(ROOT_PREFIX)
        files = self.client.members(link(root, "Registries") or "/redfish/v1/Registries")
        fallback = []
        for path in files[:MAX_REGISTRY_FILES]:
            data = self.client.get_json(path)
            if data.get("Id") == name or data.get("Registry") == name:
                return self._located(data)
            if "attribute" in f"{data.get('Id')} {data.get('Registry')}".lower():
                fallback.append(data)
        for data in fallback:
            document = self._located(data)
            if document is not None and document.get("Id") == name:
                return document
        return None

    def _located(self, registry_file: dict[str, Any]) -> dict[str, Any] | None:
        locations = registry_file.get("Location") or []
        for place in sorted(locations, key=lambda p: p.get("Language") != "en"):
            uri = place.get("Uri") if isinstance(place, dict) else None
            if uri:
                return self.client.get_json(uri)
        return None

    def set_bios_attributes(self, attributes: Mapping[str, Any]) -> None:
        with self.client.translate("writing BIOS settings"):
            self.client.system().bios.set_attributes(dict(attributes))
        self._bios_document = None  # what is in effect may change now
