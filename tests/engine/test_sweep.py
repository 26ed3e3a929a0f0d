"""The one sweep: each registered part runs once per its interval, however many beat ticks
or processes there are; a part still running is not started twice; one part's failure
is recorded and does not stop the others."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from engine import sweep
from engine.models import SweepPart

pytestmark = pytest.mark.django_db


@pytest.fixture
def parts() -> Iterator[dict[str, list[int]]]:
    """Only this test's parts are registered while it runs."""
    saved = dict(sweep.PARTS)
    sweep.PARTS.clear()
    calls: dict[str, list[int]] = {}
    try:
        yield calls
    finally:
        sweep.PARTS.clear()
        sweep.PARTS.update(saved)


def counting(calls: dict[str, list[int]], name: str):
    def run() -> int:
        calls.setdefault(name, []).append(1)
        return len(calls[name])

    return run


def test_each_part_runs_once_per_its_interval(parts, settings):
    settings.CORRAL_REPUBLISH_SECONDS = 15
    sweep.register("every-tick", counting(parts, "every-tick"), None, "")
    sweep.register("slow", counting(parts, "slow"), "CORRAL_REPUBLISH_SECONDS", "")
    t0 = timezone.now()

    assert sweep.run(t0) == {"every-tick": 1, "slow": 1}
    assert sweep.run(t0 + timedelta(seconds=2)) == {"every-tick": 2}
    assert sweep.run(t0 + timedelta(seconds=15)) == {"every-tick": 3, "slow": 2}
    row = SweepPart.objects.get(name="slow")
    assert row.result == {"count": 2} and row.error == ""


def test_a_part_still_running_is_not_started_again_until_its_run_is_presumed_dead(parts):
    sweep.register("long", counting(parts, "long"), None, "")
    t0 = timezone.now()
    sweep.run(t0)
    # Another process has started it and not finished yet.
    SweepPart.objects.filter(name="long").update(started=t0 + timedelta(seconds=1))
    assert sweep.run(t0 + timedelta(seconds=5)) == {}
    later = t0 + timedelta(seconds=1 + sweep.LEASE_SECONDS + 1)
    assert sweep.run(later) == {"long": 2}


def test_a_failing_part_is_recorded_and_the_others_still_run(parts):
    def broken() -> int:
        raise RuntimeError("the scheduler's reply made no sense")

    sweep.register("broken", broken, None, "")
    sweep.register("fine", counting(parts, "fine"), None, "")

    results = sweep.run()
    assert results["fine"] == 1
    assert results["broken"] == {"error": "RuntimeError: the scheduler's reply made no sense"}
    assert SweepPart.objects.get(name="broken").error.startswith("RuntimeError")


def test_a_part_is_registered_once_with_a_real_interval_setting(parts):
    def one() -> int:
        return 0

    def other() -> int:
        return 0

    sweep.register("one", one, None, "")
    sweep.register("one", one, None, "")  # an app's ready() run twice: harmless
    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        sweep.register("one", other, None, "")
    with pytest.raises(ImproperlyConfigured, match="no setting CORRAL_NO_SUCH_SECONDS"):
        sweep.register("two", one, "CORRAL_NO_SUCH_SECONDS", "")


def test_the_apps_register_every_sweep_that_re_drives_work_and_beat_runs_only_the_engine(
    settings,
):
    """Six beat entries used to re-drive work (republish operations, republish gate
    steps, deadlines, drain re-checks, the day-2 sweep); now there is one."""
    assert set(sweep.PARTS) == {
        "operations.due",
        "operations.republish",
        "inventory.deadlines",
        "gate_steps.due",
        "gate_steps.republish",
        "drains.recheck",
        "plans.advance",
        "day2.campaigns",
        "sensors.prune",
    }
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "engine.tasks.sweep" in tasks
    re_drivers = {
        "inventory.tasks.republish_operations",
        "inventory.tasks.expire_deadlines",
        "validation.tasks.republish_steps",
        "provisioning.tasks.recheck_drains",
        "day2.tasks.sweep",
    }
    assert not tasks & re_drivers


def test_the_architecture_page_lists_the_parts_the_code_registers():
    page = (Path(settings.BASE_DIR) / "docs" / "architecture.md").read_text()
    assert page.count(sweep.MARK) == 2
    assert sweep.refresh(page) == page, "run `python manage.py sweep_parts`"


def test_a_tick_with_nothing_due_costs_one_query(parts, settings, django_assert_num_queries):
    settings.CORRAL_REPUBLISH_SECONDS = 15
    sweep.register("slow", counting(parts, "slow"), "CORRAL_REPUBLISH_SECONDS", "")
    t0 = timezone.now()
    sweep.run(t0)
    with django_assert_num_queries(1):
        assert sweep.run(t0 + timedelta(seconds=1)) == {}
