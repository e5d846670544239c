"""The report a stakeholder can be handed: one self-contained HTML page for one judge.

It composes what the Leaderboard and the Agreement page already compute, with nothing recomputed
differently: the tiers and the ranking (paper §3.2 for side-by-side judges, Table 1's accuracy for
yes/no judges), the ranking corrected by random audits when there are some, the judge's
certification (``lsqa.stats.certification``) and how many audits it rests on, the bias panel as the
Agreement page computes it (position bias; the judge's length preference beside the people's, from
audits; self-preference, §5.1), what each switch changes (overrides, flagged references, style
control, the correction by audits: ``leaderboard_view.switch_changes`` and the sections' own
figures), and where the data came from (the runs' study configs and dates, the lsqa version).

The page opens offline: no script, no stylesheet or font fetched, no plotly. Bars are HTML
``<div>``s sized in percent, because a bar chart of a handful of systems needs no plotting library
and inlining plotly.js would make a 3.5 MB file for it. Every value is escaped
(``lsqa.text.highlight.escape``): system and judge names are data. Every number is labelled in
words; a missing interval says why it is missing (never ``None``); no question is named by its
hash; each Greek letter used has a line in the glossary. Its links to the Audit page are absolute (the page is
read away from the dashboard): resolved against the address it is built with (``links.absolute``).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from importlib import metadata
from pathlib import Path

from lsqa import store
from lsqa.dashboard import agreement_view, corrected_view, headline, links
from lsqa.dashboard import leaderboard_view as lv
from lsqa.errors import NoVerdicts
from lsqa.figures import analysis, certification, corrected
from lsqa.stats.rank_intervals import for_accuracies
from lsqa.store import results as results_store
from lsqa.store import runs as runs_store
from lsqa.text import numbers
from lsqa.text.highlight import escape
from lsqa.vocabulary import BINARY, CORRECTED, PAIRWISE

# The Greek letters the report may use, each with the line that says what it means.
GLOSSARY = {
    "β": "beta, a system's log strength in the Bradley-Terry model (paper §3.2); strengths are scaled so that "
         "their geometric mean is 1 (mean β = 0).",
    "e^β": "a system's strength: against a system of strength 1 it wins with probability e^β / (e^β + 1).",
    "κ": "kappa, Cohen's agreement beyond chance: 1 = always the same label, 0 = no more often than chance.",
    "ε": "epsilon, the alternative annotator test's allowance: the judge may be this much less often right than "
         "a person and still count as good as one (0.1 crowd workers, 0.15 skilled annotators, 0.2 experts).",
}

_HASH = re.compile(r"^[0-9a-f]{16,}$")

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;
color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d6d6d6;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{background:#e8eef7;width:14rem;height:.9rem}.bar>div{background:#3b6cb4;height:100%}
.verdict{font-size:1.15rem;font-weight:600;padding:.6rem .8rem;border-left:.35rem solid #3b6cb4;background:#f5f8fc}
.note{color:#555;font-size:.9rem}
dt{font-weight:600}dd{margin:0 0 .5rem 1.2rem}
pre{background:#f7f7f7;padding:.6rem;overflow-x:auto;font-size:.85rem}
"""


# ------------------------------------------------------------------------------ small HTML pieces

