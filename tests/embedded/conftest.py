from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.embedded.instance import Embedded, start_embedded


@pytest.fixture(scope="session")
def embedded(tmp_path_factory) -> Iterator[Embedded]:
    """One seeded embedded (SQLite) instance per test process, served until it ends."""
    yield from start_embedded(tmp_path_factory)
