"""Staff edit the hardware catalog here; each save publishes a new catalog version."""

from __future__ import annotations

import json
import math
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse

from advisor.engine.facts.vocabulary import INFINIBAND, ROCE, fabric_label
from advisor.hardware.models import CatalogVersion, HardwareItem
from advisor.hardware.services import (
    CatalogInvalid,
    builtin_item,
    catalog_check,
    catalog_publish,
    hardware_sync_builtin,
    merged_catalog_dict,
)

_DIRTY = "_hardware_catalog_changes"


def _changes(request: HttpRequest) -> list[str]:
    changes: list[str] = getattr(request, _DIRTY, [])
    setattr(request, _DIRTY, changes)
    return changes


def _publish(request: HttpRequest) -> None:
    """One new version per admin request, however many rows it saved (bulk list edits)."""
    changes = getattr(request, _DIRTY, [])
    if not changes:
        return
    setattr(request, _DIRTY, [])
    try:
        version = catalog_publish(user=request.user, note="; ".join(changes)[:2000])
    except CatalogInvalid as exc:
        messages.error(request, f"Not published: {exc}. New runs keep the previous catalog.")
        return
    messages.success(
        request, f"Catalog {version.version} published; new runs and re-runs will use it."
    )


PLATFORM_FACTS: dict[str, forms.Field] = {
    "host_pcie_gen": forms.IntegerField(
        required=False, min_value=0, max_value=6, help_text="PCIe generation of the NIC slots."
    ),
    "reference_nic_sku": forms.CharField(
        required=False, max_length=64, help_text="Catalog NIC sku of the compute NIC."
    ),
    "reference_nic_count": forms.IntegerField(
        required=False, min_value=0, max_value=64, help_text="Compute links per server."
    ),
    "reference_fabric": forms.ChoiceField(
        required=False,
        choices=(("", "(unchanged)"), *((f, fabric_label(f)) for f in (INFINIBAND, ROCE))),
        help_text="Fabric of the platform's published reference design.",
    ),
    "nic_options": forms.CharField(
        required=False,
        max_length=300,
        help_text="Other NIC skus the platform vendor publishes, comma-separated.",
    ),
    "storage_nic_sku": forms.CharField(
        required=False, max_length=64, help_text="Storage / in-band adapter sku."
    ),
    "storage_nic_published": forms.NullBooleanField(
        required=False,
        help_text="The platform's published design names this storage adapter (else the answer "
        "calls it assumed).",
    ),
    "storage_ports_per_server": forms.IntegerField(required=False, min_value=1, max_value=16),
    "inband_ports_per_server": forms.IntegerField(required=False, min_value=0, max_value=16),
    "reference_design": forms.CharField(
        required=False, max_length=300, help_text="The published design these facts come from."
    ),
    "integrated_scaleout": forms.NullBooleanField(
        required=False, help_text="Scale-out ports built into the accelerator (no added NICs)."
    ),
    "compute_nics_on_board": forms.NullBooleanField(
        required=False,
        help_text="The reference NIC and its options sit on the platform's own boards and come "
        "with the servers (no NIC card is bought).",
    ),
}
"""GPU platform facts (what the reference server around a GPU ships with) edited as form
fields; stored in the item's attributes."""


# Sane ranges of the price and power columns: a typo (a minus sign, a price in cents, 1e308)
# must be refused, naming the field, before it becomes a negative or absurd quote. The largest
# built-in items are a $250k switch and a $45k GPU; a chassis switch is a few $M at most.
MAX_UNIT_PRICE_USD = 10_000_000.0
MAX_CLOUD_USD_PER_HOUR = 1_000.0
MAX_POWER_W = 100_000.0


def _finite(value: float | None, field: str) -> float | None:
    if value is not None and not math.isfinite(value):
        raise forms.ValidationError(f"{field} must be a finite number")
    return value


