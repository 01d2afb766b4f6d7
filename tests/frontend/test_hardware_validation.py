"""The hardware admin refuses a price, rental price or power that would falsify a quote
(negative, zero, absurd, not a number), naming the field; nothing is saved or published."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.hardware.models import CatalogVersion, HardwareItem, ItemKind
from advisor.hardware.services import hardware_sync_builtin

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(db: object) -> Client:
    user = User.objects.create_superuser("ada.admin", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    hardware_sync_builtin()
    return client


def edit(client: Client, item: HardwareItem, **changes: str) -> Any:
    form = {
        "kind": item.kind,
        "sku": item.sku,
        "name": item.name,
        "enabled": "on",
        "unit_price_usd": str(item.unit_price_usd),
        "cloud_usd_per_hour": ""
        if item.cloud_usd_per_hour is None
        else str(item.cloud_usd_per_hour),
        "power_w": str(item.power_w),
        "price_is_estimate": "on",
        "source": item.source,
        "attributes": json.dumps(item.attributes),
        **changes,
    }
    return client.post(f"/admin/hardware/hardwareitem/{item.pk}/change/", form)


def field_errors(response: Any, field: str) -> list[str]:
    return list(response.context["adminform"].form.errors.get(field, []))


@pytest.mark.parametrize(
    ("price", "message"),
    [
        ("-868000", "The price must be more than $0"),
        ("0", "The price must be more than $0"),
        ("1e308", "The price must be at most $10,000,000"),
        ("nan", "Enter a number."),
        ("inf", "Enter a number."),
    ],
)
def test_a_switch_price_out_of_range_is_refused_on_its_field(
    staff_client: Client, price: str, message: str
) -> None:
    switch = HardwareItem.objects.get(kind=ItemKind.SWITCH, sku="spectrum4-sn5600")
    before = switch.unit_price_usd

    response = edit(staff_client, switch, unit_price_usd=price)

    assert response.status_code == 200
    errors = field_errors(response, "unit_price_usd")
    assert any(message in e for e in errors), errors
    switch.refresh_from_db()
    assert switch.unit_price_usd == before
    assert not CatalogVersion.objects.exists()


@pytest.mark.parametrize(("power", "ok"), [("-5", False), ("1e9", False), ("0", True)])
def test_power_must_be_zero_or_more_and_sane(staff_client: Client, power: str, ok: bool) -> None:
    cable = HardwareItem.objects.filter(kind=ItemKind.CABLE).first()
    assert cable is not None

    response = edit(staff_client, cable, power_w=power)

    assert (response.status_code == 302) == ok
    if not ok:
        assert field_errors(response, "power_w")


@pytest.mark.parametrize("rent", ["-1", "0", "5000"])
def test_a_gpu_rental_price_out_of_range_is_refused(staff_client: Client, rent: str) -> None:
    gpu = HardwareItem.objects.get(kind=ItemKind.GPU, sku="h100-sxm")

    response = edit(staff_client, gpu, cloud_usd_per_hour=rent)

    assert response.status_code == 200
    assert field_errors(response, "cloud_usd_per_hour")


def test_a_built_in_port_costs_nothing_and_may_stay_at_zero(staff_client: Client) -> None:
    integrated = HardwareItem.objects.get(kind=ItemKind.NIC, sku="gaudi3-scaleout-200g")

    assert edit(staff_client, integrated, source="Intel Gaudi 3 datasheet").status_code == 302
    refused = edit(staff_client, integrated, unit_price_usd="100")
    assert refused.status_code == 200
    assert field_errors(refused, "unit_price_usd")


def test_the_lists_inline_price_edit_obeys_the_same_rules(staff_client: Client) -> None:
    items = list(HardwareItem.objects.order_by("kind", "sku"))
    target = next(i for i in items if i.sku == "cx7-400g")
    form: dict[str, str] = {
        "form-TOTAL_FORMS": str(len(items)),
        "form-INITIAL_FORMS": str(len(items)),
        "form-MIN_NUM_FORMS": "0",
        "form-MAX_NUM_FORMS": "1000",
        "_save": "Save",
    }
    for i, item in enumerate(items):
        form[f"form-{i}-id"] = str(item.pk)
        form[f"form-{i}-unit_price_usd"] = (
            "-2400" if item.pk == target.pk else str(item.unit_price_usd)
        )
        form[f"form-{i}-cloud_usd_per_hour"] = (
            "" if item.cloud_usd_per_hour is None else str(item.cloud_usd_per_hour)
        )
        form[f"form-{i}-power_w"] = str(item.power_w)
        if item.enabled:
            form[f"form-{i}-enabled"] = "on"

    response = staff_client.post("/admin/hardware/hardwareitem/?o=", form)

    assert response.status_code == 200  # the list again, with the error
    assert "The price must be more than $0" in response.content.decode()
    target.refresh_from_db()
    assert target.unit_price_usd == 2400.0
    assert not CatalogVersion.objects.exists()


@pytest.mark.parametrize(
    ("kind", "sku", "attributes", "named"),
    [
        (ItemKind.SWITCH, "spectrum4-sn5600", {"radix_by_gbps": [[800, 0]]}, "radix_by_gbps"),
        (ItemKind.SWITCH, "spectrum4-sn5600", {"switching_tbps": 0}, "switching_tbps"),
        (ItemKind.NIC, "cx7-400g", {"ports": 0}, "ports"),
        (ItemKind.GPU, "h100-sxm", {"gpus_per_server": 0}, "gpus_per_server"),
    ],
)
def test_an_engine_field_out_of_range_is_refused_naming_it(
    staff_client: Client, kind: str, sku: str, attributes: dict[str, Any], named: str
) -> None:
    item = HardwareItem.objects.get(kind=kind, sku=sku)

    response = edit(staff_client, item, attributes=json.dumps(attributes))

    assert response.status_code == 200
    errors = " ".join(response.context["adminform"].form.non_field_errors())
    assert f"{kind}[{sku}].{named}" in errors
    item.refresh_from_db()
    assert item.attributes == {}
    assert not CatalogVersion.objects.exists()


def test_a_stored_version_that_breaks_the_rules_is_skipped_not_a_500(db: object) -> None:
    """A version published before the rules (0 GPUs per server made the API divide by zero):
    new runs take the newest version that obeys them, and pages keep working."""
    from advisor.engine.facts.catalog import default_catalog
    from advisor.scenarios.catalog_store import catalog_current
    from tests.frontend.conftest import make_scenario

    data = default_catalog().to_dict()
    data["gpus"] = [
        {**g, "gpus_per_server": 0} if g["id"] == "h100-sxm" else g for g in data["gpus"]
    ]
    CatalogVersion.objects.create(version="bad+edit.1", base_version="x", data=data)

    assert catalog_current() is default_catalog()
    scenario = make_scenario()
    assert Client().get(f"/s/{scenario.pk}/").status_code == 200
