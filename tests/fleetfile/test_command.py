"""`manage.py fleet` as a pipeline runs it: exit 2 while the plan has changes, 0 once
applied, 1 with the problems; export then plan is no change; the schema's copy is current."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from inventory.models import Node

from .fleet import EXPORTED, NODES, RACKS, SITES, objects_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("BMC_PASSWORD", "from-the-vault-1")
    (tmp_path / "fleet" / "nodes").mkdir(parents=True)
    (tmp_path / "fleet" / "sites.yaml").write_text(SITES)
    (tmp_path / "fleet" / "racks.yaml").write_text(RACKS)
    (tmp_path / "fleet" / "nodes" / "dc1.yaml").write_text(NODES)
    return tmp_path / "fleet"


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("fleet", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_plan_exits_2_until_applied_then_0(folder):
    code, text = run("plan", "-f", str(folder))
    assert code == 2
    assert text.splitlines()[-1].startswith(
        "Plan: 6 to create, 0 to update, 0 to delete, 0 to decommission, 0 unchanged."
    )
    assert f"+ node SN-0001 (gx-001)  ({folder}/nodes/dc1.yaml:2)" in text
    revision = text.rsplit("Revision ", 1)[1].rstrip(".\n")

    code, text = run("apply", "-f", str(folder), "--revision", revision, "--actor", "user:ci")
    assert (code, text.splitlines()[-1]) == (0, "Applied.")
    assert Node.objects.get(serial="SN-0001").bmc.password == "from-the-vault-1"
    assert run("plan", "-f", str(folder))[0] == 0


def test_problems_stop_the_command_naming_each(folder, monkeypatch):
    monkeypatch.delenv("BMC_PASSWORD")
    with pytest.raises(CommandError) as raised:
        run("apply", "-f", str(folder))
    assert str(raised.value) == (
        "Nothing was applied; the fleet files have problems:\n"
        f"{folder}/nodes/dc1.yaml:16 nodes[0].bmc.password: env:BMC_PASSWORD: the variable "
        "BMC_PASSWORD is not set (or is empty)\n"
        f"{folder}/nodes/dc1.yaml:26 nodes[1].bmc.password: env:BMC_PASSWORD: the variable "
        "BMC_PASSWORD is not set (or is empty)"
    )
    assert not Node.objects.exists()


def test_an_export_plans_as_no_change(folder, tmp_path):
    run("apply", "-f", str(folder))
    code, text = run("export", str(tmp_path / "exported"))
    assert text.split() == [str(tmp_path / "exported" / n) for n in EXPORTED]
    code, text = run("plan", "-f", str(tmp_path / "exported"))
    assert (code, text.splitlines()[-1].split(". Revision")[0]) == (
        0,
        "Plan: 0 to create, 0 to update, 0 to delete, 0 to decommission, "
        f"{objects_in(p.read_text() for p in (tmp_path / 'exported').iterdir())} unchanged",
    )  # fmt: skip


def test_the_published_schema_is_current():
    call_command("fleet", "schema", "--check")
