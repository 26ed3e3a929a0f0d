"""Walk a running Corral as one login: every page and every API route, by following what
the pages link to (href, hx-get, GET forms) and then filling every route the URL conf
declares with ids the walk saw. Nothing is posted: writes are other tests' business.

The routes come from Django's resolver, so a new page or endpoint is walked without
anyone adding it here; a route the walk cannot build a URL for is reported, not skipped.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests
from django.urls import Resolver404, get_resolver, resolve
from django.urls.resolvers import URLPattern, URLResolver

# Values for route arguments that are not ids, taken from what the pages and docs offer.
NAMED_ARGS: dict[str, list[str]] = {
    "name": ["power_on"],  # node and rack actions, RMA transitions: POST only (GET: 405)
    "verb": ["pause"],
    "label": ["inventory.node"],
}
# Routes for machines, not people or integrators (node-facing boot protocol, the firmware
# BMCs download: tests/converge/test_artifacts.py, the scrape of Prometheus, which is
# allowed by network or token, not by role: tests/metrics), and the format-suffix twins of
# DRF routes: walked through their plain form. Logging out ends the walk's session (a POST).
SKIP = re.compile(
    r"^(admin/|boot/|static/|logout/|artifacts/|metrics$)"
    r"|\(\?P<format>|<drf_format_suffix:format>"
)
NOT_FOLLOWED = re.compile(r"^/(static/|logout/|admin/logout/|boot/|artifacts/)")
PER_ROUTE = 3  # distinct URLs of one route (ids, filters, pages) worth loading


@dataclass(frozen=True)
class Route:
    pattern: str  # the full route as the resolver has it, e.g. "nodes/<int:pk>/"
    name: str  # namespaced url name, e.g. "inventory:node_detail"


def routes() -> list[Route]:
    """Every route of the URL conf that a person or an integrator reaches."""

    def walk(patterns, prefix: str, ns: str) -> Iterator[Route]:
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(
                    p.url_patterns,
                    prefix + str(p.pattern),
                    ns + (f"{p.namespace}:" if p.namespace else ""),
                )
            elif isinstance(p, URLPattern):
                yield Route(prefix + str(p.pattern), ns + (p.name or ""))

    seen, out = set(), []
    for route in walk(get_resolver().url_patterns, "", ""):
        if SKIP.search(route.pattern) or route.pattern in seen:
            continue
        seen.add(route.pattern)
        out.append(route)
    return out


def literal(pattern: str) -> str:
    """A DRF regex route as a plain one: ^nodes/(?P<pk>[^/.]+)/$ -> nodes/<pk>/."""
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", pattern)
    return text.replace("^", "").replace("$", "").replace("\\.", ".")


class Links(HTMLParser):
    """Same-site URLs a page leads to: links, HTMX loads, GET forms and CSV downloads."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        a = dict(attrs)
        for key in ("href", "hx-get", "data-href"):
            if a.get(key):
                self.found.append(a[key])
        if tag == "form" and (a.get("method") or "get").lower() == "get" and a.get("action"):
            self.found.append(a["action"])


@dataclass
class Visit:
    url: str
    status: int
    route: str  # url name
    content_type: str = ""


@dataclass
class Walk:
    base: str
    session: requests.Session
    visits: list[Visit] = field(default_factory=list)
    per_route: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # Shared by a login's page and API walks: an id seen in one fills routes of the other.
    ids: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # Text no answer may hold (another site's names, for a role held in one site), and
    # where it was found: (url, text).
    forbidden: tuple[str, ...] = ()
    leaks: list[tuple[str, str]] = field(default_factory=list)

    def get(self, url: str) -> requests.Response | None:
        """GET one same-site URL unless its route had its share; note ids it shows."""
        parts = urlsplit(urljoin(self.base + "/", url))
        path = parts.path
        if NOT_FOLLOWED.match(path):
            return None
        try:
            match = resolve(path)
        except Resolver404:
            return None
        full = path + (f"?{parts.query}" if parts.query else "")
        name = match.view_name
        if full in self.per_route[name] or len(self.per_route[name]) >= PER_ROUTE:
            return None
        self.per_route[name].add(full)
        resp = self.session.get(self.base + full, allow_redirects=False, timeout=60)
        self.visits.append(
            Visit(full, resp.status_code, name, resp.headers.get("content-type", ""))
        )
        self._note_ids(match, path, resp)
        if self.forbidden:
            body = resp.text
            self.leaks += [(full, text) for text in self.forbidden if text in body]
        return resp

    def _note_ids(self, match, path: str, resp: requests.Response) -> None:
        # The argument of a route a visited URL resolved to, under the path before it:
        # /nodes/5/ gives "nodes/" -> 5, which fills nodes/<pk>/drift/ and friends.
        for value in match.kwargs.values():
            head = path[: path.find(f"/{value}/") + 1] if f"/{value}/" in path else ""
            if head:
                self._add(head.lstrip("/"), str(value))
        if resp.status_code == 200 and "json" in resp.headers.get("content-type", ""):
            body = resp.json()
            items = body.get("results") if isinstance(body, dict) else body
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and "id" in item:
                    self._add(path.lstrip("/"), str(item["id"]))

    def _add(self, head: str, value: str) -> None:
        if value not in self.ids[head] and len(self.ids[head]) < PER_ROUTE:
            self.ids[head].append(value)

    def crawl(self, start: str, limit: int = 2000) -> None:
        """Breadth-first over what the pages link to."""
        queue = [start]
        while queue and len(self.visits) < limit:
            resp = self.get(queue.pop(0))
            if resp is None or resp.status_code != 200:
                continue
            if "html" in resp.headers.get("content-type", ""):
                parser = Links()
                parser.feed(resp.text)
                queue.extend(u for u in parser.found if u.startswith("/") or u.startswith("?"))

    def fill(self, route: Route, named: dict[str, list[str]], discover: bool = True) -> list[str]:
        """URLs for the route, from ids the walk saw under the same path (and every value
        of a named argument); none if it saw no id there. `discover`: load a list route to
        find ids when none were seen (not when probing with given ids only)."""
        texts = [literal(route.pattern)]
        for arg in re.findall(r"<(?:\w+:)?(\w+)>", texts[0]):
            head = texts[0][: texts[0].index("<")]
            values = named.get(arg) or NAMED_ARGS.get(arg)
            if not values:
                if discover and not self._id_for(head) and head.endswith("/"):
                    self.get("/" + head)  # a list route: its answer holds the ids
                values = [v] if (v := self._id_for(head)) else []
            if not values:
                return []
            pick = re.compile(rf"<(?:\w+:)?{arg}>")
            texts = [pick.sub(value, text, count=1) for text in texts for value in values]
        return ["/" + text for text in texts]

    def _id_for(self, head: str) -> str | None:
        if self.ids.get(head):
            return self.ids[head][0]
        # nodes/<pk>/ of another app: the last word names the kind (rma/nodes/<node_pk>/).
        last = head.rstrip("/").rsplit("/", 1)[-1] + "/"
        for known, values in self.ids.items():
            if known.endswith("/" + last) or known == last:
                return values[0]
        return None
