"""Operators' view of API clients and webhook deliveries (keys are never shown: only hashes
are stored; revoke with `manage.py revoke_api_client NAME`)."""

from __future__ import annotations

from django.contrib import admin

from api.models import ApiClient, WebhookAttempt, WebhookDelivery


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin[ApiClient]):
    list_display = ("name", "user", "key_prefix", "created_at", "last_used_at", "revoked_at")
    search_fields = ("name", "key_prefix")
    readonly_fields = ("user", "key_prefix", "created_at", "last_used_at")
    exclude = ("key_hash", "webhook_secret")


class WebhookAttemptInline(admin.TabularInline[WebhookAttempt, WebhookDelivery]):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    fields = ("number", "status_code", "error", "started_at", "duration_ms")
    readonly_fields = fields


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin[WebhookDelivery]):
    list_display = ("run", "url", "status", "attempts", "last_status_code", "created_at")
    list_filter = ("status",)
    readonly_fields = (
        "run",
        "url",
        "payload",
        "status",
        "attempts",
        "last_status_code",
        "last_error",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "delivered_at",
    )
    inlines = [WebhookAttemptInline]
