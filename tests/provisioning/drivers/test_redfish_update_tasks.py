"""Following a firmware update's task, against the updating test BMC
(tests/peers/updating_bmc.py), which answers as DSP0266 defines: 202 Accepted with a
Location, a monitor answering 202 while the Task runs, the Task's TaskState, Messages
on failure, and a BMC that restarts (drops connections) after flashing itself."""

from __future__ import annotations

import pytest

from provisioning.drivers import BMCFatalError, BMCTransientError, get_driver
from provisioning.drivers.updates import COMPLETED, FAILED, RUNNING
from tests.peers.updating_bmc import INVENTORY

IMAGE = "http://127.0.0.1:8000/artifacts/firmware/bmc-1.52.00.bin"


@pytest.fixture
def bmc(updating_bmc):
    updating_bmc.images[IMAGE] = ("BMC", "1.52.00")
    return updating_bmc


def versions(driver) -> dict[str, str]:
    return {c.id: c.version for c in driver.firmware.firmware()}


def follow(driver, task, limit: int = 10) -> list:
    """Every answer until the task ends (a real caller waits between them)."""
    seen = []
    for _ in range(limit):
        seen.append(driver.updates.progress(task))
        if seen[-1].ended:
            return seen
    raise AssertionError(f"the task did not end in {limit} polls: {seen}")


def test_an_update_runs_through_its_monitor_to_the_new_version(bmc, redfish_settings):
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
        seen = follow(driver, task)
        assert versions(driver)["BMC"] == "1.52.00"
    assert task.monitor == "/redfish/v1/TaskService/TaskMonitors/1"
    assert [(p.state, p.percent) for p in seen] == [
        (RUNNING, 33),
        (RUNNING, 66),
        (COMPLETED, 100),
    ]
    [(_, body)] = [(p, b) for p, b in bmc.sent("POST") if p.endswith("SimpleUpdate")]
    assert body == {"ImageURI": IMAGE, "TransferProtocol": "HTTP", "Targets": [f"{INVENTORY}/BMC"]}


def test_a_location_that_is_the_task_itself_is_followed_by_its_task_state(bmc, redfish_settings):
    bmc.task_location = True  # as Dell's and HPE's BMCs answer
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
        seen = follow(driver, task)
    assert task.monitor == "/redfish/v1/TaskService/Tasks/1"
    assert [p.task_state for p in seen] == ["Running", "Running", "Completed"]


def test_a_task_that_ends_in_an_exception_fails_with_the_bmcs_words(bmc, redfish_settings):
    bmc.plan.outcome = "exception"
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
        last = follow(driver, task)[-1]
        assert versions(driver)["BMC"] == "1.45.00"
    assert (last.state, last.task_state) == (FAILED, "Exception")
    assert last.messages == ("Image verification failed: the image is not signed by the vendor.",)


def test_an_update_the_bmc_refuses_fails_at_once_with_its_message(bmc, redfish_settings):
    with get_driver(redfish_settings(bmc, "sys1")) as driver, pytest.raises(BMCFatalError) as e:
        driver.updates.start("http://127.0.0.1:8000/nowhere.bin", [f"{INVENTORY}/BMC"])
    assert "could not be downloaded" in str(e.value) and "HTTP 400" in str(e.value)
    assert bmc.tasks == {}


def test_a_bmc_restarting_after_the_update_is_no_answer_until_it_is_back(bmc, redfish_settings):
    bmc.plan.restart_requests = 2
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
        assert follow(driver, task)[-1].state == COMPLETED
        for _ in range(2):
            with pytest.raises(BMCTransientError):
                driver.updates.progress(task)
        assert driver.updates.progress(task).state == COMPLETED
        assert versions(driver)["BMC"] == "1.52.00"


def test_an_update_that_reports_success_but_changed_nothing_is_visible(bmc, redfish_settings):
    """The task says Completed; only reading the inventory again tells (converge does)."""
    bmc.plan.outcome = "no_change"
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
        assert follow(driver, task)[-1].state == COMPLETED
        assert versions(driver)["BMC"] == "1.45.00"
