from __future__ import annotations

import pytest

from drift import baselines
from drift.models import Baseline


@pytest.fixture
def baseline(db) -> Baseline:
    return baselines.save(
        {
            "name": "fx-1",
            "node_model": "FX-1",
            "components": {"firmware.BMC": ["1.52.00", "1.51.07"], "driver": "550.90.07"},
        },
        "user:admin",
    )
