"""What the dashboard pages ask for, as plain data: pages stay thin, lsqa stays free of streamlit.

Each page makes one call here (or to ``lsqa.audit``, ``lsqa.audit.reference_errors``, ``lsqa.study.jobs``) and
shows the result. Every call answers for the workspace as it is now, so an audit action shows in
Agreement and Leaderboard on the next render: the costly reads are kept only while the workspace's
data is unchanged (``lsqa.store.workspace_cache``; any commit, from any process, makes them read again).
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from lsqa import store, vocabulary
from lsqa.judging import kinds as judge_kinds
from lsqa.figures import analysis
from lsqa.study import llmbar
from lsqa.config.settings import resolve_workspace
from lsqa.errors import LsqaError, NoVerdicts
from lsqa.package_files import CONFIGS, shipped_folder
from lsqa.store import corpus as corpus_store
from lsqa.store import audit_queue as queue_store
from lsqa.store import reviews as reviews_store
from lsqa.store import results as results_store
from lsqa.store import runs as runs_store
from lsqa.store import verdicts as verdicts_store
from lsqa.store.workspace_cache import kept_while_unchanged

CONFIG_DIR = shipped_folder(CONFIGS)  # configs/ of the repository


def current_workspace() -> Path:
    return resolve_workspace()


@contextlib.contextmanager
def kept_open(workspace: Path) -> Iterator[None]:
    """Keep the workspace attached while a page renders (app.py wraps every page in it).

    A page makes 10-40 reads, each of which would otherwise ATTACH and DETACH the file (2-4 ms
    apiece): up to a tenth of a keypress on the Audit page. Other processes wait for
    the render (under a second) as they wait for any read. A workspace that cannot be opened is
    left to the page, whose own first read names the problem."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(store.connect(workspace))
        except LsqaError:
            pass
        yield


def exists(workspace: Path) -> bool:
    return Path(workspace).is_file()


def to_csv(rows: list[dict], columns: list[str] | None = None) -> bytes:
    """Rows as a CSV file (the tables stakeholders download); a text cell a spreadsheet would run as
    a formula starts with a ' (``lsqa.text.csv_cells``), column names too (a win-probability table's
    columns are system names)."""
    from lsqa.text.csv_cells import safe_cell

    buf = io.StringIO()
    columns = columns or (list(rows[0]) if rows else [])
    writer = csv.writer(buf, lineterminator="\r\n")  # as csv.DictWriter wrote it
    writer.writerow([safe_cell(c) for c in columns])
    writer.writerows([safe_cell(r.get(c)) for c in columns] for r in rows)
    return buf.getvalue().encode("utf-8")


# ------------------------------------------------------------------------------------ overview

def overview(workspace: Path) -> dict:
    """Counts, recent runs with their cost and status, and where audit work is waiting."""
    with store.connect(workspace) as con:
        # Read each time: a run's status also depends on whether its process is still alive.
        runs = runs_store.recent_runs(con, 10)
    return {**_overview_counts(workspace), "runs": runs}


@kept_while_unchanged()
def _overview_counts(workspace: Path) -> dict:
    with store.connect(workspace) as con:
        counts = runs_store.overview_counts(con)
        documents = corpus_store.list_documents(con)
        work = queue_store.audit_work(con)
        people = reviews_store.annotator_progress(con)
        table_counts = runs_store.table_counts(con)
    for r in work:
        r["reviewed %"] = round(100 * r["reviewed"] / r["verdicts"], 1) if r["verdicts"] else 0.0
    return {"counts": counts, "documents": documents, "audit_work": work, "annotators": people,
            "tables": table_counts}


@kept_while_unchanged()
def certification_panel(workspace: Path, judge: str, thresholds) -> dict:
    """The Agreement page's "can this judge replace the annotators?" panel
    (``lsqa.stats.certification_view.panel``), kept while the workspace is unchanged: it reads every audit
    and runs the alternative annotator test, which cost the page 1.15× a new tab when run on each render."""
    from lsqa.dashboard import certification_view

    return certification_view.panel(workspace, judge, thresholds=thresholds)


@kept_while_unchanged()
def judges_by_family(workspace: Path) -> dict[str, list[str]]:
    """Judge names: ``pairwise`` (side by side, rankable) and ``binary`` (yes/no, accuracy)."""
    return analysis.judges_by_family(workspace)


# --------------------------------------------------------------------------------- leaderboard

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
    (``leaderboard_view.baseline``), are each fitted once: with the rank intervals, "All
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


