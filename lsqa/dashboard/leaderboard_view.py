"""The Leaderboard screen: the rankings per side-by-side judge and the accuracy per yes/no judge it
reads (Fig. 2-3, 6-7; Table 1), and the Leaderboard as stakeholders take it away: which view it is,
what its switches changed, and exported files that say so.

A ranking shown to a stakeholder depends on switches (human overrides, questions with a flagged
reference left out, bootstrap rounds). A file downloaded from it must carry that view, in its name
and in its content, with the date, or two downloads of "the ranking" cannot be told apart later.
And a switch is only understood when its effect is shown: which systems changed rank, and how the
confidence intervals moved (paper §3.2: the bootstrap CI is what says whether a gap is real).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from lsqa import store, vocabulary
from lsqa.dashboard.common import judges_by_family
from lsqa.dashboard.links import audit_link
from lsqa.errors import NoVerdicts
from lsqa.figures import analysis
from lsqa.store import verdicts as verdicts_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.study import llmbar
from lsqa.text import numbers
from lsqa.text.highlight import md_escape as md
from lsqa.vocabulary import BINARY, JUDGE_LABELS, OVERRIDES, PAIRWISE


@dataclass(frozen=True)
class View:
    """The switches a Leaderboard render was made with."""

    use_overrides: bool = False
    exclude_flagged: bool = False
    bootstrap: int = 1000
    by_question: bool = False
    n_flagged_questions: int = 0

    @property
    def switched(self) -> bool:
        """True when the labels or the questions differ from the judges' plain view."""
        return self.use_overrides or self.exclude_flagged

    def describe(self) -> str:
        """One line for a chart's subtitle, a CSV column and the page."""
        labels = "human label where reviewed, else the judge's" if self.use_overrides else "the judge's labels"
        questions = (f"{self.n_flagged_questions} questions with a flagged reference left out" if self.exclude_flagged
                     else "all questions")
        if self.bootstrap:
            ci = f"95% CI from {self.bootstrap} bootstrap rounds over {'questions' if self.by_question else 'comparisons'}"
        else:
            ci = "no CI"
        return f"Labels: {labels} · {questions} · {ci}"

    def slug(self) -> str:
        """The view in a file name: ``overrides`` / ``judge-labels``, ``flagged-out`` / ``all-questions``."""
        return "_".join((OVERRIDES if self.use_overrides else JUDGE_LABELS,
                         "flagged-out" if self.exclude_flagged else "all-questions",
                         f"boot{self.bootstrap}" + ("q" if self.by_question and self.bootstrap else "")))


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC")


def subtitle(view: View, when: datetime) -> str:
    return f"{view.describe()} · exported {stamp(when)}"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(judge: str) -> str:
    """A judge's name as a part of a file name safe on every OS."""
    return _UNSAFE.sub("-", judge).strip("-") or "judge"


def file_name(what: str, judge: str, view: View, when: datetime, ext: str) -> str:
    """``ranking_<judge>_<view>_<date>.<ext>``: the judge, the switches and the date, safe on every OS."""
    return f"{what}_{safe_name(judge)}_{view.slug()}_{when.strftime('%Y-%m-%d')}.{ext}"


def view_columns(judge: str, view: View, when: datetime) -> dict:
    """Columns added to every exported table row, so a CSV alone says what it shows."""
    return {"judge": judge, "labels": "human overrides" if view.use_overrides else "judge",
            "flagged_questions": "left out" if view.exclude_flagged else "kept",
            "bootstrap_rounds": view.bootstrap, "bootstrap_unit": "question" if view.by_question else "comparison",
            "exported_utc": stamp(when)}


def with_view(rows: list[dict], judge: str, view: View, when: datetime) -> list[dict]:
    extra = view_columns(judge, view, when)
    return [{**r, **extra} for r in rows]


# ------------------------------------------------------------------------- what the switches changed

def baseline(ws: Path, judge: str, view: View, *, seed: int = 0) -> dict | None:
    """The same judge's ranking with every switch off (the judges' labels, all questions), or None; the
    one the page showed with the switches off, kept (:func:`ranking`), when there was one."""
    try:
        # The arguments as leaderboard() gives them, every one named: the kept result's key.
        return ranking(ws, judge, use_overrides=False, exclude_flagged=False, bootstrap=view.bootstrap,
                                 seed=seed, by_question=view.by_question)
    except NoVerdicts:  # nothing decided without the switches: no "before" to compare with
        return None


def _ci_width(s: dict) -> float | None:
    """Width of the CI in β (log strength): comparable across systems whatever their strength."""
    if s.get("ci_low") is None or s.get("ci_high") is None or s["ci_low"] <= 0:
        return None
    return math.log(s["ci_high"]) - math.log(s["ci_low"])


def _text(x) -> str:
    """A number for a mixed table cell: rounded, or a dash when there is none."""
    if x is None:
        return "—"
    return numbers.count(x) if isinstance(x, int) else numbers.figure(x)


def _width_text(width: float | None, s: dict) -> str:
    if width is not None:
        return numbers.figure(width)
    return ci_text(s)


