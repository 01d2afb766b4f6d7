"""Staff edit prices in the admin; each save is a new catalog version that new runs use."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.engine.facts.catalog import default_catalog
from advisor.hardware.models import CatalogVersion, HardwareItem, ItemKind
from advisor.hardware.services import (
    CatalogInvalid,
    catalog_publish,
    hardware_sync_builtin,
)
from advisor.scenarios.catalog_store import catalog_by_version, catalog_current
from advisor.scenarios.models import RunStatus
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db(transaction=True)

BUILTIN = default_catalog()


@pytest.fixture
def staff_client(db: object) -> Client:
    user = User.objects.create_superuser("ada.admin", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    return client


def test_without_edits_the_builtin_catalog_is_current() -> None:
    assert catalog_current() is BUILTIN


def test_the_admin_mirrors_every_builtin_item_once(staff_client: Client) -> None:
    response = staff_client.get("/admin/hardware/hardwareitem/")
    assert response.status_code == 200
    expected = (
        len(BUILTIN.gpus)
        + len(BUILTIN.nics)
        + len(BUILTIN.switches)
        + len(BUILTIN.transceivers)
        + len(BUILTIN.cables)
    )
    assert HardwareItem.objects.count() == expected
    assert hardware_sync_builtin() == 0  # idempotent
    assert not CatalogVersion.objects.exists()  # looking publishes nothing


def test_a_price_edit_in_the_admin_publishes_a_version_new_runs_use(staff_client: Client) -> None:
    hardware_sync_builtin()
    nic = HardwareItem.objects.get(kind=ItemKind.NIC, sku="cx7-400g")
    response = staff_client.post(
        f"/admin/hardware/hardwareitem/{nic.pk}/change/",
        {
            "kind": nic.kind,
            "sku": nic.sku,
            "name": nic.name,
            "enabled": "on",
            "unit_price_usd": "1999",
            "power_w": str(nic.power_w),
            "price_is_estimate": "on",
            "source": "Distributor quote 2025-11",
            "attributes": __import__("json").dumps(nic.attributes),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    version = CatalogVersion.objects.get()
    assert version.version == f"{BUILTIN.version}+edit.{version.pk}"
    assert "cx7-400g: unit_price_usd, source" in version.note
    catalog = catalog_current()
    assert catalog.version == version.version
    edited = next(n for n in catalog.nics if n.sku == "cx7-400g")
    assert edited.unit_price_usd == 1999.0 and edited.source == "Distributor quote 2025-11"
    assert catalog_by_version(version.version) == catalog


def test_gpu_prices_are_editable_too() -> None:
    hardware_sync_builtin()
    HardwareItem.objects.filter(kind=ItemKind.GPU, sku="h100-sxm").update(
        unit_price_usd=20000, cloud_usd_per_hour=1.99
    )
    catalog_publish(note="test")
    gpu = catalog_current().gpu("h100-sxm")
    assert gpu is not None and (gpu.price_usd, gpu.cloud_usd_per_hour) == (20000.0, 1.99)


def test_disabled_items_leave_the_catalog_and_an_empty_catalog_is_refused() -> None:
    hardware_sync_builtin()
    HardwareItem.objects.filter(kind=ItemKind.NIC, sku="cx6lx-25g").update(enabled=False)
    catalog_publish()
    assert "cx6lx-25g" not in {n.sku for n in catalog_current().nics}
    HardwareItem.objects.filter(kind=ItemKind.SWITCH).update(enabled=False)
    with pytest.raises(CatalogInvalid):
        catalog_publish()
    assert CatalogVersion.objects.count() == 1


def test_a_run_keeps_its_catalog_and_can_be_rerun_on_the_current_one() -> None:
    client = Client()
    scenario = make_scenario()  # computed with the built-in catalog
    hardware_sync_builtin()
    HardwareItem.objects.filter(kind=ItemKind.NIC).update(unit_price_usd=99.0)
    version = catalog_publish(note="NIC sale")
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'id="stale-catalog"' in html and version.version in html
    client.post(f"/s/{scenario.pk}/rerun")
    latest = scenario.runs.order_by("-created_at").first()
    assert latest is not None and latest.status == RunStatus.SUCCEEDED
    assert latest.catalog_version == version.version
    nic_lines = [b for b in latest.result["bom"] if b["category"] == "nic"]
    assert nic_lines and all(line["unit_price_usd"] == 99.0 for line in nic_lines)
    assert scenario.runs.order_by("created_at").first().catalog_version == BUILTIN.version
    assert 'id="stale-catalog"' not in client.get(f"/s/{scenario.pk}/").content.decode()


def test_an_incomplete_new_item_is_refused_with_the_reason(staff_client: Client) -> None:
    response = staff_client.post(
        "/admin/hardware/hardwareitem/add/",
        {
            "kind": ItemKind.SWITCH,
            "sku": "mystery-switch",
            "name": "A switch we know nothing about",
            "enabled": "on",
            "unit_price_usd": "1000",
            "power_w": "100",
            "price_is_estimate": "on",
            "source": "",
            "attributes": "{}",
        },
    )
    assert response.status_code == 200
    assert "the catalog is not valid" in response.content.decode()
    assert not HardwareItem.objects.filter(sku="mystery-switch").exists()
    assert not CatalogVersion.objects.exists()


def test_a_new_item_with_all_its_fields_joins_the_catalog(staff_client: Client) -> None:
    raw = next(n for n in BUILTIN.to_dict()["nics"] if n["sku"] == "cx7-400g")
    attributes = {k: v for k, v in raw.items() if k not in ("sku", "description", "category")}
    response = staff_client.post(
        "/admin/hardware/hardwareitem/add/",
        {
            "kind": ItemKind.NIC,
            "sku": "acme-400g",
            "name": "Acme 400G NIC",
            "enabled": "on",
            "unit_price_usd": "1500",
            "power_w": "20",
            "price_is_estimate": "on",
            "source": "Acme price list",
            "attributes": __import__("json").dumps(attributes),
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    nic = next(n for n in catalog_current().nics if n.sku == "acme-400g")
    assert (nic.unit_price_usd, nic.port_gbps) == (1500.0, 400)
