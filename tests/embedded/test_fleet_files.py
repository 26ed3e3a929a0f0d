"""The fleet as code on `make run`'s embedded SQLite: the seeded fleet exported, planned
as no change through the production web server, a label changed by an apply of the
command, then put back (the instance is shared with the walk, so it ends as it began)."""

from __future__ import annotations

import subprocess
import sys

import requests
import yaml

from tests.embedded.instance import child_env, embedded_env
from tests.peers.util import REPO_ROOT


def fleet(embedded, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "fleet", *args],
        cwd=REPO_ROOT,
        env=child_env(embedded_env(embedded.folder)),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_export_plan_and_apply_on_sqlite(embedded, tmp_path):
    exported = tmp_path / "exported"
    assert fleet(embedded, "export", str(exported)).returncode == 0
    files = [{"name": p.name, "content": p.read_text()} for p in sorted(exported.glob("*.yaml"))]
    token = embedded.logins["integration"]["token"]
    resp = requests.post(
        f"{embedded.url}/api/v1/fleet/plan/",
        json={"files": files},
        headers={"Authorization": f"Token {token}"},
        timeout=60,
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["summary"]["create"] == resp.json()["summary"]["update"] == 0

    nodes = yaml.safe_load((exported / "nodes.yaml").read_text())
    first = nodes["nodes"][0]
    first["labels"] = [*first.get("labels", []), "fleet-files"]
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "nodes.yaml").write_text(yaml.safe_dump({"nodes": [first]}))
    planned = fleet(embedded, "plan", "-f", str(changed))
    assert planned.returncode == 2, planned.stderr
    assert "    labels: " in planned.stdout and '"fleet-files"' in planned.stdout
    done = fleet(embedded, "apply", "-f", str(changed), "--actor", "user:ci")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "Applied."), done.stderr
    assert fleet(embedded, "plan", "-f", str(changed)).returncode == 0

    put_back = fleet(embedded, "apply", "-f", str(exported / "nodes.yaml"))
    assert put_back.returncode == 0, put_back.stderr
    assert fleet(embedded, "plan", "-f", str(exported)).returncode == 0
