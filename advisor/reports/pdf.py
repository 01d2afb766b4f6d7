"""The PDF report a sales engineer attaches to a quote.

fpdf2 lays out the pages; matplotlib (Agg, no display, no browser) draws the same charts as
the web page from the same series (advisor.reports.charts). The text font is DejaVu Sans, embedded
(a subset) from matplotlib's own data, so every viewer measures and draws the same glyphs;
PDF core fonts are not embedded and viewers substitute wider fonts that overflow the margins.
"""

from __future__ import annotations

import datetime
import io
import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from fpdf import FPDF
from fpdf.enums import WrapMode
from fpdf.fonts import FontFace
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from advisor.engine.facts.formatting import duration, usd_whole
from advisor.engine.facts.vocabulary import fabric_label
from advisor.engine.result.records import EngineResult
from advisor.reports import charts, presenters
from advisor.reports.rag import rag_section

INK = (23, 32, 46)
MUTED = (107, 116, 133)
BRAND = (31, 94, 255)
WARN = (163, 91, 0)
HEADER_FILL = (15, 27, 51)
ROW_FILL = (244, 246, 250)
CHART_DPI = 160
# fontTools reports every subsetting step at INFO; one report is not worth 100 log lines.
logging.getLogger("fontTools").setLevel(logging.WARNING)
FONT = "dejavu"
MONO = "dejavu-mono"
FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
PDF_OPTIONS = 12

_REPLACEMENTS = {"\u2009": " ", "\u202f": " "}


def _text(text: Any) -> str:
    """Text for matplotlib labels and the PDF (symbols DejaVu lacks are spelled out)."""
    out = str(text if text is not None else "")
    for bad, good in _REPLACEMENTS.items():
        out = out.replace(bad, good)
    return out


# ---------------------------------------------------------------------------------------------
# Charts as PNG


def _png(fig: Any) -> io.BytesIO:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=CHART_DPI, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    buf.seek(0)
    return buf


def _style(ax: Any) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", color="#eef1f6")
    ax.tick_params(labelsize=8)


def _legend_above(ax: Any, columns: int = 3) -> None:
    """The legend in a row above the plot, never on the data."""
    ax.legend(
        fontsize=7,
        loc="lower left",
        bbox_to_anchor=(0, 1.01),
        ncol=columns,
        frameon=False,
        borderaxespad=0,
    )


def breakdown_png(result: EngineResult) -> io.BytesIO | None:
    s = charts.breakdown_series(result)
    if not s.labels:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(s.labels) + 1.2))
    labels = [
        ("★ " if r else "") + _text(lab) for lab, r in zip(s.labels, s.recommended, strict=True)
    ]
    y = list(range(len(labels)))
    left = [0.0] * len(labels)
    for name, values, color in (
        ("Compute", s.compute, charts.PART_COLORS["compute"]),
        ("Communication not hidden", s.comm, charts.PART_COLORS["comm"]),
        (s.other.split(" (")[0], s.idle, charts.PART_COLORS["idle"]),
    ):
        ax.barh(y, values, left=left, color=color, label=name, height=0.6)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(s.unit, fontsize=8)
    _legend_above(ax)
    _style(ax)
    return _png(fig)


def cost_speed_png(result: EngineResult) -> io.BytesIO | None:
    points, unit = charts.cost_speed_points(result)
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    for (fabric, color), ruled_out in itertools.product(
        charts.FABRIC_COLORS.items(), (False, True)
    ):
        group = [
            p
            for p in points
            if p.fabric == fabric and not p.recommended and p.ruled_out == ruled_out
        ]
        if group:
            ax.scatter(
                [p.speed for p in group],
                [p.total_cost_usd / 1e6 for p in group],
                facecolors="none" if ruled_out else color,
                edgecolors=color,
                label=fabric_label(fabric) + (" (ruled out)" if ruled_out else ""),
                s=30,
                alpha=0.8,
            )
    for p in points:
        if p.recommended:
            ax.scatter(
                [p.speed],
                [p.total_cost_usd / 1e6],
                marker="*",
                s=260,
                color="#ffb020",
                edgecolors="#17202e",
                linewidths=0.8,
                label="Recommended",
                zorder=5,
            )
            ax.annotate(
                # the shape alone: the switch and NIC names widened the figure to 3 x the page
                # and shrank the plot to a strip (they are in the BOM and the alternatives)
                _text(p.shape or p.label),
                (p.speed, p.total_cost_usd / 1e6),
                fontsize=7,
                xytext=(8, 6),
                textcoords="offset points",
            )
    ax.set_xlabel(f"{unit} (lower is faster)", fontsize=8)
    ax.set_ylabel(charts.cost_axis_title(result).replace("(USD)", "(USD M)"), fontsize=8)
    _legend_above(ax, columns=4)
    _style(ax)
    ax.grid(axis="y", color="#eef1f6")
    return _png(fig)


