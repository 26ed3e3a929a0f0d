"""The Redfish conformance corpus (tests/corpus/redfish/) is well-formed.

Only the data is checked here: every tree has its SOURCES.md row and an expected.json of the
documented schema, every document is valid JSON, and every link into /redfish/v1 resolves inside
the tree or is listed as absent. Inspecting the trees is another test's business.
"""

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "redfish"
PREFIX = "/redfish/v1"
TREES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "LICENSES")

QUIRKS = {
    "onboard-vga-not-gpu", "same-device-two-collections", "duplicate-links", "gpu-as-processor",
    "gpu-on-chassis-module", "gpus-only-in-hpe-devices", "hpe-oem-devices", "hpe-oem-pcidevices",
    "separate-gpu-system", "multiple-systems", "multi-node-firmware", "non-installed-firmware",
    "hgx-firmware-in-host-inventory", "firmware-in-softwareinventory", "placeholder-values",
    "all-zero-serial", "padded-version", "classcode-low-byte", "decimal-pci-ids",
    "empty-collection", "members-null", "paged-collection", "error-body", "trailing-slash-ids",
    "url-encoded-id", "nested-chassis", "systems-not-in-service-root", "no-gpu", "no-systems",
    "partial-capture", "glue-documents",
}  # fmt: skip
TOP_FIELDS = {
    "schema", "tree", "vendor", "model", "bmc", "systems", "firmware", "quirks", "absent", "notes",
}  # fmt: skip
SYSTEM_FIELDS = {
    "resource", "id", "manufacturer", "model", "serial", "bios_version", "gpus", "not_gpus",
}  # fmt: skip
GPU_FIELDS = {
    "resource", "found_as", "model", "manufacturer", "serial", "part_number", "firmware_version",
    "location", "also_at",
}  # fmt: skip
FIRMWARE_LISTS = ("installed", "not_installed", "unreadable")


def tree_root(name: str) -> Path:
    return CORPUS / name / "redfish" / "v1"


def load_documents(name: str) -> dict[str, Any]:
    """Every document of a tree by its path (/redfish/v1/...), parsed."""
    root = tree_root(name)
    docs: dict[str, Any] = {}
    for file in root.rglob("index.json"):
        rel = file.parent.relative_to(root).as_posix()
        path = PREFIX if rel == "." else f"{PREFIX}/{rel}"
        docs[path] = json.loads(file.read_text(encoding="utf-8-sig"))
    return docs


def expected(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / name / "expected.json").read_text(encoding="utf-8"))


def odata_ids(doc: Any) -> list[str]:
    found: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "@odata.id" and isinstance(value, str):
                found.append(value)
            else:
                found.extend(odata_ids(value))
    elif isinstance(doc, list):
        for value in doc:
            found.extend(odata_ids(value))
    return found


def link_path(link: str) -> str:
    """A link as sushy-static resolves it: no fragment, no final slash."""
    return link.split("#", 1)[0].rstrip("/")


