"""The Corpus page's *Long span* tab: one book's questions by class, its full-book gains,
and a timeline of the book with an entity's mention chain and each question's evidence span."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go

from lsqa.dashboard.charts import plain
from lsqa.figures import longspan as figures_longspan
from lsqa.figures.longspan import mention_fractions  # noqa: F401 (the page draws the chain with it)
from lsqa.stats import longspan
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.vocabulary import CORRECTED

CLASS_COLOURS = {"memorised": "#868e96", "retrieval": "#1c7ed6", "needs-full-book": "#e8590c",
                 "unanswered": "#c92a2a", None: "#ced4da"}
CLASS_WORDS = {"memorised": "answered without the book", "retrieval": "answered from retrieved passages",
               "needs-full-book": "only the full book answered it", "unanswered": "no system answered it",
               None: "not every answer judged"}


@kept_while_unchanged()
def book(workspace: Path, document_id: str, judge: str | None = None) -> dict:
    """``lsqa.stats.figures_longspan.analyse`` for one book, with the entities its questions are about."""
    result = figures_longspan.analyse(workspace, judge=judge, documents=[document_id])
    entities = {}
    for q in result["questions"]:
        if q["entity_id"]:
            entities[q["entity_id"]] = q["entity"]
    result["entities"] = entities
    result["document"] = result["by_document"][0] if result["by_document"] else None
    return result


def question_rows(result: dict) -> list[dict]:
    """The book's questions, grouped by class (in the order of ``longspan.CLASSES``), for a table."""
    order = {c: i for i, c in enumerate((*longspan.CLASSES, None))}
    mark = {True: "right", False: "wrong", None: "—"}
    rows = sorted(result["questions"], key=lambda q: (order[q["class"]], q["question_id"]))
    return [{"class": q["class"] or "not classified", "question": q["question"],
             "no context": mark[q["no_context_right"]], "retrieval": mark[q["retrieval_right"]],
             "full book": mark[q["full_right"]], "entity": q["entity"] or "",
             "evidence from": q["evidence_start"], "evidence to": q["evidence_end"]} for q in rows]


def gain_words(g: dict) -> str:
    """The judge-only gain with its 95% interval (Tango score, ``lsqa.stats.longspan.gain``)."""
    if g["gain"] is None:
        return "no question with both answers judged"
    return f"{g['gain']:+.0%} (95% CI {g['ci_low']:+.0%} to {g['ci_high']:+.0%}), {g['n']} questions"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:+.0%} to {high:+.0%}"


def corrected_words(g: dict) -> str:
    """The gain corrected by audits, or "judge only" with why."""
    c = g.get(CORRECTED) or {}
    if c.get("gain") is None:
        return "Corrected by audits: judge only" + (f" ({c['note']})" if c.get("note") else "")
    ci = f"95% CI {_interval(c['ci_low'], c['ci_high'])}" if c["ci_low"] is not None else c["note"]
    return (f"Corrected by audits: {c['gain']:+.0%} ({ci}), from {c['n_audited']} questions with both answers "
            "audited")


def gain_notes(g: dict) -> str:
    """What to read beside a gain: judge-only, too few questions, and the corrected figure."""
    parts = ["Judge-only figure"]
    if g.get("too_few_questions") and g["n"]:
        parts.append(g["note"])
    return " · ".join(parts + [corrected_words(g)])


@kept_while_unchanged()
def all_books(workspace: Path, judge: str | None = None) -> dict:
    """Every book's gains side by side with their simultaneous intervals (Bonferroni over the books
    shown, ``lsqa.stats.longspan.simultaneous``): rows for a table and the statement to print above it."""
    result = figures_longspan.analyse(workspace, judge=judge)
    rows = []
    for d in result["by_document"]:
        row = {"book": d["title"], "questions": d["n_questions"]}
        for other, words in (("retrieval", "vs retrieval"), ("no_context", "vs no context")):
            g = d[f"full_vs_{other}"]
            row[f"{words}: judge-only gain"] = None if g["gain"] is None else round(100 * g["gain"])
            row[f"{words}: 95% CI"] = _interval(g["ci_low"], g["ci_high"])
            row[f"{words}: together"] = _interval(g["simultaneous_ci_low"], g["simultaneous_ci_high"])
            c = g[CORRECTED]
            row[f"{words}: corrected"] = ("judge only" if c["gain"] is None else
                                          f"{c['gain']:+.0%} ({_interval(c['ci_low'], c['ci_high'])})")
        row["note"] = "too few questions" if d["full_vs_retrieval"]["too_few_questions"] else ""
        rows.append(row)
    return {"judge": result["judge"], "rows": rows, "statement": result["simultaneous"]["by_document"]["statement"]}


def timeline(result: dict, mentions: list[float] | None = None, entity: str = "") -> go.Figure:
    """The book from start (0) to end (1): the entity's mentions as ticks on the top row, below them
    one line per question from the first to the last place its evidence lies, coloured by class."""
    fig = go.Figure()
    spans = [q for q in result["questions"] if q["evidence_start"] is not None]
    if mentions:
        fig.add_trace(go.Scatter(x=mentions, y=[0] * len(mentions), mode="markers", name=plain(f"mentions of {entity}"),
                                 marker=dict(symbol="line-ns-open", size=14, color="#2b8a3e"),
                                 hovertemplate="%{x:.1%} of the book<extra></extra>"))
    for cls in (*longspan.CLASSES, None):
        group = [q for q in spans if q["class"] == cls]
        if not group:
            continue
        xs, ys, texts = [], [], []
        for q in group:
            y = 1 + spans.index(q)
            xs += [q["evidence_start"], max(q["evidence_end"], q["evidence_start"] + 0.002), None]
            ys += [y, y, None]
            texts += [plain(q["question"])] * 2 + [""]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=plain(f"{cls or 'not classified'}: "
                                                                             f"{CLASS_WORDS[cls]}"),
                                 line=dict(color=CLASS_COLOURS[cls], width=4), marker=dict(size=6),
                                 text=texts, hovertemplate="%{text}<br>%{x:.1%} of the book<extra></extra>"))
    fig.update_layout(height=max(260, 60 + 18 * (len(spans) + 1)), template="plotly_white",
                      margin=dict(l=40, r=20, t=40, b=40), legend=dict(orientation="h", y=-0.15),
                      title=dict(text="Where in the book each question's evidence lies"))
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title="position in the book (start of the story to its end)")
    fig.update_yaxes(autorange="reversed", showticklabels=False, title="")
    return fig
