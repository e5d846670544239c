"""The Leaderboard as stakeholders take it away: which view it is, what its switches changed, and
exported files that say so.

A ranking shown to a stakeholder depends on switches (human overrides, questions with a flagged
reference left out, bootstrap rounds). A file downloaded from it must carry that view, in its name
and in its content, with the date, or two downloads of "the ranking" cannot be told apart later.
And a switch is only understood when its effect is shown: which systems changed rank, and how the
confidence intervals moved (paper §3.2: the bootstrap CI is what says whether a gap is real).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from lsqa.errors import NoVerdicts
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


def file_name(what: str, judge: str, view: View, when: datetime, ext: str) -> str:
    """``ranking_<judge>_<view>_<date>.<ext>``: the judge, the switches and the date, safe on every OS."""
    safe_judge = _UNSAFE.sub("-", judge).strip("-") or "judge"
    return f"{what}_{safe_judge}_{view.slug()}_{when.strftime('%Y-%m-%d')}.{ext}"


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
    one the page showed with the switches off, kept (``page_data.ranking``), when there was one."""
    from lsqa.dashboard import page_data

    try:
        # The arguments as page_data.leaderboard gives them, every one named: the kept result's key.
        return page_data.ranking(ws, judge, use_overrides=False, exclude_flagged=False, bootstrap=view.bootstrap,
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

def audit_link(judgment_id: str) -> str:
    """The Audit page opened on one verdict (``audit_view.opening_state``'s ``item``), relative to the
    app's address so that it holds under a base path too."""
    return f"audit?item={quote(judgment_id, safe='')}"


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


# ------------------------------------------------------------------------------ the stakeholder report

REPORT_HELP = ("One self-contained page on this judge that opens offline (`lsqa report --judge J --bootstrap N`, with "
               "the bootstrap rounds chosen here): tiers and ranking, whether the judge can replace the annotators, "
               "the bias panel, what each switch changes and where the data came from. It shows the ranking with "
               "every switch off and says what each switch changes.")


def report_file_name(judge: str, when: datetime) -> str:
    """``report_<judge>_<date>.html``, safe on every OS."""
    safe_judge = _UNSAFE.sub("-", judge).strip("-") or "judge"
    return f"report_{safe_judge}_{when.strftime('%Y-%m-%d')}.html"


def report_html(ws: Path, judge: str, *, bootstrap: int = 1000, seed: int = 0, when: datetime | None = None) -> str:
    """The Leaderboard's "Report (HTML)" download: ``lsqa report``'s page (``lsqa.dashboard.report.build``)."""
    from lsqa.dashboard import report

    return report.build(ws, judge, bootstrap=bootstrap, seed=seed, when=when)


# ------------------------------------------------------------------------------------ judge picker

ALL_JUDGES = "all"


def judge_choices(shown: dict[str, list[str]]) -> list[str]:
    """The Leaderboard's judge picker: side-by-side judges first (the paper's rankings, §3.2), then
    yes/no judges (Table 1's accuracy), then every judge at once.

    One judge at a time is the default because a stakeholder reads one ranking at a time, and
    because every judge shown costs a Bradley-Terry fit with its bootstrap and, in the chart view, a
    chart the browser must draw (with all nine of the demo's charts a switch took ~2 s)."""
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
# Plotly chart in a new browser tab first loads and runs plotly.js, which measured +0.9-1.0 s on
# this machine's kind (bench/bench_browser.py, a one-chart Streamlit app against a one-line one),
# while the table's inline bars cost next to nothing. Leaderboards in LLM evaluation (e.g. the
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
    """The ranking's rows (``page_data.ranking_rows``, one per system in ``result`` order) with the
    tier, the simultaneous rank interval as numbers and in words, and the CI in words; so a CSV
    carries the tiers too."""
    n = len(result["systems"])
    return [{**r, "tier": s.get("tier"), "rank_low": s.get("rank_low"), "rank_high": s.get("rank_high"),
             RANKS: ranks_text(s.get("rank_low"), s.get("rank_high"), n), CI_TEXT: ci_text(s)}
            for r, s in zip(rows, result["systems"])]


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
    """The ranking's table rows (``page_data.ranking_rows``, one per system in ``result`` order) with
    the tiers (``with_ranks``) and the inline bar's column added; the columns the page shows, in
    order: tier, system, the rank interval, and with ``strengths`` the bar, e^β with its bootstrap
    CI (§3.2) and β (the judge and comparison count are in the heading); and the bar (``strength_bar``)."""
    bar = strength_bar(result, scale)
    shown = ["tier", "system", RANKS]
    if strengths:
        shown += [bar["name"], *([] if scale == "linear" else ["strength"]), CI_TEXT, "beta"]
    return [{**r, bar["name"]: v} for r, v in zip(with_ranks(rows, result), bar["values"])], shown, bar


def accuracy_with_ranks(table: list[dict], rows: list[dict]) -> list[dict]:
    """A yes/no judge's accuracy table (``page_data.accuracy_rows`` of ``rows``) with the tier and the
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
          else f"{c['ci_low']:+.2f} to {c['ci_high']:+.2f}")
    return f"{c['estimate']:+.2f} ({ci})"


def _share_text(s: dict | None) -> str:
    if not s or not s.get("n"):
        return "no decisive verdicts of answers of different length"
    return f"{100 * s['share']:.0f}% ({100 * s['ci_low']:.0f}–{100 * s['ci_high']:.0f}%) of {s['n']}"


def style_rows(style: dict, plain: dict) -> list[dict]:
    """Style-controlled ranking rows (tier, ranks, e^β with its CI) with the plain rank and e^β beside."""
    n = len(style["systems"])
    before = {s["system"]: s for s in plain["systems"]}
    return [{"tier": s.get("tier"), "system": s["system"], RANKS: ranks_text(s.get("rank_low"), s.get("rank_high"), n),
             "e^β, length controlled": s["strength"], CI_TEXT: ci_text(s),
             "plain rank": before.get(s["system"], {}).get("rank"), "plain e^β": before.get(s["system"], {}).get("strength")}
            for s in style["systems"]]


def style_summary(style: dict) -> str:
    """One sentence on how much longer answers win by themselves, in plain words."""
    c = style["coefficient"]
    if c["ci_low"] is None:
        direction = "no interval (bootstrap rounds set to 0)"
    elif c["ci_low"] > 0:
        direction = "longer answers win by themselves"
    elif c["ci_high"] < 0:
        direction = "shorter answers win by themselves"
    else:
        direction = "no clear length preference (the interval includes 0)"
    return (f"Length coefficient {_coef_text(c)}: {direction}. It is the change in log-odds of winning per unit of "
            f"d among decisive verdicts (ties left out, so they do not shrink it); an answer twice as long as the "
            f"other has d = 1/3. Longer answer won "
            f"{_share_text(style['longer_wins'])} decisive verdicts with answers of different length.")


def length_preference_row(pref: dict) -> dict:
    """One judge's line in the bias panel (``analysis.length_preference``)."""
    audited = pref["audited"]
    return {"judge": pref["judge"], "verdicts": pref["n"],
            "judge's length coefficient (all verdicts)": _coef_text(pref["all_verdicts"]),
            "longer answer wins (all verdicts)": _share_text((pref["all_verdicts"] or {}).get("longer_wins")),
            "audited verdicts": audited["n"] if audited else 0,
            "judge on audited": _coef_text(audited["judge"]) if audited else "no audits yet",
            "people on audited": _coef_text(audited["people"]) if audited else "no audits yet",
            "longer answer wins: judge / people (audited)":
                f"{_share_text(audited['judge']['longer_wins'])} / {_share_text(audited['people']['longer_wins'])}"
                if audited else "no audits yet"}
