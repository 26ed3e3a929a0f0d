"""The small things a technician notices: message colours, times with their zone, power on
the rack elevation, labelled reasons, the rack's power budget named."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib import messages
from django.contrib.messages.storage.base import Message
from django.template import Context, Template
from django.urls import reverse
from django.utils import timezone

from inventory.templatetags.corral import ago, alert_class, duration, when
from tests.factories import NodeFactory


@pytest.mark.parametrize(
    ("level", "colour"),
    [
        (messages.DEBUG, "secondary"),
        (messages.INFO, "info"),
        (messages.SUCCESS, "success"),
        (messages.WARNING, "warning"),
        (messages.ERROR, "danger"),
    ],
)
def test_only_errors_are_red(level, colour):
    assert alert_class(Message(level, "x")) == colour
    # Extra tags do not change the colour (they used to end up in the class name).
    assert alert_class(Message(level, "x", extra_tags="sticky")) == colour
    html = Template('{% include "_partials/messages.html" %}').render(
        Context({"messages": [Message(level, "Drain started.")]})
    )
    assert f'class="alert alert-{colour} py-2 small"' in html


def test_when_shows_the_zone_and_ago_keeps_the_absolute_time(settings):
    t = datetime(2026, 11, 23, 5, 40, 12, tzinfo=UTC)
    assert str(when(t)) == '<time datetime="2026-11-23T05:40:12+00:00">2026-11-23 05:40 UTC</time>'
    assert "2026-11-23 05:40:12 UTC" in str(when(t, "s"))
    assert ago(t, now=t + timedelta(minutes=3, seconds=5)) == "3 min ago"
    assert ago(t, now=t + timedelta(days=2, hours=5)) == "2 d 5 h ago"
    assert ago(t, now=t - timedelta(seconds=30)) == "in 30 s"
    relative = str(when(timezone.now() - timedelta(minutes=3), "ago"))
    assert "UTC" in relative.split('title="')[1] and ">3 min ago</time>" in relative
    assert when(None) == ""
    with timezone.override("Europe/Paris"):
        assert "2026-11-23 06:40 CET" in str(when(t))


def test_duration():
    assert duration(timedelta(seconds=42)) == "42 s"
    assert duration(timedelta(minutes=3, seconds=12)) == "3 min 12 s"
    assert duration(timedelta(hours=2, minutes=5)) == "2 h 05 min"
    assert duration(None) == ""


@pytest.mark.django_db
def test_rack_shows_power_per_node_and_names_its_budget(client, users, rack):
    rack.power_budget_kw = 40
    rack.save()
    NodeFactory(rack=rack, rack_unit=1, u_height=4, hostname="gpu-on", power_state="on")
    NodeFactory(rack=rack, rack_unit=5, u_height=4, hostname="gpu-off", power_state="off")
    client.force_login(users["manager"])
    html = client.get(reverse("inventory:rack_detail", args=[rack.pk])).content.decode()
    elevation = html[html.index('id="rack-elevation"') : html.index("</table>")]
    assert elevation.count('class="u-power"') == 2
    assert 'text-bg-success border">on</span>' in elevation
    assert 'text-bg-secondary border">off</span>' in elevation
    assert "power budget 40 kW" in html
    assert 'class="fw-semibold hostname">gpu-on</a>' in html


@pytest.mark.django_db
def test_node_actions_reason_is_labelled_and_buttons_do_not_wrap(client, users):
    node = NodeFactory(hostname="gpu-new")  # enrolled: decommission (with a reason) is legal
    client.force_login(users["technician"])
    html = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    actions = html[html.index('id="node-actions"') :]
    assert (
        '<span class="input-group-text">Reason</span><input class="form-control" name="reason"'
        in (actions)
    )
    assert 'text-nowrap" type="submit" data-action="decommission"' in actions
    assert "node-action-wide" in actions
    assert 'style="' not in actions[: actions.index("Lifecycle events")]


@pytest.mark.django_db
def test_firmware_that_is_not_running_is_marked_on_the_node_page(client, users):
    """A Dell rollback image and a Cray component without a version read as such, not as
    the firmware the node runs (issue 28)."""
    node = NodeFactory(
        hostname="gpu-fw",
        hardware_facts={"gpus": [], "unavailable": {}},
        firmware_facts=[
            {"id": "Current-159-1.8.2__BIOS.Setup.1-1", "name": "BIOS", "version": "1.8.2"},
            {
                "id": "Previous-159-1.2.4__BIOS.Setup.1-1",
                "name": "BIOS",
                "version": "1.2.4",
                "state": "not_installed",
                "note": "Previous-: the image iDRAC keeps for rollback, not the one running",
            },
            {"id": "mcu", "name": "mcu", "version": None, "state": "unreadable"},
        ],
    )
    client.force_login(users["technician"])
    html = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    rows = html[html.index('id="node-firmware"') :].split("</tr>")
    current = next(r for r in rows if "1.8.2" in r)
    rollback = next(r for r in rows if "1.2.4" in r)
    assert "not installed" not in current
    assert "not installed</span>" in rollback and "for rollback" in rollback
    assert "unreadable</span>" in next(r for r in rows if "<td>mcu</td>" in r)
