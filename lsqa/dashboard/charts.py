"""Plotly figures of the paper's charts, from the plain dicts ``lsqa.figures.analysis`` returns.

- ``strength_bars``: Bradley-Terry strengths e^β with bootstrap CI bars (paper Fig. 2, 3, 6, 7),
  the value on top of each bar as in the paper;
- ``win_matrix``: P(row beats column) = e^βi / (e^βi + e^βj) (§4.2);
- ``accuracy_bars``: AutoAIS accuracy with 95% CI per system and context (Table 1);
- ``confusion``: a confusion-matrix heatmap of two raters (Fig. 4);
- ``preference``: the self-preference 2×2 (§5.1).

Names (systems, judges, raters) come from configs and imported files, and Plotly reads a subset
of HTML in every text it draws (``<b>``, ``<a href>``, ``<br>``): each name goes through
``plain`` first, so ``<b>x</b>`` is drawn as those characters, never bold or a link.

No streamlit here: the pages show the figures, stakeholders download them (``to_html``, and
``lsqa.dashboard.chart_export`` for PNG).
"""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

_FONT = dict(size=13)
# The strength axis of ``strength_bars``: e^β on a log axis (readable when one system dominates:
# a 200× stronger system leaves the others visible), β itself, or e^β on a linear axis (the paper's).
STRENGTH_SCALES = ("log", "beta", "linear")


def plain(text) -> str:
    """``text`` as Plotly draws it literally: its HTML subset is escaped (Plotly decodes the entities)."""
    return html.escape(str(text), quote=False)


def _layout(fig: go.Figure, title: str, height: int = 420, subtitle: str = "") -> go.Figure:
    fig.update_layout(title=dict(text=title, subtitle=dict(text=subtitle) if subtitle else None),
                      height=height, font=_FONT, margin=dict(l=60, r=20, t=80 if subtitle else 60, b=80),
                      template="plotly_white")
    return fig


def strength_bars(result: dict, title: str = "", *, scale: str = "log", subtitle: str = "") -> go.Figure:
    """Strengths with their bootstrap CI; ``scale`` is one of ``STRENGTH_SCALES``."""
    if scale not in STRENGTH_SCALES:
        raise ValueError(f"scale must be one of {STRENGTH_SCALES}, not {scale!r}")
    systems = result["systems"]
    names = [plain(s["system"]) for s in systems]
    beta = scale == "beta"
    value = [s["beta"] if beta else s["strength"] for s in systems]
    has_ci = all(s["ci_low"] is not None and s["ci_high"] is not None for s in systems)
    error = None
    if has_ci:
        high = [math.log(s["ci_high"]) if beta else s["ci_high"] for s in systems]
        low = [math.log(s["ci_low"]) if beta else s["ci_low"] for s in systems]
        error = dict(type="data", symmetric=False, array=[h - v for h, v in zip(high, value, strict=False)],
                     arrayminus=[v - lo for v, lo in zip(value, low, strict=False)], thickness=1.5, width=6)
    what = "β" if beta else "e^β"
    fig = go.Figure(go.Bar(x=names, y=value, error_y=error, text=[f"{v:.4f}" for v in value],
                           textposition="outside", marker_color="#4C78A8",
                           hovertemplate=f"%{{x}}<br>{what} = %{{y:.4f}}<extra></extra>"))
    if scale == "log":
        fig.update_yaxes(title_text="strength e^β (log axis)", type="log")
    elif beta:
        fig.update_yaxes(title_text="β = log strength (0 = average)", zeroline=True)
    else:
        fig.update_yaxes(title_text="strength e^β", rangemode="tozero")
    fig.update_xaxes(title_text="system")
    n = result.get("n_comparisons")
    count = f" ({n:,} comparisons)" if n is not None else ""
    return _layout(fig, (title or f"QA-quality ranking — {plain(result.get('judge', ''))}") + count,
                   subtitle=subtitle)


def win_matrix(result: dict, title: str = "", *, subtitle: str = "") -> go.Figure:
    systems = [s["system"] for s in result["systems"]]
    names = [plain(s) for s in systems]
    wp = result["win_probability"]
    z = [[None if a == b else wp[a][b] for b in systems] for a in systems]
    text = [["" if v is None else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, text=text, texttemplate="%{text}", zmin=0, zmax=1,
                               colorscale="RdBu", hovertemplate="P(%{y} beats %{x}) = %{z:.3f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="system (row) …")
    fig.update_xaxes(title_text="… beats system (column)")
    return _layout(fig, title or f"Win probability — {plain(result.get('judge', ''))}", height=460,
                   subtitle=subtitle)


def accuracy_bars(rows: list[dict], title: str = "", *, subtitle: str = "") -> go.Figure:
    names = [f"{plain(r['system'])}<br>({plain(r['context'])})" if r.get("context") else plain(r["system"])
             for r in rows]
    acc = [100 * r["accuracy"] for r in rows]
    fig = go.Figure(go.Bar(
        x=names, y=acc, text=[f"{a:.1f} ± {100 * r['half_width']:.1f}" for a, r in zip(acc, rows, strict=False)],
        textposition="outside", marker_color="#72B7B2",
        error_y=dict(type="data", symmetric=False, array=[100 * r["ci_high"] - a for a, r in zip(acc, rows, strict=False)],
                     arrayminus=[a - 100 * r["ci_low"] for a, r in zip(acc, rows, strict=False)], thickness=1.5, width=6),
        hovertemplate="%{x}<br>accuracy %{y:.1f}%<extra></extra>"))
    fig.update_yaxes(title_text="accuracy (%)", range=[0, 105])
    return _layout(fig, title or "Accuracy with 95% CI", subtitle=subtitle)


def confusion(result: dict, rater_a: str, rater_b: str, title: str = "") -> go.Figure:
    labels = [plain(x) for x in result["labels"]]
    rater_a, rater_b = plain(rater_a), plain(rater_b)
    z = result["confusion"]
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, text=z, texttemplate="%{text}", colorscale="Blues",
                               showscale=False,
                               hovertemplate=f"{rater_a}: %{{y}}<br>{rater_b}: %{{x}}<br>%{{z}} items<extra></extra>"))
    fig.update_yaxes(title_text=rater_a, autorange="reversed")
    fig.update_xaxes(title_text=rater_b, side="bottom")
    agreement = result.get("agreement")
    kappa = result.get("kappa")
    sub = ""
    if agreement is not None:
        sub = f"agreement {100 * agreement:.1f}%"
        if kappa is not None:
            sub += f", κ = {kappa:.3f}"
    return _layout(fig, title or f"{rater_a} vs {rater_b}" + (f" — {sub}" if sub else ""), height=380)


def preference(table: dict, title: str = "") -> go.Figure:
    z = table["counts"]
    fig = go.Figure(go.Heatmap(z=z, x=[plain(x) for x in table["systems"]], y=[plain(x) for x in table["judges"]],
                               text=z, texttemplate="%{text}",
                               colorscale="Purples", showscale=False,
                               hovertemplate="judge %{y} preferred %{x}: %{z}<extra></extra>"))
    fig.update_yaxes(title_text="judge", autorange="reversed")
    fig.update_xaxes(title_text="answer preferred")
    return _layout(fig, title or "Self-preference (paper §5.1)", height=340)


def to_html(fig: go.Figure, *, title: str = "") -> bytes:
    """A stand-alone HTML file with plotly.js inside (about 4.8 MB): it opens offline, by email or
    from a USB stick, years later. ``title`` is the browser tab's title (escaped)."""
    page = fig.to_html(include_plotlyjs=True, full_html=True)
    if title:
        page = page.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1)
    return page.encode("utf-8")
