"""A retrieval pipeline's (RAG) own section, as the results page and the PDF both show it.

One arrangement of the result's ``rag`` record (docs/MODEL.md section 21) so the page and
the report print the same figures in the same words: the tiers, what one question moves
between them, the tiers' Ethernet (display names and part numbers) and the first-token time.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.engine.decision.rag import bit_rate
from advisor.engine.facts.formatting import first_token, usd_whole
from advisor.engine.facts.numbers import finite
from advisor.engine.facts.vocabulary import RAG_TIER_LABELS
from advisor.engine.result.records import EngineResult, RagAnswer

_ENDS = {**RAG_TIER_LABELS, "users": "users"}


@dataclass(frozen=True)
class RagSection:
    """The section's tables: each a heading row then rows of text cells."""

    tiers: list[list[str]]
    flows: list[list[str]]
    network: list[list[str]]
    timing: list[list[str]]

    @property
    def tables(self) -> list[list[list[str]]]:
        """Every table in the order both the page and the PDF print them."""
        return [self.tiers, self.flows, self.network, self.timing]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{finite(value):,.1f} ms"


def _tiers(rag: RagAnswer) -> list[list[str]]:
    rows = [["Tier", "Servers", "Sized by", "Traffic per server"]]
    rows += [
        [t.label, f"{t.servers:,}", t.sized_by, bit_rate(finite(t.gbits_per_s_per_server))]
        for t in rag.tiers
    ]
    return rows


def _flows(rag: RagAnswer) -> list[list[str]]:
    rows = [["Per question", "From", "To", "Bytes", "At the load"]]
    rows += [
        [
            f.name.capitalize(),
            _ENDS.get(f.source, f.source),
            _ENDS.get(f.target, f.target),
            f"{finite(f.bytes_per_query) / 1e3:,.1f} kB",
            bit_rate(finite(f.gbits_per_s)),
        ]
        for f in rag.flows
    ]
    return rows


def _network(rag: RagAnswer) -> list[list[str]]:
    net = rag.network
    return [
        ["Retrieval-tier network", ""],
        [
            "Adapters",
            f"{net.servers:,} × {net.nic_name} ({net.nic_part_number}), "
            f"{net.ports_per_server} × {net.port_gbps}G per server",
        ],
        ["Switches", f"{net.switches:,} × {net.switch_name} ({net.switch_part_number})"],
        ["Busiest server", bit_rate(finite(net.busiest_gbits_per_s))],
        ["Network capex", usd_whole(net.capex_usd)],
    ]


def _timing(rag: RagAnswer) -> list[list[str]]:
    verdict = "within" if rag.meets_target else "over"
    first = (
        "the generation tier is saturated (see the headline)"
        if rag.first_token_ms is None
        else f"{_ms(rag.first_token_ms)}, {verdict} the {finite(rag.target_ttft_ms):,.0f} ms target"
    )
    return [
        ["Time to the first token", ""],
        ["Retrieval (embedding + vector search + network)", _ms(rag.retrieval_ms)],
        ["of which the tiers' network", f"{finite(rag.network_ms):,.2f} ms"],
        ["Generation tier, p95", first_token(rag.generation_ttft_ms)],
        ["First token", first],
    ]


def rag_section(result: EngineResult) -> RagSection | None:
    """The RAG section of a result (None when the scenario has no retrieval pipeline)."""
    rag = result.rag
    if rag is None:
        return None
    return RagSection(_tiers(rag), _flows(rag), _network(rag), _timing(rag))
