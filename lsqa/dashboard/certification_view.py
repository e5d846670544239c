"""The Agreement page's certification panel and the report's: ``lsqa.figures.certification.certify``
and its figures as display rows and words."""

from __future__ import annotations

from pathlib import Path

from lsqa.figures.certification import NOT_REPLACEABLE, POWER, REPLACEABLE, UNDECIDED, Thresholds, certify
from lsqa.text import numbers


def _pct(x) -> str:
    return numbers.percent(x)


def panel(workspace: Path, judge: str, *, queue: str | None = None, thresholds: Thresholds = Thresholds()) -> dict:
    """The Agreement page's certification panel: :func:`certify` and its figures as display rows."""
    result = certify(workspace, judge, queue=queue, thresholds=thresholds)
    agreement = result["agreement"]
    what = "recall (people said it, the judge too)"
    rows = [{"figure": "agreement with people", "estimate": _pct(agreement["estimate"]),
             f"{thresholds.level:.0%} interval": f"{_pct(agreement['ci_low'])} – {_pct(agreement['ci_high'])}",
             "audits": result["n_audits"], "must reach": f"{thresholds.min_agreement:.0%} (lower bound)"}]
    for r in result["per_label"]:
        rows.append({"figure": f"{what}: {r['label']}", "estimate": _pct(r["recall"]),
                     f"{thresholds.level:.0%} interval": f"{_pct(r['ci_low'])} – {_pct(r['ci_high'])}",
                     "audits": r["n"],
                     "must reach": f"{thresholds.min_recall:.0%} (lower bound)" if r["gated"] else "not gated"})
    top = result["ceiling"]
    ceiling_rows = [] if top is None else [
        {"who": who, "agreement": _pct(top[key]["estimate"]),
         f"{thresholds.level:.0%} interval": f"{_pct(top[key]['ci_low'])} – {_pct(top[key]['ci_high'])}",
         "verdicts": top["n_verdicts"]}
        for who, key in (("people with each other", "people"), ("the judge with the people", "judge"))]
    alt = result["alt_test"]
    alt_rows = [] if alt is None else [
        {"left-out annotator": a["annotator"], "verdicts": a["n"], "judge as good (share)": numbers.figure(a["judge_advantage"]),
         "annotator as good (share)": numbers.figure(a["annotator_advantage"]), "p-value": numbers.figure(a["p_value"]),
         "judge wins": "yes" if a["judge_wins"] else "no"} for a in alt["annotators"]]
    needed = result["audits_needed"]
    headline = {REPLACEABLE: "can replace the annotators on this study",
                NOT_REPLACEABLE: "cannot replace the annotators on this study",
                UNDECIDED: "undecided" + (f": about {needed} more random audits would decide whether it can replace "
                                           f"the annotators, with {POWER:.0%} "
                                           "probability" if needed else "")}
    return {**result, "headline": f"{judge}: {headline[result['verdict']]}", "rows": rows,
            "ceiling_rows": ceiling_rows, "alt_rows": alt_rows}