# ----------------------------------------------------------------------------------- agreement

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
    # and detach the file each (2-4 ms apiece, a quarter of the report on the full demo).
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


def confusion_rows(result: dict) -> list[dict]:
    """A confusion matrix as table rows (Fig. 4): one row per label of rater A, one column per label
    of rater B, counts of items. The Agreement page shows these as tables: its five heatmaps cost a
    new browser tab ~0.8 s of plotly.js (loading and drawing), a table next to nothing."""
    corner = f"{result['rater_a']} ↓ · {result['rater_b']} →"
    return [{corner: a, **{b: n for b, n in zip(result["labels"], row)}}
            for a, row in zip(result["labels"], result["confusion"])]


def preference_rows(table: dict) -> list[dict]:
    """The §5.1 self-preference 2×2 as table rows: per judge, how often it preferred each system."""
    return [{"judge": judge, **{f"preferred {system}": n for system, n in zip(table["systems"], counts)}}
            for judge, counts in zip(table["judges"], table["counts"])]


def self_preference(workspace: Path, judges: tuple[str, str], systems: tuple[str, str]) -> dict | None:
    try:
        return analysis.self_preference(workspace, judges, systems)
    except NoVerdicts:
        return None


def pairwise_systems(workspace: Path) -> list[str]:
    with store.connect(workspace) as con:
        return [s["name"] for s in results_store.list_systems(con)]


# -------------------------------------------------------------------------------------- corpus

@kept_while_unchanged()
def books(workspace: Path) -> list[dict]:
    with store.connect(workspace) as con:
        return corpus_store.books(con)


