"""What the CLI decides before it talks to any Corral: usage errors, a missing
configuration, secret references found and read on this machine (and never shown), the
plan's lines, the completion script. No server runs here; where a URL is needed it is a
port nobody listens on, so a request that should not be sent would show as an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from corral_cli import fleetfiles
from corral_cli.errors import ApiError, CorralError
from corral_cli.fleet import plan_text
from tests.fleetfile.fleet import NODES, RACKS, SITES
from tests.peers.util import REPO_ROOT, free_port


@pytest.fixture
def fleet_dir(tmp_path, monkeypatch):
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / "sites.yaml").write_text(SITES)
    (folder / "racks.yaml").write_text(RACKS)
    (folder / "nodes.yaml").write_text(NODES)
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.fixture
def nowhere() -> str:
    return f"http://127.0.0.1:{free_port()}"


def test_a_missing_configuration_says_what_to_do(cli, config_home):
    result = cli("nodes", "list")
    assert result.code == 1
    assert "No Corral configured" in result.err
    assert "corral login --url URL --token TOKEN" in result.err
    assert str(config_home / "corral" / "config.json") in result.err


def test_a_usage_error_is_exit_1_not_2_which_means_changes(cli):
    result = cli("fleet", "plan")
    assert result.code == 1
    assert "the following arguments are required: -f/--file" in result.err
    assert cli("--help").code == 0
    assert "fleet" in cli("--help").out


def test_an_unresolved_reference_is_named_and_nothing_is_sent(cli, fleet_dir, nowhere, tmp_path):
    nodes = NODES.replace("password: env:BMC_PASSWORD}", f"password: file:{tmp_path}/nope}}")
    (fleet_dir / "nodes.yaml").write_text(nodes)
    result = cli("fleet", "plan", "-f", "fleet", CORRAL_URL=nowhere, CORRAL_TOKEN="t")
    assert result.code == 1
    assert "2 secret references cannot be resolved on this machine; nothing was sent" in result.err
    assert (
        "env:BMC_PASSWORD (in fleet/nodes.yaml): the variable BMC_PASSWORD is not set" in result.err
    )
    assert f"file:{tmp_path}/nope (in fleet/nodes.yaml): no such file" in result.err
    assert "Cannot reach" not in result.err  # nothing was sent


def test_an_unreachable_corral_is_named_by_its_url(cli, fleet_dir, nowhere):
    result = cli(
        "fleet", "plan", "-f", "fleet", CORRAL_URL=nowhere, CORRAL_TOKEN="t", BMC_PASSWORD="s3"
    )
    assert result.code == 1
    assert f"Cannot reach Corral at {nowhere}/api/v1/fleet/plan/" in result.err
    assert "Connection refused" in result.err


def test_references_are_found_in_yaml_and_json_and_read_here(tmp_path):
    secret = tmp_path / "bmc.pw"
    secret.write_text("from-a-file\n")
    files = [
        {"name": "fleet/nodes.yaml", "content": NODES},
        {
            "name": "fleet/more.json",
            "content": json.dumps(
                {"nodes": [{"serial": "S9", "bmc": {"password": f"file:{secret}"}}]}
            ),
        },
        {"name": "fleet/literal.yaml", "content": "nodes:\n- bmc: {password: hunter2}\n"},
        {"name": "fleet/broken.yaml", "content": "nodes: [env:X\n"},  # the server names it
    ]
    assert fleetfiles.references(files) == {
        "env:BMC_PASSWORD": ["fleet/nodes.yaml"],
        f"file:{secret}": ["fleet/more.json"],
    }
    values = fleetfiles.secrets_for(files, {"BMC_PASSWORD": "from-env"})
    assert values == {"env:BMC_PASSWORD": "from-env", f"file:{secret}": "from-a-file"}


def test_an_unresolved_message_never_holds_a_value(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    files = [{"name": "n.yaml", "content": f"nodes:\n- bmc: {{password: 'file:{empty}'}}\n"}]
    with pytest.raises(CorralError, match="the file is empty"):
        fleetfiles.secrets_for(files, {})


def test_folders_are_read_sorted_and_named_as_given(fleet_dir):
    (fleet_dir / "dc2").mkdir()
    (fleet_dir / "dc2" / "a.yml").write_text("nodes: []\n")
    (fleet_dir / "README.md").write_text("not a fleet file")
    names = [f["name"] for f in fleetfiles.read_files(["fleet", "fleet/sites.yaml"])]
    assert names == [
        "fleet/dc2/a.yml", "fleet/nodes.yaml", "fleet/racks.yaml", "fleet/sites.yaml"
    ]  # fmt: skip
    with pytest.raises(CorralError, match="missing: no such file or folder"):
        fleetfiles.read_files(["missing"])


def test_the_plan_reads_as_the_server_s_command_prints_it():
    found = {
        "revision": "3f2a9c1e07b45d11",
        "summary": {"create": 1, "update": 1, "delete": 0, "decommission": 1, "unchanged": 5},
        "changes": [
            {"action": "create", "object": "rack dc1/r09", "where": "f/racks.yaml:8",
             "fields": [{"name": "row", "old": None, "new": "B"}]},
            {"action": "update", "object": "node SN-0002 (gx-102)",
             "where": "fleet/nodes/dc1.yaml:20",
             "fields": [{"name": "hostname", "old": "gx-002", "new": "gx-102"},
                        {"name": "unit", "old": 5, "new": 9},
                        {"name": "bmc.password", "old": "(stored)", "new": "(changed)"}]},
            {"action": "decommission", "object": "node SN-7 (old-7)", "where": None,
             "fields": []},
        ],
        "kept": [], "refusals": [], "destructive": ["decommission node SN-7 (old-7)"],
    }  # fmt: skip
    assert plan_text(found).splitlines() == [
        "+ rack dc1/r09  (f/racks.yaml:8)",
        "~ node SN-0002 (gx-102)  (fleet/nodes/dc1.yaml:20)",
        '    hostname: "gx-002" -> "gx-102"',
        "    unit: 5 -> 9",
        "    bmc.password: (stored) -> (changed)",
        "- node SN-7 (old-7): decommission",
        "! destructive: decommission node SN-7 (old-7)",
        "Plan: 1 to create, 1 to update, 0 to delete, 1 to decommission, 5 unchanged. "
        "Revision 3f2a9c1e07b45d11.",
    ]


def test_an_api_error_prints_detail_problems_and_field_errors():
    problems = ApiError(
        400,
        "POST",
        "http://c/api/v1/fleet/plan/",
        {
            "detail": "The fleet files have 2 problems; nothing was written.",
            "problems": [
                {"file": "f/n.yaml", "line": 4, "path": "nodes[0].unit", "message": "bad"},
                {"file": "f/x.yaml", "line": None, "path": "", "message": "cannot be read"},
            ],
        },
    )
    assert problems.lines() == [
        "The fleet files have 2 problems; nothing was written.",
        "f/n.yaml:4 nodes[0].unit: bad",
        "f/x.yaml: cannot be read",
    ]
    fields = ApiError(400, "POST", "u", {"reason": ["'Open RMA' needs a reason."]})
    assert fields.lines()[1:] == ["reason: 'Open RMA' needs a reason."]


def test_the_bash_completion_lists_every_command(cli):
    result = cli("completion", "bash")
    assert result.code == 0
    assert "complete -o default -F _corral corral" in result.out
    assert '"fleet") echo "apply export plan;' in result.out
    assert '"nodes action") echo ";' in result.out and "--wait" in result.out


def test_python_dash_m_runs_it_without_django():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    code = (
        "import runpy, sys; sys.argv = ['corral', '--version']\n"
        "try:\n    runpy.run_module('corral_cli', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "    assert not [m for m in sys.modules if m.split('.')[0] in "
        "('django', 'rest_framework', 'inventory', 'fleet', 'fleetfile')], 'imports the server'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "corral 0.1.0"
