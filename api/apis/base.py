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
    """APIView that counts a request against the rate limits before checking permissions,
    and refuses query parameters it does not read.

    DRF checks permissions first, so an anonymous caller refused with 401 would never be
    throttled; here every request is counted, also one whose token is wrong.

    The query parameters an endpoint reads are its FilterSerializer's and PageParamsSerializer's
    fields, those named in `query_params` and DRF's `format` (it picks the renderer); any
    other is a 400 naming it, as an unknown
    scenario input is (DRF would ignore it, so `?desing=given` would quietly plan the other
    design).
    """

    query_params: tuple[str, ...] = ()

    @classmethod
    def known_query_params(cls) -> frozenset[str]:
        names = {"format", *cls.query_params}
        for nested in ("FilterSerializer", "PageParamsSerializer"):
            serializer = getattr(cls, nested, None)
            if serializer is not None:
                names.update(serializer().fields)
        return frozenset(names)

    def check_query_params(self, request: Request) -> None:
        known = self.known_query_params()
        unknown = sorted(set(request.query_params) - known)
        if unknown:
            accepted = ", ".join(sorted(known)) or "none"
            message = f"is not a parameter of this endpoint (it reads: {accepted})"
            raise ApplicationError(
                "The request is invalid: check " + ", ".join(unknown) + ".",
                code="validation_error",
                fields={name: [message] for name in unknown},
            )

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
        self.check_query_params(request)