def scaling_png(result: EngineResult) -> io.BytesIO | None:
    lines = charts.scaling_lines(result)
    if not lines:
        return None
    series = {line.fabric: line.points for line in lines}
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    for fabric, name, points in lines:
        ax.plot(
            [p[0] for p in points],
            [p[1] * 100 for p in points],
            marker="o",
            markersize=3,
            color=charts.fabric_color(fabric),
            label=name,
        )
    nodes = float(result.workload.nodes or 0)
    if nodes > 0:
        ax.axvline(nodes, color="#17202e", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    # Plain server counts on the axis (never 4x10^0).
    ticks = charts.server_ticks({p[0] for points in series.values() for p in points}, limit=8)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0, 105)
    ax.set_xlabel("servers", fontsize=8)
    ax.set_ylabel(charts.scaling_words(result).axis, fontsize=8)
    _legend_above(ax)
    _style(ax)
    return _png(fig)


SERVING_CHART_TITLE = (
    "Latency as the load grows, by candidate network: p95 time to first token (solid, left,"
    " log) and per token (dotted, right); grey lines are the targets, the red line the load"
    " asked"
)


def _log_tick(value: float, _pos: int) -> str:
    """A log axis' tick (:func:`charts.log_tick_text`: "2,000" at 1, 2 and 5 of a decade)."""
    return charts.log_tick_text(value)


def serving_png(result: EngineResult) -> io.BytesIO | None:
    """The page's latency-vs-load chart (:func:`charts.serving_series`) for the report."""
    curves = charts.serving_series(result)
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    per_token = ax.twinx()
    for curve in curves:
        ax.plot(
            curve.requests_per_s,
            curve.ttft_ms_p95,
            marker="o",
            markersize=3,
            color=curve.color,
            label=_text(curve.name),
        )
        per_token.plot(curve.requests_per_s, curve.ms_per_token_p95, ":", color=curve.color)
    ttft_target, token_target = charts.serving_targets(result)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_log_tick))
    ax.yaxis.set_minor_formatter(FuncFormatter(_log_tick))
    ttft_top, token_top = charts.serving_axis_tops(curves, ttft_target, token_target)
    if ttft_top > 0:
        ax.set_ylim(top=ttft_top)
    per_token.set_ylim(bottom=0, top=token_top if token_top > 0 else None)
    _target_line(ax, ttft_target, "--", charts.target_words("first token", ttft_target), 0.01)
    _target_line(per_token, token_target, ":", charts.target_words("per token", token_target), 0.99)
    asked = charts.serving_asked_rate(result)
    if asked > 0:
        ax.axvline(asked, color="#d6336c", linestyle="-.", linewidth=1)
        ax.text(
            asked,
            0.98,
            _text(charts.asked_rate_words(asked)) + " ",
            transform=ax.get_xaxis_transform(),
            ha="right",
            va="top",
            fontsize=7,
            color="#d6336c",
        )
    ax.set_xlim(left=0)
    ax.set_xlabel("requests per second", fontsize=8)
    ax.set_ylabel("time to first token, p95 (ms)", fontsize=8)
    per_token.set_ylabel("ms per token, p95", fontsize=8)
    per_token.tick_params(labelsize=8)
    _legend_above(ax, columns=2)
    _style(ax)
    ax.tick_params(which="both", labelsize=8)  # the labelled minor ticks (2,000) too
    return _png(fig)


def _target_line(ax: Any, ms: float, style: str, words: str, x: float) -> None:
    """A latency target across the serving chart on its own axis, labelled just under the line
    at ``x`` (axes fraction: the first-token target at the left, per token at the right, as
    the page puts them); nothing for no target."""
    if ms <= 0:
        return
    ax.axhline(ms, color="#8a94a6", linestyle=style, linewidth=1)
    ax.text(
        x,
        ms,
        _text(words),
        transform=ax.get_yaxis_transform(),
        ha="left" if x < 0.5 else "right",
        va="top",
        fontsize=7,
        color="#5b6578",
    )


