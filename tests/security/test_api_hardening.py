"""Issue 12, API findings: a JSON body nested 100,000 deep was a 500; a callback_url with a
NAT64 or 6to4 address embedding 127.0.0.1 or 169.254.169.254 passed the SSRF filter; webhook
signatures had no timestamp (replayable forever); embedded mode made webhook attempts inside
the API request; API_PUBLIC_BASE_URL defaulted to localhost in production."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from api.models import DeliveryStatus, WebhookDelivery
from api.webhooks import (
    SIGNATURE_TOLERANCE_S,
    UnsafeWebhookUrl,
    check_address,
    check_url_syntax,
    embedded_ipv4,
    signature,
    signature_valid,
)
from tests.api.conftest import (
    TWO_SERVER_TRAINING,
    Caller,
    Receiver,
    deliver_webhooks,
    receiver,  # noqa: F401 (a fixture)
    token_caller,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def client_a(db: None) -> Caller:
    return token_caller("quotes-a")


# --- JSON depth -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [100_000, 33])
def test_a_deeply_nested_body_is_a_400_not_a_500(client_a: Caller, depth: int) -> None:
    body = '{"inputs": ' + "[" * depth + "]" * depth + "}"
    response = client_a.http.post("/api/v1/evaluate/", data=body, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "parse_error"
    assert "nested more than 32 levels" in error["message"]


@pytest.mark.django_db
def test_ordinary_nesting_is_still_accepted(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": {**TWO_SERVER_TRAINING, "gpus": 8}}, format="json"
    )
    assert response.status_code == 200


# --- SSRF: IPv6 addresses that carry an IPv4 address -----------------------------------------


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 well-known prefix
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
        ("64:ff9b:1:7f00:0:100::", "127.0.0.1"),  # NAT64 local-use /48 (RFC 6052 layout)
        ("2002:7f00:1::", "127.0.0.1"),  # 6to4
        ("2002:a9fe:a9fe::1", "169.254.169.254"),
        ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
        ("::ffff:169.254.169.254", "169.254.169.254"),  # IPv4-mapped
    ],
)
def test_the_ipv4_address_inside_an_ipv6_one_is_found(address: str, carried: str) -> None:
    assert ipaddress.ip_address(carried) in embedded_ipv4(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "::169.254.169.254", "::ffff:169.254.169.254"],
)
def test_metadata_behind_nat64_6to4_or_compatible_is_refused_even_when_private_is_allowed(
    settings: Any, address: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(UnsafeWebhookUrl, match="metadata"):
        check_url_syntax(f"http://[{address}]/hook")


@pytest.mark.parametrize(
    "address", ["64:ff9b::7f00:1", "2002:7f00:1::", "::127.0.0.1", "64:ff9b:1:a00:0:1::"]
)
def test_loopback_and_private_behind_nat64_or_6to4_need_the_setting(
    settings: Any, address: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(UnsafeWebhookUrl, match="loopback or private"):
        check_address(ipaddress.ip_address(address))


def test_public_addresses_behind_nat64_and_6to4_are_still_accepted(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False
    check_address(ipaddress.ip_address("64:ff9b::808:808"))
    check_address(ipaddress.ip_address("2002:808:808::1"))
    check_address(ipaddress.ip_address("2606:4700:4700::1111"))


@pytest.mark.django_db
def test_the_api_refuses_such_a_callback_url_naming_the_field(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/",
        {
            "name": "x",
            "inputs": TWO_SERVER_TRAINING,
            "callback_url": "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "callback_url": ["must not point at a cloud metadata service"]
    }


# --- Signatures carry a timestamp ---------------------------------------------------------


def test_the_signature_binds_a_timestamp_to_the_body() -> None:
    header = signature(b'{"a":1}', "s3cret", timestamp=1_700_000_000)
    t, v1 = header.split(",")
    assert t == "t=1700000000"
    assert v1 == "v1=" + hmac.new(b"s3cret", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    assert signature_valid(header, b'{"a":1}', "s3cret", now=1_700_000_000 + 60)


def test_an_old_signature_is_refused_so_a_captured_request_cannot_be_replayed() -> None:
    header = signature(b"{}", "s3cret", timestamp=1_700_000_000)
    later = 1_700_000_000 + SIGNATURE_TOLERANCE_S + 1
    assert not signature_valid(header, b"{}", "s3cret", now=later)
    # Moving the time forward breaks the MAC.
    forged = header.replace("t=1700000000", f"t={later}")
    assert not signature_valid(forged, b"{}", "s3cret", now=later)


def test_the_verification_snippet_in_the_api_readme_works() -> None:
    readme = (REPO / "api" / "README.md").read_text()
    assert "t=...,v1=..." in readme or "t=1764561600,v1=" in readme
    assert "5 minutes" in readme
    start = readme.index("    import hashlib, hmac, time")
    end = readme.index("    verify(request.headers", start)
    snippet = "\n".join(line[4:] for line in readme[start:end].splitlines())
    namespace: dict[str, Any] = {}
    exec(snippet, namespace)  # noqa: S102 (our own documentation)
    verify = namespace["verify"]
    body = b'{"event":"run.finished"}'
    assert verify(signature(body, "whsec"), body, "whsec")
    assert not verify(signature(body, "whsec"), body, "other")
    assert not verify(signature(body, "whsec", timestamp=int(time.time()) - 301), body, "whsec")


# --- Embedded mode never delivers inside the request ---------------------------------------


@pytest.mark.django_db
def test_embedded_mode_posts_nothing_while_answering_the_request(
    client_a: Caller,
    receiver: Receiver,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # the run finishes in the request
        response = client_a.http.post(
            "/api/v1/scenarios/",
            {"name": "x", "inputs": TWO_SERVER_TRAINING, "callback_url": receiver.url},
            format="json",
        )
    assert response.status_code == 202
    delivery = WebhookDelivery.objects.get()
    assert delivery.run.status == "succeeded"
    assert receiver.received == []  # nothing was posted while the request was answered
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.attempts == 0

    assert deliver_webhooks() == 1  # the deliverer process (manage.py deliver_webhooks)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert len(receiver.received) == 1


def test_make_run_starts_the_deliverer_in_embedded_mode() -> None:
    run_sh = (REPO / "scripts" / "run.sh").read_text()
    assert "manage.py deliver_webhooks --loop &" in run_sh
    result = subprocess.run(
        [sys.executable, "manage.py", "help", "deliver_webhooks"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0


# --- API_PUBLIC_BASE_URL in production -----------------------------------------------------


def production_env(**overrides: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "API_PUBLIC_BASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env.update(
        DJANGO_ENV="production",
        SECRET_KEY="x" * 20 + "-production-key-from-the-environment-0123456789",
        ALLOWED_HOSTS="advisor.example.com",
        **overrides,
    )
    return env


def settings_value(name: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings as s; print(s.{name})"],
        cwd=REPO,
        env={**env, "DJANGO_SETTINGS_MODULE": "advisor.settings"},
        capture_output=True,
        text=True,
    )


def test_production_refuses_to_start_without_a_public_base_url() -> None:
    result = settings_value("API_PUBLIC_BASE_URL", production_env())
    assert result.returncode != 0
    assert "API_PUBLIC_BASE_URL must be set when DJANGO_ENV=production" in result.stderr


def test_production_uses_the_configured_public_base_url() -> None:
    env = production_env(API_PUBLIC_BASE_URL="https://advisor.example.com/")
    result = settings_value("API_PUBLIC_BASE_URL", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "https://advisor.example.com"


def test_the_webhook_payload_links_to_the_public_base_url(settings: Any) -> None:
    from api.services import absolute_url

    settings.API_PUBLIC_BASE_URL = "https://advisor.example.com"
    assert absolute_url("/api/v1/runs/x/") == "https://advisor.example.com/api/v1/runs/x/"
