"""Serve plotly.js from the installed `plotly` package instead of committing a 4.6 MB copy.

The Python package ships the exact browser bundle that matches its figure JSON
(plotly/package_data/plotly.min.js). This finder exposes that one file as
`vendor/plotly/plotly.min.js`, for `runserver`, WhiteNoise and `collectstatic` alike.
Reference: https://docs.djangoproject.com/en/5.2/ref/settings/#staticfiles-finders
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage

PLOTLY_PREFIX = "vendor/plotly"
PLOTLY_FILE = "plotly.min.js"


def plotly_package_dir() -> Path:
    return Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyJsFinder(BaseFinder):
    """Finds `vendor/plotly/plotly.min.js` inside the installed plotly package."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(plotly_package_dir()))
        self.storage.prefix = PLOTLY_PREFIX  # type: ignore[attr-defined]

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        if not (plotly_package_dir() / PLOTLY_FILE).is_file():
            return [Error(f"plotly.js not found in {plotly_package_dir()}", id="frontend.E001")]
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        if path == f"{PLOTLY_PREFIX}/{PLOTLY_FILE}":
            match = str(plotly_package_dir() / PLOTLY_FILE)
            return [match] if (find_all or kwargs.get("all")) else match
        return []

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        yield PLOTLY_FILE, self.storage
