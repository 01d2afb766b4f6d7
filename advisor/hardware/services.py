"""Writes for the hardware catalog: mirror the built-in items, publish a new version."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.hardware.models import CatalogVersion, HardwareItem, ItemKind

# Which key of the engine's item dict each column edits.
_GPU_COLUMNS = {"sku": "id", "name": "name", "unit_price_usd": "price_usd"}
_NET_COLUMNS = {"sku": "sku", "name": "description", "unit_price_usd": "unit_price_usd"}


class CatalogInvalid(ValueError):
    """The edited items do not make a catalog the engine accepts."""


def _columns(kind: str) -> dict[str, str]:
    return _GPU_COLUMNS if kind == ItemKind.GPU else _NET_COLUMNS


def _item_key(kind: str, raw: dict[str, Any]) -> str:
    return str(raw[_columns(kind)["sku"]])


def _row_from_item(kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    cols = _columns(kind)
    source = raw.get("source", "")
    if kind == ItemKind.GPU:
        source = (raw.get("sources") or {}).get("price_usd", "")
    return {
        "name": str(raw.get(cols["name"], "")),
        "unit_price_usd": float(raw.get(cols["unit_price_usd"], 0) or 0),
        "cloud_usd_per_hour": raw.get("cloud_usd_per_hour") if kind == ItemKind.GPU else None,
        "power_w": float(raw.get("power_w", 0) or 0),
        "price_is_estimate": bool(raw.get("price_is_estimate", True)),
        "source": str(source),
        # Technical fields stay the built-in catalog's (so engine updates reach them); this
        # holds only the fields staff override, or every field of an item staff added.
        "attributes": {},
    }


def builtin_item(kind: str, sku: str) -> dict[str, Any] | None:
    """The built-in catalog's dict for this item, or None for items staff added."""
    for raw in default_catalog().to_dict().get(kind) or []:
        if _item_key(kind, raw) == sku:
            return dict(raw)
    return None


def item_dict(row: HardwareItem) -> dict[str, Any]:
    """The engine's item dict for this row (attributes plus the edited columns)."""
    cols = _columns(row.kind)
    out: dict[str, Any] = dict(row.attributes or {})
    out[cols["sku"]] = row.sku
    out[cols["name"]] = row.name
    out[cols["unit_price_usd"]] = row.unit_price_usd
    out["power_w"] = row.power_w
    out["price_is_estimate"] = row.price_is_estimate
    if row.kind == ItemKind.GPU:
        if row.cloud_usd_per_hour is not None:
            out["cloud_usd_per_hour"] = row.cloud_usd_per_hour
        sources = dict(out.get("sources") or {})
        if row.source:
            sources["price_usd"] = row.source
        out["sources"] = sources
    else:
        out["source"] = row.source
    return out


def hardware_sync_builtin() -> int:
    """Add a row for every built-in item that has none yet; edited rows are left alone."""
    base = default_catalog().to_dict()
    existing = set(HardwareItem.objects.values_list("kind", "sku"))
    new = []
    for kind in ItemKind.values:
        for raw in base.get(kind) or []:
            sku = _item_key(kind, raw)
            if (kind, sku) in existing:
                continue
            new.append(HardwareItem(kind=kind, sku=sku, **_row_from_item(kind, raw)))
    HardwareItem.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def merged_catalog_dict(candidate: HardwareItem | None = None) -> dict[str, Any]:
    """The built-in catalog with every row's edits applied (disabled rows removed).

    `candidate` (an unsaved edit) replaces its stored row, to check it before saving.
    """
    base = default_catalog()
    data = base.to_dict()
    rows = list(HardwareItem.objects.all())
    if candidate is not None:
        rows = [r for r in rows if r.pk != candidate.pk or candidate.pk is None]
        rows = [r for r in rows if (r.kind, r.sku) != (candidate.kind, candidate.sku)]
        rows.append(candidate)
    for kind in ItemKind.values:
        items = {_item_key(kind, raw): raw for raw in data.get(kind) or []}
        for row in (r for r in rows if r.kind == kind):
            if not row.enabled:
                items.pop(row.sku, None)
            else:
                items[row.sku] = {**items.get(row.sku, {}), **item_dict(row)}
        data[kind] = list(items.values())
    data["version"] = base.version
    return data


def catalog_check(data: dict[str, Any]) -> Catalog:
    """Build the engine's Catalog from data; anything the engine refuses -> CatalogInvalid."""
    try:
        catalog = Catalog.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise CatalogInvalid(f"the catalog is not valid: {exc}") from exc
    for kind in ("gpus", "nics", "switches"):
        if not getattr(catalog, kind):
            raise CatalogInvalid(f"the catalog needs at least one enabled item in {kind}")
    return catalog


@transaction.atomic
def catalog_publish(
    *, user: AbstractBaseUser | AnonymousUser | None = None, note: str = ""
) -> CatalogVersion:
    """Store the current edits as a new immutable catalog version (used by new runs)."""
    data = merged_catalog_dict()
    base_version = str(data["version"])
    catalog_check(data)
    version = CatalogVersion.objects.create(
        version=f"pending-{uuid.uuid4()}",
        base_version=base_version,
        data=data,
        note=note,
        created_by=user if user is not None and user.is_authenticated else None,  # type: ignore[misc]
    )
    version.version = f"{base_version}+edit.{version.pk}"
    version.data = {**data, "version": version.version}
    version.save(update_fields=["version", "data"])
    return version


def catalog_reapply_edits() -> CatalogVersion | None:
    """After an engine upgrade changed the built-in catalog: publish the staff edits again on
    top of the new built-in catalog (a new version new runs use).  None when there are no
    edits or they already sit on the current built-in catalog."""
    latest = CatalogVersion.objects.only("id", "base_version").first()
    base = default_catalog()
    if latest is None or latest.base_version == base.version:
        return None
    return catalog_publish(note=f"Edits re-applied to the built-in catalog {base.version}.")
