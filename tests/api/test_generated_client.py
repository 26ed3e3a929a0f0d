"""A client generated from our schema works: openapi-python-client builds a package from
/api/schema/ into a temp dir, every module imports, and a short integrator's script runs
with it against the production server (tests/peers/web.py)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from inventory.choices import NodeState
from tests.factories import ImageFactory, NodeFactory, api_token, user_in

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def client_package(tmp_path_factory) -> str:
    """Generate the client once; returns the directory holding package `corral_client`."""
    out = tmp_path_factory.mktemp("client")
    schema = out / "schema.json"
    call_command("spectacular", "--file", str(schema), "--format", "openapi-json")
    subprocess.run(
        [BIN / "openapi-python-client", "generate", "--path", schema, "--meta", "none",
         "--output-path", out / "corral_client"],
        check=True, cwd=out, capture_output=True, env={"PATH": f"{BIN}:/usr/bin:/bin"},
    )  # fmt: skip
    sys.path.insert(0, str(out))
    yield str(out)
    sys.path.remove(str(out))
    for name in [m for m in sys.modules if m.startswith("corral_client")]:
        del sys.modules[name]


def test_every_generated_module_imports(client_package):
    package = importlib.import_module("corral_client")
    names = [m.name for m in pkgutil.walk_packages(package.__path__, "corral_client.")]
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - every failure is the finding
            failed[name] = repr(exc)
    assert len(names) > 100 and not failed, failed


@pytest.mark.slow
def test_an_integrators_script_runs_with_the_generated_client(client_package, corral_web):
    from corral_client import AuthenticatedClient
    from corral_client.api.nodes import v1_nodes_actions_create, v1_nodes_list
    from corral_client.models import (
        Conflict,
        NodeActionRequest,
        NodeActionRequestParams,
        V1NodesActionsCreateName,
        V1NodesListStateItem,
    )

    user = user_in("integration")
    key = api_token(user)
    ready = NodeFactory(state=NodeState.READY)
    NodeFactory(state=NodeState.ENROLLED)
    image = ImageFactory()
    api = AuthenticatedClient(base_url=corral_web, token=key, prefix="Token")

    page = v1_nodes_list.sync(client=api, state=[V1NodesListStateItem.READY])
    assert [n.hostname for n in page.results] == [ready.hostname]

    params = NodeActionRequestParams.from_dict({"image": f"{image.name}:{image.version}"})
    body = NodeActionRequest(reason="rollout", params=params)
    deploy = V1NodesActionsCreateName.DEPLOY
    answer = v1_nodes_actions_create.sync_detailed(client=api, id=ready.pk, name=deploy, body=body)
    assert answer.status_code in (202, 409), answer.content
    if answer.status_code == 202:
        assert answer.parsed.params["image"] == image.pk
        # Deploying now: deploy is not allowed again.
        answer = v1_nodes_actions_create.sync_detailed(
            client=api, id=ready.pk, name=deploy, body=body
        )
    assert answer.status_code == 409, answer.content
    conflict = answer.parsed
    assert isinstance(conflict, Conflict), answer.content
    assert conflict.detail and conflict.allowed == json.loads(answer.content)["allowed"]
