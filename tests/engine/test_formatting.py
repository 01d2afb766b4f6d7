"""The one rule per kind of figure (advisor.engine.facts.formatting) and the engine's labels
(advisor.engine.facts.vocabulary): edge cases a stored result can hold."""

from __future__ import annotations

import math

import pytest

from advisor.engine.facts import formatting as fmt
from advisor.engine.facts import vocabulary as vocab

NOT_NUMBERS = [None, "", "abc", math.nan, math.inf, -math.inf, "nan", "inf", [1]]


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_a_figure_that_is_not_a_finite_number_reads_as_a_dash(value: object) -> None:
    for rule in (
        fmt.usd,
        fmt.usd_compact,
        fmt.usd_whole,
        fmt.usd_cents,
        fmt.duration,
        fmt.milliseconds,
        fmt.percent,
        fmt.gbps,
    ):
        assert rule(value) == fmt.MISSING, rule.__name__
    assert fmt.finite(value, 7.0) == 7.0
    assert fmt.finite_or_none(value) is None


def test_number_shows_text_that_is_not_a_number_as_it_is() -> None:
    assert fmt.number(None) == fmt.MISSING
    assert fmt.number("") == fmt.MISSING
    assert fmt.number("n/a") == "n/a"
    assert fmt.number(math.nan) == fmt.MISSING
    assert fmt.number(-math.inf) == fmt.MISSING
    assert fmt.number(0) == "0"
    assert fmt.number(1024) == "1,024"
    assert fmt.number(-1024.0) == "-1,024"
    assert fmt.number(3.14159) == "3.14"
    assert fmt.number(123.456) == "123.5"
    assert fmt.number(2.5e7 + 0.5) == "25,000,000"  # never e-notation
    assert fmt.number(0.0001234) == "0.000123"


def test_significant_figures_are_plain_decimals_at_every_size() -> None:
    assert fmt.significant(1340.2) == "1,340"
    assert fmt.significant(12.46) == "12.5"
    assert fmt.significant(0.00001163) == "0.0000116"
    assert fmt.significant(2.5e20) == "250,000,000,000,000,000,000"
    assert fmt.significant(-0.5) == "-0.5"
    assert fmt.significant(100.0) == "100"
    assert fmt.milliseconds(1340.4) == "1,340 ms"
    assert fmt.duration(86400 * 1234.5) == "1,230 days"
    for value in (1e-9, 3.3e-5, 7.7e5, 1.2e12, 9.99e99):
        for shown in (fmt.significant(value), fmt.number(value), fmt.milliseconds(value)):
            assert "e" not in shown.lower(), shown


def test_money_in_a_sentence_keeps_whole_dollars_below_a_million() -> None:
    assert fmt.usd(0) == "$0"
    assert fmt.usd(0.4) == "$0"
    assert fmt.usd(-0.4) == "$0"
    assert fmt.usd(1000) == "$1,000"
    assert fmt.usd(304_000) == "$304,000"
    assert fmt.usd(999_999.4) == "$999,999"
    assert fmt.usd(1e6) == "$1.00M"
    assert fmt.usd(2_804_000) == "$2.80M"
    assert fmt.usd(1.5e9) == "$1.50B"
    assert fmt.usd(2_026_600_000) == "$2.03B"
    assert fmt.usd(999_990_000) == "$999.99M"
    assert fmt.usd(999_996_000) == "$1.00B"
    assert fmt.usd(-2_804_000) == "-$2.80M"
    assert fmt.usd(-1234) == "-$1,234"
    assert fmt.usd("12500") == "$12,500"


def test_compact_money_for_cards_and_axes() -> None:
    assert fmt.usd_compact(0) == "$0"
    assert fmt.usd_compact(950) == "$950"
    assert fmt.usd_compact(9_999) == "$9,999"
    assert fmt.usd_compact(10_000) == "$10k"
    assert fmt.usd_compact(304_400) == "$304k"
    assert fmt.usd_compact(2_804_000) == "$2.80M"
    assert fmt.usd_compact(1_200_000_000) == "$1.20B"
    assert fmt.usd_compact(-2_804_000) == "-$2.80M"
    assert fmt.usd_compact(-950) == "-$950"


def test_money_to_the_dollar_and_to_the_cent() -> None:
    assert fmt.usd_whole(0) == "$0"
    assert fmt.usd_whole(1_228_800) == "$1,228,800"
    assert fmt.usd_whole(-1_228_800.4) == "-$1,228,800"
    assert fmt.usd_whole(12_345_678_901) == "$12,345,678,901"
    assert fmt.usd_cents(0) == "$0.00"
    assert fmt.usd_cents(0.004) == "$0.00"
    assert fmt.usd_cents(2.49) == "$2.49"
    assert fmt.usd_cents(-2.5) == "-$2.50"
    assert fmt.usd_cents(1234.5) == "$1,234.50"