def passages(workspace: Path, document_id: str, *, page: int = 0, page_size: int = 10, contains: str = "") -> dict:
    from lsqa.text import highlight

    with store.connect(workspace) as con:
        rows, total = corpus_store.passage_page(con, document_id, page * page_size, page_size, contains.strip())
    for r in rows:
        spans = []
        if contains.strip():
            low, needle = r["text"].lower(), contains.strip().lower()
            i = low.find(needle)
            while i >= 0:
                spans.append((i, i + len(needle)))
                i = low.find(needle, i + len(needle))
        r["html"] = highlight.marked_html(r["text"], spans)
    return {"rows": rows, "total": total, "pages": max(1, -(-total // page_size))}


def entities(workspace: Path, document_id: str) -> list[dict]:
    with store.connect(workspace) as con:
        return corpus_store.list_entities(con, document_id)


def binary_judges(workspace: Path) -> list[str]:
    """The yes/no judges (they say whether one answer is right)."""
    return analysis.judges_by_family(workspace)[vocabulary.BINARY]


@kept_while_unchanged()
def questions_and_answers(workspace: Path, document_id: str) -> dict:
    """The book's questions with both references and every system's answer (one column per system)."""
    with store.connect(workspace) as con:
        rows = corpus_store.questions_with_answers(con, document_id)
    by_q: dict[str, dict] = {}
    systems: list[str] = []
    for r in rows:
        q = by_q.setdefault(r["question_id"], {"question_id": r["question_id"], "origin": r["origin"],
                                               "question": r["question"], "reference 1": r["reference_1"],
                                               "reference 2": r["reference_2"]})
        if r["system_name"]:
            q[r["system_name"]] = r["answer"] if r["status"] == "ok" else f"[{r['status']}]"
            if r["system_name"] not in systems:
                systems.append(r["system_name"])
    return {"rows": list(by_q.values()), "systems": sorted(systems)}


# ------------------------------------------------------------------------------------------ run

def config_files() -> list[Path]:
    return sorted(CONFIG_DIR.glob("*.toml"))


def read_config_file(path: str | Path) -> tuple[str, dict]:
    """The TOML text and its dict (validated by ``lsqa.config.study``; InputError if it cannot run)."""
    import tomllib

    from lsqa.config.study import run_config_from_dict

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    run_config_from_dict(data, source=str(path))
    return text, data


def model_choices() -> dict[str, str]:
    from lsqa.llm import embedded_models

    return embedded_models()


def run_choices(workspace: Path) -> dict:
    """Books with text, the embedded models, context settings and judge kinds for the run form."""
    return {"books": _books_with_text(workspace), "models": model_choices(), "judge_kinds": list(judge_kinds.names()),
            "contexts": ["none", "retrieval:4000", "full"]}


@kept_while_unchanged()
def _books_with_text(workspace: Path) -> list[dict]:
    with store.connect(workspace) as con:
        return [{"id": d["id"], "title": d["title"], "questions": d["n_questions"]}
                for d in corpus_store.list_documents(con) if d["has_text"]]


def study_config(*, books: list[str], questions: str, max_questions: int | None, sample: int, seed: int,
                 systems: list[dict], judges: list[dict], use_cache: bool = True) -> dict:
    """A study config dict (the same keys as a ``configs/*.toml``) from the run form.

    Raises ``lsqa.errors.InputError`` naming the problem when it could not run.
    """
    from lsqa.config.study import run_config_from_dict

    config: dict = {"documents": list(books), "questions": questions, "sample": int(sample), "seed": int(seed),
                    "use_cache": bool(use_cache)}
    if max_questions:
        config["max_questions"] = int(max_questions)
    config["systems"] = [_clean(s) for s in systems if _clean(s)]
    config["judges"] = [_clean(j) for j in judges if _clean(j)]
    run_config_from_dict(config, source="run form")
    return config


def _clean(row: dict) -> dict:
    """A table-editor row without empty cells (None, '', NaN), with numpy scalars made plain."""
    out = {}
    for k, v in row.items():
        if hasattr(v, "item"):
            v = v.item()
        if v is None or v == "" or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, float) and v.is_integer() and k != "threshold":
            v = int(v)  # a table-editor column with an empty cell turns whole numbers into floats
        out[k] = v.strip() if isinstance(v, str) else v
    return out


def records(table) -> list[dict]:
    """Rows of what ``st.data_editor`` returned (a DataFrame or a list of dicts)."""
    if hasattr(table, "to_dict"):
        return table.to_dict("records")
    return [dict(r) for r in table]


def stage_rows(summary: dict) -> list[dict]:
    """A run summary's stages as table rows (``lsqa.study.pipeline.RunSummary.to_dict``)."""
    return [{"stage": s["stage"], "tasks": s["tasks"], "written": s["written"], "already done": s["skipped"],
             "calls made": s["calls_made"], "cached": s["calls_cached"], "failed": s["calls_failed"],
             "errors": len(s["errors"]), "cost (USD)": s["cost_usd"], "seconds": round(s["seconds"], 1)}
            for s in summary["stages"]]


def run_history(workspace: Path, limit: int = 20) -> list[dict]:
    with store.connect(workspace) as con:
        return runs_store.recent_runs(con, limit)


def group_by(rows: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return dict(out)


def study_plan(workspace: Path, config: dict) -> dict:
    """``lsqa plan`` for a study config built on the Run page: the JSON shape plus the notes on estimates."""
    from lsqa.study.plan import plan
    from lsqa.config.study import run_config_from_dict

    planned = plan(workspace, run_config_from_dict(config, source="Run page"))
    return {**planned.to_dict(), "notes": [line for line in planned.lines() if line.startswith("~")]}


# ------------------------------------------------------------------------------- style control

@kept_while_unchanged()
def style_controlled(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
                     bootstrap: int = 1000, seed: int = 0, by_question: bool = False) -> dict:
    """The Leaderboard's style-control switch for one judge: the style-controlled ranking (answer
    length as a covariate; ``analysis.style_ranking``) with the plain one beside it, as table rows
    and one sentence on the length coefficient (``leaderboard_view.style_rows`` / ``style_summary``).
    ``{"result", "rows", "summary", "error"}``; ``error`` says why there is nothing to show."""
    from lsqa.dashboard import leaderboard_view as lv

    try:
        plain = analysis.ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                                 bootstrap=bootstrap, seed=seed, by_question=by_question)
        style = analysis.style_ranking(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                                       bootstrap=bootstrap, seed=seed, by_question=by_question)
    except (NoVerdicts, ValueError) as exc:
        return {"result": None, "rows": [], "summary": "", "error": str(exc)}
    return {"result": style, "rows": lv.style_rows(style, plain), "summary": lv.style_summary(style), "error": ""}


@kept_while_unchanged()
def length_preference_rows(workspace: Path, *, bootstrap: int = 1000, seed: int = 0) -> list[dict]:
    """The Agreement bias panel's length preference: per side-by-side judge, its length coefficient on
    all its verdicts, then the judge's and the people's on the verdicts people audited (one estimator,
    ``analysis.length_preference``), each with its 95% CI and the longer answer's win share."""
    from lsqa.dashboard import leaderboard_view as lv

    shown, _ = leaderboard_judges(workspace)
    return [lv.length_preference_row(analysis.length_preference(workspace, judge, bootstrap=bootstrap, seed=seed))
            for judge in shown[vocabulary.PAIRWISE]]
