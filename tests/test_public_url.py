"""Links that leave Corral (webhook payloads, the RMA evidence bundle) start with one
setting, CORRAL_PUBLIC_URL: by default the address `make run` prints, under `make run` the
port it serves on, and a value that is no URL stops start-up instead of going out in every
payload (issue 29, finding 7: links said `localhost` while `make run` printed 127.0.0.1)."""

import io
import json
import os
import subprocess
import sys
import tarfile

import pytest

from devtools import run
from rma import evidence, services
from tests.factories import NodeFactory
from tests.test_settings import PRODUCTION, ROOT, settings_under


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_links_default_to_the_address_make_run_prints():
    default = settings_under({}, "CORRAL_PUBLIC_URL")["CORRAL_PUBLIC_URL"]
    assert default == "http://127.0.0.1:8000" == run.web_url(8000)
    slash = {"CORRAL_PUBLIC_URL": "https://corral.example.net/ops/"}
    assert settings_under(slash, "CORRAL_PUBLIC_URL") == {
        "CORRAL_PUBLIC_URL": "https://corral.example.net/ops"
    }


@pytest.mark.parametrize(
    "value", ["corral.example.net", "ftp://corral.example.net", "https://", "http://a b/"]
)
def test_a_public_url_that_is_no_url_stops_start_up(value):
    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION}
    env.update(CORRAL_ENV_FILE="/nonexistent", CORRAL_PUBLIC_URL=value)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"CORRAL_PUBLIC_URL {value!r} is not" in result.stderr


def test_make_run_points_links_at_the_port_it_serves_on(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("SECRET_KEY=x\n")
    env: dict[str, str] = {}
    run.set_public_url(8123, env, env_file)
    assert env == {"CORRAL_PUBLIC_URL": "http://127.0.0.1:8123"}
    # What the person set is kept, in the environment or in .env.
    mine = {"CORRAL_PUBLIC_URL": "https://corral.example.net"}
    run.set_public_url(8123, mine, env_file)
    assert mine == {"CORRAL_PUBLIC_URL": "https://corral.example.net"}
    env_file.write_text("SECRET_KEY=x\nCORRAL_PUBLIC_URL=https://lab.example.net\n")
    env = {}
    run.set_public_url(8123, env, env_file)
    assert env == {}


@pytest.mark.django_db
def test_the_evidence_bundle_links_under_the_public_url(settings):
    settings.CORRAL_PUBLIC_URL = "https://corral.example.net"
    node = NodeFactory(state="rma")
    case = services.open_case(node, "XID 79", "system")
    with tarfile.open(fileobj=io.BytesIO(evidence.bundle(case)), mode="r:gz") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/manifest.json"))
        manifest = json.loads(tar.extractfile(member).read())
    assert manifest["case"]["url"] == f"https://corral.example.net/rma/{case.pk}/"
    assert manifest["case"]["evidence_url"].startswith("https://corral.example.net/api/v1/")
    assert manifest["node"]["url"] == f"https://corral.example.net/nodes/{node.pk}/"
