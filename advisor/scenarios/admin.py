from __future__ import annotations

from django.contrib import admin

from advisor.scenarios.models import Scenario, ScenarioRun


class ScenarioRunInline(admin.TabularInline[ScenarioRun, Scenario]):
    model = ScenarioRun
    extra = 0
    fields = ("status", "progress", "engine_version", "catalog_version", "created_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin[Scenario]):
    list_display = ("name", "customer", "owner", "created_at")
    search_fields = ("name", "customer", "notes")
    list_filter = ("created_at",)
    inlines = [ScenarioRunInline]


@admin.register(ScenarioRun)
class ScenarioRunAdmin(admin.ModelAdmin[ScenarioRun]):
    list_display = ("id", "scenario", "status", "progress", "attempts", "created_at")
    list_filter = ("status",)
    readonly_fields = ("result", "error_fields")
