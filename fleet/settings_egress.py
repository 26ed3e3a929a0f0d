"""Egress policy settings (issue 36, finding 15): where Corral may connect to (BMCs, webhook
targets, image sources), read from the environment; fleet.settings imports everything here."""

from __future__ import annotations
