"""plotly.js served from the installed plotly package (the version pyproject pins), as
static/vendor/plotly/plotly.min.js: no copy in the repository to fall out of step with
the Python package that writes the figures, and no CDN."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor/plotly"
NAME = "plotly.min.js"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import plotly

        self.storage = FileSystemStorage(location=Path(plotly.__file__).parent / "package_data")
        self.storage.prefix = PREFIX  # type: ignore[attr-defined]  (collectstatic, whitenoise)

    def check(self, **kwargs: Any) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        find_all = find_all or kwargs.get("all", False)
        if path == f"{PREFIX}/{NAME}":
            match = self.storage.path(NAME)
            return [match] if find_all else match
        return [] if find_all else None

    def list(self, ignore_patterns: Any) -> Any:
        yield NAME, self.storage
