"""Limits for the web pages, per real client address.

- Sign-in (this site's and the admin's) is limited by django-axes (settings.AXES_*), which
  counts failed attempts only: a person who signs in fine is never slowed down.
- Sign-up, and what anonymous visitors can make (questionnaire drafts, scenarios, runs), is
  counted here in fixed windows in the shared throttle cache (Redis in services mode).

Behind reverse proxies the address is the one the proxies saw (API_NUM_PROXIES of them,
shared with the API's throttles): counting REMOTE_ADDR there would put every visitor in one
bucket, so one attacker could lock everyone out.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from advisor.cache import COUNTER_ERRORS, counter_unavailable

# Attempts allowed per address per window, per action. Sign-up counts every attempt (it
# makes accounts); the others count only anonymous visitors (accounts are limited by the
# one-run-per-scenario rule and their own history). A what-if prices one design in the
# request, a few times per change of a control.
FORM_ATTEMPTS_PER_WINDOW = {
    "signup": 5,
    "password_change": 5,
    "draft": 30,
    "scenario": 20,
    "run": 20,
    "whatif": 300,
    "export": 20,
}
# Sign-up tells whether a username is taken and a password change whether a password is right:
# their limits are what bound guessing, so while the counters are unreachable they are refused
# (503, retry shortly) instead of let through.
FAIL_CLOSED = frozenset({"signup", "password_change"})
COUNTERS_DOWN_RETRY_S = 30
WINDOW_S = 300

TOO_MANY_ATTEMPTS = "Too many attempts from your address. Please wait a few minutes and try again."


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or with API_NUM_PROXIES trusted proxies in front,
    the address the outermost trusted proxy saw (as DRF's throttles read X-Forwarded-For)."""
    rest_framework: dict[str, Any] = settings.REST_FRAMEWORK
    num_proxies = int(rest_framework.get("NUM_PROXIES") or 0)
    remote = str(request.META.get("REMOTE_ADDR") or "unknown")
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "")
    if num_proxies > 0 and forwarded:
        addresses = [a.strip() for a in forwarded.split(",") if a.strip()]
        if addresses:
            return str(addresses[-min(num_proxies, len(addresses))])
    return remote


class CountersUnavailable(Exception):
    """A limit that fails closed (FAIL_CLOSED) could not be counted: answer `unavailable`."""


def unavailable(request: HttpRequest, template: str) -> HttpResponse:
    """503 with Retry-After: a fail-closed limit cannot be counted right now."""
    context = {
        "throttled": "This is unavailable for a moment. Please try again in a minute.",
        "message": "This is unavailable for a moment. Please try again in a minute.",
        "retry_after_s": COUNTERS_DOWN_RETRY_S,
    }
    response = render(request, template, context, status=503)
    response["Retry-After"] = str(COUNTERS_DOWN_RETRY_S)
    return response


def attempt_allowed(request: HttpRequest, form: str) -> bool:
    """Count one attempt at `form`; False once the address used up its window's attempts.

    True when the counters cannot be reached (Redis down): the limit fails open, logged
    (advisor.cache), so an outage of Redis never refuses visitors' work; except the limits in
    FAIL_CLOSED, which raise CountersUnavailable."""
    cache = caches[settings.API_THROTTLE_CACHE]
    key = f"form-throttle:{form}:{client_address(request)}"
    try:
        cache.add(key, 0, WINDOW_S)
        try:
            attempts = cache.incr(key)
        except ValueError:  # the key expired between add and incr: this is the first attempt
            cache.set(key, 1, WINDOW_S)
            attempts = 1
    except COUNTER_ERRORS as exc:
        if form in FAIL_CLOSED:
            raise CountersUnavailable from exc
        counter_unavailable(f"{form} limit", exc)
        return True
    return attempts <= FORM_ATTEMPTS_PER_WINDOW[form]


def anonymous_allowed(request: HttpRequest, action: str) -> bool:
    """Count an anonymous visitor's `action` (draft, scenario, run); signed-in people pass."""
    if request.user.is_authenticated:
        return True
    return attempt_allowed(request, action)


def too_many(request: HttpRequest) -> HttpResponse:
    """The 429 page for a throttled action."""
    response = render(
        request,
        "frontend/too_many.html",
        {"message": TOO_MANY_ATTEMPTS, "retry_after_s": WINDOW_S},
        status=429,
    )
    response["Retry-After"] = str(WINDOW_S)
    return response


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """django-axes' AXES_LOCKOUT_CALLABLE: too many failed sign-ins from this address."""
    from django.contrib.auth.forms import AuthenticationForm

    if request.path.startswith("/admin/"):
        return too_many(request)
    context = {"form": AuthenticationForm(request), "throttled": TOO_MANY_ATTEMPTS}
    return render(request, "registration/login.html", context, status=429)
