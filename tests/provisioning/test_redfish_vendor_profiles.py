"""The vendor profiles say which real trees prove each quirk; those claims are checked.

Each tree a profile names must exist in tests/corpus/redfish and be a tree the profile is
chosen for (by its service root and system ids, as inspection chooses); every vendor's
tree in the corpus gets its vendor's profile; and docs/inspection.md's quirk table is the
one the code writes (`manage.py vendor_quirks`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provisioning.drivers.redfish.vendors import PROFILES, profiles_for
from provisioning.drivers.redfish.vendors.doc import refresh

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus" / "redfish"


def chosen_for(tree: str) -> list[str]:
    root = CORPUS / tree / "redfish" / "v1"
    service = json.loads((root / "index.json").read_text(encoding="utf-8-sig"))
    systems = root / "Systems" / "index.json"
    ids: list[str] = []
    if systems.exists():
        members = json.loads(systems.read_text(encoding="utf-8-sig")).get("Members") or []
        ids = [m["@odata.id"].rstrip("/").rsplit("/", 1)[-1] for m in members]
    return profiles_for(service, ids).names


CLAIMS = [(p.name, tree) for p in PROFILES for _, trees in p.handles for tree in trees]


@pytest.mark.parametrize(("profile", "tree"), CLAIMS)
def test_each_tree_a_profile_names_is_one_it_is_chosen_for(profile, tree):
    assert (CORPUS / tree / "expected.json").exists(), f"{tree} is not in the corpus"
    assert profile in chosen_for(tree)


@pytest.mark.parametrize(
    ("prefix", "profile"),
    [
        ("dell-", "Dell iDRAC"),
        ("hpe-proliant-", "HPE iLO"),
        ("hpe-apollo-", "HPE iLO"),
        ("hpe-cray-ex2", "HPE Cray EX"),
        ("hpe-cray-ex4", "HPE Cray EX"),
        ("lenovo-", "Lenovo XCC"),
        ("supermicro-", "Supermicro"),
        ("nvidia-", "NVIDIA OpenBMC"),
        ("gigabyte-", "AMI MegaRAC"),
    ],
)
def test_every_tree_of_a_vendor_gets_its_profile(prefix, profile):
    trees = sorted(p.name for p in CORPUS.iterdir() if p.name.startswith(prefix))
    assert trees
    assert [t for t in trees if profile not in chosen_for(t)] == []


def test_the_inspection_page_lists_the_quirks_the_code_handles():
    page = (ROOT / "docs" / "inspection.md").read_text()
    assert "<!-- vendor_quirks -->" in page
    assert refresh(page) == page, "run `python manage.py vendor_quirks`"
