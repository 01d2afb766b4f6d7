"""Reading the current catalog never writes; an engine upgrade's built-in catalog reaches
staff edits when `migrate` re-applies them."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from advisor.engine.facts.catalog import default_catalog
from advisor.hardware.models import CatalogVersion, HardwareItem, ItemKind
from advisor.hardware.services import (
    catalog_publish,
    catalog_reapply_edits,
    hardware_sync_builtin,
)
from advisor.scenarios.catalog_store import catalog_by_version, catalog_current

pytestmark = pytest.mark.django_db


def edits_on_an_older_builtin_catalog() -> CatalogVersion:
    """Staff edits published on a built-in catalog an engine upgrade has since replaced."""
    hardware_sync_builtin()
    HardwareItem.objects.filter(kind=ItemKind.NIC, sku="cx7-400g").update(unit_price_usd=1999)
    version = catalog_publish(note="NIC price")
    CatalogVersion.objects.filter(pk=version.pk).update(base_version="2024.01.0")
    return version


def test_reading_the_current_catalog_writes_nothing() -> None:
    version = edits_on_an_older_builtin_catalog()

    for _ in range(3):
        catalog = catalog_current()

    assert CatalogVersion.objects.count() == 1
    assert catalog.version == version.version  # stored, so a run can name it
    assert catalog_by_version(catalog.version) == catalog


def test_migrate_re_applies_edits_on_the_new_builtin_catalog_once() -> None:
    edits_on_an_older_builtin_catalog()

    call_command("migrate", verbosity=0)  # a deploy: post_migrate re-applies the edits

    assert CatalogVersion.objects.count() == 2
    latest = CatalogVersion.objects.first()
    assert latest is not None and latest.base_version == default_catalog().version
    current = catalog_current()
    assert current.version == latest.version
    assert next(n for n in current.nics if n.sku == "cx7-400g").unit_price_usd == 1999.0
    assert catalog_reapply_edits() is None  # already on the current built-in catalog
    assert CatalogVersion.objects.count() == 2


def test_without_edits_there_is_nothing_to_re_apply() -> None:
    assert catalog_reapply_edits() is None
    assert catalog_current() is default_catalog()
    assert not CatalogVersion.objects.exists()
