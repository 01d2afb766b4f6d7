"""Which sweeps an API caller may see: those of the scenarios the API shows them.

The API's rule (api/selectors.py): staff and sales see every scenario, everyone else only
their own; an ownerless scenario is never reachable through the API by id alone.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from advisor.scenarios.models import Sweep
from advisor.scenarios.selectors import scenario_list
from advisor.scenarios.sweeps.selectors import sweeps_of


def sweep_list_visible(*, user: Any, scenario_id: uuid.UUID | None = None) -> QuerySet[Sweep]:
    visible = sweeps_of(scenario_list(user=user))
    return visible if scenario_id is None else visible.filter(scenario_id=scenario_id)


def sweep_get_visible(*, user: Any, sweep_id: uuid.UUID | str) -> Sweep | None:
    try:
        return sweep_list_visible(user=user).select_related("scenario").filter(pk=sweep_id).first()
    except (ValueError, TypeError):
        return None
