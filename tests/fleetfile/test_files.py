"""Reading fleet files: every problem named by file, line and path, before any plan; the
published JSON Schema is the one the loader checks against. Expected positions are counted
in the texts below."""

from __future__ import annotations

import json

import jsonschema
import pytest
from django.core.management import call_command

from fleetfile import loading, schema

RACKS = """\
racks:
  - site: dc1
    name: r01
    colour: red
  - site: dc1
    name: r02
    u_height: tall
    name: r03
"""


def problems(*texts: tuple[str, str]) -> list[str]:
    with pytest.raises(loading.FleetFileError) as raised:
        loading.read_texts(texts)
    return [str(p) for p in raised.value.problems]


def test_unknown_and_repeated_keys_and_wrong_types_are_named_on_their_lines():
    assert problems(("fleet/racks.yaml", RACKS)) == [
        "fleet/racks.yaml:4 racks[0].colour: unknown key (known: site, name, row, position, "
        "u_height, power_budget_kw, fabric, delivered, leaf_switches)",
        "fleet/racks.yaml:7 racks[1].u_height: 'tall' is not of type 'integer'",
        "fleet/racks.yaml:8 racks[1].name: given twice in one mapping (first on line 6)",
    ]


def test_a_literal_secret_is_refused_without_repeating_it():
    text = (
        "nodes:\n"
        "  - serial: SN1\n"
        "    hostname: gx-001\n"
        "    bmc: {protocol: redfish, address: 10.0.0.5, username: admin, password: hunter2}\n"
    )
    found = problems(("nodes.yaml", text))
    assert found == [
        "nodes.yaml:4 nodes[0].bmc.password: a secret is given as a reference, env:NAME or "
        "file:/path, never as its value (the value is not repeated here)"
    ]
    assert "hunter2" not in "".join(found)


def test_text_that_is_not_yaml_says_where_it_stopped():
    (found,) = problems(("sites.yaml", "sites:\n  - slug: dc1\n   name: x\n"))
    assert found.startswith("sites.yaml:3: not YAML or JSON: ")


def test_json_files_are_read_with_their_lines_too():
    text = json.dumps({"sites": [{"slug": "dc1", "nmae": "One"}]}, indent=2)
    assert problems(("fleet.json", text)) == [
        "fleet.json:5 sites[0].nmae: unknown key (known: slug, name, description, "
        "attestation, bmc_networks, rack_max_out_percent, rack_min_out, site_max_out_percent, "
        "site_min_out)"
    ]


def test_a_json_key_given_twice_is_named_on_its_line():
    text = '{"sites": [{"slug": "dc1",\n  "slug": "dc2"}]}'
    assert problems(("fleet.json", text)) == [
        "fleet.json:2 sites[0].slug: given twice in one mapping (first on line 1)"
    ]


def test_a_choice_outside_the_list_names_the_list():
    text = "sites:\n  - slug: dc1\n    attestation: optional\n"
    assert problems(("s.yaml", text)) == [
        "s.yaml:3 sites[0].attestation: 'optional' is not one of required, allow_unattested"
    ]


def test_dates_stay_text_and_every_file_of_a_folder_is_read(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.yaml").write_text("sites:\n  - {slug: dc1, name: One}\n")
    (tmp_path / "b" / "racks.yml").write_text(
        "racks:\n  - {site: dc1, name: r01, delivered: 2026-09-01}\n"
    )
    (tmp_path / "notes.txt").write_text("not a fleet file")
    sources = loading.read_paths([tmp_path])
    assert [s.name for s in sources] == [str(tmp_path / "a.yaml"), str(tmp_path / "b/racks.yml")]
    assert sources[1].data["racks"][0]["delivered"] == "2026-09-01"


def test_the_published_schema_is_current_and_checks_a_file_as_the_loader_does():
    call_command("fleet", "schema", "--check")
    published = json.loads(schema.PUBLISHED.read_text())
    jsonschema.Draft202012Validator.check_schema(published)
    good = {"nodes": [{"serial": "SN1", "hostname": "gx-001", "labels": ["a"]}]}
    bad = {"nodes": [{"serial": "SN1", "hostname": "gx-001", "bmc": {"password": "x"}}]}
    validator = jsonschema.Draft202012Validator(published)
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)


def test_a_problem_of_no_file_reads_from_what_it_is_about():
    """A write refused while prune runs belongs to no file: no leading space or colon."""
    assert str(loading.Problem("", None, "node SN-9", "cannot delete: it has history")) == (
        "node SN-9: cannot delete: it has history"
    )
    assert str(loading.Problem("", None, "", "plan again")) == "plan again"
    assert str(loading.Problem("fleet/a.yaml", 3, "nodes[0].unit", "taken")) == (
        "fleet/a.yaml:3 nodes[0].unit: taken"
    )
