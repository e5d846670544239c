"""The Agreement screen: every judge against the humans and the other judges of its family (Fig. 4,
§5.1-5.2), the bias panel, LLMBar's published figures beside lsqa's, and the certification panel
(``lsqa.figures.certification.certify`` as display rows and words), which the report shows too.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store, vocabulary
from lsqa.audit import FINAL_LABEL_RULE  # noqa: F401 (the page says how a final label is made)
from lsqa.dashboard import leaderboard_view as lv
from lsqa.dashboard.common import judges_by_family
from lsqa.errors import NoVerdicts
from lsqa.figures import analysis
from lsqa.figures.certification import NOT_REPLACEABLE, POWER, REPLACEABLE, UNDECIDED, Thresholds, certify
from lsqa.store import results as results_store
from lsqa.store import verdicts as verdicts_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.study import llmbar
from lsqa.text import numbers


@kept_while_unchanged()
def certification_panel(workspace: Path, judge: str, thresholds) -> dict:
    """The Agreement page's "can this judge replace the annotators?" panel
    (:func:`panel`), kept while the workspace is unchanged: it reads every audit
    and runs the alternative annotator test, which cost the page 1.15× a new tab when run on each render."""
    return panel(workspace, judge, thresholds=thresholds)


def judge_vs_human(workspace: Path, judge: str, *, annotator: str | None = None, bootstrap: int = 1000,
                   read: analysis.LabelsRead | None = None) -> dict | None:
    """Agreement of a judge with the humans who reviewed *its* verdicts (``human@<judge>``), or None.
    ``read``: raters' labels already read (``analysis.LabelsRead``)."""
    rater = f"{vocabulary.HUMAN}:{annotator}@{judge}" if annotator else f"{vocabulary.HUMAN}@{judge}"
    try:
        result = analysis.agreement(workspace, judge, rater, bootstrap=bootstrap, read=read)
    except NoVerdicts:  # no verdict of this judge reviewed yet
        return None
    # Shown as "human" beside the judge: the row already says whose verdicts were reviewed.
    result.update(rater_a=judge, rater_b=f"{vocabulary.HUMAN}:{annotator}" if annotator else vocabulary.HUMAN)
    return result


# The Agreement page's sections, each computed only when shown: what each needs from the report.
AGREEMENT_SECTIONS = {"humans": ("vs_human", "vs_annotator"), "judges": ("pairs",), "bias": ("position",),
                      "annotators": ("annotators", "annotator_pairs"), "llmbar": ("llmbar",)}


@kept_while_unchanged()
def agreement_overview(workspace: Path, *, bootstrap: int = 1000, sections: tuple[str, ...] | None = None) -> dict:
    """Every judge against the humans and against the other judges of its family (Fig. 4, §5.1-5.2).

    Returns ``{"pairs": [...], "vs_human": [...], "vs_annotator": [...], "position": [...],
    "annotators": {...}, "annotator_pairs": [...], "annotator_names": [...], "families": {...},
    "llmbar": [...]}`` with agreement %, Cohen's κ and its bootstrap CI and the confusion matrix for
    each pair, and LLMBar's published figures beside lsqa's (``llmbar.figures``).

    ``sections``: only these parts of the report (keys of ``AGREEMENT_SECTIONS``; default all); the
    keys of the parts left out are absent. ``families`` and ``annotator_names`` are always there.
    """
    unknown = set(sections or ()) - set(AGREEMENT_SECTIONS)
    if unknown:
        raise ValueError(f"unknown agreement section(s) {sorted(unknown)}; choose from {list(AGREEMENT_SECTIONS)}")
    # One attachment of the workspace for the whole report: its ~40 reads would otherwise attach
    # and detach the file each, a quarter of the report on the full demo (docs/BENCHMARKS.md,
    # "Workspace connections").
    with store.connect(workspace):
        return _agreement_overview(workspace, bootstrap, set(sections or AGREEMENT_SECTIONS))


def _agreement_overview(workspace: Path, bootstrap: int, sections: set[str]) -> dict:
    families = judges_by_family(workspace)
    read = analysis.LabelsRead()  # each rater's labels, read once for the whole overview
    with store.connect(workspace) as con:
        annotators = sorted({r["annotator"] for r in verdicts_store.human_labels(con)})
    out = {"families": families, "annotator_names": annotators}
    if "judges" in sections:
        out["pairs"] = _judge_pairs(workspace, families, bootstrap, read)
    if "humans" in sections:
        out["vs_human"], out["vs_annotator"] = [], []
        for judges in families.values():
            for judge in judges:
                res = judge_vs_human(workspace, judge, bootstrap=bootstrap, read=read)
                if res:
                    out["vs_human"].append(res)
                    # The same judge against each person who reviewed it: who agrees with it, who does not.
                    out["vs_annotator"] += [r for a in annotators if (r := judge_vs_human(
                        workspace, judge, annotator=a, bootstrap=bootstrap, read=read))]
    if "bias" in sections:
        out["position"] = [analysis.position_bias(workspace, judge) for judge in families[vocabulary.PAIRWISE]]
    if "annotators" in sections:
        out["annotators"] = analysis.annotator_agreement(workspace)
        out["annotator_pairs"] = _annotator_pairs(workspace, annotators, bootstrap, read)
    if "llmbar" in sections:
        out["llmbar"] = _llmbar_figures(workspace, read)
    return out


