"""The audit's text properties: what a customer reads, an answer's prose or a refusal's
messages, writes figures in plain decimals with thousands separators, names GPUs, models and
parts by their display names and vendor part numbers and a platform's GPU links by their own
name (docs/MODEL.md 19: ``e-notation``, ``ungrouped-count``, ``saturated-figure``,
``internal-id``, ``scale-up-name``).  :mod:`.audit` checks them on every case; the pages',
PDF's and CSV's customer-text tests read the same patterns."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.constants import SATURATED_MS
from advisor.engine.facts.vocabulary import SCALE_UP_LABELS
from advisor.engine.result.records import EngineResult

E_NOTATION_EXPONENT = re.compile(r"[eE][+-][0-9]", re.ASCII)
"""The exponent of a number in e-notation ("1.19e+04"; Python's "g" and "e" formats always sign
it): never in text a customer reads (facts.formatting.significant writes plain decimals).  The
digit before it is checked per match: a class of digits in the pattern scans 5x slower."""


def customer_prose(result: EngineResult) -> Iterator[str]:
    """The sentences of an answer a customer reads: headline, rationale, departures and the
    reference design, the designs the decision tied with or chose over, the options' and
    pruned designs' reasons, break-even statements, monitoring, assumptions, warnings, the
    workload's notes, the cloud reference, the RAG statements and the BOM's descriptions."""
    rec = result.recommendation
    yield rec.headline
    yield from rec.rationale
    yield from rec.departures
    if rec.reference_design is not None:
        yield rec.reference_design.statement
        yield from rec.reference_design.departures
        yield from rec.reference_design.notes
    if rec.decision is not None:
        yield from rec.decision.tied_with
        yield from (premium.design for premium in rec.decision.premium_over)
    for option in result.options:
        yield option.why_not or ""
        yield from option.departures
        yield option.cost.job_share.note if option.cost.job_share is not None else ""
    for pruned in result.pruned:
        yield pruned.reason
    for point in result.break_even:
        yield point.statement
    yield from result.monitoring
    for assumption in result.assumptions:
        yield str(assumption.value)
        yield assumption.source
    yield from result.warnings or ()
    yield from result.workload.notes
    if result.cloud_fabric is not None:
        yield result.cloud_fabric.statement
    if result.rag is not None:
        yield from result.rag.statements
    for line in result.bom:
        yield line.description


UNGROUPED_COUNT = re.compile(r"(?<![\w.,/$#-])[1-9][0-9]{4,}(?![\w.,])", re.ASCII)
"""A whole number of five or more digits standing alone, without thousands separators
("16384 servers"): customer text writes "16,384".  Digits inside a part number, a version, an
issue number ("#13972") or a decimal are not counts and are not matched."""


_BARE_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
"""An assumption's value that is a number (``str(1e9)``), not a sentence."""


SATURATED_FIGURE = re.compile(
    rf"\b{SATURATED_MS:,.0f}(?:\.\d+)? ms|\b{SATURATED_MS:.0f}(?:\.\d+)? ms", re.ASCII
)
"""The load model's time to first token of an open queue over capacity ("3,600,000 ms", with
or without decimals or separators): a stand-in for "without bound", said in words wherever a
customer reads it."""


def _internal_id_pattern(catalog: Catalog) -> re.Pattern[str]:
    """Any of the catalog's internal ids (GPU, model, NIC, switch, transceiver and cable ids:
    ``gb300-nvl72``, ``cx7-400g``, ``llama3-70b``) standing as a word of its own; not an id
    that is also the item's name (OpenAI names its model ``gpt-oss-120b``)."""
    ids = {gpu.id for gpu in catalog.gpus if gpu.id != gpu.name}
    ids |= {model.id for model in catalog.models if model.id != model.name}
    ids |= {
        item.sku
        for item in (*catalog.nics, *catalog.switches, *catalog.transceivers, *catalog.cables)
    }
    words = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    return re.compile(rf"(?<![\w/.-])(?:{words})(?![\w/-])")


INTERNAL_ID = _internal_id_pattern(default_catalog())
"""What customers read names a GPU, model or part by its display name or vendor part number,
never by the catalog's id; an id inside an address or a path ("nvidia.com/.../gb200-nvl72")
is the vendor's own and is not matched.  The customer-text tests of the pages, PDF and CSV
read the same pattern (``tests/frontend/test_customer_text.py``)."""


def text_findings(texts: Sequence[str]) -> list[tuple[str, str]]:
    """The text properties' findings in ``texts`` (an answer's prose, or a refusal's messages),
    as (property, the words around it): ``e-notation``, a figure written as "1.19e+04";
    ``ungrouped-count``, a count of 10,000 or more without thousands separators;
    ``saturated-figure``, the over-capacity stand-in (:data:`SATURATED_FIGURE`) printed as if it
    were a time; ``internal-id``, a catalog id where a display name belongs
    (:data:`INTERNAL_ID`)."""
    prose = "\n".join(texts)  # one scan: the audit runs it on every case
    out = [
        ("e-notation", prose[max(0, m.start() - 60) : m.end() + 20])
        for m in E_NOTATION_EXPONENT.finditer(prose)
        if m.start() > 0 and prose[m.start() - 1].isdigit()
    ]
    printed = SATURATED_FIGURE.search(prose)
    if printed is not None:
        at = printed.start()
        out.append(("saturated-figure", prose[max(0, at - 80) : at + 40]))
    # an assumption's value that is a bare number is formatted where it is shown
    # (reports.presenters: "1,000,000,000 tokens"), so only text is checked for grouping
    words = "\n".join(t for t in texts if not _BARE_NUMBER.fullmatch(t))
    out.extend(
        ("ungrouped-count", words[max(0, m.start() - 60) : m.end() + 20])
        for m in UNGROUPED_COUNT.finditer(words)
    )
    out.extend(
        ("internal-id", prose[max(0, m.start() - 60) : m.end() + 20])
        for m in INTERNAL_ID.finditer(prose)
    )
    return out


_LINKS = "|".join(
    re.escape(label) for label in sorted(set(SCALE_UP_LABELS.values())) if label != "PCIe"
)
SCALE_UP_WORDS = re.compile(
    rf"(?:\bon|\bover|server's) (?P<link>{_LINKS})\b|\b(?P<domain>NVLink) (?:domain|rack)"
)
"""Words that say which links carry a job's GPU traffic ("stays on NVLink", "over the server's
Infinity Fabric", "one 72-GPU NVLink domain").  PCIe is left out: it also names the host slots
every NIC sits in."""


def scale_up_findings(texts: Sequence[str], own: str) -> list[tuple[str, str]]:
    """``scale-up-name``: where the prose says which links carry the job's GPU traffic, it names
    the platform's own (``own``, :func:`advisor.engine.facts.vocabulary.scale_up_label`): an
    AMD answer read "a job inside an NVLink domain stays on NVLink"."""
    prose = "\n".join(texts)
    return [
        ("scale-up-name", prose[max(0, m.start() - 60) : m.end() + 20])
        for m in SCALE_UP_WORDS.finditer(prose)
        if (m.group("link") or m.group("domain")) != own
    ]
