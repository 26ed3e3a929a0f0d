"""The shipped alert rules, checked and unit-tested by Prometheus' own promtool, and a
real scrape checked by `promtool check metrics` (names, help, types, units)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from core.metrics import DECLARED
from tests.factories import NodeFactory, RMACaseFactory

from .scrape import scrape

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    path = shutil.which("promtool")
    assert path, "promtool is missing: .ci/run installs Debian's prometheus package"
    return subprocess.run(
        [path, *args], cwd=RULES, input=stdin, capture_output=True, text=True, timeout=60
    )


def test_the_rules_are_valid():
    result = promtool("check", "rules", "corral-rules.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_unit_tests_pass():
    result = promtool("test", "rules", "corral-rules.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_unit_test_a_summary_and_a_runbook():
    rules = yaml.safe_load((RULES / "corral-rules.yml").read_text())
    tests = yaml.safe_load((RULES / "corral-rules.test.yml").read_text())
    alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
    tested = {t["alertname"] for case in tests["tests"] for t in case.get("alert_rule_test", [])}
    for alert in alerts:
        assert alert["alert"] in tested, f"{alert['alert']} has no unit test"
        assert alert["annotations"].get("summary"), alert["alert"]
        assert alert["annotations"].get("runbook"), alert["alert"]


def test_the_rules_name_only_metrics_corral_exports():
    rules = yaml.safe_load((RULES / "corral-rules.yml").read_text())
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    exported = set(DECLARED) | {
        f"{name}{suffix}"
        for name, m in DECLARED.items()
        if m.type == "histogram"
        for suffix in ("_bucket", "_sum", "_count")
    }
    for group in rules["groups"]:
        for rule in group["rules"]:
            named = set(re.findall(r"\b([a-z]+:)?(corral_[a-z0-9_:]+)", rule["expr"]))
            named = {prefix + name for prefix, name in named}
            unknown = named - exported - recorded
            assert not unknown, f"{rule.get('alert') or rule['record']} names {unknown}"


@pytest.mark.django_db
def test_a_scrape_passes_promtool_check_metrics(client):
    NodeFactory(state="in_service")
    RMACaseFactory()
    result = promtool("check", "metrics", stdin=scrape(client))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_docs_table_lists_every_metric():
    from metrics.doctable import refresh

    page = (RULES.parents[1] / "docs" / "metrics.md").read_text()
    assert refresh(page) == page, "run `.venv/bin/python manage.py metrics_table`"
