"""Settings schema and validation, run before any BMC is contacted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inventory.macs import mac_or_none
from provisioning.drivers import (
    BMCError,
    BMCFatalError,
    BMCSettings,
    BMCSettingsError,
    BMCTransientError,
    get_driver,
    settings_schema,
    validate_settings,
)

REPO = Path(__file__).resolve().parents[3]


def test_schema_marks_the_password_secret():
    for protocol in ("redfish", "ipmi"):
        fields = {f.name: f for f in settings_schema(protocol)}
        assert fields["password"].secret and fields["password"].required
        assert not any(f.secret for name, f in fields.items() if name != "password")
        assert {"address", "port", "username", "password"} <= fields.keys()
        json.dumps([f.to_dict() for f in fields.values()])
    redfish = {f.name: f for f in settings_schema("redfish")}
    assert redfish["verify_tls"].default is True and redfish["system_id"].required is False
    assert {f.name: f for f in settings_schema("ipmi")}["port"].default == 623


def test_valid_settings_have_no_errors():
    assert (
        validate_settings(
            "redfish",
            {
                "address": "10.0.0.21",
                "username": "root",
                "password": "calvin",
                "verify_tls": "false",
                "port": "8443",
                "system_id": "",
            },
        )
        == {}
    )
    assert (
        validate_settings(
            "redfish",
            {
                "address": "https://bmc-01.dc1.example:8443/redfish/v1",
                "username": "root",
                "password": "x",
            },
        )
        == {}
    )
    assert (
        validate_settings(
            "ipmi", {"address": "fd00::21", "username": "admin", "password": "x", "port": 623}
        )
        == {}
    )


def test_invalid_settings_name_each_field():
    errors = validate_settings(
        "redfish",
        {
            "address": "https://root:calvin@10.0.0.21",
            "username": "",
            "port": "http",
            "verify_tls": "maybe",
            "timeout": "0",
            "colour": "blue",
        },
    )
    assert set(errors) == {
        "address",
        "username",
        "password",
        "port",
        "verify_tls",
        "timeout",
        "colour",
    }
    assert "credentials" in errors["address"]
    assert errors["username"] == "is required"
    assert "calvin" not in json.dumps(errors)
    assert validate_settings(
        "ipmi",
        {"address": "http://10.0.0.21", "username": "a" * 17, "password": "x", "port": 70000},
    ).keys() == {"address", "username", "port"}
    assert validate_settings("snmp", {}) == {
        "protocol": "unknown protocol 'snmp'; expected one of redfish, ipmi"
    }


def test_settings_repr_and_errors_hide_the_password():
    settings = BMCSettings.from_mapping(
        "redfish",
        {"address": "10.0.0.21", "username": "root", "password": "Sup3r-Secret", "port": "443"},
    )
    assert settings.port == 443 and settings.verify_tls is True and settings.timeout == 10
    assert "Sup3r-Secret" not in repr(settings) and "Sup3r-Secret" not in str(settings)
    with pytest.raises(BMCSettingsError) as caught:
        BMCSettings.from_mapping("redfish", {"address": "bad host", "password": "Sup3r-Secret"})
    assert "Sup3r-Secret" not in str(caught.value)
    assert set(caught.value.errors) == {"address", "username"}


def test_get_driver_refuses_bad_settings_without_network_io():
    bad = BMCSettings(protocol="redfish", address="not a host", username="u", password="p")
    with pytest.raises(BMCSettingsError, match="address"):
        get_driver(bad)


def test_error_hierarchy_tells_the_caller_whether_to_retry():
    assert issubclass(BMCSettingsError, BMCFatalError) and issubclass(BMCFatalError, BMCError)
    assert BMCTransientError("x").retryable and not BMCFatalError("x").retryable


def test_mac_normalisation():
    """BMC NIC lists go through the same normaliser as enrolment, leniently."""
    assert mac_or_none("AA-BB-CC-00-11-22") == "aa:bb:cc:00:11:22"
    assert mac_or_none("aabb.cc00.1122") == "aa:bb:cc:00:11:22"
    assert mac_or_none("not a mac") is None and mac_or_none(None) is None


def test_package_imports_without_django_sushy_or_pyghmi():
    code = (
        "import sys, provisioning.drivers as d; "
        "d.get_driver(d.BMCSettings('ipmi', '10.0.0.1', 'u', 'p')); "
        "assert 'django' not in sys.modules, 'django'; "
        "assert 'sushy' not in sys.modules, 'sushy loaded for an IPMI driver'; "
        "print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip() == "ok", result.stderr