def topology_png(result: EngineResult) -> io.BytesIO:
    topo = charts.topology_layout(result)
    top = max((n.y for n in topo.nodes), default=1)
    fig, ax = plt.subplots(figsize=(7.5, 1.0 + 0.8 * (top + 1)))
    for link in topo.links:
        a, b = topo.nodes[link.a], topo.nodes[link.b]
        if link.rail is None:
            color, width = "#b7c0cf", 0.6
        elif topo.rails:
            color, width = charts.RAIL_COLORS[link.rail % len(charts.RAIL_COLORS)], 1.0
        else:
            color, width = "#5c6b80", 1.0
        ax.plot([a.x, b.x], [a.y, b.y], color=color, linewidth=width, zorder=1)
    shapes = {
        "server": ("s", "#17202e"),
        "leaf": ("D", "#1f5eff"),
        "spine": ("D", "#13a37f"),
        "core": ("D", "#9b51e0"),
        "switch": ("D", "#8a94a6"),
    }
    for node in topo.nodes:
        marker, color = shapes.get(node.kind, ("o", "#5c6b80"))
        if node.rail is not None:
            color = charts.RAIL_COLORS[node.rail % len(charts.RAIL_COLORS)]
        ax.scatter(
            [node.x], [node.y], marker=marker, s=90, color=color, zorder=2, edgecolors="white"
        )
    for y, text in topo.layer_labels:
        ax.text(-0.4, y, _text(text), ha="right", va="center", fontsize=7, color="#465165")
    ax.set_xlim(-7.5, 10.3)
    ax.set_ylim(-0.5, top + 0.5)
    ax.axis("off")
    return _png(fig)


# ---------------------------------------------------------------------------------------------
# The document

INDICATIVE = (
    "Prices are indicative street prices from public sources (about ±20 %); they are not a "
    "binding offer. Confirm with a formal quote before ordering."
)
QUOTE_VALIDITY_DAYS = 30


@dataclass
class QuoteInfo:
    """What the cover says about the quote (the scenario's own fields and who asked)."""

    reference: str = ""
    prepared_by: str = ""
    contact: str = ""
    date: datetime.date = field(default_factory=datetime.date.today)
    valid_days: int = QUOTE_VALIDITY_DAYS
    model: str = "Default model (not calibrated with a measurement)"
    """Which answer the document carries: the default model's or a calibrated run's."""

    @property
    def valid_until(self) -> datetime.date:
        return self.date + datetime.timedelta(days=self.valid_days)


class _Report(FPDF):
    title_text = ""
    reference = ""

    def header(self) -> None:
        if self.page_no() == 1:
            return
        self.set_font(FONT, "", 8)
        self.set_text_color(*MUTED)
        ref = f" · {self.reference}" if self.reference else ""
        self.cell(0, 6, _text(f"Fabric Advisor · {self.title_text}{ref}"), align="L")
        self.ln(8)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font(FONT, "", 8)
        self.set_text_color(*MUTED)
        self.cell(0, 6, _text(self.reference or "Fabric Advisor"), align="L")
        self.cell(0, 6, f"Page {self.page_no()}/{{nb}}", align="R")


def _h2(pdf: FPDF, text: str) -> None:
    if pdf.get_y() > pdf.h - 50:
        pdf.add_page()
    pdf.ln(3)
    pdf.set_font(FONT, "B", 13)
    pdf.set_text_color(*INK)
    pdf.cell(0, 8, _text(text), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_draw_color(*BRAND)
    pdf.set_line_width(0.4)
    pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + 20, pdf.get_y())
    pdf.ln(2)


def _para(pdf: FPDF, text: str, size: int = 10, color: tuple[int, int, int] = INK) -> None:
    pdf.set_font(FONT, "", size)
    pdf.set_text_color(*color)
    pdf.multi_cell(0, 5, _text(text), new_x="LMARGIN", new_y="NEXT", align="L")


