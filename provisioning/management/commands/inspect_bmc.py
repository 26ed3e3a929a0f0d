"""``manage.py inspect_bmc``: what inspection reads from one BMC, printed as JSON.

A technician checks a BMC before enrolling its node; support reproduces a vendor's quirk
from a saved mockup served by sushy-static. Nothing is enrolled and the database is never
touched: the same driver calls as an inspection, with the result printed instead of stored.
"""

from __future__ import annotations

import getpass
import json
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from provisioning.drivers import PROTOCOLS, BMCError, BMCSettings, get_driver
from provisioning.inspection import gpu_mismatch, read_bmc

PASSWORD_ENV = "BMC_PASSWORD"


class Command(BaseCommand):
    help = (
        "Read a BMC's hardware, firmware and power state as an inspection would and print "
        "them as JSON; exits 1 with the reason on stderr when the BMC cannot be read."
    )
    requires_system_checks: list[str] = []  # no database, no app checks: a BMC and stdout
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--protocol", required=True, choices=PROTOCOLS)
        parser.add_argument("--address", required=True, help="host, or URL for Redfish")
        parser.add_argument("--username", required=True)
        parser.add_argument("--port", type=int, help="default: the protocol's")
        parser.add_argument("--system-id", help="Redfish system, when the BMC has several")
        parser.add_argument(
            "--gpu-system-id", help="Redfish system holding the node's GPUs (HGX_Baseboard_0)"
        )
        parser.add_argument("--no-verify-tls", action="store_true", help="Redfish over HTTPS")
        parser.add_argument("--timeout", type=float, help="seconds per request")
        parser.add_argument("--gpu-count", type=int, default=0, help="check against this")
        parser.add_argument("--gpu-model", default="", help="check against this model")
        parser.add_argument(
            "--explain",
            action="store_true",
            help="also say, for every GPU candidate, where it was found and why it counts",
        )

    def handle(self, *args, **opts):
        mapping = {
            "address": opts["address"],
            "username": opts["username"],
            "password": self.password(),
            "port": opts["port"],
            "system_id": opts["system_id"],
            "gpu_system_id": opts["gpu_system_id"],
            "verify_tls": False if opts["no_verify_tls"] else None,
            "timeout": opts["timeout"],
        }
        try:
            settings = BMCSettings.from_mapping(
                opts["protocol"], {k: v for k, v in mapping.items() if v is not None}
            )
            with get_driver(settings) as driver:
                power, hardware, firmware = read_bmc(driver)
        except BMCError as exc:
            raise CommandError(str(exc)) from None
        report = {
            "hardware": hardware,
            "firmware": firmware,
            "power": power,
            "unavailable": hardware["unavailable"],
        }
        if opts["gpu_count"]:
            report["mismatch"] = gpu_mismatch(opts["gpu_count"], opts["gpu_model"], hardware)
        if opts["explain"]:
            report["explain"] = explanation(driver)
        self.stdout.write(json.dumps(report, indent=2, sort_keys=False))

    def password(self) -> str:
        """From BMC_PASSWORD, or asked for on a terminal; never an argument: a command
        line is visible to every user of the machine (`ps`) and kept in shell history."""
        given = os.environ.get(PASSWORD_ENV)
        if given is not None:
            return given
        if sys.stdin.isatty():
            return getpass.getpass("BMC password: ")
        raise CommandError(
            f"Give the BMC password in {PASSWORD_ENV} (or run on a terminal to be asked)."
        )


def explanation(driver) -> dict:
    """The vendor profiles that matched and every GPU candidate with its verdict and why
    (Redfish); IPMI has no inventory of GPUs to explain."""
    inspect = driver.inspect
    return {
        "profiles": getattr(inspect, "profiles", []),
        "gpu_candidates": getattr(inspect, "findings", []),
    }
