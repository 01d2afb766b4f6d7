from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from advisor.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/sweeps/", include("api.sweeps.urls")),
    path("api/v1/", include("api.urls")),
    path("sweeps/", include("frontend.sweeps.urls")),
    path("", include("frontend.urls")),
]
