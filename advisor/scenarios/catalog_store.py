"""Where the current hardware catalog comes from.

The built-in engine catalog, unless staff saved an edited copy (see the catalog admin).
"""

from __future__ import annotations

from advisor.engine.catalog import Catalog, default_catalog


def catalog_current() -> Catalog:
    return default_catalog()
