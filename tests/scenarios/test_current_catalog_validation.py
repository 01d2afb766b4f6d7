"""Scenarios are checked against the catalog their runs will use: the current one."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.hardware.models import HardwareItem, ItemKind
from advisor.hardware.services import catalog_publish, hardware_sync_builtin
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import Scenario
from advisor.scenarios.services import scenario_create

pytestmark = pytest.mark.django_db

INPUTS = {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm-lab", "gpus": 8}


def add_gpu_like_h100(sku: str) -> None:
    hardware_sync_builtin()
    h100 = next(g for g in default_catalog().to_dict()["gpus"] if g["id"] == "h100-sxm")
    HardwareItem.objects.create(
        kind=ItemKind.GPU,
        sku=sku,
        name="H100 SXM (lab sample)",
        unit_price_usd=30_000,
        power_w=h100["power_w"],
        attributes={k: v for k, v in h100.items() if k != "id"},
    )
    catalog_publish(note="lab GPU")


def test_a_gpu_staff_added_to_the_catalog_is_accepted_for_new_scenarios() -> None:
    add_gpu_like_h100("h100-sxm-lab")

    scenario = scenario_create(name="Lab fine-tune", inputs=INPUTS)

    assert Scenario.objects.filter(pk=scenario.pk, inputs__gpu="h100-sxm-lab").exists()


def test_a_gpu_in_no_catalog_is_refused_naming_the_field_and_nothing_is_saved() -> None:
    with pytest.raises(InvalidScenario) as refused:
        scenario_create(name="Lab fine-tune", inputs=INPUTS)

    assert list(refused.value.field_errors) == ["gpu"]
    assert "h100-sxm-lab" in refused.value.field_errors["gpu"][0]
    assert not Scenario.objects.exists()
