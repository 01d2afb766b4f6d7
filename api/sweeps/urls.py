from __future__ import annotations

from django.urls import path

from api.sweeps.apis import SweepCollectionApi, SweepDetailApi, SweepResultsApi

app_name = "api-sweeps"

urlpatterns = [
    path("", SweepCollectionApi.as_view(), name="sweep-list"),
    path("<uuid:sweep_id>/", SweepDetailApi.as_view(), name="sweep-detail"),
    path("<uuid:sweep_id>/results/", SweepResultsApi.as_view(), name="sweep-results"),
]
