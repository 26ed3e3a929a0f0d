"""The site's URLs and one view that fails, to see the 500 page as a user would."""

from django.urls import path

from fleet.urls import handler404, handler500
from fleet.urls import urlpatterns as site_patterns


def boom(request):
    raise RuntimeError("a bug")


urlpatterns = [path("boom/", boom), *site_patterns]

__all__ = ["handler404", "handler500", "urlpatterns"]
