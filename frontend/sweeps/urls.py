from __future__ import annotations

from django.urls import path

from frontend.sweeps import views

urlpatterns = [
    path("", views.sweep_index, name="sweep_index"),
    path("new/<uuid:scenario_id>/", views.sweep_new, name="sweep_new"),
    path("<uuid:sweep_id>/", views.sweep_detail, name="sweep_detail"),
    path("<uuid:sweep_id>/progress", views.sweep_progress, name="sweep_progress"),
    path("<uuid:sweep_id>/results.csv", views.sweep_results_csv, name="sweep_results_csv"),
]