class ColumnRules(forms.ModelForm[HardwareItem]):
    """Type, sign and range of the price and power columns, each error on its field (the
    detail form and the list's inline edits alike)."""

    def clean_unit_price_usd(self) -> float:
        value = _finite(self.cleaned_data.get("unit_price_usd"), "The price")
        if value is None:
            raise forms.ValidationError("The price is required")
        if value < 0:
            raise forms.ValidationError("The price must be more than $0")
        if value > MAX_UNIT_PRICE_USD:
            raise forms.ValidationError(f"The price must be at most ${MAX_UNIT_PRICE_USD:,.0f}")
        return float(value)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        price = cleaned.get("unit_price_usd")
        if price is None:
            return cleaned
        kind = str(cleaned.get("kind", self.instance.kind))
        sku = str(cleaned.get("sku", self.instance.sku))
        attributes = cleaned.get("attributes", self.instance.attributes) or {}
        integrated = bool({**(builtin_item(kind, sku) or {}), **attributes}.get("integrated"))
        if integrated and price != 0:
            self.add_error(
                "unit_price_usd",
                "Ports built into the accelerator cost nothing to add: the price must be 0",
            )
        elif not integrated and price == 0:
            self.add_error("unit_price_usd", "The price must be more than $0")
        return cleaned

    def clean_cloud_usd_per_hour(self) -> float | None:
        value = _finite(self.cleaned_data.get("cloud_usd_per_hour"), "The rental price")
        if value is None:
            return None
        if value <= 0:
            raise forms.ValidationError("The rental price must be more than $0 per GPU-hour")
        if value > MAX_CLOUD_USD_PER_HOUR:
            raise forms.ValidationError(
                f"The rental price must be at most ${MAX_CLOUD_USD_PER_HOUR:,.0f} per GPU-hour"
            )
        return float(value)

    def clean_power_w(self) -> float:
        value = _finite(self.cleaned_data.get("power_w"), "The power")
        if value is None:
            raise forms.ValidationError("The power is required (0 for a passive cable)")
        if value < 0:
            raise forms.ValidationError("The power must not be negative")
        if value > MAX_POWER_W:
            raise forms.ValidationError(f"The power must be at most {MAX_POWER_W:,.0f} W")
        return float(value)