def _cell(value) -> str:
    """A table cell's text: a dash for "nothing here" (the column header says what it would be)."""
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return numbers.figure(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return numbers.count(value)
    return str(value)


def table(rows: list[dict], columns: list[str] | None = None, *, bars: dict[str, float] | None = None) -> str:
    """Rows as an escaped HTML table; ``bars``: a column name → the rows' bar widths in percent."""
    if not rows:
        return '<p class="note">Nothing to show.</p>'
    columns = columns or list(rows[0])
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = []
    for k, r in enumerate(rows):
        cells = []
        for c in columns:
            v = r.get(c)
            num = ' class="num"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            cells.append(f"<td{num}>{escape(_cell(v))}</td>")
        if bars:
            for name, widths in bars.items():
                cells.append(f'<td><div class="bar" title="{escape(name)}"><div style="width:{widths[k]:.1f}%">'
                             "</div></div></td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    head += "".join(f"<th>{escape(name)}</th>" for name in (bars or {}))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _p(text: str, css: str = "") -> str:
    return f'<p{f" class={css!r}" if css else ""}>{escape(text)}</p>'


def _items(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>" if lines else ""


def _pct(x) -> str:
    return numbers.percent(x, missing="not measured")


# ------------------------------------------------------------------------------ the sections

def _ranking_pairwise(ws: Path, judge: str, bootstrap: int, seed: int, groups: list[dict]) -> tuple[str, dict]:
    result = analysis.ranking(ws, judge, bootstrap=bootstrap, seed=seed, groups=groups)
    n = len(result["systems"])
    bar = lv.strength_bar(result, "log")
    span = (bar["high"] - bar["low"]) or 1.0
    rows = [{"tier": s.get("tier"), "system": s["system"],
             "ranks it can hold (95%)": lv.ranks_text(s.get("rank_low"), s.get("rank_high"), n),
             "strength e^β": s["strength"] if s["strength"] is not None else "not estimable",
             "95% interval of the strength": lv.ci_text(s, bootstrap),
             "β (log strength)": s["beta"] if s["beta"] is not None else "not estimable"}
            for s in result["systems"]]
    widths = [0.0 if v is None else max(0.0, min(100.0, 100 * (v - bar["low"]) / span)) for v in bar["values"]]
    html = (table(rows, bars={"strength (bar: β)": widths})
            + _p(f"From {result['n_comparisons']:,} side-by-side verdicts of {judge} (the judge's own labels, all "
                 f"questions; a tie counts half a win; {result['n_excluded']:,} left out where both answers were "
                 f"wrong). Strength intervals: percentile bootstrap, {bootstrap:,} rounds." if bootstrap else
                 "No bootstrap: no intervals.", "note")
            + _p(lv.TIERS_HELP, "note"))
    if result.get("adjacent"):
        html += "<h3>Neighbours: how many verdicts hold each place</h3>" + table(lv.neighbour_rows(result)) \
            + _p(lv.NEIGHBOURS_HELP, "note")
    return html, result


def _ranking_binary(ws: Path, judge: str) -> tuple[str, list[dict]]:
    acc = analysis.accuracy(ws, judge)
    if not acc:
        raise NoVerdicts(f"judge {judge!r} has no decided yes/no verdicts in this workspace")
    ri = for_accuracies([r["correct"] for r in acc], [r["n"] for r in acc])
    rows = [{"tier": int(ri.tier[k]), "system": r["system"],
             "ranks it can hold (95%)": lv.ranks_text(int(ri.rank_low[k]), int(ri.rank_high[k]), len(acc)),
             "accuracy": _pct(r["accuracy"]), "95% interval": f"{_pct(r['ci_low'])} – {_pct(r['ci_high'])}",
             "answers judged": r["n"]} for k, r in enumerate(acc)]
    html = (table(rows, bars={"accuracy (bar)": [100 * r["accuracy"] for r in acc]})
            + _p(f"Accuracy: the share of a system's answers {judge} accepts (paper Table 1).", "note")
            + _p("Tier: systems whose ranks cannot be told apart share a tier. Ranks: the ranks each system can "
                 "hold, for all systems at once with 95% confidence (simultaneous intervals on the accuracies).",
                 "note"))
    return html, acc


def _corrected(ws: Path, judge: str, binary: bool, queue: str | None) -> tuple[str, dict | None]:
    """The corrected section, and the corrected result (None when there is none) for the switches."""
    try:
        result = (corrected.corrected_accuracy(ws, judge, queue=queue) if binary
                  else corrected.corrected_ranking(ws, judge, queue=queue))
    except (ValueError, NoVerdicts) as exc:
        return _p(f"No corrected ranking: {exc}", "note"), None
    if not result["n_usable_audits"]:
        return _p("No corrected ranking: no random or active audits of this judge yet.", "note"), result
    section = corrected_view.accuracy_section(result) if binary else corrected_view.ranking_section(result)
    lines = [f"Rests on {result['n_usable_audits']} audits from the {result['design']} queue; "
             f"{result['n_reviews_not_used']} other reviews not used (priority queue or another design)."]
    if not binary:
        lines.append(corrected_view.JUDGE_ONLY_SAME_AS_TABLE)
    out = table(section["table"]) + "".join(_p(x, "note") for x in lines)
    if section["adjacent"]:
        out += "<h3>Neighbours in the corrected order</h3>" + table(section["adjacent"])
    return out + _items([f"warning: {w}" for w in result["warnings"]]), result


def _certification(ws: Path, judge: str, queue: str | None, certified: dict) -> tuple[str, dict]:
    panel = agreement_view.panel(ws, judge, queue=queue, certified=certified)
    t = panel["thresholds"]
    html = [f'<p class="verdict" id="verdict">{escape(panel["headline"])} (verdict: {escape(panel["verdict"])})</p>',
            _p(f"Rests on {panel['n_audits']} audits" + (f" from the {panel['design']} queue" if panel["design"]
                                                          else "") + f"; thresholds: the lower end of the "
               f"{t['level']:.0%} interval of the agreement must reach {t['min_agreement']:.0%}, of each gated "
               f"recall {t['min_recall']:.0%}. Bounds: {panel['rule']}."),
            table([{k: ("no audits of this yet" if str(v).startswith("— –") else v) for k, v in row.items()}
                   for row in panel["rows"]])]
    if panel["ceiling_rows"]:
        html += ["<h3>Against the people's own agreement</h3>", table(panel["ceiling_rows"])]
    if panel["alt_rows"]:
        alt = panel["alt_test"]
        html += [f"<h3>Alternative annotator test (ε = {alt['epsilon']})</h3>", table(panel["alt_rows"]),
                 _p(f"The judge wins against {alt['winning_rate']:.0%} of {alt['n_annotators']} annotators: "
                    f"{'passed' if alt['passed'] else 'failed'} (50% passes).", "note")]
    html += [_items(panel["reasons"]), _items([f"note: {n}" for n in panel["notes"]])]
    return "".join(html), panel


def _bias(ws: Path, judge: str, binary: bool) -> str:
    if binary:
        return _p("Position bias concerns side-by-side judges (which answer was shown first); a yes/no judge sees "
                  "one answer at a time.", "note")
    pb = analysis.position_bias(ws, judge)
    rows = [{"figure": "verdicts", "value": pb["n"]},
            {"figure": "verdicts that picked an answer (not a tie or 'none')", "value": pb["n_decisive"]},
            {"figure": "of these, the answer shown first (50% = no position bias)",
             "value": _pct(pb["first_position_rate"]) if pb["n_decisive"] else "no decisive verdicts"}]
    if "consistency" in pb:
        rows += [{"figure": "answer pairs judged in both orders", "value": pb["n_both_orders"]},
                 {"figure": "same verdict in both orders", "value": _pct(pb["consistency"])},
                 {"figure": "κ between the two orders",
                  "value": "not defined: one label only" if pb["kappa"] is None else numbers.figure(pb['kappa'])}]
    else:
        rows.append({"figure": "answer pairs judged in both orders", "value": "none: the study showed each pair "
                                                                              "in one order"})
    return table(rows)


def _length(ws: Path, judge: str, binary: bool, bootstrap: int, seed: int) -> str:
    """The judge's length preference beside the people's, as the Agreement page's bias panel has it
    (``analysis.length_preference``, worded by ``leaderboard_view.length_preference_row``)."""
    if binary:
        return _p("Length preference concerns side-by-side judges (does the longer of two answers win by itself?); "
                  "a yes/no judge sees one answer at a time.", "note")
    pref = analysis.length_preference(ws, judge, bootstrap=bootstrap, seed=seed)
    if not pref["n"]:
        return _p("No verdict of this judge has both answers stored: their lengths are not known.", "note")
    row = lv.length_preference_row(pref)
    rows = [{"figure": label, "value": row[key]} for key, label in LENGTH_FIGURES.items()]
    audited = pref["audited"]
    if audited is None:
        compared = "Nobody has audited a verdict of this judge yet: the people's length preference is not known."
    else:
        j, p = audited["judge"], audited["people"]
        if None in (j["ci_low"], p["ci_low"]):
            compared = ("No intervals (bootstrap rounds set to 0, or no decisive verdicts): the judge and the people "
                        "are not compared.")
        elif j["ci_low"] > p["ci_high"]:
            compared = (f"On the {audited['n']} verdicts people audited, the judge leans to longer answers more than "
                        "the people do (the two intervals do not overlap).")
        elif j["ci_high"] < p["ci_low"]:
            compared = (f"On the {audited['n']} verdicts people audited, the judge leans to longer answers less than "
                        "the people do (the two intervals do not overlap).")
        else:
            compared = (f"On the {audited['n']} verdicts people audited, the judge's and the people's length "
                        "preferences cannot be told apart (the two intervals overlap).")
    said = lv.length_sentence(pref["all_verdicts"], (pref["all_verdicts"] or {}).get("longer_wins"))
    return (_p(f"All verdicts of the judge: {said}") + table(rows) + _p(compared)
            + _p("Length coefficient: from the Bradley-Terry fit with the answers' length difference beside the "
                 "systems (style control, LMArena's method), fitted on the decisive verdicts so that a judge's ties do not "
                 "shrink it: above 0, the longer answer wins more often than its "
                 "system's strength explains; below 0, the shorter one; an interval that includes 0, no clear "
                 "preference. Length difference d = (words of A − words of B) / (words of A + words of B): an "
                 "answer twice as long as the other has d = 1/3; the coefficient is the change in log-odds of "
                 f"winning per unit of d. Intervals: 95%, percentile bootstrap, {bootstrap:,} rounds. The judge and "
                 "the people are measured on the same audited verdicts with the same method, so they differ only "
                 "by who gave the label.", "note"))


# The bias panel's length row (leaderboard_view.length_preference_row) in the report's words.
LENGTH_FIGURES = {
    "verdicts": "verdicts with both answers' lengths known",
    "judge's length coefficient (all verdicts)": "the judge's length coefficient on all its verdicts (95% interval)",
    "longer answer wins (all verdicts)": "the longer answer won (all verdicts; share, 95% interval, of how many)",
    "audited verdicts": "verdicts people audited",
    "judge on audited": "the judge's length coefficient on the audited verdicts",
    "people on audited": "the people's length coefficient on the same verdicts",
    "longer answer wins: judge / people (audited)": "the longer answer won on the audited verdicts: judge / people",
}


def _models(ws: Path) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """Judge → its model and system → its model, as recorded (None where not recorded)."""
    def model(definition) -> str | None:
        if isinstance(definition, str):
            try:
                definition = json.loads(definition)
            except json.JSONDecodeError:
                return None
        return (definition or {}).get("model") or None

    with store.connect(ws) as con:
        judges = {k: model(v) for k, v in results_store.judge_definitions(con).items()}
        systems = {k: model(v) for k, v in results_store.system_definitions(con).items()}
    return judges, systems


def _pairs(ws: Path, judge: str, groups: list[dict] | None = None) -> dict[tuple[str, str], int]:
    """The system pairs a side-by-side judge compared (names in order), with its comparisons of each
    ('none' included), counted in SQL (``analysis.pair_counts``: a million verdicts are a few counts;
    ``groups``: the judge's ``analysis.comparison_groups``, when already read)."""
    return analysis.pair_counts(ws, judge, groups=groups)


def _self_preference(ws: Path, judge: str, binary: bool, groups: list[dict] | None) -> str:
    """Paper §5.1's 2×2 (``analysis.self_preference``, as the Agreement page has it): on each pair of
    systems this judge compared, how often it preferred each, beside every other side-by-side judge
    that compared the same pair; which systems answer with the judge's own model, if any."""
    if binary:
        return _p("Self-preference concerns side-by-side judges (which of two answers a judge prefers); a yes/no "
                  "judge sees one answer at a time.", "note")
    judge_models, system_models = _models(ws)
    mine = _pairs(ws, judge, groups)
    model = judge_models.get(judge)
    own = sorted({s for pair in mine for s in pair if model and system_models.get(s) == model})
    if model is None:
        lead = ("The judge's model is not recorded (its verdicts were imported): which systems are its own cannot "
                "be told.")
    elif own:
        lead = (f"{judge} runs on {model}, as {', '.join(own)} {'does' if len(own) == 1 else 'do'}: a judge that "
                "prefers its own model's answers more often than the other judges do shows self-preference "
                "(paper §5.1).")
    else:
        lead = (f"{judge} runs on {model}; no system here answers with that model, so it has no answers of its own "
                "to favour. The table shows the paper's comparison all the same: on each pair of systems, how often "
                "it and each other judge that compared the same pair preferred either answer.")
    others = [k for k in analysis.judges_by_family(ws)[PAIRWISE] if k != judge]
    shared = {k: _pairs(ws, k) for k in others}
    rows = []
    for pair in sorted(mine, key=lambda p: (not (set(p) & set(own)), p)):
        partners = [k for k in others if pair in shared[k]]
        if not partners:
            continue
        mine_shown = False
        for other in partners:
            try:
                t = analysis.self_preference(ws, (judge, other), pair)
            except NoVerdicts:  # the pair's verdicts are all undecided for both: nothing to count
                continue
            for k, name in enumerate(t["judges"]):
                if name == judge and mine_shown:
                    continue
                mine_shown = mine_shown or name == judge
                counts, total = t["counts"][k], t["totals"][k]
                rows.append({"systems compared": " / ".join(f"{s} (judge's own model)" if s in own else s
                                                            for s in t["systems"]),
                             "judge": name if name != judge else f"{name} (this report's judge)",
                             "preferred the first": f"{t['systems'][0]}: {_count_share(counts[0], total)}",
                             "preferred the second": f"{t['systems'][1]}: {_count_share(counts[1], total)}",
                             "neither (a tie, or both answers wrong)": total - counts[0] - counts[1],
                             "answer pairs judged": total})
    if not rows:
        return _p(lead) + _p("No other side-by-side judge compared the same systems: there is nothing to set this "
                             "judge's preferences against.", "note")
    return (_p(lead) + table(rows)
            + _p("Counted per pair of answers (one question, the two systems' answers), as on the Agreement page: a "
                 "pair judged in both orders counts once, with the verdict given with the answers in their stored "
                 "order. Shares are of all the pairs judged, so the two preferences and 'neither' add up to all of "
                 "them. A judge that picks one system much more often than the other judges do on the same pair "
                 "leans towards it.", "note"))


def _count_share(n: int, total: int) -> str:
    return f"{n:,} ({numbers.percent(n / total)})" if total else f"{n:,}"


def _corrected_change(result: dict | None, binary: bool) -> str:
    """What "corrected by the audits" changes, from the corrected section's own result."""
    if result is None or not result["n_usable_audits"]:
        return "Nothing yet: no random or active audits of this judge."
    rows = result["systems"]
    n = result["n_usable_audits"]
    if binary:
        moved = "; ".join(f"{r['system']} {_pct(r['judge_only'])} → {_pct(r['estimate'])}" for r in rows)
        ranks = [f"{r['system']} ranks {lv.ranks_text(r['judge_only_rank_low'], r['judge_only_rank_high'], len(rows))}"
                 f" → {lv.ranks_text(r['rank_low'], r['rank_high'], len(rows))}" for r in rows
                 if (r["judge_only_rank_low"], r["judge_only_rank_high"]) != (r["rank_low"], r["rank_high"])]
        return (f"From {n} audits. Accuracy, judge-only → corrected: {moved}."
                + (f" Ranks each can hold: {'; '.join(ranks)}." if ranks else " No system's ranks change."))
    moved = [f"{r['system']} {r['judge_only_rank']} → {r['rank']}" for r in rows if r["judge_only_rank"] != r["rank"]]
    text = f"From {n} audits. " + (f"Rank changed: {'; '.join(moved)}." if moved else "No system changed rank.")
    tiers = (len({r["judge_only_tier"] for r in rows}), len({r["tier"] for r in rows}))
    text += f" Tiers: {tiers[0]} judge-only, {tiers[1]} corrected."
    ratios = sorted(w / w0 for r in rows
                    if (w := _width(r["ci_low"], r["ci_high"])) and (w0 := _width(r["judge_only_ci_low"],
                                                                               r["judge_only_ci_high"])))
    if ratios:
        median = ratios[len(ratios) // 2]
        text += (f" The corrected strength intervals are about {numbers.figure(median, 2)}× as wide as the judge-only ones (median "
                 "over the systems): they include the judge's errors the audits measured.")
    return text


def _width(low: float, high: float) -> float | None:
    """An interval's width in β (log strength); None when it is empty, unbounded or not finite."""
    if not (low and high and low > 0 and math.isfinite(high)) or high <= low:
        return None
    return math.log(high) - math.log(low)


def _switches(ws: Path, judge: str, binary: bool, base, bootstrap: int, seed: int, corrected: dict | None,
              groups: list[dict] | None) -> str:
    """What each Leaderboard switch (and the corrected section) changes, measured, not only described."""
    rows = []
    for name, options, what in (
            ("Use human overrides", {"use_overrides": True},
             "where a person reviewed a verdict, their label replaces the judge's"),
            ("Leave out questions with a flagged reference", {"exclude_flagged": True},
             "questions whose reference answer someone flagged as wrong are left out")):
        try:
            if binary:
                after = {r["system"]: r for r in analysis.accuracy(ws, judge, **options)}
                moved = [f"{r['system']} {_pct(r['accuracy'])} → {_pct(after[r['system']]['accuracy'])}"
                         for r in base if r["system"] in after and after[r["system"]]["accuracy"] != r["accuracy"]]
                effect = ("Accuracy changes: " + "; ".join(moved) + ".") if moved else "No accuracy changes."
            else:
                after = analysis.ranking(ws, judge, bootstrap=bootstrap, seed=seed, groups=groups, **options)
                effect = lv.switch_changes(base, after)["summary"]
        except NoVerdicts:
            effect = "Nothing left to rank with this switch on."
        rows.append({"switch": name, "what it does": what, "what it changes here": effect})
    if binary:
        style = "Applies to side-by-side judges only: a yes/no judge's verdicts do not compare two answers."
    else:
        try:
            styled = analysis.style_ranking(ws, judge, bootstrap=bootstrap, seed=seed)
            style = lv.switch_changes(base, styled)["summary"] + " " + lv.style_summary(styled)
        except (NoVerdicts, ValueError) as exc:
            style = f"Not available: {exc}."
    rows.append({"switch": "Style control (length)",
                 "what it does": "the answers' length difference enters the ranking beside the systems, so each "
                                 "strength is what is left once longer answers' own advantage is taken out",
                 "what it changes here": style})
    rows.append({"switch": "Corrected by the audits (its own section above)",
                 "what it does": "people's labels on a random sample of verdicts correct the judge's estimates "
                                 "(prediction-powered inference): the judge's errors measured on the sample are taken "
                                 "out, and the intervals widen to include the uncertainty of that measurement",
                 "what it changes here": _corrected_change(corrected, binary)})
    return (table(rows) + _p("The ranking at the top is the one with every switch off: the judge's labels on all "
                             "questions, no style control, not corrected.", "note"))


def _readable(value):
    """A run's config for reading: hashes left out (they mean nothing to a reader), unset values said so."""
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    if value is None:
        return "not set"
    if isinstance(value, str) and _HASH.match(value):
        return "(an internal identifier, left out)"
    return value


def _provenance(ws: Path, when: datetime) -> str:
    try:
        version = metadata.version("lsqa")
    except metadata.PackageNotFoundError:
        version = "not installed as a package (run from a source checkout)"
    with store.connect(ws) as con:
        runs = runs_store.list_runs(con, limit=50)
    lines = [f"Report made {lv.stamp(when)} with lsqa version {version}.", f"Workspace: {ws.name}."]
    started = [r["started_at"] for r in runs if r.get("started_at")]
    finished = [r["finished_at"] for r in runs if r.get("finished_at")]
    if started:
        lines.append(f"Runs: {len(runs)}, the first started {min(started):%Y-%m-%d %H:%M}, the last finished "
                     + (f"{max(finished):%Y-%m-%d %H:%M}." if finished else "(none has finished yet)."))
    else:
        lines.append("No runs are recorded in this workspace (its data were imported).")
    rows = [{"run": r["id"], "stage": r["stage"], "status": r["status"],
             "started": f"{r['started_at']:%Y-%m-%d %H:%M}" if r.get("started_at") else "not recorded",
             "finished": f"{r['finished_at']:%Y-%m-%d %H:%M}" if r.get("finished_at") else "not finished"}
            for r in runs]
    html = _items(lines) + table(rows)
    configs: dict[str, list[int]] = {}  # one block per distinct config: a study's stages share theirs
    for r in sorted(runs, key=lambda r: r["id"]):
        try:
            config = json.loads(r["config"]) if isinstance(r.get("config"), str) else (r.get("config") or {})
        except json.JSONDecodeError:
            config = {"config": "not readable"}
        if config:
            configs.setdefault(json.dumps(_readable(config), indent=2, sort_keys=True, default=str), []).append(r["id"])
    for text, ids in configs.items():
        which = f"run {ids[0]}" if len(ids) == 1 else f"runs {', '.join(map(str, ids))}"
        html += (f"<details open><summary>Study config of {which}</summary>"
                 f"<pre>{escape(text).replace('<br>', chr(10))}</pre></details>")
    return html


def _examples_table(found: list[dict], address: str) -> str:
    """The examples as a table whose last cell links each to its verdict on the Audit page: the Leaderboard's
    link resolved from ``address`` (the verdict's id is in the link only)."""
    rows = lv.example_rows(found)
    columns = [c for c in rows[0] if c != "on Audit"]
    head = "".join(f"<th>{escape(c)}</th>" for c in [*columns, "on Audit"])
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(r[c]))}</td>" for c in columns)
                   + f'<td><a href="{escape(links.absolute(r["on Audit"], address))}">open on Audit</a></td></tr>'
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _glossary() -> str:
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in GLOSSARY.items()) + "</dl>"


# ------------------------------------------------------------------------------ the page

def judge_family(ws: Path, judge: str) -> str:
    """``pairwise`` or ``binary``; ValueError naming the judges there are for an unknown one."""
    families = analysis.judges_by_family(ws)
    for family in (PAIRWISE, BINARY):
        if judge in families[family]:
            return family
    known = [j for fam in (PAIRWISE, BINARY) for j in families[fam]]
    raise ValueError(f"no judge {judge!r} in this workspace; use one of its judges: {', '.join(known) or 'none yet'}")


def build(ws: Path, judge: str, *, bootstrap: int = 1000, seed: int = 0, queue: str | None = None,
          when: datetime | None = None, since: dict | None = None, address: str | None = None) -> str:
    """The report on ``judge`` as one HTML page (module docstring). ValueError for an unknown judge.
    ``since``: an earlier report's figures (:func:`read_figures`); the page then lists what moved.
    ``address``: the page its Audit links are resolved from, as a browser resolves them: the dashboard page
    the report is downloaded on (``st.context.url``), else ``links.home()`` (``lsqa report``'s default)."""
    return build_with_figures(ws, judge, bootstrap=bootstrap, seed=seed, queue=queue, when=when, since=since,
                              address=address)[0]


# The Leaderboard's "Report (HTML)" download: this page, with the bootstrap rounds chosen there.
HELP = ("One self-contained page on this judge that opens offline (`lsqa report --judge J --bootstrap N`, with "
        "the bootstrap rounds chosen here): tiers and ranking, whether the judge can replace the annotators, "
        "the bias panel, what each switch changes and where the data came from. It shows the ranking with "
        "every switch off and says what each switch changes.")


def file_name(judge: str, when: datetime) -> str:
    """``report_<judge>_<date>.html``, safe on every OS."""
    return f"report_{lv.safe_name(judge)}_{when.strftime('%Y-%m-%d')}.html"


def build_with_figures(ws: Path, judge: str, *, bootstrap: int = 1000, seed: int = 0, queue: str | None = None,
                       when: datetime | None = None, since: dict | None = None,
                       address: str | None = None) -> tuple[str, dict, list[str]]:
    """:func:`build`'s page, the figures it embeds (:data:`FIGURES_ID`) and, with ``since``, what moved
    (:func:`changes`; empty without)."""
    when = when or lv.now_utc()
    address = address or links.home()
    binary = judge_family(ws, judge) == BINARY
    # Read once for the whole page and handed to each section that needs it: the side-by-side verdicts
    # counted for every switch, and the certification.
    groups = None if binary else analysis.comparison_groups(ws, judge)
    if binary:
        ranking_html, base = _ranking_binary(ws, judge)
    else:
        ranking_html, base = _ranking_pairwise(ws, judge, bootstrap, seed, groups)
    certified = certification.certify(ws, judge, queue=queue)
    said = headline.for_judge(ws, judge, queue=queue, certified=certified,
                              **({"accuracy": base} if binary else {"ranking": base}))
    ranking_html += _p(headline.basis_text(said["figures"]), "note")
    cert_html, panel = _certification(ws, judge, queue, certified)
    basis = lv.agreement_basis(ws, judge, certified)
    cert_html += ("<h3>One agreement figure, and the others</h3>" + f'<p id="agreement-basis">{escape(basis["text"])}</p>'
                  + table(basis["rows"], ["figure", "value", "what it counts"]))
    corrected_html, corrected = _corrected(ws, judge, binary, queue)
    found = lv.examples(ws, judge, said["figures"])
    examples_html = (_examples_table(found, address) + _p(lv.EXAMPLES_HELP + " Each link opens its verdict on the "
                                                                 "dashboard's Audit page.", "note")
                     if found else _p("No question on which the top systems' answers were judged differently.",
                                      "note"))
    books = lv.book_consistency(ws, judge, said["figures"])
    books_html = (_p(books["statement"]) + _p(f"Overall order: {books['overall']}.", "note") + table(books["rows"])
                  + _p(lv.CONSISTENCY_HELP, "note") if books else _p("Fewer than two systems: no order.", "note"))
    figures = report_figures(judge, when, said["figures"], basis, corrected, books)
    moved = changes(since, figures) if since is not None else []
    kind = "accuracy of each system (yes/no judge)" if binary else "ranking of the systems (side-by-side judge)"
    sections = [
        ("headline", "The answer in one paragraph", f'<p class="verdict" id="headline-text">{escape(said["text"])}</p>'
         + _p("Every figure here is shown again, with its basis, in the sections below.", "note")),
        *([("changes", f"What changed since the report of {since.get('made', 'before')}",
            _items(moved) if moved else _p("Nothing moved: the same tiers, certification, audits and thresholds."))]
          if since is not None else []),
        ("tiers", f"Tiers and {kind}", ranking_html),
        ("examples", "Examples: where the top systems were judged most differently", examples_html),
        ("books", "Book by book: does the order hold?", books_html),
        ("certification", "Can this judge replace the annotators?", cert_html),
        (CORRECTED, "Corrected by the audits", corrected_html),
        ("bias", "Bias panel: the order the answers were shown in", _bias(ws, judge, binary)),
        ("length", "Bias panel: length preference, the judge beside the people", _length(ws, judge, binary,
                                                                                       bootstrap, seed)),
        ("self-preference", "Bias panel: self-preference (paper §5.1)", _self_preference(ws, judge, binary, groups)),
        ("switches", "What each switch changes",
         _switches(ws, judge, binary, base, bootstrap, seed, corrected, groups)),
        ("provenance", "Where the data came from", _provenance(ws, when)),
        ("glossary", "What the symbols mean", _glossary()),
    ]
    body = "".join(f'<section id="{sid}"><h2>{escape(title)}</h2>{html}</section>' for sid, title, html in sections)
    title = f"lsqa report: {judge}"
    # The figures as JSON for the next report's --since: a data block, never run (type application/json;
    # the page's CSP forbids every script anyway). "<" is written \u003c so no text can close the block.
    data = json.dumps(figures, sort_keys=True, default=str).replace("<", "\\u003c")
    page = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{escape(title)}</h1>{_p(f'Judge {judge}, made {lv.stamp(when)}.', 'note')}{body}"
            f'<script type="application/json" id="{FIGURES_ID}">{data}</script></body></html>')
    return page, figures, moved


