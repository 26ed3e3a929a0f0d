"""The node actions are registered by the apps that own them (inventory/actions.py), and a
start-up that finds the registry and the lifecycle apart refuses, naming the gap."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from fleet.celery import app as celery_app
from inventory import actions
from inventory.checks import registry_problems
from inventory.lifecycle import EVENTS, REPORTED


def test_every_event_a_person_starts_has_its_action():
    started = {a.event for a in actions.ACTIONS.values() if a.event}
    assert started == EVENTS - REPORTED
    assert registry_problems() == []
    call_command("check")  # what every start-up runs


def test_each_action_runs_a_task_the_workers_know():
    for action in actions.ACTIONS.values():
        if action.task is not None:
            assert action.task_name in celery_app.tasks, action.name


def test_buttons_keep_their_order_whatever_order_the_apps_register_in():
    assert list(actions.ACTIONS)[:6] == [
        "inspect",
        "deploy",
        "validate",
        "drain",
        "undrain",
        "recycle",
    ]
    assert list(actions.ACTIONS)[-4:] == ["power_on", "power_off", "power_cycle", "boot_pxe"]


def test_a_missing_action_stops_the_start_up(monkeypatch):
    monkeypatch.delitem(actions.ACTIONS, "drain")
    monkeypatch.delitem(actions.ACTIONS, "power_cycle")
    assert registry_problems() == [
        ("corral.E020", "no registered node action starts the lifecycle event 'drain'"),
        ("corral.E024", "inventory relies on a node action 'drain' no app registered"),
        ("corral.E024", "inventory relies on a node action 'power_cycle' no app registered"),
    ]
    with pytest.raises(SystemCheckError, match="lifecycle event 'drain'"):
        call_command("check")


def test_an_action_on_an_unknown_or_reported_event_is_refused(monkeypatch):
    monkeypatch.setitem(actions.ACTIONS, "wipe", actions.Action("wipe", "Wipe", 5, event="wipe"))
    monkeypatch.setitem(
        actions.ACTIONS, "admit", actions.Action("admit", "Admit", 6, event="admit")
    )
    codes = {code for code, _ in registry_problems()}
    assert codes == {"corral.E021", "corral.E022"}  # and 'wipe' is allowed in no state


def test_a_name_registered_twice_is_a_start_up_error():
    clash = actions.Action("drain", "Drain again", 41, event="drain")
    with pytest.raises(ImproperlyConfigured, match="'drain' is registered twice"):
        actions.register(clash)
    assert actions.ACTIONS["drain"].label == "Drain"


def test_another_apps_effect_runs_with_the_action():
    from rma import services

    assert services.on_node_decommissioned in actions.ACTIONS["decommission"].effects
