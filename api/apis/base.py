"""What every API class shares: the view class and the lookup of a visible scenario."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.views import APIView

from advisor.scenarios.models import Scenario
from api.errors import ApplicationError
from api.selectors import scenario_get_visible


def visible_scenario_or_404(request: Request, scenario_id: Any) -> Scenario:
    scenario = scenario_get_visible(user=request.user, scenario_id=scenario_id)
    if scenario is None:
        raise ApplicationError("No such scenario.", code="not_found", status_code=404)
    return scenario


class ApiView(APIView):
    """APIView that counts a request against the rate limits before checking permissions.

    DRF checks permissions first, so an anonymous caller refused with 401 would never be
    throttled; here every request is counted, also one whose token is wrong.
    """

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.format_kwarg = self.get_format_suffix(**kwargs)
        neg = self.perform_content_negotiation(request)
        request.accepted_renderer, request.accepted_media_type = neg
        version, scheme = self.determine_version(request, *args, **kwargs)
        request.version, request.versioning_scheme = version, scheme
        try:
            self.perform_authentication(request)
        except exceptions.APIException:
            self.check_throttles(request)  # the request now counts as anonymous
            raise
        self.check_throttles(request)
        self.check_permissions(request)
