"""A lease shorter than one POST's timeout would start a second pump: refused at start-up."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError


def test_a_lease_no_longer_than_the_timeout_is_a_startup_error(settings):
    settings.CORRAL_WEBHOOK_TIMEOUT_SECONDS = 30
    settings.CORRAL_WEBHOOK_LEASE_SECONDS = 30
    with pytest.raises(SystemCheckError, match="corral.E010"):
        call_command("check")


def test_the_defaults_pass(settings):
    call_command("check")
