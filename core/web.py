"""The generic list page (NetBox's ObjectListView, small): a page declares its rows, its
filterset, its sortable columns and the template partial HTMX swaps, and gets filtering,
sorting, one paginator and the partial answer for free. No domain here: who may see the
page and which rows are theirs are the subclass's (`inventory.web.ScopedList` checks the
role and keeps the rows to the user's sites).

The page's template draws the pager with `{% include "_partials/pages.html" %}` (Django's
`{% querystring %}` keeps every filter) and the sort headers from `sorts`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.views import View


def with_params(params: QueryDict, **changes: str | None) -> str:
    """The query string of `params` with keys changed (None removes one): links that page,
    sort or filter a list keep every other filter."""
    out = params.copy()
    for key, value in changes.items():
        out.pop(key, None)
        if value is not None:
            out[key] = value
    return out.urlencode()


def sort_links(
    params: QueryDict, param: str, current: str, columns: tuple[tuple[str, str], ...]
) -> list[dict[str, str]]:
    """Per column: the query that sorts by it (a second click reverses), every filter kept
    and back to page 1, and the arrow showing the current direction."""
    links = []
    for key, title in columns:
        arrow = {key: "▲", f"-{key}": "▼"}.get(current, "")
        target = f"-{key}" if current == key else key
        query = with_params(params, **{param: target, "page": None})
        links.append({"key": key, "title": title, "query": query, "arrow": arrow})
    return links


@method_decorator(login_required, name="dispatch")
class ListPage(View):
    """GET: the page, or only its table region (`partial`) for an HTMX request."""

    template_name: ClassVar[str]
    partial: ClassVar[str] = ""  # the partial HTMX swaps: the table, its pager and sorts
    filterset_class: ClassVar[Any] = None
    paginate_by: ClassVar[int] = 50
    rows_name: ClassVar[str] = "rows"  # the page's rows in the context
    sort_param: ClassVar[str] = ""  # the query parameter that sorts, if the list sorts
    columns: ClassVar[tuple[tuple[str, str], ...]] = ()  # (sort key, title), in order
    # A filter the filterset refuses: 200 with the filter's errors and every row (a person
    # typing), or 400 with none (the audit trail, as its API answers).
    refused_filter_status: ClassVar[int] = 200
    filterset: Any = None  # this request's, once bound

    def check(self, request: HttpRequest) -> None:
        """Refuse (PermissionDenied) whoever may not see the page."""

    def queryset(self, request: HttpRequest) -> QuerySet:
        raise NotImplementedError

    def filter_data(self, params: QueryDict) -> QueryDict:
        """What the filterset reads: the query, or less (a chooser's "any" sends "")."""
        return params

    def sort(self, rows: QuerySet, params: QueryDict) -> tuple[QuerySet, str]:
        """The rows in the asked order, and that order's key ("" for the default)."""
        return rows, ""

    def rows(self, page: Page) -> Any:
        return page.object_list

    def more_context(self, request: HttpRequest, page: Page) -> dict[str, Any]:
        return {}

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.check(request)
        context, status = self.page_context(request)
        template = self.template_name
        htmx = getattr(request, "htmx", None)  # django-htmx's middleware sets it
        if self.partial and htmx and not htmx.boosted:
            template += f"#{self.partial}"
        return render(request, template, context, status=status)

    def page_context(self, request: HttpRequest) -> tuple[dict[str, Any], int]:
        """The list's context and status, for its page or for another view that answers
        with its table (a bulk change done, the table again with the same filters)."""
        params = request.GET
        rows = self.queryset(request)
        filterset, status = None, 200
        if self.filterset_class is not None:
            data = self.filter_data(params)
            filterset = self.filterset_class(data or None, queryset=rows, request=request)
            if filterset.is_bound and not filterset.is_valid():
                status = self.refused_filter_status
            # Refused with 200: the filters that are valid still apply.
            rows = rows.none() if status >= 400 else filterset.qs
        self.filterset = filterset
        rows, current = self.sort(rows, params)
        page = Paginator(rows, self.paginate_by).get_page(params.get("page"))
        sorts = sort_links(params, self.sort_param, current, self.columns)
        context = {
            "filter": filterset,
            "page": page,
            self.rows_name: self.rows(page),
            "sort": current,
            "sorts": sorts,
            "sort_by": {link["key"]: link for link in sorts},  # a header by its column
            **self.more_context(request, page),
        }
        return context, status


@method_decorator(login_required, name="dispatch")
class DetailPage(View):
    """GET: one object's page, or only its live region (`partial`) for an HTMX request (a
    panel that polls while work runs). Who may see it and how it is read are the
    subclass's (`inventory.web.ScopedDetail` checks the role and the object's site)."""

    http_method_names = ["get"]
    template_name: ClassVar[str]
    partial: ClassVar[str] = ""

    def check(self, request: HttpRequest) -> None:
        """Refuse (PermissionDenied) whoever may not see the page."""

    def get_object(self, request: HttpRequest, pk: int) -> Any:
        raise NotImplementedError

    def context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        raise NotImplementedError

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        self.check(request)
        obj = self.get_object(request, pk)
        template = self.template_name
        if self.partial and getattr(request, "htmx", None):
            template += f"#{self.partial}"
        return render(request, template, self.context(request, obj))
