"""Corral's Grafana dashboards (metrics/dashboards/): the checked-in JSON is what the code
writes, and every query reads only what Corral exports and is PromQL that Prometheus
itself parses, so a renamed metric or a typo breaks here rather than as an empty panel."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml
from django.core.management import call_command

from core.metrics import DECLARED
from metrics.dashboards import dashboards, folder, render

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "corral-rules.yml"
# A recording rule's name (level:metric:operations), or a metric's.
NAMED = re.compile(r"\b([a-z]+:)?(corral_[a-z0-9_:]+)")
# Grafana's variables, as a concrete query would have them.
VARIABLES = {"${site}": "a-site", "$site": "a-site", "$__rate_interval": "5m"}


def exported() -> set[str]:
    """What a scrape of Corral holds: every declared name, and a histogram's series."""
    return set(DECLARED) | {
        f"{name}{suffix}"
        for name, m in DECLARED.items()
        if m.type == "histogram"
        for suffix in ("_bucket", "_sum", "_count")
    }


def recorded() -> set[str]:
    rules = yaml.safe_load(RULES.read_text())
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


def panels(board: dict) -> list[dict]:
    """The dashboard's panels, rows left out (a collapsed row holds its own)."""
    found = []
    for panel in board.get("panels", []):
        if panel["type"] == "row":
            found.extend(panel.get("panels", []))
        else:
            found.append(panel)
    return found


def expressions() -> list[tuple[str, str]]:
    """(where, expression) of every panel target and every query variable."""
    found = []
    for name, board in dashboards().items():
        for panel in panels(board):
            for target in panel.get("targets", []):
                found.append((f"{name}: {panel['title']} ({target['refId']})", target["expr"]))
        for variable in board.get("templating", {}).get("list", []):
            if variable["type"] == "query":
                found.append((f"{name}: variable {variable['name']}", variable["query"]))
    return found


def concrete(expr: str) -> str:
    for variable, value in VARIABLES.items():
        expr = expr.replace(variable, value)
    # label_values(metric, label) is Grafana's; the selector in it is PromQL.
    return re.sub(r"^label_values\((.+), *[a-z_]+\)$", r"\1", expr)


def test_the_checked_in_dashboards_are_what_the_code_writes():
    boards = dashboards()
    on_disk = {p.name for p in folder().glob("*.json")}
    assert on_disk == set(boards), "run `.venv/bin/python manage.py grafana_dashboards`"
    for name, board in boards.items():
        text = (folder() / name).read_text(encoding="utf-8")
        assert text == render(board), (
            f"deploy/grafana/{name} is stale: run `.venv/bin/python manage.py grafana_dashboards`"
        )


def test_check_fails_on_a_stale_file_and_writing_fixes_it(tmp_path, settings):
    (tmp_path / "deploy" / "grafana").mkdir(parents=True)
    settings.BASE_DIR = tmp_path
    try:
        call_command("grafana_dashboards", "--check")
    except Exception as error:  # CommandError: nothing written yet
        assert "grafana_dashboards" in str(error)
    else:
        raise AssertionError("--check passed with no dashboards written")
    call_command("grafana_dashboards")
    call_command("grafana_dashboards", "--check")
    assert {p.name for p in (tmp_path / "deploy" / "grafana").iterdir()} == set(dashboards())


def test_the_three_audiences_each_have_a_dashboard():
    boards = dashboards()
    assert set(boards) == {
        "corral-operations.json",
        "corral-technicians.json",
        "corral-managers.json",
    }
    for name, board in boards.items():
        assert f"{board['uid']}.json" == name
        assert board["title"].startswith("Corral — ")
        variables = {v["name"]: v for v in board["templating"]["list"]}
        assert variables["datasource"]["query"] == "prometheus"
        assert variables["site"]["query"] == "label_values(corral_nodes, site)"


def test_every_dashboard_has_panels_and_every_panel_a_query():
    for name, board in dashboards().items():
        assert panels(board), f"{name} has no panels"
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), f"{name} repeats a panel id"
        for panel in panels(board):
            assert panel.get("targets"), f"{name}: {panel['title']} has no query"
            assert all(t["expr"].strip() for t in panel["targets"]), panel["title"]
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["fieldConfig"]["defaults"].get("unit"), f"{panel['title']}: no unit"


def test_every_query_names_only_what_corral_exports_or_records():
    known = exported() | recorded()
    for where, expr in expressions():
        named = {prefix + name for prefix, name in NAMED.findall(expr)}
        assert named, f"{where} reads no Corral metric: {expr}"
        unknown = named - known
        assert not unknown, f"{where} names {sorted(unknown)}, which Corral does not export"


def test_every_query_is_promql_prometheus_parses(tmp_path):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: .ci/run installs Debian's prometheus package"
    found = expressions()
    rules = [
        {"record": f"dashboard:query_{i}:check", "expr": concrete(expr)}
        for i, (_, expr) in enumerate(found)
    ]
    path = tmp_path / "dashboards-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    result = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    where = "\n".join(f"query_{i}: {w}: {e}" for i, (w, e) in enumerate(found))
    assert result.returncode == 0, f"{result.stdout}{result.stderr}\n{where}"