def _image(pdf: FPDF, png: io.BytesIO | None, caption: str) -> None:
    if png is None:
        return
    from PIL import Image

    with Image.open(png) as img:
        width_px, height_px = img.size
    png.seek(0)
    width = pdf.epw
    height = width * height_px / width_px
    if pdf.get_y() + height + 10 > pdf.h - pdf.b_margin:
        pdf.add_page()
    pdf.set_font(FONT, "B", 10)
    pdf.set_text_color(*INK)
    # wrapped: the serving chart's title ran off the page's right edge on one line
    pdf.multi_cell(0, 5, _text(caption), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.image(png, w=width, h=height)
    pdf.ln(3)


def _longest_word_mm(pdf: FPDF, rows: list[list[str]], column: int, heading: bool) -> float:
    """The widest single word of a column in the current font (headings in bold), padding
    included: the least width at which no word of it breaks across lines."""
    family, size = pdf.font_family, pdf.font_size_pt
    widest = 0.0
    for index, row in enumerate(rows):
        pdf.set_font(family, "B" if heading and index == 0 else "", size)
        for word in _text(row[column]).split():
            widest = max(widest, pdf.get_string_width(word))
    pdf.set_font(family, "", size)
    return widest + 2 * pdf.c_margin + 0.5


def _unbroken_widths(
    pdf: FPDF, rows: list[list[str]], widths: tuple[int, ...], heading: bool
) -> tuple[float, ...]:
    """``widths`` (mm) widened where a column's longest word would not fit (a part number
    split as "MCX75310AAS-NEA" over "T" on a quote), the room taken from the columns with
    space to spare in proportion to it; the total stays. Left as given where the spare
    room is not enough."""
    need = [_longest_word_mm(pdf, rows, i, heading) for i in range(len(widths))]
    short = sum(max(0.0, n - w) for n, w in zip(need, widths, strict=True))
    spare = [max(0.0, w - n) for n, w in zip(need, widths, strict=True)]
    if short == 0 or sum(spare) < short:
        return tuple(float(w) for w in widths)
    give = short / sum(spare)
    return tuple(max(float(w), n) - s * give for n, w, s in zip(need, widths, spare, strict=True))


def _table(
    pdf: FPDF,
    rows: list[list[str]],
    widths: tuple[int, ...],
    align: tuple[str, ...] | None = None,
    size: int = 8,
    heading: bool = True,
) -> None:
    pdf.set_font(FONT, "", size)
    pdf.set_text_color(*INK)
    col_widths = _unbroken_widths(pdf, rows, widths, heading)
    pdf.set_fill_color(*ROW_FILL)  # tables take their starting style from the page state
    pdf.set_draw_color(226, 230, 238)
    pdf.set_line_width(0.2)
    head = FontFace(emphasis="BOLD", color=(255, 255, 255), fill_color=HEADER_FILL)
    with pdf.table(
        col_widths=col_widths,
        text_align=align or "LEFT",
        headings_style=head,
        first_row_as_headings=heading,
        line_height=4.6,
        borders_layout="HORIZONTAL_LINES",
        cell_fill_color=ROW_FILL,
        cell_fill_mode="ROWS",
    ) as table:
        for row in rows:
            cells = table.row()
            for value in row:
                cells.cell(_text(value))
    pdf.ln(2)


def _new_pdf(title: str, reference: str) -> _Report:
    pdf = _Report(orientation="P", unit="mm", format="A4")
    pdf.add_font(FONT, "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font(FONT, "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.title_text = title
    pdf.reference = reference
    pdf.set_title(_text(f"Fabric Advisor: {title}"))
    pdf.set_author("Fabric Advisor")
    pdf.set_creator("Fabric Advisor")
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.set_margins(16, 14, 16)
    return pdf


def _cover_band(pdf: FPDF, eyebrow: str, title: str, subtitle: str) -> None:
    pdf.set_fill_color(*HEADER_FILL)
    pdf.rect(0, 0, pdf.w, 58, style="F")
    pdf.set_xy(16, 12)
    pdf.set_font(FONT, "B", 9)
    pdf.set_text_color(159, 179, 220)
    pdf.cell(0, 5, _text(eyebrow), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_font(FONT, "B", 17)
    pdf.set_text_color(255, 255, 255)
    pdf.multi_cell(0, 8, _text(title), new_x="LMARGIN", new_y="NEXT", align="L")
    if subtitle:
        pdf.set_font(FONT, "B", 11)
        pdf.multi_cell(0, 6, _text(subtitle), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_y(max(pdf.get_y() + 6, 64))


def _quote_table(pdf: FPDF, customer: str, scenario_name: str, quote: QuoteInfo) -> None:
    rows = [
        ["Customer", customer or "—"],
        ["Scenario", scenario_name],
        ["Quote reference", quote.reference or "—"],
        ["Prepared by", quote.prepared_by or "Fabric Advisor"],
    ]
    if quote.contact:
        rows.append(["Contact", quote.contact])
    rows += [
        ["Date", quote.date.strftime("%d %B %Y")],
        ["Valid until", quote.valid_until.strftime("%d %B %Y")],
        ["Network model", quote.model],
    ]
    _table(pdf, rows, (45, 135), size=9, heading=False)


def build_report_pdf(
    *,
    scenario_name: str,
    customer: str,
    result: EngineResult,
    run_info: dict[str, str],
    quote: QuoteInfo | None = None,
    gpu_names: dict[str, str] | None = None,
) -> bytes:
    """The report a sales engineer sends: cover, what was asked, the answer and why, charts,
    the bill of materials by network, alternatives, assumptions, what to watch."""
    quote = quote or QuoteInfo()
    head = presenters.headline(result)
    pdf = _new_pdf(scenario_name, quote.reference)
    pdf.add_page()

    eyebrow = "NETWORK RECOMMENDATION" + (f" FOR {customer.upper()}" if customer else "")
    _cover_band(pdf, eyebrow, scenario_name, head["title"])
    _quote_table(pdf, customer, scenario_name, quote)

    _h2(pdf, "Our answer")
    if head["sentence"]:
        _para(pdf, presenters.plain_sentence(head["sentence"]), size=11)
    for warning in head["warnings"]:
        _para(pdf, f"Warning: {warning['text']}", size=10, color=WARN)
    pdf.ln(1)
    _table(
        pdf,
        [["Key figure", "Value", "What it covers"]]
        + [[f.key, f.value, f.sub] for f in head["facts"]],
        (52, 30, 98),
    )
    explain = head["costs"]["by_key"].get("job", {}).get("explain")
    if explain:
        _para(pdf, explain, size=9, color=MUTED)

    _h2(pdf, "What you asked")
    _table(
        pdf,
        [[k, v] for k, v in presenters.input_summary(result, gpu_names)],
        (45, 135),
        heading=False,
    )

    _h2(pdf, "Why this design")
    for sentence in result.recommendation.rationale:
        _para(pdf, f"•  {presenters.plain_sentence(sentence)}")
    for change in result.break_even:
        _para(pdf, f"When the answer would change: {change.statement}", color=MUTED)
    for row in presenters.uncertainty_rows(result):
        _para(pdf, f"Range: {row['label']} between {row['low']} and {row['high']}.", color=MUTED)
    accuracy = presenters.family_accuracy(result)
    if accuracy:
        _para(pdf, accuracy, color=MUTED)

    rag = rag_section(result)
    if rag is not None:
        _h2(pdf, "Retrieval pipeline (RAG)")
        _table(pdf, rag.tiers, (34, 16, 100, 30))
        _table(pdf, rag.flows, (40, 36, 36, 34, 34))
        _table(pdf, rag.network, (45, 135))
        _table(pdf, rag.timing, (75, 105))

    pdf.add_page()
    _h2(pdf, "Charts")
    _image(pdf, topology_png(result), "Topology (a representative slice; counts on the left)")
    _image(pdf, breakdown_png(result), charts.breakdown_series(result).title + " per candidate")
    _image(pdf, cost_speed_png(result), "Cost vs speed of every candidate")
    _image(pdf, scaling_png(result), charts.scaling_words(result).title)
    _image(pdf, serving_png(result), SERVING_CHART_TITLE)

    _h2(pdf, "Bill of materials")
    _para(pdf, INDICATIVE, size=9, color=MUTED)
    pdf.ln(1)
    for group in presenters.bom_groups(result):
        pdf.set_font(FONT, "B", 10)
        pdf.set_text_color(*INK)
        pdf.cell(0, 6, _text(group["label"]), new_x="LMARGIN", new_y="NEXT")
        rows = [["Part number", "Description", "For", "Qty", "Unit", "Extended"]]
        for line in group["lines"]:
            rows.append(
                [
                    line.part_number,
                    line.description,
                    line.role,
                    f"{int(float(line.quantity or 0)):,}",
                    usd_whole(line.unit_price_usd),
                    usd_whole(line.extended_price_usd),
                ]
            )
        rows.append(["", group["subtotal_label"], "", "", "", ""])
        rows[-1][5] = usd_whole(group["subtotal"])
        _table(
            pdf,
            rows,
            (30, 60, 30, 14, 22, 22),
            ("LEFT", "LEFT", "LEFT", "RIGHT", "RIGHT", "RIGHT"),
        )
    pdf.set_font(FONT, "B", 10)
    pdf.cell(
        0,
        6,
        _text(f"Network capex, all networks: {usd_whole(presenters.bom_total(result))}"),
        new_x="LMARGIN",
        new_y="NEXT",
    )

    options = presenters.options_rows(result, limit=PDF_OPTIONS)
    if options:
        total = len(result.options)
        _h2(pdf, f"Alternatives we weighed (best {len(options)} of {total})")
        labels = presenters.COST_LABELS
        has_life = any(o["life"] for o in options)
        head_row = ["#", "Design", "NIC and switch", "Speed", labels["capex"]]
        head_row += [labels["life"]] if has_life else []
        head_row += [labels["job"], "Why not"]
        rows = [head_row]
        for o in options:
            cells: list[str] = [
                str(o["rank"] or ""),
                ("★ " if o["recommended"] else "") + o["label"],
                o["parts"] or "—",
                o["speed"],
                o["capex"],
            ]
            cells += [o["life"] or "—"] if has_life else []
            cells += [o["total"], "recommended" if o["recommended"] else o["why_not"]]
            rows.append(cells)
        widths = (7, 22, 38, 14, 16, 17, 16, 48) if has_life else (7, 24, 40, 15, 17, 17, 58)
        _table(pdf, rows, widths, size=7)

    notes = presenters.plan_notes(result)
    if notes:
        _h2(pdf, "How the engine planned it")
        for note in notes:
            _para(pdf, f"•  {note}", size=9)

    assumptions = presenters.assumption_rows(result)
    if assumptions:
        _h2(pdf, "Assumptions")
        rows = [["Assumption", "Value", "Source"]]
        rows += [[a["name"], a["value"], a["source"]] for a in assumptions]
        _table(pdf, rows, (50, 45, 85), size=7)

    monitoring = result.monitoring
    if monitoring:
        _h2(pdf, "What to watch in production")
        for item in monitoring:
            _para(pdf, f"☐  {item}")

    _h2(pdf, "About these numbers")
    _para(
        pdf,
        f"Engine {run_info.get('engine_version', '')}, hardware catalog "
        f"{run_info.get('catalog_version', '')}, computed {run_info.get('finished_at', '')}. "
        "Our predictions are checked against published measurements: see 'How accurate is "
        "this?' in the app. Online version: " + run_info.get("link", ""),
        size=9,
        color=MUTED,
    )
    return bytes(pdf.output())


# ---------------------------------------------------------------------------------------------
# The comparison as a PDF


def build_compare_pdf(
    *,
    columns: list[dict[str, Any]],
    differences: list[dict[str, Any]],
    table: list[dict[str, Any]],
    prepared_by: str = "",
) -> bytes:
    """Scenarios side by side: the inputs that differ, then the key figures."""
    names = [str(c["name"]) for c in columns]
    title = "Comparison of " + ", ".join(names)
    pdf = _new_pdf("Comparison", "")
    pdf.add_page()
    customers = sorted({str(c.get("customer") or "") for c in columns} - {""})
    eyebrow = "SCENARIO COMPARISON" + (f" FOR {', '.join(customers).upper()}" if customers else "")
    _cover_band(pdf, eyebrow, title, "")
    _para(
        pdf,
        f"Prepared by {prepared_by or 'Fabric Advisor'} on "
        f"{datetime.date.today().strftime('%d %B %Y')}.",
        size=9,
        color=MUTED,
    )
    n = len(columns)
    first = 44
    rest = int((pdf.epw - first) // max(n, 1))
    widths = (first, *([rest] * n))
    _h2(pdf, "What differs in the inputs")
    if differences:
        rows = [["Input", *names]] + [[d["label"], *d["values"]] for d in differences]
        _table(pdf, rows, widths, size=8)
    else:
        _para(pdf, "The scenarios were asked with the same inputs.")
    _h2(pdf, "Key figures")
    rows = [["", *names]] + [[r["label"], *r["values"]] for r in table]
    _table(pdf, rows, widths, size=8)
    _para(pdf, INDICATIVE, size=9, color=MUTED)
    return bytes(pdf.output())


def _command(pdf: FPDF, text: str) -> None:
    """A command in a monospaced, shaded block, wrapped only at spaces so a copy pastes it
    whole (no hyphen or character is added at a wrap)."""
    pdf.set_font(MONO, "", 7.5)
    pdf.set_text_color(*INK)
    pdf.set_fill_color(*ROW_FILL)
    pdf.multi_cell(
        0, 3.8, _text(text), new_x="LMARGIN", new_y="NEXT", fill=True, wrapmode=WrapMode.WORD
    )
    pdf.ln(1)


def build_acceptance_pdf(
    plan: Any,
    grading: Any | None,
    *,
    scenario_name: str = "",
    customer: str = "",
    reference: str = "",
) -> bytes:
    """The acceptance test plan in the report's style: cover band, the environment as a
    table, each command in a copy-safe block, one table of expected bus bandwidth per test."""
    from advisor.engine.calibration.acceptance import OP_WORDS
    from advisor.engine.facts.formatting import significant

    pdf = _new_pdf(scenario_name or plan.title, reference)
    pdf.add_font(MONO, "", str(FONT_DIR / "DejaVuSansMono.ttf"))
    pdf.add_page()
    eyebrow = "ACCEPTANCE TEST PLAN" + (f" FOR {customer.upper()}" if customer else "")
    _cover_band(pdf, eyebrow, scenario_name or plan.title, plan.title)
    _h2(pdf, "How to run it")
    for note in plan.notes:
        _para(pdf, f"•  {note}", size=9)
    if grading is not None:
        _para(pdf, f"Result: {grading.summary}", size=11)
    _h2(pdf, "NCCL environment")
    env_rows = [["Variable", "Value", "Why"]] + [[k, v, why] for k, v, why in plan.env]
    if not plan.env:
        env_rows.append(["(none)", "", "single server: NVLink / xGMI only"])
    _table(pdf, env_rows, (48, 38, 92))
    _h2(pdf, "Commands")
    for scope, mpirun, srun in plan.commands:
        pdf.set_font(FONT, "B", 9)
        pdf.set_text_color(*INK)
        pdf.cell(0, 6, _text(scope), new_x="LMARGIN", new_y="NEXT")
        _command(pdf, mpirun)
        _command(pdf, srun)
    graded = {id(g.check): g for g in grading.checks} if grading else {}
    _h2(pdf, "Expected bus bandwidth")
    for scope, _nodes in plan.scopes:
        for op in sorted({c.op for c in plan.checks if c.scope == scope}):
            rows = [c for c in plan.checks if c.scope == scope and c.op == op]
            pdf.set_font(FONT, "B", 10)
            pdf.set_text_color(*INK)
            title = f"{scope}: {OP_WORDS.get(op, op)} ({rows[0].gpus} GPUs)"
            pdf.cell(0, 6, _text(title), new_x="LMARGIN", new_y="NEXT")
            head = ["Message size", "Expected busbw, GB/s", "Pass at or above, GB/s", "Time limit"]
            if grading is not None:
                head += ["Measured, GB/s", "Result"]
            table = [head]
            for c in rows:
                cells = [
                    _size_words(c.nbytes),
                    c.expected_range(" – "),
                    significant(c.threshold_busbw_gbytes_per_s),
                    duration(c.max_time_us / 1e6),
                ]
                if grading is not None:
                    g = graded.get(id(c))
                    if g is None or g.passed is None:
                        cells += ["–", "not measured"]
                    else:
                        cells += [
                            significant(g.measured_busbw_gbytes_per_s or 0),
                            "pass" if g.passed else "FAIL",
                        ]
                table.append(cells)
            widths = (26, 40, 40, 28) if grading is None else (22, 34, 34, 24, 28, 18)
            _table(pdf, table, widths, ("LEFT",) + ("RIGHT",) * (len(widths) - 1))
    if grading is not None:
        hints: list[str] = []
        for g in grading.checks:
            for h in g.look_at if g.passed is False else ():
                if h not in hints:
                    hints.append(h)
        if hints:
            _h2(pdf, "What to look at")
            for h in hints:
                _para(pdf, f"•  {h}", size=9)
    return bytes(pdf.output())


def _size_words(nbytes: float) -> str:
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= div:
            return f"{nbytes / div:g} {unit}"
    return f"{nbytes:g} B"
