"""Fleet-as-code settings (docs/fleet-as-code.md), read from the environment like the rest
of fleet.settings, which imports everything here."""

from __future__ import annotations

from fleet.env import env

# An apply that changes more in-service nodes than this (labels aside) is destructive, and
# needs --allow-destructive (the API's allow_destructive) as a delete does.
CORRAL_FLEET_IN_SERVICE_CHANGES = env.int("CORRAL_FLEET_IN_SERVICE_CHANGES", default=10)
# The largest request the fleet's plan and apply take (the files and the secrets' values,
# as JSON): a site of 12,500 nodes is about 6 MB of YAML.
CORRAL_FLEET_MAX_BYTES = env.int("CORRAL_FLEET_MAX_BYTES", default=64 * 1024 * 1024)
