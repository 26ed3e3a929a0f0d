"""GET /api/v1/: a link to every collection and report the API serves, of every app.

Each app's router used to bring a root of its own, listing that router's resources; the
first one included (inventory's) answered, so an integrator starting at /api/v1/ saw 6 of
~30 resources. This root lists what the URL conf serves instead, found the way the schema
generator finds operations (drf-spectacular's endpoint enumerator): every GET whose path
takes no argument. A new collection or report is linked without anyone listing it, and
what the schema hides (`schema = None`, as this view) is not linked either.

Reading it needs what every read needs (fleet.api.RolePermission: any role, anywhere). It
links everything, as DRF's roots did: a link the caller's role may not read (the audit
trail) answers 403, as the schema that lists it already says.
"""

from __future__ import annotations

from drf_spectacular.generators import EndpointEnumerator
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class APIRoot(APIView):
    schema = None  # not an operation of the API: the schema is its own index

    def get(self, request: Request) -> Response:
        here = request.path_info  # /api/v1/, without a script prefix, as the URL conf has it
        keys = {
            path[len(here) :].rstrip("/")
            for path, _regex, method, _view in EndpointEnumerator().get_api_endpoints()
            if method == "GET" and path.startswith(here) and path != here and "{" not in path
        }
        # Relative to this page's URL, so a script prefix in front of it is kept.
        return Response({key: request.build_absolute_uri(f"{key}/") for key in sorted(keys)})
