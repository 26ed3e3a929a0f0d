"""The edit pages in a real browser: fixing a multi-system BMC's system id from the node
page (the password given again, as the rule asks), and a screenshot of each new page."""

import pytest
from playwright.sync_api import expect

from inventory.models import BMC, Node, SiteRole
from tests.browser.login import log_in
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_fixing_a_multi_system_bmc_then_every_edit_page(corral_web, page, shot, settings):
    site = SiteFactory(slug="dc1", name="DC one")
    rack = RackFactory(site=site, name="r01")
    node = NodeFactory(rack=rack, rack_unit=20, u_height=4, hostname="gpu-blade", state="failed")
    # What inspection said about a BMC of two blades (provisioning.drivers.redfish.client).
    Node.objects.filter(pk=node.pk).update(
        failed_step="inspecting",
        failure_reason="system_id: BMC at https://10.0.0.1 manages 2 systems (Blade1, Blade2); "
        "set system_id to one of them",
    )
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    # A plain technician (view, act) is offered no edit; editing inventory is the write
    # role's (docs/roles.md), here held in this site only.
    user_in("technician", "tom")
    tina = user_in("technician", "tina")
    SiteRole.objects.create(user=tina, role="integration", site=site)
    page.set_viewport_size({"width": 1440, "height": 900})

    log_in(page, corral_web, "tom")
    page.goto(f"{corral_web}/nodes/{node.pk}/")
    expect(page.locator("h1")).to_have_text("gpu-blade")
    expect(page.locator("#edit-bmc")).to_have_count(0)
    page.context.clear_cookies()

    log_in(page, corral_web, "tina")
    page.goto(f"{corral_web}/nodes/{node.pk}/")
    page.click("#edit-bmc")
    expect(page.locator("h1")).to_have_text("BMC of gpu-blade")
    expect(page.locator("#reported-systems-note")).to_contain_text("Blade1, Blade2")
    assert page.input_value("#id_password") == ""  # never rendered back
    page.fill("#id_system_id", "Blade2")
    page.click("#bmc-form button[type=submit]")
    error = page.locator("#field-password .field-error")
    expect(error).to_have_text(BMC.CREDENTIAL_REQUIRED.format(fields="system id"))
    shot(page, "edit-01-bmc-password-needed")
    assert BMC.objects.get(node=node).system_id == ""
    page.fill("#id_password", "s3cret-bmc-pass")
    page.click("#bmc-form button[type=submit]")
    expect(page.locator("h1")).to_have_text("gpu-blade")
    expect(page.locator("#bmc-system-id")).to_have_text("Blade2")
    assert "s3cret-bmc-pass" not in page.content()
    assert BMC.objects.get(node=node).system_id == "Blade2"

    pages = [
        (f"/nodes/{node.pk}/edit/", "Edit gpu-blade", "edit-02-node"),
        (f"/nodes/{node.pk}/bmc/edit/", "BMC of gpu-blade", "edit-03-bmc"),
        (f"/nodes/{node.pk}/interfaces/new/", "New interface of gpu-blade", "edit-04-interface"),
        (f"/racks/{rack.pk}/edit/", "Edit rack DC one/r01", "edit-05-rack"),
        ("/racks/new/", "New rack", "edit-06-rack-new"),
    ]
    for path, title, name in pages:
        page.goto(f"{corral_web}{path}")
        expect(page.locator("h1")).to_have_text(title)
        shot(page, name)
    # A placement clash, answered on the field as the API answers it.
    NodeFactory(rack=rack, rack_unit=10, u_height=2, hostname="neighbour")
    page.goto(f"{corral_web}/nodes/{node.pk}/edit/")
    page.fill("#id_rack_unit", "11")
    page.click("#node-form button[type=submit]")
    expect(page.locator("#field-rack_unit .field-error")).to_have_text(
        "U11-U14 overlaps neighbour at U10-U11 in rack r01."
    )
    shot(page, "edit-07-node-clash")
    page.goto(f"{corral_web}/racks/")
    expect(page.locator("#new-rack")).to_be_visible()
    shot(page, "edit-08-rack-list")
    page.context.clear_cookies()

    user_in("admin", "ada")
    log_in(page, corral_web, "ada")
    for path, title, name in [
        ("/sites/new/", "New site", "edit-09-site-new"),
        (f"/sites/{site.pk}/edit/", "Edit site DC one", "edit-10-site"),
    ]:
        page.goto(f"{corral_web}{path}")
        expect(page.locator("h1")).to_have_text(title)
        shot(page, name)
    page.goto(f"{corral_web}/nodes/import/")
    template = page.request.get(f"{corral_web}/nodes/import/template.csv").text()
    page.set_input_files(
        "#id_file", {"name": "nodes.csv", "mimeType": "text/csv", "buffer": template.encode()}
    )
    page.click("#import-preview")
    expect(page.locator("#import-preview-result")).to_contain_text(
        "would create 1 node and update 0"
    )
    shot(page, "edit-11-import-preview")
    assert not Node.objects.filter(hostname="gpu00001").exists()
