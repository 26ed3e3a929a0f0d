"""The collection as a whole: `ansible-galaxy collection build` builds it, `ansible-doc`
reads every plugin's documentation, `ansible-test sanity` passes the tests that run
offline, and each module's documented options are its argument spec (what ansible-test's
validate-modules checks, here without the packages it would download)."""

from __future__ import annotations

import importlib
import json
import shutil
import tarfile

import pytest
import yaml

from tests.test_architecture import APPS, imported_top_modules

from .conftest import COLLECTION, COLLECTIONS

MODULES = ("corral_node", "corral_action", "corral_rma")
# The sanity tests that need no package from the network (ansible-test installs the
# others' requirements, pip included, into virtual environments it downloads pip for).
OFFLINE_SANITY = (
    "action-plugin-docs", "compile", "empty-init", "ignores", "line-endings", "no-assert",
    "no-get-exception", "no-illegal-filenames", "no-smart-quotes", "replace-urlopen",
    "shebang", "symlinks", "use-argspec-type-path", "use-compat-six",
)  # fmt: skip
CONNECTION = {"url", "token", "validate_certs", "ca_path", "request_timeout"}


def test_the_collection_is_a_client_of_the_api_only():
    """It runs where Corral does not: no Django, no app of the server, not the CLI either."""
    server = {*APPS, "fleet", "django", "rest_framework", "corral_cli", "requests"}
    offenders = {
        str(path.relative_to(COLLECTIONS)): found
        for path in COLLECTION.rglob("*.py")
        if (found := imported_top_modules(path) & server)
    }
    assert not offenders
    assert len(list(COLLECTION.rglob("*.py"))) >= 7


def test_galaxy_builds_it(ansible, tmp_path):
    ran = ansible("ansible-galaxy", "collection", "build", str(COLLECTION), "--output-path", "out")
    assert ran.code == 0, ran.text
    with tarfile.open(tmp_path / "out" / "corral-fleet-1.0.0.tar.gz") as built:
        names = set(built.getnames())
        manifest = json.load(built.extractfile("MANIFEST.json"))["collection_info"]
    assert (manifest["namespace"], manifest["name"]) == ("corral", "fleet")
    assert {f"plugins/modules/{m}.py" for m in MODULES} <= names
    assert {"plugins/inventory/corral.py", "plugins/module_utils/corral.py"} <= names
    assert {"meta/runtime.yml", "README.md"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_ansible_doc_reads_every_plugin(ansible):
    modules = ansible("ansible-doc", "--json", *[f"corral.fleet.{m}" for m in MODULES])
    assert modules.code == 0, modules.text
    found = json.loads(modules.out)
    for name in MODULES:
        doc = found[f"corral.fleet.{name}"]
        assert doc["doc"]["options"]["token"]["required"] is True  # from the doc fragment
        assert doc["examples"] and doc["return"]
    inventory = ansible("ansible-doc", "-t", "inventory", "--json", "corral.fleet.corral")
    assert inventory.code == 0, inventory.text
    options = json.loads(inventory.out)["corral.fleet.corral"]["doc"]["options"]
    assert options["token"]["env"] == [{"name": "CORRAL_TOKEN"}]
    assert {"compose", "keyed_groups", "cache", "sites"} <= set(options)


def test_ansible_test_sanity_offline(ansible, tmp_path):
    """ansible-test wants the collection at …/ansible_collections/NAMESPACE/NAME."""
    copy = tmp_path / "ansible_collections" / "corral" / "fleet"
    shutil.copytree(COLLECTION, copy, ignore=shutil.ignore_patterns("__pycache__", "output"))
    tests = [arg for name in OFFLINE_SANITY for arg in ("--test", name)]
    ran = ansible("ansible-test", "sanity", "--python", "3.11", *tests, cwd=copy)
    assert ran.code == 0, ran.text
    assert ran.text.count("Running sanity test") == len(OFFLINE_SANITY)


def options_of(spec: dict) -> dict:
    """An argument spec or documented options as {name: (type, elements, default, choices,
    required, their suboptions)}."""
    return {
        name: (
            option.get("type", "str"),
            option.get("elements"),
            option.get("default"),
            option.get("choices"),
            bool(option.get("required")),
            options_of(option.get("options") or option.get("suboptions") or {}),
        )
        for name, option in spec.items()
    }


def secrets_hidden(spec: dict) -> list[str]:
    """The options named like a password that do not say whether Ansible may log them."""
    found = []
    for name, option in spec.items():
        if "password" in name and "no_log" not in option:
            found.append(name)
        found += [f"{name}.{sub}" for sub in secrets_hidden(option.get("options") or {})]
    return found


@pytest.mark.parametrize("name", MODULES)
def test_documented_options_are_the_argument_spec(name, monkeypatch):
    monkeypatch.syspath_prepend(str(COLLECTIONS))
    module = importlib.import_module(f"ansible_collections.corral.fleet.plugins.modules.{name}")
    documented = yaml.safe_load(module.DOCUMENTATION)
    for key in ("EXAMPLES", "RETURN"):
        assert yaml.safe_load(getattr(module, key))
    assert documented["module"] == name
    assert "corral.fleet.corral" in documented["extends_documentation_fragment"]
    spec = module.argument_spec()
    assert set(spec) >= CONNECTION
    assert spec["token"]["no_log"] is True
    ours = {k: v for k, v in spec.items() if k not in CONNECTION}
    assert options_of(ours) == options_of(documented["options"])
    assert not secrets_hidden(spec)
