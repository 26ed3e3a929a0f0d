"""Static files: plotly.js served from the installed plotly package (the version pyproject
pins), as static/vendor/plotly/plotly.min.js: no copy in the repository to fall out of
step with the Python package that writes the figures, and no CDN; and WhiteNoise reading
the source folders once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage
from whitenoise.middleware import WhiteNoiseMiddleware

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


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise, with the source folders' files read once per process.

    With WHITENOISE_USE_FINDERS, each WhiteNoiseMiddleware stats and describes every static
    file as it is built (about 270 files, 36 ms). A server builds it once; Django's test
    client builds a handler, so this middleware, for every client: a third of a page test's
    time went to it. The descriptions depend only on the files and on these settings, so
    they are kept per process, keyed by the settings.
    """

    _described: ClassVar[dict[tuple, dict[str, Any]]] = {}

    def add_files_from_finders(self) -> None:
        key = (
            self.static_prefix,
            self.max_age,
            self.allow_all_origins,
            self.charset,
            repr(getattr(settings, "WHITENOISE_MIMETYPES", None)),
            tuple(settings.STATICFILES_FINDERS),
            tuple(str(d) for d in settings.STATICFILES_DIRS),
        )
        described = self._described.get(key)
        if described is None:
            before = dict(self.files)
            super().add_files_from_finders()
            described = {url: f for url, f in self.files.items() if before.get(url) is not f}
            self._described[key] = described
        self.files.update(described)
