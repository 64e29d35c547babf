"""Charts as inline SVG, drawn with matplotlib (no JavaScript, no network to view).

Each function returns one ``<svg>`` element's text. Text stays text (``svg.fonttype``
none), and every chart's element ids get their own prefix, so that the many charts of
one page never share an id.
"""

from __future__ import annotations

import io
import itertools
import re
from dataclasses import dataclass

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

_ids = itertools.count(1)
BAR_HEIGHT_IN = 0.26
WIDTH_IN = 11.0
PALETTE = {"quickjs": "#d62728", "quickjs-baseline": "#ff9896", "jit": "#1f77b4", "native": "#7f7f7f",
           "other": "#9467bd"}


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float
    high: float
    group: str  # a PALETTE key: what colours the bar


def _svg(fig: plt.Figure) -> str:
    buf = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)
    prefix = f"c{next(_ids)}-"  # ids unique within a page of many charts
    return re.sub(r'(\sid="|url\(#|href="#)', lambda m: m.group(1) + prefix, text)


def _figure(rows: float, min_height: float = 2.0) -> tuple[plt.Figure, plt.Axes]:
    fig, ax = plt.subplots(figsize=(WIDTH_IN, max(min_height, 0.8 + rows * BAR_HEIGHT_IN)), layout="constrained")
    return fig, ax


def _log_scale(values: list[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 30


def bars(rows: list[Bar], xlabel: str) -> str:
    """Horizontal bars, best at the top, with the 95 % interval as whiskers."""
    fig, ax = _figure(len(rows))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, [r.value for r in rows], color=[PALETTE.get(r.group, PALETTE["other"]) for r in rows],
            xerr=[[max(r.value - r.low, 0) for r in rows], [max(r.high - r.value, 0) for r in rows]],
            error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#333333"})
    ax.set_yticks(y, [r.label for r in rows], fontsize=8)
    if _log_scale([r.value for r in rows]):
        ax.set_xscale("log")
        xlabel += " (log scale)"
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def paired(labels: list[str], first: list[float | None], second: list[float | None], names: tuple[str, str],
           xlabel: str) -> str:
    """Two bars per row (e.g. client and server CPU µs per message)."""
    fig, ax = _figure(len(labels) * 1.4)
    y = list(range(len(labels)))[::-1]
    h = 0.4
    ax.barh([v + h / 2 for v in y], [v or 0 for v in first], height=h, label=names[0], color="#1f77b4")
    ax.barh([v - h / 2 for v in y], [v or 0 for v in second], height=h, label=names[1], color="#ff7f0e")
    ax.set_yticks(y, labels, fontsize=8)
    if _log_scale([v for v in first + second if v]):
        ax.set_xscale("log")
        xlabel += " (log scale)"
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def percentiles(series: dict[str, list[float | None]], points: list[str], ylabel: str) -> str:
    """One line per cell across the latency percentiles (p50 … max), log scale."""
    fig, ax = _figure(12, min_height=3.5)
    for name, values in series.items():
        xs = [i for i, v in enumerate(values) if v is not None]
        ax.plot(xs, [values[i] for i in xs], marker="o", label=name)
    ax.set_xticks(range(len(points)), points)
    ax.set_yscale("log")
    ax.set_ylabel(ylabel + " (log scale)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _svg(fig)


def scatter_lines(series: dict[str, list[tuple[float, float]]], xlabel: str, ylabel: str) -> str:
    """One line of points per series (x rising), e.g. memory against connections held."""
    fig, ax = _figure(12, min_height=3.5)
    for name, points in series.items():
        pts = sorted(points)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", linewidth=1, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _svg(fig)


def element_ids(svg: str) -> list[str]:
    """The ids an SVG defines (for checking that charts in one page never collide)."""
    return re.findall(r'\sid="([^"]+)"', svg)


@dataclass(frozen=True)
class Panel:
    """One small chart of a trend: a value per commit with its interval, the band the gate
    allowed it, and where the gate fired."""

    title: str
    ylabel: str
    values: list[float | None]  # per commit (None: not measured there)
    lows: list[float | None]
    highs: list[float | None]
    bands: list[tuple[float, float] | None]  # per commit: the range that passes the gate
    fired: list[bool]  # per commit: the gate named this panel's cell


def trend(panels: list[Panel], commits: list[str], columns: int = 3) -> str:
    """Small multiples, one panel per cell: the commits left to right, the median as a
    dot with its 95 % interval, the gate's band as a green bar behind it, a red cross
    where the gate fired."""
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(WIDTH_IN, 0.4 + 2.3 * rows), layout="constrained",
                             squeeze=False)
    xs = list(range(len(commits)))
    for ax, panel in zip([a for row in axes for a in row], panels):
        nan = float("nan")
        y = [nan if v is None else v for v in panel.values]
        low = [0.0 if v is None or lo is None else max(v - lo, 0.0) for v, lo in zip(panel.values, panel.lows)]
        high = [0.0 if v is None or hi is None else max(hi - v, 0.0) for v, hi in zip(panel.values, panel.highs)]
        for x, band in zip(xs, panel.bands):
            if band is not None:
                ax.bar(x, band[1] - band[0], bottom=band[0], width=0.7, color="#2ca02c", alpha=0.18, linewidth=0)
        ax.errorbar(xs, y, yerr=[low, high], fmt="o-", color="#1f77b4", markersize=4, elinewidth=1, capsize=2,
                    linewidth=1)
        hits = [(x, v if v == v else (band[0] + band[1]) / 2) for x, v, f, band in zip(xs, y, panel.fired, panel.bands)
                if f and (v == v or band is not None)]  # a failed cell has no value: its cross sits in its band
        if hits:
            ax.scatter([x for x, _ in hits], [v for _, v in hits], marker="X", s=90, color="#d62728", zorder=5)
        ax.set_title(panel.title, fontsize=9)
        ax.set_ylabel(panel.ylabel, fontsize=8)
        ax.set_xticks(xs, commits, fontsize=7, rotation=45 if len(commits) > 6 else 0)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
        ax.set_xlim(-0.6, len(commits) - 0.4)
    for ax in [a for row in axes for a in row][len(panels):]:
        ax.set_visible(False)
    return _svg(fig)