def width_change_reason(before: dict, after: dict) -> str:
    """Why the strength intervals got much wider or narrower between two views, in words ("" when
    their median width in β changed by less than half).

    Strengths are measured against the mean β of all systems, so a system whose strength the data
    barely bound (one that beat the others only a few times) makes every strength, and every
    interval, move with it. That is what happens when a few overrides give a system that never won
    its first wins: it becomes estimable, and every interval widens (nine overrides, every
    interval about 5× wider). Rank intervals compare systems pairwise and do not move for this."""
    def widths(result):
        return {s["system"]: w for s in result["systems"] if (w := _ci_width(s)) is not None}

    old, new = widths(before), widths(after)
    shared = sorted(set(old) & set(new))
    if not shared:
        return ""
    ratio = sorted(new[k] / old[k] for k in shared if old[k] > 0)
    if not ratio:
        return ""
    median = ratio[len(ratio) // 2]
    if 1 / 1.5 < median < 1.5:
        return ""
    became = [s["system"] for s in after["systems"] if s.get("estimable", True)
              and any(o["system"] == s["system"] and not o.get("estimable", True) for o in before["systems"])]
    lost = [s["system"] for s in after["systems"] if not s.get("estimable", True)
            and any(o["system"] == s["system"] and o.get("estimable", True) for o in before["systems"])]
    text = f"The strength intervals are about {numbers.figure(median, 2)}× {'wider' if median > 1 else 'as wide'} than with the switches off"
    if median < 1:
        text = f"The strength intervals are about {numbers.figure(1 / median, 2)}× narrower than with the switches off"
    if became or lost:
        who = ", ".join(became or lost)
        text += (f": {who} {'now has' if became else 'no longer has'} a strength the data bound, and strengths are "
                 f"measured against the mean of all systems, so {'its' if len(became or lost) == 1 else 'their'} "
                 "uncertainty moves every interval.")
    else:
        text += ": strengths are measured against the mean of all systems, so a change in one system's uncertainty " \
                "moves every interval."
    return text + " The tiers and rank intervals compare systems pairwise and are not affected by this."


def switch_changes(before: dict, after: dict) -> dict:
    """Per system: rank and strength with the switches off and on, and the CI width change.

    Returns ``{"rows": [...], "moved": [names], "summary": "one line", "comparisons": (n_before, n_after)}``.
    """
    old = {s["system"]: s for s in before["systems"]}
    rows, moved = [], []
    for s in after["systems"]:
        o = old.get(s["system"])
        w_old, w_new = (_ci_width(o) if o else None), _ci_width(s)
        rank_old = o["rank"] if o else None
        if rank_old != s["rank"]:
            moved.append(s["system"])
        n_old, n_new = len(before["systems"]), len(after["systems"])
        rows.append({
            "system": s["system"], "tier (switches off)": "—" if o is None else _text(o.get("tier")),
            "tier (this view)": _text(s.get("tier")),
            "ranks (switches off)": ("not ranked with the switches off" if o is None
                                     else ranks_text(o.get("rank_low"), o.get("rank_high"), n_old)),
            "ranks (this view)": ranks_text(s.get("rank_low"), s.get("rank_high"), n_new),
            "rank (switches off)": "—" if rank_old is None else str(rank_old), "rank (this view)": str(s["rank"]),
            "moved": ("new" if rank_old is None else "—" if rank_old == s["rank"]
                      else f"{'up' if s['rank'] < rank_old else 'down'} {abs(rank_old - s['rank'])}"),
            "strength (switches off)": "—" if o is None else _text(o["strength"]),
            "strength (this view)": _text(s["strength"]),
            "CI width in β (switches off)": "—" if o is None else _width_text(w_old, o),
            "CI width in β (this view)": _width_text(w_new, s),
            "CI change": ("" if w_old is None or w_new is None
                          else f"{'narrower' if w_new < w_old else 'wider' if w_new > w_old else 'same'} "
                               f"({numbers.signed(w_new - w_old)})"),
        })
    n_before, n_after = before["n_comparisons"], after["n_comparisons"]
    why = width_change_reason(before, after)
    if moved:
        ranks = {r["system"]: r for r in rows}
        what = "; ".join(f"{m} {ranks[m]['rank (switches off)']} → {ranks[m]['rank (this view)']}" for m in moved)
        summary = f"Rank changed: {what}."
    else:
        summary = "No system changed rank."
    summary += f" Comparisons: {n_before:,} → {n_after:,}." + (f" {why}" if why else "")
    return {"rows": rows, "moved": moved, "summary": summary, "comparisons": (n_before, n_after)}


# ------------------------------------------------------------------------------ rank flips, linked

def mover_verdict(mover: dict) -> str:
    """The verdict a rank-flip mover opens on the Audit page: the one a person overrode, when the
    mover is an override, else the item's first verdict (a verdict of this judge on that question)."""
    overridden = mover.get("overridden") or []
    return overridden[0]["judgment_id"] if overridden else mover["judgment_id"]


def _question_link(mover: dict) -> str:
    text = mover.get("question") or "this question"
    return f"[{md(text)}]({audit_link(mover_verdict(mover))})"


def flip_markdown(flips: list[dict], *, binary: bool = False) -> str:
    """Rank flips (``corrected_view.flip_rows``) as a Markdown table whose questions link to their
    verdict on the Audit page (a question is named by its text, linked to the item)."""
    from lsqa.dashboard import corrected_view

    rows = corrected_view.flip_rows(flips, binary=binary, question=_question_link, escape=md)
    if not rows:
        return ""
    head = list(rows[0])
    lines = ["| " + " | ".join(md(h) for h in head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ judge picker

ALL_JUDGES = "all"


def judge_choices(shown: dict[str, list[str]]) -> list[str]:
    """The Leaderboard's judge picker: side-by-side judges first (the paper's rankings, §3.2), then
    yes/no judges (Table 1's accuracy), then every judge at once.

    One judge at a time is the default because a stakeholder reads one ranking at a time, and
    because every judge shown costs a Bradley-Terry fit with its bootstrap and, in the chart view, a
    chart the browser must draw (with all nine of the demo's charts a switch took longer than the
    dashboard's target: docs/benchmarks-log/2026-11-30-browser-earlier-runs.md)."""
    return [*shown[PAIRWISE], *shown[BINARY], ALL_JUDGES]


def chosen_judge(choices: list[str], asked: str | None, remembered: str | None = None) -> str:
    """The judge to show: the one asked for (a link's ``?judge=``) when it is a choice, else the one
    this session had, else the first choice (the first side-by-side judge)."""
    for name in (asked, remembered):
        if name in choices:
            return name
    return choices[0]


def only(shown: dict[str, list[str]], judge: str) -> dict[str, list[str]]:
    """``shown`` narrowed to the picked judge (all of it for ``ALL_JUDGES``)."""
    return shown if judge == ALL_JUDGES else {fam: [j for j in names if j == judge] for fam, names in shown.items()}


# ------------------------------------------------------------------------------ what is shown

# Each judge's ranking is shown one way at a time. The table comes first: a page that draws a
# Plotly chart in a new browser tab first loads and runs plotly.js, which about doubles a new tab
# (bench/bench_browser_elements.py, a one-chart Streamlit app against a one-line one:
# docs/benchmarks-log/2026-12-01-1443-browser-fifth-pass.md), while the table's inline bars cost
# next to nothing. Leaderboards in LLM evaluation (e.g. the
# Chatbot Arena's) also lead with the table and keep the plots a click away. The choice is kept
# in the link (``?show=chart``), so a presenter can share the chart view itself.
SHOW = {"table": "Ranking table", "chart": "Chart (paper Fig. 2-3)", "win": "Win probabilities"}


def chosen_show(asked: str | None, remembered: str | None = None) -> str:
    """What to show: as a link asks (``?show=``), else as this session had it, else the table."""
    for name in (asked, remembered):
        if name in SHOW:
            return name
    return "table"


def strength_bar(result: dict, scale: str) -> dict:
    """The ranking table's inline strength bar, on the scale the person chose for the chart.

    A table bar cannot have a log axis, so the log scale and the β scale both draw β = log e^β
    (a system 200× stronger than another still leaves it a visible bar); the linear scale draws
    e^β from 0, as the paper's figures do. Returns the column's ``name``, one ``values`` entry per
    system (in ``result["systems"]`` order) and the bar's ``low``/``high`` ends."""
    systems = result["systems"]
    if scale == "linear":
        values = [s["strength"] for s in systems]
        known = [v for v in values if v is not None]
        return {"name": "strength e^β", "values": values, "low": 0.0, "high": max(known, default=1.0) or 1.0}
    values = [s["beta"] for s in systems]
    known = [v for v in values if v is not None]  # a fit that diverged reports None, not ±inf
    low, high = min(known, default=0.0), max(known, default=0.0)
    pad = 0.15 * (high - low) if high > low else 0.5  # the weakest system keeps a visible bar
    return {"name": "β = log strength", "values": values, "low": low - pad, "high": high}


RANKS = "ranks (95%)"
CI_TEXT = "95% CI of e^β"
TIERS_HELP = ("Tier: systems whose ranks cannot be told apart share a tier. Ranks: the ranks each system can hold, "
              "for all systems at once with 95% confidence (simultaneous intervals from the bootstrap; "
              "docs/statistics.md, “Ranks with their uncertainty”).")


def ci_text(s: dict, bootstrap: int | None = None) -> str:
    """A strength's CI for a table cell, in words where there is no interval (never a bare None)."""
    if s.get("ci_low") is not None and s.get("ci_high") is not None:
        return numbers.interval(s["ci_low"], s["ci_high"], limit=numbers.STRENGTH_LIMIT,
                                unbounded="the bootstrap cannot bound this strength")
    if s.get("note"):
        return f"unbounded: {s['note']}"
    if bootstrap == 0 or s.get("rank_low") is None:
        return "no interval: bootstrap rounds set to 0"
    return "no interval: the data cannot bound this strength"


def with_ranks(rows: list[dict], result: dict) -> list[dict]:
    """The ranking's rows (:func:`ranking_rows`, one per system in ``result`` order) with the
    tier, the simultaneous rank interval as numbers and in words, and the CI in words; so a CSV
    carries the tiers too."""
    n = len(result["systems"])
    return [{**r, "tier": s.get("tier"), "rank_low": s.get("rank_low"), "rank_high": s.get("rank_high"),
             RANKS: ranks_text(s.get("rank_low"), s.get("rank_high"), n), CI_TEXT: ci_text(s)}
            for r, s in zip(rows, result["systems"], strict=False)]


def ranks_text(low: int | None, high: int | None, n: int) -> str:
    """"2–4", "1", "any of 1–5"; words when the bootstrap was off (no interval)."""
    if low is None or high is None:
        return "no interval: bootstrap rounds set to 0"
    return "any of 1–%d" % n if (low, high) == (1, n) and n > 1 else str(low) if low == high else f"{low}–{high}"


NEIGHBOURS_HELP = ("Neighbours: “separated” when their 95% rank intervals do not overlap; then the fewest verdicts "
                   "whose removal, or whose label change, would put the lower system above the upper one, and in "
                   "brackets the fewest that would make them inseparable (the analytic 95% interval of their "
                   "difference reaching 0) (found by first-order influence, each number confirmed by refitting; "
                   "docs/statistics.md, “Fragility”).")


def neighbour_rows(result: dict) -> list[dict]:
    """Each pair of neighbours in the ranking (``result["adjacent"]``, strongest first): separated or
    not, and how many verdicts would swap them, in words (``lsqa.stats.fragility.words``)."""
    from lsqa.stats.fragility import words

    def sep(a: dict) -> str:
        return "no interval: bootstrap rounds set to 0" if a["separated"] is None else "yes" if a["separated"] else "no"

    from lsqa.dashboard.headline import win_probability_text

    return [{"pair": f"{a['upper']} above {a['lower']}", "separated": sep(a),
             WIN_TEXT: win_probability_text(a.get("win_probability")),
             "verdicts that would swap them": words(a["fragility"])} for a in result.get("adjacent", [])]


WIN_TEXT = "P(upper beats lower), 95% interval"


def with_strength_bar(rows: list[dict], result: dict, scale: str, *,
                      strengths: bool = True) -> tuple[list[dict], list[str], dict]:
    """The ranking's table rows (:func:`ranking_rows`, one per system in ``result`` order) with
    the tiers (``with_ranks``) and the inline bar's column added; the columns the page shows, in
    order: tier, system, the rank interval, and with ``strengths`` the bar, e^β with its bootstrap
    CI (§3.2) and β (the judge and comparison count are in the heading); and the bar (``strength_bar``)."""
    bar = strength_bar(result, scale)
    shown = ["tier", "system", RANKS]
    if strengths:
        shown += [bar["name"], *([] if scale == "linear" else ["strength"]), CI_TEXT, "beta"]
    # On the page every number is text from the one formatter (3 significant digits); the CSV keeps
    # ``with_ranks``' full-precision numbers. The bar keeps a number, rounded the same way.
    bar["format"] = "compact" if scale == "linear" and (bar["high"] or 0) >= 1000 else "%.3g"
    return [{**r, bar["name"]: numbers.rounded(v), "strength": numbers.figure(r.get("strength"), missing="not estimable"),
             "beta": numbers.signed(r.get("beta")) if r.get("beta") is not None else "not estimable"}
            for r, v in zip(with_ranks(rows, result), bar["values"], strict=False)], shown, bar


def win_text_rows(wins: list[dict]) -> list[dict]:
    """The win-probability matrix (:func:`win_rows`) as the page shows it: percentages through
    the one formatter (the CSV keeps the numbers)."""
    return [{k: (v if k == "system" else "—" if v is None else numbers.percent(v)) for k, v in r.items()}
            for r in wins]


def accuracy_with_ranks(table: list[dict], rows: list[dict]) -> list[dict]:
    """A yes/no judge's accuracy table (:func:`accuracy_rows` of ``rows``) with the tier and the
    95% simultaneous rank interval of each system (``rank_intervals.for_accuracies``)."""
    from lsqa.stats.rank_intervals import for_accuracies

    if not rows:
        return table
    ri = for_accuracies([r["correct"] for r in rows], [r["n"] for r in rows])
    return [{**t, "tier": int(ri.tier[k]), RANKS: ranks_text(int(ri.rank_low[k]), int(ri.rank_high[k]), len(rows))}
            for k, t in enumerate(table)]


def corrected_columns(table: list[dict], strengths: bool) -> list[str]:
    """The corrected section's columns: tiers and rank intervals first; strengths/accuracies and
    their CIs only on request (``strengths``)."""
    if not table:
        return []
    first = [c for c in table[0] if c == "tier" or c == "system" or "ranks" in c]
    rest = [c for c in table[0] if c not in first and c != "rank"]
    if not strengths:
        rest = [c for c in rest if c in ("verdicts", "audited")]
    return [*first, *rest]


# ------------------------------------------------------------------------------- style control

STYLE_HELP = ("Style control (LMArena's method): the answers' length difference d = (words of A − words of B) / "
              "(words of A + words of B) enters the Bradley-Terry fit beside the systems, so the strengths below "
              "are what is left once longer answers' own advantage is taken out (docs/statistics.md, “Style control”).")


def _coef_text(c: dict) -> str:
    if c is None or c.get("estimate") is None:
        return "no decisive verdicts (A or B)"
    ci = ("no interval: bootstrap rounds set to 0" if c.get("ci_low") is None
          else f"{numbers.signed(c['ci_low'])} to {numbers.signed(c['ci_high'])}")
    return f"{numbers.signed(c['estimate'])} ({ci})"


def _share_text(s: dict | None) -> str:
    if not s or not s.get("n"):
        return "no decisive verdicts of answers of different length"
    return f"{100 * s['share']:.0f}% ({100 * s['ci_low']:.0f}–{100 * s['ci_high']:.0f}%) of {s['n']}"


def style_rows(style: dict, plain: dict) -> list[dict]:
    """Style-controlled ranking rows (tier, ranks, e^β with its CI) with the plain rank and e^β beside."""
    n = len(style["systems"])
    before = {s["system"]: s for s in plain["systems"]}
    return [{"tier": s.get("tier"), "system": s["system"], RANKS: ranks_text(s.get("rank_low"), s.get("rank_high"), n),
             "e^β, length controlled": numbers.figure(s["strength"], missing="not estimable"), CI_TEXT: ci_text(s),
             "plain rank": before.get(s["system"], {}).get("rank"),
             "plain e^β": numbers.figure(before.get(s["system"], {}).get("strength"), missing="not estimable")}
            for s in style["systems"]]


def length_sentence(c: dict | None, longer: dict | None) -> str:
    """The marginal share (how often the longer answer won) and the conditional coefficient (what
    length does once the systems' strengths are taken into account, style control) in one sentence
    that says why they can point different ways: stronger systems may simply write longer answers."""
    if not longer or not longer.get("n"):
        return "No decisive verdict compared answers of different length: the length preference is not measured."
    share, n = longer["share"], longer["n"]
    side, won = ("longer", share) if share >= 0.5 else ("shorter", 1 - share)
    said = (f"The {side} answer won {numbers.percent(won)} of {numbers.count(n)} decisive verdicts of answers of "
            "different length")
    if c is None or c.get("estimate") is None:
        return said + "; the length coefficient cannot be estimated."
    coef = f"length coefficient {_coef_text(c)}"
    if c.get("ci_low") is None:
        return said + f"; with the systems' strengths taken into account, the {coef} (no interval)."
    if c["ci_low"] > 0:
        effect, sign = "length by itself helps an answer", "above 0"
    elif c["ci_high"] < 0:
        effect, sign = "length by itself counts against an answer", "below 0"
    else:
        effect, sign = "length by itself has no clear effect", "its interval includes 0"
    agrees = (c["ci_low"] > 0 and side == "longer") or (c["ci_high"] < 0 and side == "shorter")
    link = (", and more than the systems' strengths explain: " if agrees else
            ", but that is the systems' doing (the stronger systems write the " + side + " answers): "
            "once each system's strength is taken into account, ")
    return said + link + f"{effect} ({coef}, {sign})."


def style_summary(style: dict) -> str:
    """How much longer answers win by themselves, in plain words (:func:`length_sentence`)."""
    c = style["coefficient"]
    return (f"Length coefficient {_coef_text(c)}. {length_sentence(c, style['longer_wins'])} The coefficient is the "
            "change in log-odds of winning per unit of d among decisive verdicts (ties left out, so they do not "
            "shrink it); an answer twice as long as the other has d = 1/3.")


def length_preference_row(pref: dict) -> dict:
    """One judge's line in the bias panel (``analysis.length_preference``)."""
    audited = pref["audited"]
    return {"judge": pref["judge"], "verdicts": pref["n"],
            "judge's length coefficient (all verdicts)": _coef_text(pref["all_verdicts"]),
            "longer answer wins (all verdicts)": _share_text((pref["all_verdicts"] or {}).get("longer_wins")),
            "the two together (all verdicts)": length_sentence(pref["all_verdicts"],
                                                               (pref["all_verdicts"] or {}).get("longer_wins")),
            "audited verdicts": audited["n"] if audited else 0,
            "judge on audited": _coef_text(audited["judge"]) if audited else "no audits yet",
            "people on audited": _coef_text(audited["people"]) if audited else "no audits yet",
            "longer answer wins: judge / people (audited)":
                f"{_share_text(audited['judge']['longer_wins'])} / {_share_text(audited['people']['longer_wins'])}"
                if audited else "no audits yet"}


# ------------------------------------------------- the answer in one minute: examples, books, agreement
# The Leaderboard's reads beyond the ranking, kept together here: the same functions make the
# Leaderboard's panels and the report's sections, so both say the same.

EXAMPLES_MAX = 5
EXAMPLE_CHARS = 160


def shorten(text: str | None, limit: int = EXAMPLE_CHARS) -> str:
    """An answer or question cut on a word boundary to about ``limit`` characters, with "…"."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text or "(no answer stored)"
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def top_pair(figures: dict) -> tuple[str, str] | None:
    """The overall leader and the next system of the headline's figures (``headline.figures``)."""
    pair = figures.get("leader_vs_next")
    if pair:
        return pair["upper"], pair["lower"]
    systems = figures.get("systems") or []
    return (systems[0]["system"], systems[1]["system"]) if len(systems) > 1 else None


def _said(label: str | None, a: str, b: str) -> str:
    return {"A": f"{a}'s answer is better", "B": f"{b}'s answer is better", "tie": "the two are as good",
            "none": "neither answer is right"}.get(label or "", "no label")


def _candidate_pairs(figures: dict) -> list[tuple[str, str]]:
    """The leader and the next system first, then the other pairs among the top three, upper first."""
    first = top_pair(figures)
    if first is None:
        return []
    top = [s["system"] for s in figures["systems"][:3]]
    rest = [(top[i], top[j]) for i in range(len(top)) for j in range(i + 1, len(top)) if (top[i], top[j]) != first]
    return [first, *rest]


def examples(ws: Path, judge: str, figures: dict, *, limit: int = EXAMPLES_MAX) -> list[dict]:
    """The questions on which the top systems' answers were judged most differently: first where
    people overrode the judge, then (side by side) where the judge contradicted itself across the
    two orders, then where the lower system of the overall order won, then where the upper one won
    (ties and "neither" are not differences); a yes/no judge's, where one answer was accepted and the
    other not (overrides first). The leader against the next system first; when that pair gives fewer
    than ``limit``, the other pairs of the top three. One per question and pair; each with the two
    systems, the question, both answers shortened, the verdict in words and the Audit page's link."""
    from lsqa import store
    from lsqa.store import leaderboard as lb_store

    picked: list[tuple[float, int, str, str, Callable[[], dict]]] = []
    with store.connect(ws) as con:
        read = {pair: lb_store.pair_verdicts(con, judge, *pair) for pair in _candidate_pairs(figures)}
    for order, ((upper, lower), rows) in enumerate(read.items()):
        if len(picked) >= limit:
            break
        for rank, example in (_binary_examples(rows, judge, upper, lower) if figures.get("family") == BINARY
                              else _pairwise_examples(rows, judge, upper, lower)):
            picked.append((rank, order, upper, lower, example))
    picked.sort(key=lambda x: (-x[0], x[1]))  # stable: question order within a kind
    # Each example is written out (answers shortened, link) only when it is shown: of a million
    # verdicts, thousands of questions qualify and `limit` are shown.
    return [{"upper_system": upper, "lower_system": lower, **example()}
            for _, _, upper, lower, example in picked[:limit]]


def _binary_examples(rows: list[dict], judge: str, upper: str, lower: str):
    for r in rows:
        if not (r["upper_accepted"] != r["lower_accepted"] or r["overridden"]):
            continue
        verdict = (f"accepted {upper}'s answer, not {lower}'s" if r["upper_accepted"] and not r["lower_accepted"]
                   else f"accepted {lower}'s answer, not {upper}'s" if r["lower_accepted"] and not r["upper_accepted"]
                   else "accepted both" if r["upper_accepted"] else "accepted neither")
        people = ""
        if r["overridden"]:
            people = "people: accepted " + (" and ".join(s for s, ok in ((upper, r["upper_by_people"]),
                                                                         (lower, r["lower_by_people"])) if ok)
                                            or "neither")
        yield (3 if r["overridden"] else 1), partial(_binary_example, r, judge, verdict, people)


def _binary_example(r: dict, judge: str, verdict: str, people: str) -> dict:
    return {"question": r["question"], "book": r["book"], "upper": shorten(r["answer_upper"]),
            "lower": shorten(r["answer_lower"]), "verdict": f"{judge}: {verdict}", "people": people,
            "why": "people overrode the judge" if r["overridden"] else "one answer accepted, the other not",
            "judgment_id": r["id"], "link": audit_link(r["id"])}


def _pairwise_examples(rows: list[dict], judge: str, upper: str, lower: str):
    by_question: dict[str, list[dict]] = {}
    for r in rows:
        by_question.setdefault(r["question_id"], []).append(r)
    for verdicts in by_question.values():
        def winner(r, label):
            return {"A": r["system_a"], "B": r["system_b"]}.get(label or "")
        overridden = [r for r in verdicts if r["human_label"] is not None and r["human_label"] != r["label"]]
        winners = {winner(r, r["label"]) for r in verdicts}
        first = overridden[0] if overridden else verdicts[0]
        if overridden:
            rank, why = 3, "people overrode the judge"
        elif len(verdicts) > 1 and len(winners) > 1:
            rank, why = 2, "the judge contradicted itself across the two orders"
        elif winners == {lower}:
            rank, why = 1, f"{lower} won, against the overall order"
        elif winners == {upper}:
            rank, why = 0.5, f"{upper} won"
        else:
            continue
        yield rank, partial(_pairwise_example, verdicts, first, bool(overridden), judge, upper, lower, why)


def _pairwise_example(verdicts: list[dict], first: dict, overridden: bool, judge: str, upper: str, lower: str,
                      why: str) -> dict:
    a, b = first["system_a"], first["system_b"]
    answers = {a: first["answer_a"], b: first["answer_b"]}
    said = "; ".join(f"{'shown ' + r['shown_order'] + ': ' if len(verdicts) > 1 else ''}"
                     f"{_said(r['label'], a, b)}" for r in verdicts)
    people = f"people: {_said(first['human_label'], a, b)}" if overridden else ""
    return {"question": first["question"], "book": first["book"], "upper": shorten(answers[upper]),
            "lower": shorten(answers[lower]), "verdict": f"{judge}: {said}", "people": people, "why": why,
            "judgment_id": first["id"], "link": audit_link(first["id"])}


EXAMPLES_HELP = ("Questions on which the top systems' answers were judged most differently: first where people "
                 "overrode the judge, then where the judge contradicted itself across the two orders, then where the "
                 "lower system of the overall order won (a yes/no judge: one answer accepted, the other not); the "
                 "leader against the next system first, then the other pairs of the top three. Each opens its "
                 "verdict on the Audit page.")


def example_rows(found: list[dict]) -> list[dict]:
    """:func:`examples` as table rows, each answer after its system's name."""
    return [{"question": e["question"], "book": e["book"],
             "higher system's answer": f"{e['upper_system']}: {e['upper']}",
             "lower system's answer": f"{e['lower_system']}: {e['lower']}",
             "verdict": e["verdict"] + (f" ({e['people']})" if e["people"] else ""),
             "why shown": e["why"], "on Audit": e["link"]} for e in found]


def example_markdown(found: list[dict]) -> str:
    """:func:`examples` as Markdown (the Leaderboard), each question linked to its item on Audit."""
    lines = []
    for e in found:
        lines.append(f"- [{md(shorten(e['question'], 200))}]({e['link']}) ({md(e['book'])}) — {md(e['why'])}  \n"
                     f"  {md(e['upper_system'])}: “{md(e['upper'])}”  \n  {md(e['lower_system'])}: “{md(e['lower'])}”  \n"
                     f"  {md(e['verdict'])}" + (f"; {md(e['people'])}" if e["people"] else ""))
    return "\n".join(lines)


def book_consistency(ws: Path, judge: str, figures: dict) -> dict | None:
    """Per book, its order beside the overall one, whether the overall top pair holds there, and how
    often it would hold on a new book (``lsqa.stats.book_consistency``); None with fewer than two
    systems. ``rows`` (one per book), ``statement`` (the sentence), ``figures`` (JSON-ready)."""
    import numpy as np

    from lsqa import store
    from lsqa.stats import book_consistency as bc
    from lsqa.store import leaderboard as lb_store

    pair = top_pair(figures)
    if pair is None:
        return None
    systems = [s["system"] for s in figures["systems"]]
    index = {s: k for k, s in enumerate(systems)}
    upper, lower = index[pair[0]], index[pair[1]]
    with store.connect(ws) as con:
        books = lb_store.books(con, judge)
        book_index = {b["document_id"]: k for k, b in enumerate(books)}
        binary = figures.get("family") == BINARY
        counts = lb_store.binary_by_book(con, judge) if binary else lb_store.pairwise_by_book(con, judge)
    if not books:
        return None
    n_books, n_sys = len(books), len(systems)
    if binary:
        accepted, judged = np.zeros((n_books, n_sys)), np.zeros((n_books, n_sys))
        for r in counts:
            if r["system"] in index:
                accepted[book_index[r["document_id"]], index[r["system"]]] += r["accepted"]
                judged[book_index[r["document_id"]], index[r["system"]]] += r["n"]
        result = bc.accuracy(accepted, judged, upper, lower)
        unit = "answers judged (the fewer of the two)"
    else:
        wins = np.zeros((n_books, n_sys, n_sys))
        for r in counts:
            a, b = index.get(r["system_a"]), index.get(r["system_b"])
            if a is None or b is None or a == b:
                continue
            k = book_index[r["document_id"]]
            share = {"A": (1.0, 0.0), "B": (0.0, 1.0), "tie": (0.5, 0.5)}.get(r["label"], (0.0, 0.0))
            wins[k, a, b] += share[0] * r["n"]
            wins[k, b, a] += share[1] * r["n"]
        result = bc.pairwise(wins, upper, lower)
        unit = "verdicts on the pair"
    overall = " > ".join(systems)
    rows = []
    for k, b in enumerate(books):
        order = " > ".join(systems[s] for s in result.order[k]) or "no verdicts"
        if not result.enough[k]:
            holds = f"too few verdicts ({numbers.count(int(result.pair_n[k]))}; {bc.MIN_VERDICTS} needed)"
        else:
            holds = "yes" if result.holds[k] else ("even" if result.upper_score[k] == result.lower_score[k] else "no")
        rows.append({"book": b["title"], "order in this book": order, "same as overall": "yes" if order == overall
                     else "no", f"{pair[0]} above {pair[1]}": holds, unit: int(result.pair_n[k])})
    statement = consistency_statement(pair, result, n_books)
    return {"rows": rows, "overall": overall, "statement": statement, "pair": pair,
            "figures": {"books": n_books, "books_with_enough": result.n_books, "books_holding": result.n_hold,
                        "predictive": result.predictive, "ci_low": result.ci_low, "ci_high": result.ci_high,
                        "leave_one_out": result.loo, "min_verdicts": bc.MIN_VERDICTS}}


def consistency_statement(pair: tuple[str, str], result, n_books: int) -> str:
    """The per-book sentence: how many books agree with the overall top pair, and the prediction."""
    from lsqa.stats import book_consistency as bc

    upper, lower = pair
    few = n_books - result.n_books
    counted = result.enough
    even = int((counted & (result.upper_score == result.lower_score)).sum())
    below = result.n_books - result.n_hold - even
    text = (f"{upper} is above {lower} in {numbers.count(result.n_hold)} of the {numbers.count(result.n_books)} "
            f"book{'' if result.n_books == 1 else 's'} with at least {bc.MIN_VERDICTS} verdicts on the two "
            f"(even in {numbers.count(even)}, below in {numbers.count(below)})")
    text += (f" ({numbers.count(few)} more book{'' if few == 1 else 's'} with too few verdicts not counted)." if few
             else ".")
    if result.predictive is None:
        return text + (f" Too few books to say how often the order would hold on a new book (at least "
                       f"{bc.MIN_BOOKS} with enough verdicts are needed).")
    return text + (f" On a new book like these, {upper} would come out above {lower} with probability "
                   f"{numbers.percent(result.predictive)} (share of such books: 95% interval "
                   f"{numbers.interval(result.ci_low, result.ci_high, scale=100, suffix='%')}; beta-binomial, "
                   f"Jeffreys prior); an order learnt from the other books held on "
                   f"{numbers.percent(result.loo)} of the books each left out in turn.")


CONSISTENCY_HELP = ("Each book's order: the systems by their share of that book's verdicts won (a tie half a win; "
                    "yes/no judges: accuracy). A new book's chance: the beta-binomial predictive rate over the books "
                    "with enough verdicts, and leave one book out (docs/statistics.md, “Does the order hold book by "
                    "book?”).")


def agreement_basis(ws: Path, judge: str, cert: dict | None = None) -> dict:
    """The one agreement figure the report and the Leaderboard lead with: the judge's agreement with
    people on its random audits (the certification's basis, ``certification.certify``, or ``cert``: its
    result, or the headline's ``certification`` figures, which hold its agreement), and the other
    agreement figures labelled with what they count, with the sentence on why they differ.
    ``rows`` (figure, value, what it counts), ``text`` (the sentence a page shows)."""
    from lsqa.errors import NoVerdicts
    from lsqa.figures import analysis, certification

    cert = cert or certification.certify(ws, judge)
    a = cert["agreement"]
    n = cert["n_audits"]
    head = (f"{numbers.percent(a['estimate'])} (95% interval "
            f"{numbers.interval(a['ci_low'], a['ci_high'], scale=100, suffix='%')}) on "
            f"{numbers.count(n)} random audit{'' if n == 1 else 's'}" if n and a.get("estimate") is not None
            else "no random audits yet")
    rows = [{"figure": "agreement with people (the headline figure)", "value": head,
             "what it counts": "random audits only: verdicts drawn at random (random or active queue), the basis of "
                               "the certification"}]
    try:
        every = analysis.agreement(ws, judge, f"human@{judge}", bootstrap=0)
        value = f"{numbers.percent(every['agreement'])} on {numbers.count(every['n'])} verdicts"
    except NoVerdicts:
        every, value = None, "no reviewed verdicts"
    rows.append({"figure": "agreement on every reviewed verdict (Agreement page)", "value": value,
                 "what it counts": "all reviewed verdicts, including the ones the priority queue chose because the "
                                   "judge looked wrong"})
    if every is None:
        other = "No verdict of this judge was reviewed."
    elif every["n"] == n:
        other = "Every reviewed verdict of this judge is a random audit, so there is no second figure."
    else:
        other = (f"On every reviewed verdict it is {value} (Agreement page): those include the verdicts the priority "
                 "queue chose because the judge looked wrong, so they are not a fair sample of the study; only random "
                 "audits estimate how often the judge agrees with people on all its verdicts.")
    text = f"Agreement with people: {head} (the certification's basis). {other}"
    return {"rows": rows, "text": text, "headline": {"estimate": a.get("estimate"), "ci_low": a.get("ci_low"),
                                                      "ci_high": a.get("ci_high"), "n_audits": n},
            "all_reviewed": None if every is None else {"estimate": every["agreement"], "n": every["n"]}}


def one_minute(ws: Path, said: dict[str, dict]) -> dict[str, dict]:
    """Judge → what the Leaderboard shows under the headline (``headline.for_board``'s ``said``): the
    agreement figure with its basis (:func:`agreement_basis`), the examples (:func:`examples`) and the
    per-book consistency (:func:`book_consistency`), the same as the report's."""
    return {judge: {"agreement": agreement_basis(ws, judge, s["figures"]["certification"]),
                    "examples": examples(ws, judge, s["figures"]),
                    "books": book_consistency(ws, judge, s["figures"])} for judge, s in said.items()}


# ------------------------------------------------------------------------- what the screen reads

def leaderboard_judges(workspace: Path, judges: list[str] | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """The judges the Leaderboard shows, by family (``judges``: only these), and LLMBar's judges it
    leaves out unless named: they rank LLMBar's two output slots, not QA systems."""
    families = judges_by_family(workspace)
    hidden = [j for names in families.values() for j in names
              if llmbar.is_llmbar_judge(j) and not (judges and j in judges)]
    shown = {fam: [j for j in names if (not judges or j in judges) and j not in hidden]
             for fam, names in families.items()}
    return shown, hidden


@kept_while_unchanged(maxsize=64)
def ranking(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
            bootstrap: int = 1000, seed: int = 0, by_question: bool = False) -> dict:
    """One judge's ranking (``analysis.ranking``: strengths, bootstrap CIs, rank intervals, tiers), kept
    while the workspace is unchanged and per judge, so that "All judges" and the one-judge view, and
    the ranking with the switches off that "What the switches changed" compares with
    (:func:`baseline`), are each fitted once: with the rank intervals, "All
    judges" fitted every judge twice per render when a switch was on. Raises ``NoVerdicts``."""
    return analysis.ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                            bootstrap=bootstrap, seed=seed, by_question=by_question)


@kept_while_unchanged()
def leaderboard(workspace: Path, *, judges: list[str] | None = None, use_overrides: bool = False,
                exclude_flagged: bool = False, bootstrap: int = 1000, seed: int = 0,
                by_question: bool = False) -> dict:
    """Bradley-Terry rankings per side-by-side judge and accuracy per yes/no judge (Fig. 2-3, 6-7; Table 1).

    A judge whose verdicts cannot be ranked (none decided, everything 'none') is reported with its
    error instead of breaking the page. LLMBar's judges are left out unless asked for by name
    (listed in ``agreement_only_judges``): they rank LLMBar's two output slots, not QA systems.
    """
    shown, hidden = leaderboard_judges(workspace, judges)
    rankings, accuracy = [], []
    for judge in shown[vocabulary.PAIRWISE]:
        try:
            result = ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                             bootstrap=bootstrap, seed=seed, by_question=by_question)
            rankings.append({"judge": judge, "result": result, "error": ""})
        except NoVerdicts as exc:
            rankings.append({"judge": judge, "result": None, "error": str(exc)})
    for judge in shown["binary"]:
        rows = analysis.accuracy(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
        accuracy.append({"judge": judge, "rows": rows})
    with store.connect(workspace) as con:
        n_flagged = len(verdicts_store.flagged_question_ids(con))
    return {"rankings": rankings, "accuracy": accuracy, "use_overrides": use_overrides,
            "exclude_flagged": exclude_flagged, "n_flagged_questions": n_flagged, "bootstrap": bootstrap,
            "agreement_only_judges": hidden}


def ranking_rows(result: dict) -> list[dict]:
    """A ranking as table rows (CSV), with the judge and the comparison count on every row."""
    return [{"judge": result.get("judge", ""), "rank": s["rank"], "system": s["system"],
             "strength": s["strength"], "ci_low": s["ci_low"], "ci_high": s["ci_high"], "beta": s["beta"],
             "n_comparisons": result["n_comparisons"]} for s in result["systems"]]


def win_rows(result: dict) -> list[dict]:
    names = [s["system"] for s in result["systems"]]
    wp = result["win_probability"]
    return [{"system": a, **{b: (None if a == b else round(wp[a][b], 4)) for b in names}} for a in names]


def accuracy_rows(judge: str, rows: list[dict]) -> list[dict]:
    """Table 1 layout: context, system, accuracy ± half-width (percent)."""
    return [{"judge": judge, "context": r["context"], "system": r["system"], "n": r["n"], "correct": r["correct"],
             "accuracy %": round(100 * r["accuracy"], 1), "± (95% CI)": round(100 * r["half_width"], 1),
             "ci_low %": round(100 * r["ci_low"], 1), "ci_high %": round(100 * r["ci_high"], 1)} for r in rows]


@kept_while_unchanged()
def style_controlled(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
                     bootstrap: int = 1000, seed: int = 0, by_question: bool = False) -> dict:
    """The Leaderboard's style-control switch for one judge: the style-controlled ranking (answer
    length as a covariate; ``analysis.style_ranking``) with the plain one beside it, as table rows
    and one sentence on the length coefficient (:func:`style_rows` / :func:`style_summary`).
    ``{"result", "rows", "summary", "error"}``; ``error`` says why there is nothing to show."""
    try:
        plain = analysis.ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                                 bootstrap=bootstrap, seed=seed, by_question=by_question)
        style = analysis.style_ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                                       bootstrap=bootstrap, seed=seed, by_question=by_question)
    except (NoVerdicts, ValueError) as exc:
        return {"result": None, "rows": [], "summary": "", "error": str(exc)}
    return {"result": style, "rows": style_rows(style, plain), "summary": style_summary(style), "error": ""}
