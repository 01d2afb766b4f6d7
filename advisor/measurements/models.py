"""A customer's own benchmark output, parsed and fitted (advisor.engine.calibration.fabric_fit)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from advisor.scenarios.models import ScenarioRun


class Measurement(models.Model):
    """Pasted or uploaded nccl-tests / rccl-tests / perftest text, with its parse and fit.

    ``runs`` and ``fit`` are the engine's JSON (``ParsedText.to_dict()['runs']``,
    ``FabricFit.to_dict()``); the text is kept so a newer engine can fit it again.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    text = models.TextField()
    customer = models.CharField(max_length=200, blank=True, default="", db_index=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="measurements",
    )
    fabric = models.CharField(max_length=20, blank=True, default="")
    """What the measured cluster is built from; empty: read from the log or assumed."""
    nic_gbps = models.FloatField(null=True, blank=True)
    nics_per_node = models.PositiveSmallIntegerField(null=True, blank=True)
    runs = models.JSONField(default=list)
    link_runs = models.JSONField(default=list)
    fit = models.JSONField(default=dict)
    warnings = models.JSONField(default=list)
    engine_version = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class RunCalibration(models.Model):
    """A scenario run evaluated with a measurement's fit (engine ``calibration=``)."""

    run = models.OneToOneField(ScenarioRun, on_delete=models.CASCADE, related_name="calibration")
    measurement = models.ForeignKey(
        Measurement, on_delete=models.CASCADE, related_name="calibrated_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"run {self.run_id} with {self.measurement_id}"
