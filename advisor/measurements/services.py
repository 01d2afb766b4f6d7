"""Writes: store a measurement with its parse and fit; queue a calibrated scenario run."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length

from advisor.engine import ENGINE_VERSION
from advisor.engine.calibration.fabric_fit import fit_measurement
from advisor.engine.calibration.nccl_tests import NcclParseError, parse_text
from advisor.engine.facts.constants import FABRIC_IDS
from advisor.measurements.models import TRANSPORTS, Measurement, RunCalibration
from advisor.scenarios.models import Scenario, ScenarioRun
from advisor.scenarios.services import run_start
from advisor.scenarios.timelimit import EvaluationTimeout, wall_time_limit
from advisor.text_guard import control_character_error

FieldErrors = dict[str, list[str]]


class MeasurementInvalid(Exception):
    """Input refused, with per-field messages (the API answers 400, the form shows them)."""

    def __init__(self, fields: FieldErrors, *, status_code: int = 400, code: str = "") -> None:
        self.fields = fields
        self.status_code = status_code
        self.code = code or "validation_error"
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in fields.items()))


def text_max_chars() -> int:
    return int(getattr(settings, "MEASUREMENT_TEXT_MAX_CHARS", 512_000))


def owner_quota_chars() -> int:
    return int(getattr(settings, "MEASUREMENT_OWNER_QUOTA_CHARS", 20_000_000))


def _check(
    *,
    name: str,
    text: str,
    customer: str,
    fabric: str,
    nic_gbps: Any,
    nics_per_node: Any,
    transport: str = "",
) -> None:
    errors: FieldErrors = {}
    if transport and transport not in TRANSPORTS:
        errors["transport"] = [f"must be one of {', '.join(TRANSPORTS)} or empty"]
    elif transport and fabric and fabric != TRANSPORTS[transport][1]:
        errors["fabric"] = [
            f"{TRANSPORTS[transport][0]} is measured as {TRANSPORTS[transport][1]}; "
            "leave the fabric empty or choose that one"
        ]
    if not name.strip():
        errors["name"] = ["must not be empty"]
    elif len(name) > 200:
        errors["name"] = ["must be at most 200 characters"]
    if len(customer) > 200:
        errors["customer"] = ["must be at most 200 characters"]
    if not text.strip():
        errors["text"] = ["must not be empty: paste the output of nccl-tests or perftest"]
    elif len(text) > text_max_chars():
        errors["text"] = [f"must be at most {text_max_chars()} characters (got {len(text)})"]
    if fabric and fabric not in FABRIC_IDS:
        errors["fabric"] = [f"must be one of {', '.join(FABRIC_IDS)} or empty"]
    if nic_gbps is not None and not (
        isinstance(nic_gbps, (int, float))
        and not isinstance(nic_gbps, bool)
        and 1 <= nic_gbps <= 3200
    ):
        errors["nic_gbps"] = ["must be a number of Gb/s between 1 and 3200"]
    if nics_per_node is not None and not (
        isinstance(nics_per_node, int)
        and not isinstance(nics_per_node, bool)
        and 1 <= nics_per_node <= 64
    ):
        errors["nics_per_node"] = ["must be an integer between 1 and 64"]
    # An uploaded file's text arrives here without passing the form guard (advisor.text_guard).
    for field, value in (("name", name), ("customer", customer), ("text", text)):
        message = control_character_error(value)
        if message is not None and field not in errors:
            errors[field] = [message]
    if errors:
        raise MeasurementInvalid(errors)


@transaction.atomic
def measurement_create(
    *,
    name: str,
    text: str,
    owner: Any,
    customer: str = "",
    fabric: str = "",
    nic_gbps: float | None = None,
    nics_per_node: int | None = None,
    transport: str = "",
) -> Measurement:
    """Parse and fit ``text``; store it. Raises MeasurementInvalid naming the field and rule.

    ``transport``: a cloud transport (models.TRANSPORTS); the fit compares the measurement with
    the default model of its fabric class."""
    _check(
        name=name,
        text=text,
        customer=customer,
        fabric=fabric,
        nic_gbps=nic_gbps,
        nics_per_node=nics_per_node,
        transport=transport,
    )
    used = Measurement.objects.filter(owner=owner).aggregate(n=Sum(Length("text")))["n"] or 0
    if used + len(text) > owner_quota_chars():
        raise MeasurementInvalid(
            {
                "text": [
                    f"your measurements would exceed {owner_quota_chars()} characters in total; "
                    "delete old ones first"
                ]
            },
            status_code=413,
            code="quota_exceeded",
        )
    # Parsing and fitting run inside the request: bounded in wall time, so no upload can hold
    # a web worker (the parser is linear; this is the backstop).
    limit_s = settings.MEASUREMENT_PARSE_TIME_LIMIT_S
    fit_fabric = fabric or (TRANSPORTS[transport][1] if transport else "")
    try:
        with wall_time_limit(limit_s):
            parsed = parse_text(text)
            fit = fit_measurement(
                parsed, fabric=fit_fabric or None, nic_gbps=nic_gbps, nics_per_node=nics_per_node
            )
    except NcclParseError as exc:
        raise MeasurementInvalid({"text": [str(exc)]}) from exc
    except EvaluationTimeout as exc:
        raise MeasurementInvalid(
            {"text": [f"took longer than the {limit_s} s allowed to read; send a shorter log"]}
        ) from exc
    return Measurement.objects.create(
        name=name.strip(),
        text=text,
        customer=customer.strip(),
        owner=owner,
        fabric=fabric,
        transport=transport,
        nic_gbps=nic_gbps,
        nics_per_node=nics_per_node,
        runs=[r.to_dict() for r in parsed.runs],
        link_runs=[r.to_dict() for r in parsed.link_runs],
        fit=fit.to_dict(),
        warnings=list(parsed.warnings) + list(fit.warnings),
        engine_version=ENGINE_VERSION,
    )


@transaction.atomic
def scenario_run_calibrated(*, scenario: Scenario, measurement: Measurement) -> ScenarioRun:
    """Queue a run of ``scenario`` evaluated with ``measurement``'s fit.

    One unfinished run per scenario, as for a plain re-run (run_start raises RunInProgress).
    The link is written in the same transaction, before the task is sent on commit.
    """
    run = run_start(scenario=scenario)
    RunCalibration.objects.create(run=run, measurement=measurement)
    return run


class NotQuotable(ValueError):
    """The run asked for cannot be the scenario's quoted answer (the message says why)."""