class HardwareItemForm(ColumnRules):
    """Refuses an edit that would leave a catalog the engine cannot use, naming why.

    For GPUs the platform facts (host PCIe generation, reference compute NIC and count,
    storage adapters, ...) are form fields of their own, written into ``attributes``.
    """

    host_pcie_gen = PLATFORM_FACTS["host_pcie_gen"]
    reference_nic_sku = PLATFORM_FACTS["reference_nic_sku"]
    reference_nic_count = PLATFORM_FACTS["reference_nic_count"]
    reference_fabric = PLATFORM_FACTS["reference_fabric"]
    nic_options = PLATFORM_FACTS["nic_options"]
    storage_nic_sku = PLATFORM_FACTS["storage_nic_sku"]
    storage_nic_published = PLATFORM_FACTS["storage_nic_published"]
    storage_ports_per_server = PLATFORM_FACTS["storage_ports_per_server"]
    inband_ports_per_server = PLATFORM_FACTS["inband_ports_per_server"]
    reference_design = PLATFORM_FACTS["reference_design"]
    integrated_scaleout = PLATFORM_FACTS["integrated_scaleout"]
    compute_nics_on_board = PLATFORM_FACTS["compute_nics_on_board"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inst = self.instance
        if inst.pk and inst.kind == "gpus":
            current = {**(builtin_item("gpus", inst.sku) or {}), **(inst.attributes or {})}
            for name in PLATFORM_FACTS:
                value = current.get(name)
                if name == "nic_options" and isinstance(value, list | tuple):
                    value = ", ".join(str(v) for v in value)
                if value is not None:
                    self.initial[name] = value

    class Meta:
        model = HardwareItem
        fields = (
            "kind",
            "sku",
            "name",
            "enabled",
            "unit_price_usd",
            "cloud_usd_per_hour",
            "power_w",
            "price_is_estimate",
            "source",
            "attributes",
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        if cleaned.get("kind") == "gpus":
            attributes = dict(cleaned.get("attributes") or {})
            for name in PLATFORM_FACTS:
                value = cleaned.get(name)
                if value is None or value == "":
                    continue
                if name == "nic_options":
                    value = [v.strip() for v in str(value).split(",") if v.strip()]
                attributes[name] = value
            cleaned["attributes"] = attributes
        candidate = self.instance
        for name, value in cleaned.items():
            setattr(candidate, name, value)
        try:
            catalog_check(merged_catalog_dict(candidate))
        except CatalogInvalid as exc:
            raise forms.ValidationError(
                f"{exc}. An item that is not in the built-in catalog needs every field of "
                "its kind in 'attributes'."
            ) from exc
        return cleaned


@admin.register(HardwareItem)
class HardwareItemAdmin(admin.ModelAdmin[HardwareItem]):
    form = HardwareItemForm
    list_display = (
        "sku",
        "kind",
        "name",
        "unit_price_usd",
        "cloud_usd_per_hour",
        "power_w",
        "price_is_estimate",
        "enabled",
        "updated_at",
    )
    list_editable = ("unit_price_usd", "cloud_usd_per_hour", "power_w", "enabled")
    list_filter = ("kind", "enabled", "price_is_estimate")
    search_fields = ("sku", "name", "source")
    readonly_fields = ("updated_at", "updated_by", "builtin_reference")
    fieldsets = (
        (None, {"fields": ("kind", "sku", "name", "enabled")}),
        (
            "Price and power",
            {
                "fields": (
                    "unit_price_usd",
                    "cloud_usd_per_hour",
                    "power_w",
                    "price_is_estimate",
                    "source",
                )
            },
        ),
        (
            "GPU platform facts (GPUs only)",
            {"classes": ("collapse",), "fields": tuple(PLATFORM_FACTS)},
        ),
        (
            "Technical attributes (engine fields)",
            {"classes": ("collapse",), "fields": ("attributes",)},
        ),
        ("History", {"fields": ("updated_at", "updated_by")}),
    )
    actions = ("publish_now",)

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[Any]:
        # The list's inline edits (prices, power) obey the same column rules as the form.
        return super().get_changelist_form(request, form=ColumnRules, **kwargs)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        # The rows mirror the built-in catalog; new built-in items appear here automatically.
        hardware_sync_builtin()
        response = super().changelist_view(request, extra_context)
        _publish(request)
        return response

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: Any = None,
    ) -> HttpResponse:
        response = super().changeform_view(request, object_id, form_url, extra_context)
        _publish(request)
        return response

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        response = super().delete_view(request, object_id, extra_context)
        _publish(request)
        return response

    def save_model(
        self, request: HttpRequest, obj: HardwareItem, form: ModelForm[HardwareItem], change: bool
    ) -> None:
        obj.updated_by = request.user if request.user.is_authenticated else None
        super().save_model(request, obj, form, change)
        what = ", ".join(form.changed_data) if change else "added"
        _changes(request).append(f"{obj.sku}: {what} by {request.user}")

    def delete_model(self, request: HttpRequest, obj: HardwareItem) -> None:
        _changes(request).append(f"{obj.sku}: deleted by {request.user}")
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[HardwareItem]) -> None:
        _changes(request).extend(f"{o.sku}: deleted by {request.user}" for o in queryset)
        super().delete_queryset(request, queryset)

    @admin.display(description="Built-in values")
    def builtin_reference(self, obj: HardwareItem) -> str:
        raw = builtin_item(obj.kind, obj.sku) if obj.pk else None
        return json.dumps(raw, indent=1) if raw else "Not in the built-in catalog (added by staff)."

    @admin.action(description="Publish the catalog now (a new version for new runs)")
    def publish_now(self, request: HttpRequest, queryset: QuerySet[HardwareItem]) -> None:
        _changes(request).append(f"published by {request.user}")


@admin.register(CatalogVersion)
class CatalogVersionAdmin(admin.ModelAdmin[CatalogVersion]):
    list_display = ("version", "base_version", "created_by", "created_at", "note")
    readonly_fields = ("version", "base_version", "data", "note", "created_by", "created_at")
    search_fields = ("version", "note")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
