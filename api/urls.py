from __future__ import annotations

from django.urls import path, re_path
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from api.apis.measurements import (
    MeasurementCollectionApi,
    MeasurementDetailApi,
    ScenarioAcceptanceApi,
    ScenarioQuotedRunApi,
)
from api.apis.quotes import CatalogApi, EvaluateApi
from api.apis.runs import RunDetailApi
from api.apis.scenarios import (
    ScenarioBomApi,
    ScenarioCollectionApi,
    ScenarioDetailApi,
    ScenarioReportApi,
    ScenarioRunCreateApi,
    ScenarioWhatIfApi,
)
from api.errors import not_found

app_name = "api"


@extend_schema(exclude=True)
class SchemaApi(SpectacularAPIView):
    pass


@extend_schema(exclude=True)
class DocsApi(SpectacularSwaggerSplitView):
    """Swagger UI with its start-up script as a separate same-origin URL (?script=), so the
    page needs no inline script under the Content-Security-Policy."""


urlpatterns = [
    path("scenarios/", ScenarioCollectionApi.as_view(), name="scenario-list"),
    path("scenarios/<uuid:scenario_id>/", ScenarioDetailApi.as_view(), name="scenario-detail"),
    path("scenarios/<uuid:scenario_id>/bom/", ScenarioBomApi.as_view(), name="scenario-bom"),
    path(
        "scenarios/<uuid:scenario_id>/report.pdf",
        ScenarioReportApi.as_view(),
        name="scenario-report",
    ),
    path(
        "scenarios/<uuid:scenario_id>/runs/",
        ScenarioRunCreateApi.as_view(),
        name="scenario-runs",
    ),
    path(
        "scenarios/<uuid:scenario_id>/whatif/",
        ScenarioWhatIfApi.as_view(),
        name="scenario-whatif",
    ),
    path(
        "scenarios/<uuid:scenario_id>/quoted-run/",
        ScenarioQuotedRunApi.as_view(),
        name="scenario-quoted-run",
    ),
    path("runs/<uuid:run_id>/", RunDetailApi.as_view(), name="run-detail"),
    path(
        "scenarios/<uuid:scenario_id>/acceptance/",
        ScenarioAcceptanceApi.as_view(),
        name="scenario-acceptance",
    ),
    path("measurements/", MeasurementCollectionApi.as_view(), name="measurement-list"),
    path(
        "measurements/<uuid:measurement_id>/",
        MeasurementDetailApi.as_view(),
        name="measurement-detail",
    ),
    path("evaluate/", EvaluateApi.as_view(), name="evaluate"),
    path("catalog/", CatalogApi.as_view(), name="catalog"),
    path("schema/", SchemaApi.as_view(), name="schema"),
    path("docs/", DocsApi.as_view(url_name="api:schema"), name="docs"),
    # Anything else under /api/v1/ is a 404 in the API's error shape, not an HTML page.
    # [\s\S], not ".": a path carrying a line feed (%0A) must reach the JSON 404 too
    re_path(r"^[\s\S]*$", not_found, name="not-found"),
]