def covered(pattern: str, path: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")


def source_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in (CORPUS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`([a-z0-9-]+)`", cells[0]) if line.startswith("|") else None
        if match:
            rows[match.group(1)] = cells
    return rows


def test_corpus_is_big_enough() -> None:
    vendors = {expected(name)["vendor"] for name in TREES}
    assert len(TREES) >= 30
    assert len(vendors) >= 8, vendors


def test_sources_list_exactly_the_trees() -> None:
    assert sorted(source_rows()) == TREES


@pytest.mark.parametrize("name", TREES)
def test_source_row_names_repository_commit_and_licence(name: str) -> None:
    cells = source_rows()[name]
    assert len(cells) == 9, cells
    _tree, vendor, model, _bmc, repo, commit, path, licence, how = cells
    assert vendor and model and path and how
    assert re.fullmatch(r"\[[\w.-]+/[\w.-]+\]\(https://github\.com/[\w.-]+/[\w.-]+\)", repo), repo
    assert re.fullmatch(r"`[0-9a-f]{40}`", commit), commit
    lic = re.fullmatch(r"\[(MIT|BSD-3-Clause|Apache-2\.0)\]\((LICENSES/[\w.-]+)\)", licence)
    assert lic, licence
    assert (CORPUS / lic.group(2)).is_file()


@pytest.mark.parametrize("name", TREES)
def test_every_document_is_a_json_object(name: str) -> None:
    files = list((CORPUS / name).rglob("*"))
    assert {f.name for f in files if f.is_file()} <= {"index.json", "expected.json"}
    for file in files:
        if file.is_file():
            assert isinstance(json.loads(file.read_text(encoding="utf-8-sig")), dict), file
    assert (tree_root(name) / "index.json").is_file()


def check_firmware_entry(entry: dict[str, Any], why: bool) -> None:
    assert {"id", "name", "version", "state"} <= entry.keys() <= {
        "id", "name", "version", "state", "related", "why",
    }  # fmt: skip
    assert isinstance(entry["id"], str) and entry["id"]
    if why:
        assert isinstance(entry.get("why"), str) and entry["why"]
    else:
        assert isinstance(entry.get("why", ""), str)
    for path in entry.get("related", []):
        assert path.startswith(PREFIX)


def check_inventory(block: dict[str, Any], docs: dict[str, Any], absent: dict[str, Any]) -> None:
    assert set(block) == {"inventory", *FIRMWARE_LISTS}
    inventory = block["inventory"]
    listed: list[str] = []
    if inventory in docs:
        listed = [link_path(m["@odata.id"]) for m in docs[inventory].get("Members") or []]
    elif inventory is not None:  # linked but never captured
        assert inventory in absent["not_in_source"], inventory
    ids = []
    for kind in FIRMWARE_LISTS:
        for entry in block[kind]:
            check_firmware_entry(entry, why=kind != "installed")
            ids.append(entry["id"])
    # every member of the inventory is accounted for, as often as the collection links it
    member_ids = [docs[path].get("Id") or path.rsplit("/", 1)[1] for path in listed]
    assert sorted(ids) == sorted(member_ids)


@pytest.mark.parametrize("name", TREES)
def test_expected_follows_the_schema(name: str) -> None:
    exp = expected(name)
    docs = load_documents(name)
    assert TOP_FIELDS <= exp.keys() <= TOP_FIELDS | {"software"}
    assert exp["schema"] == 1 and exp["tree"] == name
    assert isinstance(exp["vendor"], str) and isinstance(exp["model"], str)
    assert set(exp["bmc"]) == {"manager", "model", "firmware"}
    if exp["bmc"]["manager"] is not None:
        assert exp["bmc"]["manager"] in docs
    root = docs[PREFIX]
    systems = link_path(root["Systems"]["@odata.id"]) if "Systems" in root else f"{PREFIX}/Systems"
    members = [link_path(m["@odata.id"]) for m in (docs.get(systems) or {}).get("Members") or []]
    assert [s["resource"] for s in exp["systems"]] == members
    for system in exp["systems"]:
        assert SYSTEM_FIELDS <= system.keys() <= SYSTEM_FIELDS | {"notes"}
        assert system["id"] == docs[system["resource"]].get("Id")
        gpus = system["gpus"]
        assert set(gpus) == {"count", "items"} and gpus["count"] == len(gpus["items"])
        for gpu in gpus["items"]:
            assert set(gpu) == GPU_FIELDS, gpu
            for path in [gpu["resource"], *gpu["also_at"]]:
                assert path in docs, path
        for thing in system["not_gpus"]:
            assert set(thing) == {"resource", "what", "why"} and thing["resource"] in docs
            assert thing["why"]
    check_inventory(exp["firmware"], docs, exp["absent"])
    if "software" in exp:
        check_inventory(exp["software"], docs, exp["absent"])
    assert set(exp["quirks"]) <= QUIRKS, set(exp["quirks"]) - QUIRKS
    assert set(exp["absent"]) == {"dropped", "not_in_source"}
    assert all(isinstance(n, str) and n for n in exp["notes"])


@pytest.mark.parametrize("name", TREES)
def test_every_link_resolves_or_is_listed_absent(name: str) -> None:
    docs = load_documents(name)
    absent = expected(name)["absent"]
    listed = set(absent["not_in_source"])
    dangling = set()
    for doc in docs.values():
        for link in odata_ids(doc):
            path = link_path(link)
            if path != PREFIX and not path.startswith(PREFIX + "/"):
                continue
            if path in docs or path in listed:
                continue
            if not any(covered(pattern, path) for pattern in absent["dropped"]):
                dangling.add(path)
    assert not dangling, sorted(dangling)[:20]
    # an absent entry never hides a document the tree has
    for path in docs:
        assert not any(covered(pattern, path) for pattern in absent["dropped"]), path
    assert not listed & docs.keys()
