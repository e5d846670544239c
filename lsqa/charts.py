"""Plotly figures of the paper's charts, from the plain dicts ``lsqa.analysis`` returns.

- ``strength_bars``: Bradley-Terry strengths e^β with bootstrap CI bars (paper Fig. 2, 3, 6, 7),
  the value on top of each bar as in the paper;
- ``win_matrix``: P(row beats column) = e^βi / (e^βi + e^βj) (§4.2);
- ``accuracy_bars``: AutoAIS accuracy with 95% CI per system and context (Table 1);
- ``confusion``: a confusion-matrix heatmap of two raters (Fig. 4);
- ``preference``: the self-preference 2×2 (§5.1).

No streamlit here: the pages show the figures, stakeholders download them (``to_html``).
"""

from __future__ import annotations

import plotly.graph_objects as go

_FONT = dict(size=13)


def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    fig.update_layout(title=title, height=height, font=_FONT, margin=dict(l=60, r=20, t=60, b=80),
                      template="plotly_white")
    return fig


def strength_bars(result: dict, title: str = "") -> go.Figure:
    systems = result["systems"]
    names = [s["system"] for s in systems]
    strength = [s["strength"] for s in systems]
    has_ci = all(s["ci_low"] is not None and s["ci_high"] is not None for s in systems)
    error = None
    if has_ci:
        error = dict(type="data", symmetric=False,
                     array=[s["ci_high"] - s["strength"] for s in systems],
                     arrayminus=[s["strength"] - s["ci_low"] for s in systems], thickness=1.5, width=6)
    fig = go.Figure(go.Bar(x=names, y=strength, error_y=error, text=[f"{v:.4f}" for v in strength],
                           textposition="outside", marker_color="#4C78A8",
                           hovertemplate="%{x}<br>e^β = %{y:.4f}<extra></extra>"))
    fig.update_yaxes(title_text="strength e^β", rangemode="tozero")
    fig.update_xaxes(title_text="system")
    n = result.get("n_comparisons")
    subtitle = f" ({n:,} comparisons)" if n is not None else ""
    return _layout(fig, (title or f"QA-quality ranking — {result.get('judge', '')}") + subtitle)


def win_matrix(result: dict, title: str = "") -> go.Figure:
    names = [s["system"] for s in result["systems"]]
    wp = result["win_probability"]
    z = [[None if a == b else wp[a][b] for b in names] for a in names]
    text = [["" if v is None else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, text=text, texttemplate="%{text}", zmin=0, zmax=1,
                               colorscale="RdBu", hovertemplate="P(%{y} beats %{x}) = %{z:.3f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="system (row) …")
    fig.update_xaxes(title_text="… beats system (column)")
    return _layout(fig, title or f"Win probability — {result.get('judge', '')}", height=460)


def accuracy_bars(rows: list[dict], title: str = "") -> go.Figure:
    names = [f"{r['system']}<br>({r['context']})" if r.get("context") else r["system"] for r in rows]
    acc = [100 * r["accuracy"] for r in rows]
    fig = go.Figure(go.Bar(
        x=names, y=acc, text=[f"{a:.1f} ± {100 * r['half_width']:.1f}" for a, r in zip(acc, rows)],
        textposition="outside", marker_color="#72B7B2",
        error_y=dict(type="data", symmetric=False, array=[100 * r["ci_high"] - a for a, r in zip(acc, rows)],
                     arrayminus=[a - 100 * r["ci_low"] for a, r in zip(acc, rows)], thickness=1.5, width=6),
        hovertemplate="%{x}<br>accuracy %{y:.1f}%<extra></extra>"))
    fig.update_yaxes(title_text="accuracy (%)", range=[0, 105])
    return _layout(fig, title or "Accuracy with 95% CI")


def confusion(result: dict, rater_a: str, rater_b: str, title: str = "") -> go.Figure:
    labels = list(result["labels"])
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
    fig = go.Figure(go.Heatmap(z=z, x=table["systems"], y=table["judges"], text=z, texttemplate="%{text}",
                               colorscale="Purples", showscale=False,
                               hovertemplate="judge %{y} preferred %{x}: %{z}<extra></extra>"))
    fig.update_yaxes(title_text="judge", autorange="reversed")
    fig.update_xaxes(title_text="answer preferred")
    return _layout(fig, title or "Self-preference (paper §5.1)", height=340)


def to_html(fig: go.Figure, *, full: bool = False) -> bytes:
    """A stand-alone HTML file; ``full`` embeds plotly.js (works offline), else it loads from a CDN."""
    return fig.to_html(include_plotlyjs=True if full else "cdn", full_html=True).encode("utf-8")
