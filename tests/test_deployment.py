"""docker-compose.yml and the production settings, checked without a Docker engine."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_compose_has_the_five_services_with_named_volumes() -> None:
    spec = compose()
    assert set(spec["services"]) == {"web", "worker", "beat", "db", "redis"}
    assert set(spec["volumes"]) == {"postgres-data", "redis-data"}
    assert spec["services"]["db"]["volumes"] == ["postgres-data:/var/lib/postgresql/data"]


def test_web_waits_on_a_healthy_database_checked_by_pg_isready() -> None:
    services = compose()["services"]
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert services["web"]["depends_on"]["db"]["condition"] == "service_healthy"


def test_worker_and_beat_reuse_the_web_definition() -> None:
    services = compose()["services"]
    for name in ("worker", "beat"):
        assert services[name]["build"] == services["web"]["build"]
        assert services[name]["environment"] == services["web"]["environment"]


def modules_named_in(command: str) -> list[str]:
    found = re.findall(r"celery -A ([\w.]+)", command)
    found += [m.split(":")[0] for m in re.findall(r"gunicorn ([\w.:]+)", command)]
    return found


def test_every_service_command_points_at_a_module_that_exists() -> None:
    services = compose()["services"]
    for name in ("web", "worker", "beat"):
        command = services[name]["command"]
        modules = modules_named_in(command)
        assert modules, f"{name} runs neither gunicorn nor celery: {command}"
        for module in modules:
            assert importlib.util.find_spec(module) is not None, f"{name}: {module} not found"
        for mgmt in re.findall(r"manage\.py (\w+)", command):
            result = subprocess.run(
                [sys.executable, "manage.py", "help", mgmt], cwd=REPO, capture_output=True
            )
            assert result.returncode == 0, f"{name}: manage.py {mgmt} does not exist"


def test_dockerfile_default_command_serves_the_wsgi_app() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert '"advisor.wsgi:application"' in dockerfile
    assert importlib.util.find_spec("advisor.wsgi") is not None


def production_env(**overrides: str) -> dict[str, str]:
    # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE is a test-harness switch, never deployed.
    test_only = {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update(
        DJANGO_ENV="production",
        SECRET_KEY="x" * 20 + "-production-key-from-the-environment-0123456789",
        ALLOWED_HOSTS="advisor.example.com",
        API_PUBLIC_BASE_URL="https://advisor.example.com",
    )
    env.update(overrides)
    return env


def test_production_settings_pass_check_deploy_with_no_warnings() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=production_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_refuses_to_start_without_a_secret_key() -> None:
    env = production_env()
    del env["SECRET_KEY"]
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DJANGO_ENV=production" in result.stderr


def test_nonsense_in_a_setting_fails_loudly_naming_the_variable() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env={**os.environ, "DEBUG": "perhaps"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def gunicorn_settings() -> dict[str, object]:
    """gunicorn.conf.py read by gunicorn's own settings table (an unknown name or a value of
    the wrong type fails here, as gunicorn would refuse it)."""
    import runpy

    from gunicorn.config import Config

    config = Config()
    found = {}
    for name, value in runpy.run_path(str(REPO / "gunicorn.conf.py")).items():
        if name.startswith("_") or not name.islower() or callable(value):
            continue
        assert name in config.settings, f"gunicorn.conf.py: {name} is not a gunicorn setting"
        config.set(name, value)
        found[name] = config.settings[name].get()
    return found


def test_every_server_of_the_web_uses_gunicorn_conf() -> None:
    """docker-compose, the image and `make load` start gunicorn with the same settings: the
    app preloaded (warm, frozen: advisor/wsgi.py) and workers with threads."""
    settings = gunicorn_settings()
    assert settings["preload_app"] is True
    assert settings["worker_class"] == "gthread" and settings["threads"] > 1
    compose_web = compose()["services"]["web"]["command"]
    assert "gunicorn advisor.wsgi:application -c gunicorn.conf.py" in compose_web
    assert '"-c", "gunicorn.conf.py"' in (REPO / "Dockerfile").read_text()
    assert "-c gunicorn.conf.py" in (REPO / "scripts" / "load.sh").read_text()
