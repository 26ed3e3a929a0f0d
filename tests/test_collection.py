"""`make test-fast` does not build the schemathesis cases it would leave out (13 s of each
process's collection); `make test` still builds and runs them."""

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import pytest_ignore_collect

MODULE = Path("tests/api/test_schemathesis.py")


def ignored(markexpr: str):
    return pytest_ignore_collect(MODULE, SimpleNamespace(option=SimpleNamespace(markexpr=markexpr)))


def test_a_run_without_the_slow_tests_skips_building_them():
    assert ignored("not slow and not browser") is True
    assert ignored("not slow") is True


def test_every_run_that_could_select_them_builds_them():
    assert ignored("") is None  # make test
    assert ignored("slow") is None
    assert ignored("django_db and not browser") is None
    assert (
        pytest_ignore_collect(
            Path("tests/api/test_contract.py"),
            SimpleNamespace(option=SimpleNamespace(markexpr="not slow")),
        )
        is None
    )


def test_make_test_fast_skips_building_them_too():
    assert ignored("not slow and not browser and not service") is True


def test_a_test_that_uses_a_service_fixture_is_marked_service_whatever_the_path():
    """`make test-fast` leaves out the tests that start a service; the mark comes from the
    fixtures a test uses, through others too (`fixturenames` is the closure), so a new
    test that starts a worker is left out without anyone writing the mark."""
    from tests.conftest import SERVICE_FIXTURES, mark_services

    class Item(SimpleNamespace):
        def add_marker(self, name):
            self.marks.append(name)

    worker = Item(fixturenames=["db", "node", "celery_worker", "sshd"], marks=[])
    plain = Item(fixturenames=["db", "node", "sushy_static"], marks=[])
    mark_services([worker, plain])
    assert worker.marks == ["service"] and plain.marks == []
    assert {"celery_worker", "corral_web_server", "sshd", "slurm"} <= SERVICE_FIXTURES
