"""The report a stakeholder can be handed (issue 30): one self-contained HTML page for one judge.

It composes what the Leaderboard and the Agreement page already compute, with nothing recomputed
differently: the tiers and the ranking (paper §3.2 for side-by-side judges, Table 1's accuracy for
yes/no judges), the ranking corrected by random audits when there are some, the judge's
certification (``lsqa.stats.certification``) and how many audits it rests on, the bias panel
(position bias, §5.1), what each Leaderboard switch changes (``leaderboard_view.switch_changes``),
and where the data came from (the runs' study configs and dates, the lsqa version).

The page opens offline: no script, no stylesheet or font fetched, no plotly. Bars are HTML
``<div>``s sized in percent, because a bar chart of a handful of systems needs no plotting library
and inlining plotly.js would make a 3.5 MB file for it. Every value is escaped
(``lsqa.text.highlight.escape``): system and judge names are data. Every number is labelled in
words; a missing interval says why it is missing (never ``None``); no question is named by its
hash; each Greek letter used has a line in the glossary.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from importlib import metadata
from pathlib import Path

from lsqa import store
from lsqa.dashboard import leaderboard_view as lv
from lsqa.errors import NoVerdicts
from lsqa.stats import analysis, certification, corrected_report
from lsqa.stats.rank_intervals import for_accuracies
from lsqa.store import runs as runs_store
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
        return f"{value:.4g}"
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
    return "not measured" if x is None else f"{100 * x:.1f}%"


# ------------------------------------------------------------------------------ the sections

def _ranking_pairwise(ws: Path, judge: str, bootstrap: int, seed: int) -> tuple[str, dict]:
    result = analysis.ranking(ws, judge, bootstrap=bootstrap, seed=seed)
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


def _corrected(ws: Path, judge: str, binary: bool, queue: str | None) -> str:
    try:
        result = (corrected_report.corrected_accuracy(ws, judge, queue=queue) if binary
                  else corrected_report.corrected_ranking(ws, judge, queue=queue))
    except (ValueError, NoVerdicts) as exc:
        return _p(f"No corrected ranking: {exc}", "note")
    if not result["n_usable_audits"]:
        return _p("No corrected ranking: no random or active audits of this judge yet.", "note")
    section = corrected_report.accuracy_section(result) if binary else corrected_report.ranking_section(result)
    lines = [f"Rests on {result['n_usable_audits']} audits from the {result['design']} queue; "
             f"{result['n_reviews_not_used']} other reviews not used (priority queue or another design)."]
    if not binary:
        lines.append(corrected_report.JUDGE_ONLY_SAME_AS_TABLE)
    out = table(section["table"]) + "".join(_p(x, "note") for x in lines)
    if section["adjacent"]:
        out += "<h3>Neighbours in the corrected order</h3>" + table(section["adjacent"])
    return out + _items([f"warning: {w}" for w in result["warnings"]])


def _certification(ws: Path, judge: str, queue: str | None) -> tuple[str, dict]:
    panel = certification.panel(ws, judge, queue=queue)
    t = panel["thresholds"]
    html = [f'<p class="verdict" id="verdict">{escape(panel["headline"])} (verdict: {escape(panel["verdict"])})</p>',
            _p(f"Rests on {panel['n_audits']} audits" + (f" from the {panel['design']} queue" if panel["design"]
                                                          else "") + f"; thresholds: the lower end of the "
               f"{t['level']:.0%} interval of the agreement must reach {t['min_agreement']:.0%}, of each gated "
               f"recall {t['min_recall']:.0%}."),
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
                  "value": "not defined: one label only" if pb["kappa"] is None else f"{pb['kappa']:.3f}"}]
    else:
        rows.append({"figure": "answer pairs judged in both orders", "value": "none: the study showed each pair "
                                                                              "in one order"})
    return table(rows)


def _switches(ws: Path, judge: str, binary: bool, base, bootstrap: int, seed: int) -> str:
    """What each Leaderboard switch changes, measured, not only described."""
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
                after = analysis.ranking(ws, judge, bootstrap=bootstrap, seed=seed, **options)
                effect = lv.switch_changes(base, after)["summary"]
        except NoVerdicts:
            effect = "Nothing left to rank with this switch on."
        rows.append({"switch": name, "what it does": what, "what it changes here": effect})
    return (table(rows) + _p("The ranking above is the one with both switches off: the judge's labels on all "
                             "questions.", "note"))


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
          when: datetime | None = None) -> str:
    """The report on ``judge`` as one HTML page (module docstring). ValueError for an unknown judge."""
    when = when or lv.now_utc()
    binary = judge_family(ws, judge) == BINARY
    if binary:
        ranking_html, base = _ranking_binary(ws, judge)
    else:
        ranking_html, base = _ranking_pairwise(ws, judge, bootstrap, seed)
    cert_html, _ = _certification(ws, judge, queue)
    kind = "accuracy of each system (yes/no judge)" if binary else "ranking of the systems (side-by-side judge)"
    sections = [
        ("tiers", f"Tiers and {kind}", ranking_html),
        ("certification", "Can this judge replace the annotators?", cert_html),
        (CORRECTED, "Corrected by the audits", _corrected(ws, judge, binary, queue)),
        ("bias", "Bias panel", _bias(ws, judge, binary)),
        ("switches", "What each switch changes", _switches(ws, judge, binary, base, bootstrap, seed)),
        ("provenance", "Where the data came from", _provenance(ws, when)),
        ("glossary", "What the symbols mean", _glossary()),
    ]
    body = "".join(f'<section id="{sid}"><h2>{escape(title)}</h2>{html}</section>' for sid, title, html in sections)
    title = f"lsqa report: {judge}"
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{escape(title)}</h1>{_p(f'Judge {judge}, made {lv.stamp(when)}.', 'note')}{body}</body></html>")
