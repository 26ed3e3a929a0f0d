"""The drift tests' shared fleet (tests/drift/fleet.py; the browser test uses it too)."""

from tests.drift.fleet import drift_fleet, hgx_baseline  # noqa: F401