@transaction.atomic
def scenario_quoted_run_choose(*, scenario: Scenario, run_id: Any) -> ScenarioRun | None:
    """Make one of ``scenario``'s finished calibrated runs its quoted answer, or with
    ``run_id`` None go back to the default model's answer. Only an explicit choice does
    this; running calibrated never does. One choice at a time: the others are taken back.

    Raises NotQuotable for a run that is not a calibrated run of this scenario or has not
    succeeded. Returns the chosen run (None for the default)."""
    from django.core.exceptions import ValidationError
    from django.utils import timezone

    from advisor.scenarios.models import RunStatus

    links = RunCalibration.objects.select_for_update().filter(run__scenario=scenario)
    chosen: RunCalibration | None = None
    if run_id is not None:
        try:
            chosen = links.select_related("run").filter(run_id=run_id).first()
        except (ValueError, TypeError, ValidationError):
            chosen = None
        if chosen is None:
            raise NotQuotable("is not a calibrated run of this scenario")
        if chosen.run.status != RunStatus.SUCCEEDED:
            raise NotQuotable("has not finished: only a finished calibrated run can be quoted")
    others = links.filter(chosen_at__isnull=False)
    if chosen is not None:
        others = others.exclude(pk=chosen.pk)
    others.update(chosen_at=None)
    if chosen is None:
        return None
    chosen.chosen_at = timezone.now()
    chosen.save(update_fields=["chosen_at"])
    return chosen.run