def test_durations_in_the_unit_a_person_would_use() -> None:
    assert fmt.duration(0) == "0 s"
    assert fmt.duration(0.00085) == "850 µs"
    assert fmt.duration(2e-7) == "0.2 µs"
    assert fmt.duration(0.0125) == "12.5 ms"
    assert fmt.duration(0.999) == "999 ms"
    assert fmt.duration(1) == "1 s"
    assert fmt.duration(3.21) == "3.21 s"
    assert fmt.duration(119) == "119 s"
    assert fmt.duration(120) == "2 min"
    assert fmt.duration(2520) == "42 min"
    assert fmt.duration(7200) == "2 h"
    assert fmt.duration(18_000) == "5 h"
    assert fmt.duration(172_800) == "2 days"
    assert fmt.duration(86_400 * 400) == "400 days"
    assert fmt.duration(-0.0125) == "-12.5 ms"
    assert fmt.duration(-7200) == "-2 h"
    assert fmt.milliseconds(4.321) == "4.32 ms"


def test_a_first_token_in_ms_up_to_ten_seconds_then_in_a_persons_unit() -> None:
    """Users queued for a place in the KV memory wait minutes: "2.98 min", not "179,000 ms";
    the load model's over-capacity stand-in in words."""
    assert fmt.first_token(277) == "277 ms"
    assert fmt.first_token(10_000) == "10,000 ms"
    assert fmt.first_token(48_500) == "48.5 s"
    assert fmt.first_token(179_000) == "2.98 min"
    assert fmt.first_token(3_600_000) == fmt.OVER_CAPACITY
    assert fmt.first_token(None) == fmt.MISSING


def test_percentages_on_pages_and_in_sentences() -> None:
    assert fmt.percent(0) == "0.0 %"
    assert fmt.percent(0.042) == "4.2 %"
    assert fmt.percent(0.41) == "41 %"
    assert fmt.percent(1.5) == "150 %"
    assert fmt.percent(-0.05) == "-5.0 %"
    assert fmt.percent(0.41, digits=1) == "41.0 %"
    assert fmt.percent(0.042, digits=0) == "4 %"
    assert fmt.percent(math.nan, digits=1) == fmt.MISSING
    assert fmt.percent_in_text(0.41) == "41.0%"
    assert fmt.percent_in_text(None) == "0.0%"
    assert fmt.gbps(400) == "400 Gb/s"
    assert fmt.gbps("800.0") == "800 Gb/s"


def test_one_label_per_fabric_topology_and_network() -> None:
    assert [vocab.fabric_label(f) for f in vocab.FABRIC_IDS] == [
        "Ethernet (TCP)",
        "RoCE v2",
        "InfiniBand",
    ]
    assert vocab.fabric_label("") == "?"
    assert vocab.fabric_label("omnipath") == "omnipath"
    assert vocab.topology_label({"kind": "single-switch", "tiers": 1}) == "single switch"
    assert vocab.topology_label({"kind": "leaf-spine", "tiers": 2}) == "2-tier leaf-spine"
    assert vocab.topology_label({"kind": "fat_tree", "tiers": "3"}) == "3-tier fat tree"
    assert vocab.topology_label({"kind": "leaf-spine"}) == "leaf-spine"
    assert vocab.topology_label({}) == ""
    assert [vocab.tiers_in_words(t) for t in (1, 2, 3, 4)] == [
        "single switch",
        "leaf-spine",
        "three-tier fat tree",
        "4-tier fabric",
    ]
    assert vocab.network_label("storage") == "Storage network"
    assert vocab.network_label("out_of_band") == "Out of band"
    assert {*vocab.TOPOLOGY_KIND_BY_TIERS.values(), vocab.EXISTING} == set(
        vocab.TOPOLOGY_KIND_LABELS
    )


def test_the_engine_ids_are_the_vocabularys() -> None:
    from advisor.engine.facts import constants
    from advisor.engine.facts.catalog import network

    assert constants.FABRIC_IDS is vocab.FABRIC_IDS
    assert set(constants.FABRICS) == set(vocab.FABRIC_IDS)
    assert network.ETHERNET == vocab.ETHERNET


@pytest.mark.parametrize("text", ["=SUM(A1)", "+1", "-2+3", "@cmd", "\tx", "\rx"])
def test_a_csv_cell_never_starts_a_formula(text: str) -> None:
    assert fmt.spreadsheet_cell(text) == "'" + text


def test_plain_cells_and_numbers_stay_as_they_are() -> None:
    assert fmt.spreadsheet_cell("Llama 70B") == "Llama 70B"
    assert fmt.spreadsheet_cell(-3.5) == -3.5
    assert fmt.spreadsheet_cell(None) is None
