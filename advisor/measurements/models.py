"""A customer's own benchmark output, parsed and fitted (advisor.engine.calibration.fabric_fit)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from advisor.scenarios.models import ScenarioRun

# Cloud transports a measurement can be declared on: label, and the fabric class whose default
# model the fit is compared with (the measured numbers then correct it). AWS EFA runs SRD, an
# RDMA-like transport over Ethernet; GCP A3 Mega's GPUDirect-TCPXO is TCP offloaded to the NIC;
# Azure ND H100 v5 is InfiniBand (../shared/FIELD_PRACTICE.md, "Reference designs").
TRANSPORTS: dict[str, tuple[str, str]] = {
    "aws-efa": ("AWS Elastic Fabric Adapter (EFA, SRD)", "roce"),
    "gcp-tcpxo": ("Google Cloud GPUDirect-TCPXO", "ethernet"),
    "azure-infiniband": ("Azure InfiniBand (ND-series)", "infiniband"),
}


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
    transport = models.CharField(
        max_length=20,
        blank=True,
        default="",
        choices=[(k, label) for k, (label, _fabric) in TRANSPORTS.items()],
    )
    """A cloud transport (TRANSPORTS) when the cluster is rented; empty: the fabric's own."""
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
    chosen_at = models.DateTimeField(null=True, blank=True)
    """When someone chose this calibrated run as the scenario's quoted answer; null: it is a
    labelled side run and the default run stays the quote (pages, PDF, CSV, API)."""

    def __str__(self) -> str:
        return f"run {self.run_id} with {self.measurement_id}"
