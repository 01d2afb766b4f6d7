"""A scenario's run as a document: the quote-ready PDF and the export file names.

The web page and the API serve the same PDF from here; advisor.reports draws it from the
run's typed result."""

from __future__ import annotations

import hashlib
import json
import logging

from django.core.cache import caches
from django.utils import timezone
from django.utils.text import slugify

from advisor.engine.result.records import EngineResult
from advisor.measurements.selectors import run_calibration_label
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.models import Scenario, ScenarioRun
from advisor.scenarios.results import stored_result

logger = logging.getLogger(__name__)


def export_filename(scenario: Scenario, ext: str) -> str:
    """The download name of a scenario's export: fabric-advisor-<name>.<ext>."""
    return f"fabric-advisor-{slugify(scenario.name)[:60] or scenario.pk}.{ext}"


def pdf_filename(scenario: Scenario) -> str:
    return export_filename(scenario, "pdf")


def gpu_names() -> dict[str, str]:
    """GPU ids to their catalog names (the report says 'NVIDIA H100 SXM', not 'h100-sxm')."""
    return {g.id: g.name for g in catalog_current().gpus}


# Drawing a report costs ~1.8 s of a web worker; a run's result never changes, so the same PDF
# (same run, cover and catalog names) is drawn once and served from this cache afterwards.
REPORTS_CACHE = "reports"
REPORT_CACHE_S = 24 * 3600


def _report_key(scenario: Scenario, run: ScenarioRun, names: dict[str, str], **cover: str) -> str:
    """Everything the PDF shows that is not the run's own (immutable) result."""
    parts = {
        "run": str(run.pk),
        "finished_at": run.finished_at.isoformat() if run.finished_at else "",
        "engine_version": run.engine_version,
        "catalog_version": run.catalog_version,
        "scenario": [scenario.name, scenario.customer, scenario.quote_reference],
        "cover": cover,
        "date": timezone.now().date().isoformat(),
        "gpu_names": names,
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return f"report-pdf:{digest}"


def report_pdf(
    scenario: Scenario, run: ScenarioRun, *, prepared_by: str, contact: str, link: str
) -> bytes:
    """The quote-ready PDF of a scenario's run: the web page's and the API's (cached per run,
    cover and day: another preparer, reference or customer draws a new one)."""
    names = gpu_names()
    key = _report_key(scenario, run, names, prepared_by=prepared_by, contact=contact, link=link)
    cache = caches[REPORTS_CACHE]
    cached = cache.get(key)
    if isinstance(cached, bytes):
        return cached
    pdf = _draw_report_pdf(
        scenario, run, prepared_by=prepared_by, contact=contact, link=link, names=names
    )
    cache.set(key, pdf, REPORT_CACHE_S)
    return pdf


def warm_up() -> None:
    """Import the PDF's libraries (matplotlib, fpdf2: ~1.3 s on this 2-core machine) when a web
    process starts (advisor/wsgi.py), not inside its first report request (a first uncached
    PDF took 2.7 s under load, ~1.3 s of it this import). Drawing itself (~2.4 s for a large
    report: fpdf2's table line breaking and four matplotlib charts) is still paid once per
    report, cover and day. Never fails the start (a failure is logged)."""
    try:
        import advisor.reports.pdf  # noqa: F401
    except Exception:  # a warm-up never stops a server from starting
        logger.exception("report warm-up failed")


def _draw_report_pdf(
    scenario: Scenario,
    run: ScenarioRun,
    *,
    prepared_by: str,
    contact: str,
    link: str,
    names: dict[str, str],
) -> bytes:
    from advisor.reports.pdf import QuoteInfo, build_report_pdf  # matplotlib loads only here

    return build_report_pdf(
        scenario_name=scenario.name,
        customer=scenario.customer,
        result=stored_result(run) or EngineResult(),
        run_info={
            "engine_version": run.engine_version,
            "catalog_version": run.catalog_version,
            "finished_at": run.finished_at.strftime("%Y-%m-%d %H:%M UTC")
            if run.finished_at
            else "",
            "link": link,
        },
        quote=QuoteInfo(
            reference=scenario.quote_reference,
            prepared_by=prepared_by,
            contact=contact,
            date=timezone.now().date(),
            model=run_calibration_label(run=run),
        ),
        gpu_names=names,
    )
