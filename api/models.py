"""API clients (tokens), idempotency records and webhook deliveries.

An API client is a Django user with a token: the scenarios it submits are owned by that
user (Scenario.owner), so API clients and browser users share one permission model.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class ApiClient(models.Model):
    """A quoting system (or any other caller) holding one API token.

    Only a SHA-256 of the key is stored; `key_prefix` finds the row without scanning.
    The webhook secret is kept in clear: we need it to sign every delivery.
    """

    name = models.CharField(max_length=100, unique=True)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_client"
    )
    key_prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    webhook_secret = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class IdempotencyRecord(models.Model):
    """What one Idempotency-Key produced: the same key and body return the same scenario."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    scenario = models.ForeignKey("scenarios.Scenario", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "key"], name="api_idempotency_owner_key"),
        ]

    def __str__(self) -> str:
        return f"{self.owner_id}:{self.key}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One run outcome sent to a scenario's callback_url, over one or more attempts."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    run = models.ForeignKey(
        "scenarios.ScenarioRun", on_delete=models.CASCADE, related_name="webhook_deliveries"
    )
    url = models.URLField(max_length=2000)
    payload = models.JSONField()
    status = models.CharField(
        max_length=16,
        choices=DeliveryStatus.choices,
        default=DeliveryStatus.PENDING,
        db_index=True,
    )
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One delivery per run: a redelivered run_finished never posts twice.
            models.UniqueConstraint(fields=["run"], name="api_webhook_one_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} -> {self.url} ({self.status})"


class WebhookAttempt(models.Model):
    """One POST of a delivery: what the receiver answered, or why it could not be reached."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    number = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="api_webhook_attempt_no"),
        ]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error}"
