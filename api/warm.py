"""What an API process pays once, paid before it answers anyone (advisor/wsgi.py, beside
frontend.warm; gunicorn's preload_app does it once, in the master, before forking).

A worker forked from a master that had never served the API spent ~30-60 ms of CPU more on
its first API read than on the next ones (a forked copy of the warm master, measured: the
first GET /api/v1/scenarios/?limit=10 47-80 ms of user CPU, then 12-14 ms), and the first
GET /api/v1/catalog/ wrote the catalog out again (10-40 ms). Under `make load` that fell in
the first second on every worker at once, when the 50 users' first requests queue on 12
threads. Each step here runs the same code on no one's data: the token lookup with a key no
client holds, the scenario list's queries and serializers on a user who owns nothing, the
served catalog (kept per process, api.apis.quotes.catalog_served). Nothing is written and no
rate limit is counted.

Each step is independent and never stops a server from starting (a failure is logged); the
database connections are closed after (frontend.warm closes them too, last).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from advisor.warm import run_steps

logger = logging.getLogger(__name__)

# A key of the API's shape that no client holds (a prefix is at most 16 characters).
_NO_ONES_KEY = "warm-up.0"


def _catalog() -> None:
    from advisor.scenarios.catalog_store import catalog_current
    from api.apis.quotes import catalog_served

    catalog_served(catalog_current())


def _token_lookup() -> None:
    from api.selectors import api_client_for_key

    api_client_for_key(key=_NO_ONES_KEY)


def _scenario_list() -> None:
    """The list's count and page queries (with each scenario's latest run) and its item
    serializer, for a user who is not in sales and owns nothing (an id no user has)."""
    from django.contrib.auth.models import User
    from rest_framework.renderers import JSONRenderer

    from advisor.scenarios.models import Scenario
    from advisor.scenarios.selectors import user_is_sales_known
    from api.apis.scenarios import ScenarioListApi
    from api.selectors import scenario_list_visible

    nobody = User(pk=0, username="warm-up")
    user_is_sales_known(nobody, is_sales=False)
    qs = scenario_list_visible(user=nobody)
    qs.count()
    rows = list(qs[:10]) or [Scenario(name="warm-up")]
    JSONRenderer().render(ScenarioListApi.OutputSerializer(rows, many=True).data)


STEPS: dict[str, Callable[[], None]] = {
    "catalog": _catalog,
    "token lookup": _token_lookup,
    "scenario list": _scenario_list,
}


def warm_up() -> dict[str, float]:
    """Run every step; returns each step's seconds (advisor.warm.run_steps)."""
    return run_steps(STEPS, "API", logger)


def warm_worker() -> dict[str, float]:
    """In a forked gunicorn worker, before it accepts (gunicorn.conf.py): the steps above
    again, in the worker, touching the memory pages its first API read would copy (see
    advisor.warm.serve_once); their connections go back to the worker's pool. No request is
    served: an anonymous API read counts a rate limit. Returns each step's seconds."""
    return run_steps(STEPS, "API", logger, close_pools_after=False)
