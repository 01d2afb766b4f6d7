"""Operators see clients and deliveries in the admin, never a key or a secret."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from api.models import WebhookDelivery
from tests.api.conftest import Caller, Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator() -> Client:
    admin = get_user_model().objects.create_superuser(username="ops", password="unused-pw-1")
    browser = Client()
    browser.force_login(admin)
    return browser


def test_the_client_page_shows_no_key_hash_or_webhook_secret(
    operator: Client, client_a: Caller
) -> None:
    assert client_a.api_client is not None

    page = operator.get(f"/admin/api/apiclient/{client_a.api_client.pk}/change/")

    assert page.status_code == 200
    html = page.content.decode()
    assert client_a.api_client.key_prefix in html
    assert client_a.api_client.key_hash not in html
    assert client_a.api_client.webhook_secret not in html


def test_deliveries_and_their_attempts_are_listed(
    operator: Client, receiver: Receiver, submitted: Any
) -> None:
    submitted(callback_url=receiver.url)
    delivery = WebhookDelivery.objects.get()

    assert operator.get("/admin/api/webhookdelivery/").status_code == 200
    page = operator.get(f"/admin/api/webhookdelivery/{delivery.pk}/change/")
    assert page.status_code == 200
    assert "delivered" in page.content.decode().lower()
