"""The Content Security Policy (issue #16): every page is sent with one that refuses inline
scripts, and no page relies on one (an inline <script>, an on...= handler, a javascript:
link), which the browser would refuse. tests/browser/test_csp.py watches a real browser."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.factories import RMACaseFactory

pytestmark = pytest.mark.django_db


class InlineScripts(HTMLParser):
    """Collects what a policy without 'unsafe-inline' for scripts would block."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        named = dict(attrs)
        if tag == "script" and not named.get("src") and named.get("type") != "application/json":
            self.found.append(f"inline <script {attrs}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action") and (value or "").startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value}>")


def policy(resp) -> dict[str, list[str]]:
    header = resp.headers["Content-Security-Policy"]
    return {
        part.split()[0]: part.split()[1:] for part in (p.strip() for p in header.split(";")) if part
    }


def test_the_policy_refuses_inline_scripts_and_foreign_sources(client):
    resp = client.get("/login/")
    directives = policy(resp)
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]


def pages(node, rack) -> list[str]:
    case = RMACaseFactory(node=node)
    return [
        "/fleet/",
        "/nodes/",
        f"/nodes/{node.pk}/",
        "/racks/",
        f"/racks/{rack.pk}/",
        "/dashboards/",
        "/drift/",
        "/drift/skew/",
        "/drift/baselines/",
        "/rma/",
        f"/rma/{case.pk}/",
        "/nodes/import/",
        "/api/docs/",
        "/admin/",
    ]


def test_no_page_needs_an_inline_script(client, users, node, rack):
    admin = users["admin"]
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    for url in [*pages(node, rack), "/login/"]:
        resp = client.get(url)
        assert resp.status_code == 200, url
        assert "Content-Security-Policy" in resp.headers, url
        parser = InlineScripts()
        parser.feed(resp.content.decode())
        assert parser.found == [], url


def test_a_chart_is_a_data_block_not_a_script():
    import plotly.graph_objects as go

    from core.charts import figure_html

    html = figure_html(go.Figure(go.Bar(x=["</script><b>"], y=[1])), "c1", clickable=True)
    parser = InlineScripts()
    parser.feed(html)
    assert parser.found == []
    assert "</script><b>" not in html  # the data cannot end its block early
    assert 'data-plotly-for="c1"' in html and 'data-plotly-click="navigate"' in html