# ------------------------------------------------------------------------------ what changed since

FIGURES_ID = "lsqa-figures"
FIGURES_VERSION = 1


def report_figures(judge: str, when: datetime, said: dict, basis: dict, corrected: dict | None,
                   books: dict | None) -> dict:
    """The figures a report embeds (JSON, full precision) so that the next one can say what moved."""
    pair = said.get("leader_vs_next") or {}
    return {"version": FIGURES_VERSION, "judge": judge, "made": lv.stamp(when), "family": said["family"],
            "systems": [{"system": s["system"], "tier": s["tier"], "rank": s["rank"]} for s in said["systems"]],
            "leader": said["systems"][0]["system"] if said["systems"] else None,
            "leader_vs_next": {k: pair.get(k) for k in ("upper", "lower", "estimate", "ci_low", "ci_high",
                                                          "separated")} if pair else None,
            "certification": said["certification"], "agreement": basis["headline"],
            "agreement_all_reviewed": basis["all_reviewed"],
            "corrected_audits": None if corrected is None else corrected["n_usable_audits"],
            "coverage": said["coverage"], "books": None if books is None else books["figures"]}


def read_figures(path: Path | str) -> dict:
    """The figures an earlier report embeds, from its HTML file or from that JSON saved on its own;
    ValueError naming the file when it holds none."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read ({exc}); give an earlier report's HTML file") from None
    match = re.search(rf'<script type="application/json" id="{FIGURES_ID}">(.*?)</script>', text, flags=re.S)
    try:
        figures = json.loads(match.group(1) if match else text)
    except json.JSONDecodeError:
        figures = None
    if not isinstance(figures, dict) or figures.get("version") != FIGURES_VERSION or "systems" not in figures:
        raise ValueError(f"{path} holds no report figures; give an HTML file `lsqa report` wrote (or its "
                         f"{FIGURES_ID} JSON)")
    return figures


def _crossed(before: float | None, after: float | None, threshold: float) -> bool:
    return before is not None and after is not None and (before >= threshold) != (after >= threshold)


def changes(before: dict, after: dict) -> list[str]:
    """What moved between two reports' figures (:func:`report_figures`), one line each: the leader,
    systems that changed tier (or came or went), the certification's verdict, audits added, and
    numbers that crossed a threshold (P(leader beats next) 50%, the leader and next system's rank
    intervals apart or not, agreement with people the certification's 90%, the corrected intervals'
    30 audits, the chance the order holds on a new book 50%). Nothing else is listed."""
    from lsqa.stats.certification import Thresholds
    from lsqa.stats.corrected import FEW_AUDITS

    out = []
    if before.get("judge") != after.get("judge"):
        out.append(f"Judge: {before.get('judge')} → {after.get('judge')} (the two reports are on different judges).")
    if before.get("leader") != after.get("leader"):
        out.append(f"Leader: {before.get('leader')} → {after.get('leader')}.")
    old = {s["system"]: s for s in before["systems"]}
    new = {s["system"]: s for s in after["systems"]}
    for name in new:
        if name not in old:
            out.append(f"{name}: new (tier {new[name]['tier']}).")
        elif old[name]["tier"] != new[name]["tier"]:
            out.append(f"{name}: tier {old[name]['tier']} → {new[name]['tier']}.")
    out += [f"{name}: no longer ranked." for name in old if name not in new]
    c0, c1 = before["certification"], after["certification"]
    if c0["verdict"] != c1["verdict"]:
        out.append(f"Certification: {c0['verdict']} → {c1['verdict']}.")
    if c0["n_audits"] != c1["n_audits"]:
        diff = c1["n_audits"] - c0["n_audits"]
        out.append(f"Random audits: {numbers.count(c0['n_audits'])} → {numbers.count(c1['n_audits'])} "
                   f"({'+' if diff > 0 else '−'}{numbers.count(abs(diff))}).")
    p0, p1 = before.get("leader_vs_next") or {}, after.get("leader_vs_next") or {}
    if p0 and p1 and (p0["upper"], p0["lower"]) == (p1["upper"], p1["lower"]):
        if _crossed(p0["estimate"], p1["estimate"], 0.5):
            out.append(f"P({p1['upper']} beats {p1['lower']}) crossed 50%: {numbers.percent(p0['estimate'])} → "
                       f"{numbers.percent(p1['estimate'])}.")
        if p0["separated"] is not None and p1["separated"] is not None and p0["separated"] != p1["separated"]:
            out.append(f"{p1['upper']} and {p1['lower']}: rank intervals "
                       f"{'now apart' if p1['separated'] else 'now overlap'}.")
    a0, a1 = before["agreement"]["estimate"], after["agreement"]["estimate"]
    line = Thresholds().min_agreement
    if _crossed(a0, a1, line):
        out.append(f"Agreement with people (random audits) crossed {numbers.percent(line)}: {numbers.percent(a0)} → "
                   f"{numbers.percent(a1)}.")
    n0, n1 = before.get("corrected_audits"), after.get("corrected_audits")
    if _crossed(n0, n1, FEW_AUDITS):
        out.append(f"Corrected by the audits: {numbers.count(n0)} → {numbers.count(n1)} audits, "
                   + (f"enough for its intervals ({FEW_AUDITS} needed)." if n1 >= FEW_AUDITS
                      else f"too few for its intervals again ({FEW_AUDITS} needed)."))
    b0, b1 = before.get("books") or {}, after.get("books") or {}
    if _crossed(b0.get("predictive"), b1.get("predictive"), 0.5):
        out.append(f"Chance the order holds on a new book crossed 50%: {numbers.percent(b0['predictive'])} → "
                   f"{numbers.percent(b1['predictive'])}.")
    return out
