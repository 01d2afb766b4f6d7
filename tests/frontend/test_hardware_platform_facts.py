"""Staff set a GPU's platform facts (host PCIe, reference NIC and count, storage adapters)
in the admin; the engine's next runs use them (issue 11)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.hardware.models import HardwareItem, ItemKind
from advisor.hardware.services import hardware_sync_builtin
from advisor.scenarios.catalog_store import catalog_current

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff_client(db: object) -> Client:
    user = User.objects.create_superuser("grace.admin", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    return client


def test_gpu_platform_facts_are_form_fields_that_reach_the_engine(staff_client: Client) -> None:
    hardware_sync_builtin()
    gpu = HardwareItem.objects.get(kind=ItemKind.GPU, sku="h100-sxm")
    page = staff_client.get(f"/admin/hardware/hardwareitem/{gpu.pk}/change/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "GPU platform facts" in body and 'name="host_pcie_gen"' in body
    response = staff_client.post(
        f"/admin/hardware/hardwareitem/{gpu.pk}/change/",
        {
            "kind": gpu.kind,
            "sku": gpu.sku,
            "name": gpu.name,
            "enabled": "on",
            "unit_price_usd": str(gpu.unit_price_usd),
            "cloud_usd_per_hour": str(gpu.cloud_usd_per_hour or 2.5),
            "power_w": str(gpu.power_w),
            "price_is_estimate": "on",
            "source": gpu.source,
            "attributes": json.dumps(gpu.attributes),
            "host_pcie_gen": "6",
            "reference_nic_sku": "cx8-800g",
            "reference_nic_count": "8",
            "nic_options": "cx7-400g, bf3-supernic-400g",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    spec = catalog_current().gpu("h100-sxm")
    assert spec is not None
    assert spec.host_pcie_gen == 6
    assert spec.reference_nic_sku == "cx8-800g"
    assert spec.nic_options == ("cx7-400g", "bf3-supernic-400g")
