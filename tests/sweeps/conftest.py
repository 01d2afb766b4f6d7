"""Personas for the sweep API and pages (the API's own, from tests/api/conftest.py)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tests.api.conftest import Caller, token_caller


@pytest.fixture
def client_a(db: None) -> Caller:
    """A quoting system with its own token."""
    return token_caller("quotes-a")


@pytest.fixture
def client_b(db: None) -> Caller:
    """Another quoting system: a stranger to client A's scenarios and sweeps."""
    return token_caller("quotes-b")


@pytest.fixture
def staff(db: None) -> Caller:
    """A sales engineer signed in to the web app: sees every scenario and sweep."""
    user = get_user_model().objects.create_user(
        username="sally", password="unused-in-tests-1", is_staff=True
    )
    http = APIClient()
    http.force_login(user)
    return Caller(name="staff", http=http, user=user)


@pytest.fixture
def anonymous() -> Caller:
    return Caller(name="anonymous", http=APIClient())


@pytest.fixture(autouse=True)
def _fresh_throttle_counters(settings: Any) -> None:
    """Each test starts with empty rate-limit counters (memory, never the shared Redis)."""
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"throttle-{uuid.uuid4()}",
        },
    }
