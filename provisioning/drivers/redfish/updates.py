"""Redfish firmware updates (UpdateService.SimpleUpdate and its task) and BIOS settings.

Starting an update and writing BIOS settings go through sushy (its UpdateService and
Bios resources know the action targets, ETags and transfer protocols). Following the
task reads the monitor directly, because the answer's status is what DSP0266 defines
(202: still working) and BMCs differ in what they return there: Dell and HPE give the
Task itself (a 200 with `TaskState`), others a monitor that answers 202 until it ends.

How an image reaches the BMC (`route`): pulled when the UpdateService offers SimpleUpdate
over the image URI's protocol (its `TransferProtocol@Redfish.AllowableValues`, inline or
in its ActionInfo; a BMC that does not say is taken to take it), else pushed to its
`MultipartHttpPushUri` (DSP0266 "Multipart HTTP push updates"). The GB200 and GH200
trays' BMCs and stock OpenBMC offer no SimpleUpdate at all (tests/corpus/redfish), so a
GB200 site is converged by push. The push streams the file (requests-toolbelt's
encoder): a GPU tray bundle is about a GiB, never read into the worker's memory.

The BIOS attribute registry is found by the name `Bios.AttributeRegistry` gives, among
the service's Registries: the file whose Id is that name, else a file whose document has
that Id (sushy-tools names its file `BiosAttributeRegistry.v1_0_0` and the document
`BiosAttributeRegistryP89.v1_0_0`; Dell names both alike).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from requests_toolbelt import MultipartEncoder
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
SIMPLE_UPDATE = "#UpdateService.SimpleUpdate"
PULL, PUSH = "pull", "push"
# A push sends the whole image before the BMC answers: (connect, read) seconds.
PUSH_TIMEOUT = (10.0, 1800.0)


def _file_name(image_uri: str, image: Path) -> str:
    return urlsplit(image_uri).path.rstrip("/").rsplit("/", 1)[-1] or image.name


def route(
    service: Mapping[str, Any], scheme: str, protocols: Sequence[str] | None = None
) -> tuple[str, str] | None:
    """How an image over `scheme` reaches the BMC whose UpdateService document this is:
    (PULL, the SimpleUpdate target) or (PUSH, its MultipartHttpPushUri); None: neither.
    `protocols`: what the SimpleUpdate's ActionInfo allows, when its document says
    nothing inline (None: nobody says, so it is taken to allow the scheme)."""
    simple = (service.get("Actions") or {}).get(SIMPLE_UPDATE)
    push = service.get("MultipartHttpPushUri")
    if isinstance(simple, Mapping) and simple.get("target"):
        allowed = simple.get("TransferProtocol@Redfish.AllowableValues", protocols)
        if allowed is None or scheme.upper() in {str(p).upper() for p in allowed}:
            return PULL, str(simple["target"])
    if isinstance(push, str) and push:
        return PUSH, push
    return None


class RedfishUpdates(UpdateInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self._bios_document: dict[str, Any] | None = None  # read once per driver

    # -- firmware ---------------------------------------------------------------------
    def start(
        self, image_uri: str, targets: Sequence[str] = (), image: Path | None = None
    ) -> UpdateTask:
        scheme = urlsplit(image_uri).scheme.upper() or "HTTP"
        with self.client.translate("starting a firmware update"):
            how, where = self._route(scheme)
        if how == PUSH:
            if image is None or not image.is_file():
                where_not = f" (none at {image})" if image is not None else ""
                raise BMCUnsupportedError(
                    f"BMC at {self.client.address} takes firmware only pushed to it "
                    f"({where}), and this worker has no copy of the image{where_not}",
                    address=self.client.address,
                )
            return self._push(where, image, image_uri, targets)
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

    def _route(self, scheme: str) -> tuple[str, str]:
        root = self.client.get_json(ROOT_PREFIX)
        path = link(root, "UpdateService")
        if not path:
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} has no UpdateService", address=self.client.address
            )
        service = self.client.get_json(path)
        simple = (service.get("Actions") or {}).get(SIMPLE_UPDATE)
        protocols = None
        if isinstance(simple, Mapping) and "TransferProtocol@Redfish.AllowableValues" not in simple:
            info = simple.get("@Redfish.ActionInfo")
            protocols = self._allowed_protocols(info) if isinstance(info, str) else None
        found = route(service, scheme, protocols)
        if found is None:
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} offers neither SimpleUpdate over {scheme} nor "
                "a MultipartHttpPushUri: Corral cannot give it an image",
                address=self.client.address,
            )
        return found

    def _allowed_protocols(self, info_path: str) -> list[str] | None:
        """The TransferProtocol values an ActionInfo allows (None: it does not say, or it
        cannot be read: a BMC whose ActionInfo link leads nowhere still takes the call)."""
        try:
            info = self.client.get_json(info_path)
        except Exception:  # noqa: BLE001  an unreadable ActionInfo says nothing
            return None
        for parameter in info.get("Parameters") or []:
            if isinstance(parameter, Mapping) and parameter.get("Name") == "TransferProtocol":
                values = parameter.get("AllowableValues")
                return [str(v) for v in values] if isinstance(values, list) else None
        return None

    def _push(self, uri: str, image: Path, image_uri: str, targets: Sequence[str]) -> UpdateTask:
        parameters = {"Targets": list(targets)} if targets else {}
        conn = self.client.root._conn
        with self.client.translate("pushing a firmware image"), image.open("rb") as stream:
            body = MultipartEncoder(
                fields={
                    "UpdateParameters": (None, json.dumps(parameters), "application/json"),
                    # The package's own file name (some BMCs judge it by its extension).
                    "UpdateFile": (
                        _file_name(image_uri, image),
                        stream,
                        "application/octet-stream",
                    ),
                }
            )
            url = urljoin(conn._url, uri)
            headers = {"Content-Type": body.content_type, "OData-Version": "4.0"}
            response = conn._session.post(url, data=body, headers=headers, timeout=PUSH_TIMEOUT)
            if response.status_code >= 400:
                sushy_exc.raise_for_response("POST", url, response)
            # DSP0266: 202 with the monitor in Location; OpenBMC also sends the Task.
            monitor = response.headers.get("Location") or ""
            if not monitor and response.content:
                document = response.json()
                if isinstance(document, dict):
                    monitor = str(document.get("@odata.id") or "")
        return UpdateTask(urlsplit(monitor).path if monitor else "", image_uri, tuple(targets))

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
