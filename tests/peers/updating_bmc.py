"""A Redfish BMC that updates firmware the way DSP0266 says a service does, and fails the
ways real ones do: the test BMC for the BMC, GPU and NIC firmware sushy-tools refuses.

It is the faulty BMC (tests/peers/faulty_http.py) plus an UpdateService, a
FirmwareInventory (BMC, BIOS, GPU0, NIC0) and tasks:

- `POST UpdateService.SimpleUpdate` with an `ImageURI` it knows (`images`: URI ->
  (component, version)) answers 202 Accepted with a `Location` (DSP0266 "Asynchronous
  operations"): the task monitor, or, as Dell's and HPE's do, the Task itself
  (`task_location=True`). An unknown URI is a 400 with an extended-error message.
- The monitor answers 202 with the Task (`TaskState` Running, `PercentComplete`) for
  `polls` requests, then ends it as `plan.outcome` says: "ok" (the component's version
  changes, TaskState Completed), "exception" (TaskState Exception, TaskStatus Critical,
  the `message` in `Messages`: a BMC that refused the image) or "no_change" (Completed,
  yet the version stays: an update that reports success and did nothing). The Task
  resource answers 200 with the same document at every stage.
- `ids`: a component's member Id, as a template of its version (Dell's iDRAC writes
  `Installed-159-2.19.1__BIOS.Setup.1-1`); `vendor` goes in the service root. A
  `Targets` entry that names no member of the inventory is a 400, as a BMC answers it.
- `push=True`: the UpdateService offers no SimpleUpdate, only a `MultipartHttpPushUri`,
  as the GB200/GH200 trays' BMCs and stock OpenBMC do (tests/corpus/redfish). A POST
  there is multipart/form-data (DSP0266 "Multipart HTTP push updates"): the
  `UpdateParameters` part JSON (`Targets`), the `UpdateFile` part the image, known by
  its sha256 (`images`: sha256 -> (component, version)); then a task as above. A body
  that is not that is a 400.
- `restart_requests`: once the task ended, the BMC restarts and drops that many requests
  (connection closed, no answer), as a BMC does while it boots its new firmware.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.peers.faulty_http import FaultyRedfish, serving

UPDATE_SERVICE = "/redfish/v1/UpdateService"
SIMPLE_UPDATE = f"{UPDATE_SERVICE}/Actions/UpdateService.SimpleUpdate"
PUSH_URI = f"{UPDATE_SERVICE}/update-multipart"  # the GB200 compute tray's
INVENTORY = f"{UPDATE_SERVICE}/FirmwareInventory"
TASKS = "/redfish/v1/TaskService/Tasks"
MONITORS = "/redfish/v1/TaskService/TaskMonitors"


@dataclass
class Plan:
    """How the next update goes."""

    outcome: str = "ok"  # ok | exception | no_change
    polls: int = 2  # monitor requests answered "Running" before the task ends
    message: str = "Image verification failed: the image is not signed by the vendor."
    restart_requests: int = 0


@dataclass
class UpdatingRedfish(FaultyRedfish):
    firmware: dict[str, str] = field(
        default_factory=lambda: {
            "BMC": "1.45.00",
            "BIOS": "2.19.1",
            "GPU0": "96.00.89.00.01",
            "NIC0": "28.39.1002",
        }
    )
    images: dict[str, tuple[str, str]] = field(default_factory=dict)
    plan: Plan = field(default_factory=Plan)
    task_location: bool = False  # Location names the Task (Dell, HPE), not a monitor
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    dropping: int = 0
    ids: dict[str, str] = field(default_factory=dict)  # component -> Id template ({version})
    vendor: str = ""
    push: bool = False  # MultipartHttpPushUri only (no SimpleUpdate)
    file_names: list[str] = field(default_factory=list)  # of the files pushed to it

    def _members(self) -> dict[str, str]:
        """Member Id -> the component it is."""
        return {
            self.ids.get(c, "{component}").format(component=c, version=v): c
            for c, v in self.firmware.items()
        }

    def unreachable(self) -> bool:
        if self.dropping > 0:
            self.dropping -= 1
            return True
        return False

    def resource(self, path: str) -> dict[str, Any] | None:
        if path == "/redfish/v1":
            root = super().resource(path) or {}
            root = {**root, "UpdateService": {"@odata.id": UPDATE_SERVICE}}
            return {**root, "Vendor": self.vendor} if self.vendor else root
        if path == UPDATE_SERVICE:
            service = {
                "@odata.id": UPDATE_SERVICE,
                "Id": "UpdateService",
                "Name": "Update Service",
                "ServiceEnabled": True,
                "FirmwareInventory": {"@odata.id": INVENTORY},
            }
            if self.push:
                return {**service, "MultipartHttpPushUri": PUSH_URI}
            simple = {
                "target": SIMPLE_UPDATE,
                "TransferProtocol@Redfish.AllowableValues": ["HTTP", "HTTPS"],
            }
            return {**service, "Actions": {"#UpdateService.SimpleUpdate": simple}}
        if path == INVENTORY:
            members = [{"@odata.id": f"{INVENTORY}/{m}"} for m in self._members()]
            return {"Members": members, "Members@odata.count": len(members)}
        member = path.removeprefix(f"{INVENTORY}/")
        component = self._members().get(member, "")
        if component in self.firmware:
            return {
                "@odata.id": path,
                "Id": member,
                "Name": component,
                "Version": self.firmware[component],
                "Updateable": True,
                "Status": {"State": "Enabled", "Health": "OK"},
            }
        return super().resource(path)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, dict, Any] | None:
        if method == "POST" and path == SIMPLE_UPDATE and not self.push:
            return self._start(body if isinstance(body, dict) else {})
        if method == "POST" and path == PUSH_URI and self.push:
            return self._pushed(body)
        task_id = path.rsplit("/", 1)[-1]
        if method == "GET" and path.startswith(MONITORS) and task_id in self.tasks:
            return self._monitor(task_id)
        if method == "GET" and path.startswith(TASKS) and task_id in self.tasks:
            return self._task(task_id)
        return None

    def _start(self, body: dict[str, Any]) -> tuple[int, dict, Any]:
        uri = str(body.get("ImageURI") or "")
        if uri not in self.images:
            return 400, {}, _error(f"The image at {uri} could not be downloaded.")
        return self._begin(uri, body.get("Targets") or [])

    def _pushed(self, parts: Any) -> tuple[int, dict, Any]:
        if not isinstance(parts, dict) or "UpdateFile" not in parts:
            return 400, {}, _error("The request is not multipart/form-data with an UpdateFile.")
        try:
            parameters = json.loads(parts.get("UpdateParameters") or b"{}")
        except ValueError:
            return 400, {}, _error("UpdateParameters is not JSON.")
        self.file_names.append(getattr(parts["UpdateFile"], "filename", ""))
        digest = hashlib.sha256(parts["UpdateFile"]).hexdigest()
        if digest not in self.images:
            return 400, {}, _error("The image is not a valid firmware package.")
        return self._begin(digest, parameters.get("Targets") or [])

    def _begin(self, image: str, targets: list[str]) -> tuple[int, dict, Any]:
        known = {f"{INVENTORY}/{m}" for m in self._members()}
        unknown = [t for t in targets if t not in known]
        if unknown:
            return 400, {}, _error(f"The target {unknown[0]} is not in the firmware inventory.")
        task_id = str(len(self.tasks) + 1)
        component, version = self.images[image]
        self.tasks[task_id] = {
            "state": "New",
            "polls": self.plan.polls,
            "component": component,
            "version": version,
            "percent": 0,
            "messages": [],
        }
        location = f"{TASKS}/{task_id}" if self.task_location else f"{MONITORS}/{task_id}"
        return 202, {"Location": location}, None

    def _advance(self, task: dict[str, Any]) -> None:
        """One poll's worth of progress: Running for `polls` polls, then the end."""
        if task["polls"] > 0:
            task["polls"] -= 1
            task["state"] = "Running"
            task["percent"] = 100 * (self.plan.polls - task["polls"]) // (self.plan.polls + 1)
        elif task["state"] in ("New", "Running"):
            self._end(task)

    def _monitor(self, task_id: str) -> tuple[int, dict, Any]:
        task = self.tasks[task_id]
        self._advance(task)
        if task["state"] == "Running":
            return 202, {"Location": f"{MONITORS}/{task_id}"}, self._document(task_id)
        return 200, {}, self._document(task_id)

    def _task(self, task_id: str) -> tuple[int, dict, Any]:
        if self.task_location:  # the Task is what is followed: it moves on as it is read
            self._advance(self.tasks[task_id])
        return 200, {}, self._document(task_id)

    def _end(self, task: dict[str, Any]) -> None:
        task["percent"] = 100
        if self.plan.outcome == "exception":
            task["state"] = "Exception"
            failed = {"MessageId": "Update.1.0.ApplyFailed", "Message": self.plan.message}
            task["messages"] = [failed]
            return
        task["state"] = "Completed"
        if self.plan.outcome == "ok":
            self.firmware[task["component"]] = task["version"]
        self.dropping = self.plan.restart_requests

    def _document(self, task_id: str) -> dict[str, Any]:
        task = self.tasks[task_id]
        return {
            "@odata.id": f"{TASKS}/{task_id}",
            "Id": task_id,
            "Name": f"Update {task['component']}",
            "TaskState": task["state"],
            "TaskStatus": "Critical" if task["state"] == "Exception" else "OK",
            "PercentComplete": task["percent"],
            "Messages": task["messages"],
        }


def _error(message: str) -> dict[str, Any]:
    return {
        "error": {
            "code": "Base.1.0.GeneralError",
            "message": "A general error has occurred.",
            "@Message.ExtendedInfo": [
                {
                    "MessageId": "Update.1.0.ImageNotFound",
                    "Message": message,
                    "Severity": "Critical",
                }
            ],
        }
    }


@pytest.fixture
def updating_bmc() -> Iterator[UpdatingRedfish]:
    """A fresh updating BMC per test (thread in this process, loopback only)."""
    with serving(UpdatingRedfish()) as peer:
        yield peer
