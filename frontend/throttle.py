"""Attempt limits for the sign-in and sign-up forms (brute force, account spam).

Counted per client address in the shared throttle cache (Redis in services mode), in fixed
windows: simple, and enough to make password guessing slow.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest

# Attempts allowed per address per window, per form.
FORM_ATTEMPTS_PER_WINDOW = {"login": 10, "signup": 5}
WINDOW_S = 300


def client_address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def attempt_allowed(request: HttpRequest, form: str) -> bool:
    """Count one attempt at `form`; False once the address used up its window's attempts."""
    cache = caches[settings.API_THROTTLE_CACHE]
    key = f"form-throttle:{form}:{client_address(request)}"
    cache.add(key, 0, WINDOW_S)
    try:
        attempts = cache.incr(key)
    except ValueError:  # the key expired between add and incr: this is the first attempt
        cache.set(key, 1, WINDOW_S)
        attempts = 1
    return attempts <= FORM_ATTEMPTS_PER_WINDOW[form]
