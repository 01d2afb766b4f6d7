"""The OpenAPI schema generates without warnings; the docs are served from our own files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from tests.api.conftest import Caller

REPO = Path(__file__).resolve().parents[2]


def test_the_schema_generates_and_validates_with_no_warnings(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            str(tmp_path / "schema.yaml"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr
    assert "/api/v1/scenarios/{scenario_id}/bom/" in (tmp_path / "schema.yaml").read_text()


@pytest.mark.django_db
def test_the_schema_documents_every_operation(anonymous: Caller) -> None:
    schema = anonymous.http.get("/api/v1/schema/", {"format": "json"}).json()

    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    }
    assert operations >= {
        ("GET", "/api/v1/scenarios/"),
        ("POST", "/api/v1/scenarios/"),
        ("GET", "/api/v1/scenarios/{scenario_id}/"),
        ("GET", "/api/v1/scenarios/{scenario_id}/bom/"),
        ("POST", "/api/v1/scenarios/{scenario_id}/runs/"),
        ("GET", "/api/v1/runs/{run_id}/"),
        ("POST", "/api/v1/evaluate/"),
        ("GET", "/api/v1/catalog/"),
    }
    assert schema["components"]["securitySchemes"]["tokenAuth"]["name"] == "Authorization"
    create = schema["paths"]["/api/v1/scenarios/"]["post"]["responses"]
    assert set(create) == {"202", "400", "401", "403", "409", "413", "415", "429"}
    error = schema["components"]["schemas"]["Error"]
    assert error["properties"]["error"]["$ref"] == "#/components/schemas/ErrorDetail"


@pytest.mark.django_db
def test_the_docs_page_loads_swagger_ui_from_our_static_files(anonymous: Caller) -> None:
    response = anonymous.http.get("/api/v1/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    bundle = "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"
    assert f"/static/{bundle}" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert finders.find(bundle) is not None


@pytest.mark.django_db
def test_the_published_scenario_is_the_engines_one_description(anonymous: Caller) -> None:
    from advisor.engine.input.spec import scenario_json_schema

    schema = anonymous.http.get("/api/v1/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    engine = scenario_json_schema()
    bodies = [
        name
        for name, c in components.items()
        if name.endswith("Request") and "inputs" in c.get("properties", {})
    ]
    assert {"ScenarioCreateRequest"} <= set(bodies)
    for name in bodies:
        assert components[name]["properties"]["inputs"] == engine, name
    constraints = engine["properties"]["constraints"]["properties"]
    assert constraints["team_skills"]["default"] == "both"
    assert constraints["gpu_pricing"]["default"] == "cloud"
    assert {"utilization", "allow_oversubscription", "pue"} <= set(constraints)
