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
