"""Where the current hardware catalog comes from.

The built-in engine catalog, unless staff saved edits in the catalog admin
(advisor.hardware): then the latest saved CatalogVersion. Runs record `catalog.version`, so
every result names the catalog it was computed with.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import lru_cache
from typing import Any

from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.catalog.rules import CatalogError
from advisor.hardware.models import CatalogVersion

logger = logging.getLogger(__name__)


@lru_cache(maxsize=16)
def _catalog_for(version: str, created_at: datetime, data_key: int) -> Catalog:
    # `data_key` is the row id: a version string plus its timestamp names one immutable row.
    data: dict[str, Any] = CatalogVersion.objects.values_list("data", flat=True).get(pk=data_key)
    return Catalog.from_dict({**data, "version": version})


def catalog_current() -> Catalog:
    """The catalog new runs use: the latest staff-edited version, else the built-in one.

    Reads only.  After an engine upgrade changes the built-in catalog, `migrate` re-applies
    the staff edits on top of it as a new version (advisor.hardware.services.
    catalog_reapply_edits, on post_migrate); until then the latest stored version stays
    current, so a run always records a catalog that is stored."""
    # A version stored before the catalog rules (a negative price, 0 GPUs per server) is
    # refused by the engine: new runs take the newest version that obeys them (logged), so a
    # bad edit never becomes a quote or a 500. The admin refuses such edits now.
    for row in CatalogVersion.objects.only("id", "version", "created_at")[:20]:
        try:
            return _catalog_for(row.version, row.created_at, row.pk)
        except CatalogError as exc:
            logger.error("catalog %s is not usable and is skipped: %s", row.version, exc)
    return default_catalog()


def catalog_recorded(version: str) -> Catalog:
    """The catalog a run or sweep recorded as `version` (the current one if it is gone)."""
    return (catalog_by_version(version) if version else None) or catalog_current()


def catalog_by_version(version: str) -> Catalog | None:
    """A stored catalog by its version string (the built-in one by its own), or None."""
    base = default_catalog()
    if version == base.version:
        return base
    row = CatalogVersion.objects.only("id", "version", "created_at").filter(version=version).first()
    if row is None:
        return None
    try:
        return _catalog_for(row.version, row.created_at, row.pk)
    except CatalogError as exc:
        logger.error("catalog %s is not usable: %s", row.version, exc)
        return None
