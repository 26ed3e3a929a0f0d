"""Requests refused before any view runs, the same way for the API and the dashboard."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBadRequest, JsonResponse

from core.jsonsafe import NUL_MESSAGE


def refuse_nul_in_query(get_response):
    """A NUL in any query parameter (`?mac=%00`) is a 400 naming the parameter.

    PostgreSQL cannot compare text with U+0000 in it, so a filter that passed one through
    was a 500; Django's form fields refuse it, but search, ordering and hand-read
    parameters did not. Checking once here covers every filter, present and future."""

    def middleware(request: HttpRequest):
        if request.path.startswith("/boot/"):
            # The boot server checks its few parameters itself, with the messages iPXE
            # shows on the node's console ("mac must be a MAC address"), on a hot path.
            return get_response(request)
        for key, values in request.GET.lists():
            if "\0" in key or any("\0" in value for value in values):
                name = key.replace("\0", "\\u0000")
                if request.path.startswith("/api/"):
                    return JsonResponse({name: [NUL_MESSAGE]}, status=400)
                return HttpResponseBadRequest(f"Query parameter {name}: {NUL_MESSAGE}")
        return get_response(request)

    return middleware
