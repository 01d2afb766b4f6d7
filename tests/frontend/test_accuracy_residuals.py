"""The accuracy page leads with the held-out figures, then shows the residuals and the ranges
they set."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_accuracy_page_lists_residuals_by_kind_and_generation(client: Client) -> None:
    from advisor.engine.tools.validation import band_coverage, residual_table

    html = client.get("/accuracy/").content.decode()
    assert 'id="residual-table"' in html
    generations = {gen for (kind, gen) in residual_table() if kind == "training" and gen != "*"}
    assert generations and all(f"<td>{gen}</td>" in html for gen in generations)
    cov = band_coverage("held_out")
    assert f"{cov['inside']} of {cov['total']} held-out values" in html


def test_accuracy_page_leads_with_the_held_out_error(client: Client) -> None:
    from advisor.engine.tools.validation import validation_report

    summary = validation_report()["summary"]
    html = client.get("/accuracy/").content.decode()
    held = html.index('id="held-out-mae"')
    assert held < html.index('id="passed-count"') < html.index('id="validation-table"')
    assert f"{summary['held_out_mae_pct']:.1f} %" in html[held : held + 200]
    assert f"{summary['held_out_loo_inside']} / {summary['held_out_lines']}" in html
    assert "Held out: never used to set or choose anything" in html


def test_accuracy_page_shows_the_held_out_error_with_and_without_rows_looked_at(
    client: Client,
) -> None:
    from advisor.engine.tools.validation import validation_report

    report = validation_report()
    summary = report["summary"]
    html = client.get("/accuracy/").content.decode()
    unseen = html.index('id="unseen-mae"')
    assert html.index('id="held-out-mae"') < unseen < html.index('id="passed-count"')
    card = html[unseen : unseen + 600]
    assert f"{summary['held_out_unseen_mae_pct']:.1f} %" in card
    assert f"over {summary['held_out_unseen_lines']} measurements" in card
    assert f"the other {summary['held_out_looked_at_rows']} held-out rows" in card
    assert f"{summary['held_out_unseen_loo_inside']} / {summary['held_out_unseen_lines']}" in html
    marked_lines = sum(1 for line in report["rows"] if line["looked_at"])
    assert html.count('<span class="tag">looked at</span>') == marked_lines > 0


def test_accuracy_page_shows_the_held_out_error_of_each_family_worst_first(client: Client) -> None:
    """Serving for MoE models apart from dense: a customer weighing gpt-oss sees its family's
    error, not the dense rows' average."""
    from advisor.engine.tools.validation import validation_report
    from advisor.reports.presenters import pool_label

    by_pool = validation_report()["summary"]["held_out_mae_by_pool"]
    html = client.get("/accuracy/").content.decode()
    start = html.index('id="held-out-by-pool"')
    assert html.index('id="held-out-mae"') < start < html.index('id="passed-count"')
    table = html[start : html.index("</table>", start)]
    worst_first = sorted(by_pool, key=lambda pool: -by_pool[pool]["mae_pct"])
    positions = [table.index(pool_label(pool)) for pool in worst_first]
    assert positions == sorted(positions)
    assert "mixture-of-experts models" in table and "dense models" in table
    for pool in worst_first:
        row = table[table.index(pool_label(pool)) :]
        row = row[: row.index("</tr>")]
        assert f"{by_pool[pool]['mae_pct']:.1f} %" in row
        assert f'<td class="num">{by_pool[pool]["lines"]}' in row


def test_the_prediction_chart_colours_each_family_as_the_table_names_it() -> None:
    """The scatter's series are the residual pools (MoE serving apart from dense), each holding
    exactly its pool's rows, named as the table names them."""
    from advisor.engine.result.validation_report import ValidationReport
    from advisor.engine.tools.validation import validation_report
    from advisor.reports.charts import validation_figure
    from advisor.reports.presenters import pool_label

    report = ValidationReport.from_dict(validation_report())
    plotted = [r for r in report.rows if r.measured > 0 and r.predicted > 0]
    series = {
        trace["name"]: trace
        for trace in validation_figure(report)["data"]
        if trace.get("mode") == "markers"
    }
    pools = {r.pool for r in plotted}
    assert {"serving", "serving-moe"} <= pools and "" not in pools
    assert set(series) == {pool_label(pool) for pool in pools}
    for pool in pools:
        rows = [r for r in plotted if r.pool == pool]
        trace = series[pool_label(pool)]
        assert len(trace["x"]) == len(rows)
        assert trace["text"] == [f"{r.id}: {r.metric}" for r in rows]
    assert (
        series[pool_label("serving")]["marker"]["color"]
        != series[pool_label("serving-moe")]["marker"]["color"]
    )


def test_the_residual_table_names_each_family_in_words_never_by_its_id(client: Client) -> None:
    """The MoE serving pool's rows read "..., mixture-of-experts models", not its id."""
    html = client.get("/accuracy/").content.decode()
    start = html.index('id="residual-table"')
    table = html[start : html.index("</table>", start)]
    assert "serving-moe" not in table
    assert "Serving throughput and time per token, mixture-of-experts models" in table
    assert "Serving throughput and time per token, dense models" in table
