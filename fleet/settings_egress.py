"""Egress policy settings (issue 36, finding 15): where Corral may connect to (BMCs, webhook
targets, image sources), read from the environment; fleet.settings imports everything here.
core.egress applies them; docs/egress.md says what is refused and how to allow a network."""

from __future__ import annotations

from core.egress import DEFAULT_DENY
from fleet.settings_security import networks_setting

# Refused for every purpose. Unset: link-local (169.254.0.0/16, fe80::/10), multicast and
# broadcast. Setting it replaces that list; the cloud metadata and unspecified addresses
# are refused whatever it says (core.egress.ALWAYS_DENIED). In production add loopback:
# CORRAL_EGRESS_DENY=169.254.0.0/16,fe80::/10,224.0.0.0/4,ff00::/8,255.255.255.255,127.0.0.0/8,::1
CORRAL_EGRESS_DENY = networks_setting("CORRAL_EGRESS_DENY", ",".join(DEFAULT_DENY))
# Where webhook receivers and image sources may be; empty: any address not refused.
CORRAL_WEBHOOK_ALLOW = networks_setting("CORRAL_WEBHOOK_ALLOW")
CORRAL_IMAGE_ALLOW = networks_setting("CORRAL_IMAGE_ALLOW")