def _judge_pairs(workspace: Path, families: dict, bootstrap: int, read: analysis.LabelsRead) -> list[dict]:
    """Each pair of judges of one family (yes/no or side by side) on the items both judged."""
    pairs = []
    for family, judges in families.items():
        for i, a in enumerate(judges):
            for b in judges[i + 1:]:
                try:
                    res = analysis.agreement(workspace, a, b, bootstrap=bootstrap, read=read)
                except NoVerdicts:
                    continue
                pairs.append({"family": family, "rater_a": a, "rater_b": b, **res})
    return pairs


def _annotator_pairs(workspace: Path, annotators: list[str], bootstrap: int, read: analysis.LabelsRead) -> list[dict]:
    """Each pair of annotators on the verdicts both reviewed."""
    between = []
    for i, a in enumerate(annotators):
        for b in annotators[i + 1:]:
            try:
                res = analysis.agreement(workspace, f"{vocabulary.HUMAN}:{a}", f"{vocabulary.HUMAN}:{b}",
                                         bootstrap=bootstrap, read=read)
            except NoVerdicts:  # no verdict reviewed by both
                continue
            between.append({"rater_a": a, "rater_b": b, **res})
    return between


def _llmbar_data() -> Path | None:
    """The shared data's LLMBar folder (its published figures), if it is there."""
    from lsqa.config.settings import data_dir

    return data_dir() if (data_dir() / llmbar.LLMBAR_DIR).is_dir() else None


def has_llmbar(workspace: Path) -> bool:
    """LLMBar's judges are in the workspace and its published figures are in the shared data."""
    return _llmbar_data() is not None and bool(llmbar.present_judges(workspace))


def _llmbar_figures(workspace: Path, read: analysis.LabelsRead) -> list[dict]:
    """LLMBar's published agreement figures beside lsqa's (when the shared data is there)."""
    root = _llmbar_data()
    return llmbar.figures(workspace, root, read=read) if root is not None else []


def agreement_rows(results: list[dict]) -> list[dict]:
    return [{"rater A": r["rater_a"], "rater B": r["rater_b"], "items": r["n"],
             "agreement %": None if r["agreement"] is None else round(100 * r["agreement"], 1),
             "Cohen's κ": None if r["kappa"] is None else round(r["kappa"], 3),
             "κ 95% CI": "" if not r.get("kappa_ci") else f"{r['kappa_ci'][0]:.3f} – {r['kappa_ci'][1]:.3f}"}
            for r in results]


def position_rows(results: list[dict]) -> list[dict]:
    """The position panel's table, one row per side-by-side judge (``analysis.position_bias``): how often the
    answer shown first won its decisive verdicts (50% is no preference), and on the answer pairs it judged in
    both orders how often the two orders agree and their κ (None for a judge run in one order only)."""
    def pct(x):
        return None if x is None else round(100 * x, 1)

    return [{"judge": r["judge"], "verdicts": r["n"], "decisive": r["n_decisive"],
             "shown first won %": pct(r["first_position_rate"]), "pairs in both orders": r.get("n_both_orders", 0),
             "orders agree %": pct(r.get("consistency")),
             "κ between orders": None if r.get("kappa") is None else round(r["kappa"], 3)}
            for r in results]


def confusion_rows(result: dict) -> list[dict]:
    """A confusion matrix as table rows (Fig. 4): one row per label of rater A, one column per label
    of rater B, counts of items. The Agreement page shows these as tables: its five heatmaps made a
    new browser tab load and run plotly.js, a table costs next to nothing
    (docs/benchmarks-log/2026-12-06-figures-from-code-comments.md)."""
    corner = f"{result['rater_a']} ↓ · {result['rater_b']} →"
    return [{corner: a, **{b: n for b, n in zip(result["labels"], row, strict=False)}}
            for a, row in zip(result["labels"], result["confusion"], strict=False)]


def preference_rows(table: dict) -> list[dict]:
    """The §5.1 self-preference 2×2 as table rows: per judge, how often it preferred each system."""
    return [{"judge": judge, **{f"preferred {system}": n for system, n in zip(table["systems"], counts, strict=False)}}
            for judge, counts in zip(table["judges"], table["counts"], strict=False)]


def self_preference(workspace: Path, judges: tuple[str, str], systems: tuple[str, str]) -> dict | None:
    try:
        return analysis.self_preference(workspace, judges, systems)
    except NoVerdicts:
        return None


def pairwise_systems(workspace: Path) -> list[str]:
    with store.connect(workspace) as con:
        return [s["name"] for s in results_store.list_systems(con)]


@kept_while_unchanged()
def length_preference_rows(workspace: Path, *, bootstrap: int = 1000, seed: int = 0) -> list[dict]:
    """The Agreement bias panel's length preference: per side-by-side judge, its length coefficient on
    all its verdicts, then the judge's and the people's on the verdicts people audited (one estimator,
    ``analysis.length_preference``), each with its 95% CI and the longer answer's win share."""
    shown, _ = lv.leaderboard_judges(workspace)
    return [lv.length_preference_row(analysis.length_preference(workspace, judge, bootstrap=bootstrap, seed=seed))
            for judge in shown[vocabulary.PAIRWISE]]


# ------------------------------------------------------------------ can the judge replace people

def _pct(x) -> str:
    return numbers.percent(x)


def panel(workspace: Path, judge: str, *, queue: str | None = None, thresholds: Thresholds = Thresholds(),
          certified: dict | None = None) -> dict:
    """The Agreement page's certification panel: :func:`certify` and its figures as display rows.
    ``certified``: that :func:`certify` result (same judge, queue and thresholds), when already computed."""
    result = certified if certified is not None else certify(workspace, judge, queue=queue, thresholds=thresholds)
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
