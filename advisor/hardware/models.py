"""The editable hardware catalog: staff change items and prices; every save is a new version.

`HardwareItem` rows mirror the engine's built-in catalog (GPUs, NICs, switches, transceivers,
cables) and hold staff edits. Publishing merges them onto the built-in catalog and stores
the whole result as an immutable `CatalogVersion`; new runs use the latest one, and every run
records the version it was computed with.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ItemKind(models.TextChoices):
    GPU = "gpus", "GPU"
    NIC = "nics", "NIC"
    SWITCH = "switches", "Switch"
    TRANSCEIVER = "transceivers", "Transceiver (optic)"
    CABLE = "cables", "Cable"


class HardwareItem(models.Model):
    """One catalog item. The common, often-edited fields are columns; the rest is `attributes`.

    For GPUs `sku` is the engine's GPU id, `name` its name, `unit_price_usd` its purchase
    price and `cloud_usd_per_hour` its rental price.
    """

    kind = models.CharField(max_length=16, choices=ItemKind.choices, db_index=True)
    sku = models.CharField(max_length=64, help_text="Catalog id (the engine's sku or GPU id).")
    name = models.CharField(max_length=200, help_text="Description shown in the BOM.")
    unit_price_usd = models.FloatField(help_text="Price per unit in US dollars.")
    cloud_usd_per_hour = models.FloatField(
        null=True, blank=True, help_text="GPUs only: rental price per GPU-hour."
    )
    power_w = models.FloatField(default=0, help_text="Typical power per unit, watts.")
    price_is_estimate = models.BooleanField(default=True)
    source = models.TextField(blank=True, default="", help_text="Where the figures come from.")
    attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "Engine fields to override (ports, speeds, radix, ...) as JSON; empty keeps the "
            "built-in values. An item you add needs all of its kind's fields here."
        ),
    )
    enabled = models.BooleanField(
        default=True, help_text="Disabled items are left out of the catalog."
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["kind", "sku"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "sku"], name="hardware_item_kind_sku_unique")
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.sku}"


class CatalogVersion(models.Model):
    """An immutable snapshot of the whole catalog (engine `Catalog.to_dict()` format)."""

    version = models.CharField(max_length=64, unique=True)
    base_version = models.CharField(
        max_length=64, help_text="The built-in catalog these edits were applied to."
    )
    data = models.JSONField()
    note = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        get_latest_by = ["created_at", "id"]

    def __str__(self) -> str:
        return self.version
