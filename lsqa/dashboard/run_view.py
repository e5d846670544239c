"""The Run screen: the study configs it offers, the books, models and judge kinds of its form, the
study config built from the form, the plan before Start, a running job's progress and the run history.

The form's defaults are valid in the workspace at hand and checked before Start.

Results are kept per system and judge name (``lsqa.config.definitions``), so a form that offers
``extractive-fullbook`` must offer it as this workspace defined it (the full demo gives it a
200k-token window), or Start is refused. The defaults are the form's usual rows with every
field the workspace recorded for that name; and the whole config is checked against the
workspace's definitions on every render, so a problem shows beside the button, never only
after a click.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa import store
from lsqa.errors import InputError
from lsqa.judging import kinds as judge_kinds
from lsqa.package_files import CONFIGS, shipped_folder
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import runs as runs_store
from lsqa.store.workspace_cache import kept_while_unchanged

# The jobs the Run page starts and lists (one job per study, in the dashboard's process).
from lsqa.study.jobs import cost_so_far, list_jobs
from lsqa.study.jobs import start as start_job

__all__ = ["CONFIG_DIR", "JUDGES", "SYSTEMS", "check", "clean_numbers", "config_files", "cost_so_far", "defaults",
           "list_jobs", "model_choices", "name_warnings", "plan", "progress_of", "read_config_file", "records",
           "run_choices", "run_history", "stage_rows", "start_job", "study_config"]

CONFIG_DIR = shipped_folder(CONFIGS)  # configs/ of the repository


def config_files() -> list[Path]:
    return sorted(CONFIG_DIR.glob("*.toml"))


def read_config_file(path: str | Path) -> tuple[str, dict]:
    """The TOML text and its dict (validated by ``lsqa.config.study``; InputError if it cannot run)."""
    from lsqa.config.study import parse_config_text, run_config_from_dict

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    data = parse_config_text(text, path)
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


# ------------------------------------------------------------------------------- the form

SYSTEMS = [{"name": "extractive-nocontext", "model": "lsqa/extractive", "context": "none"},
           {"name": "extractive-rag4k", "model": "lsqa/extractive", "context": "retrieval:4000"},
           {"name": "extractive-fullbook", "model": "lsqa/extractive", "context": "full"}]
JUDGES = [{"name": "lexical-autoais-fc", "model": "lsqa/lexical-judge", "kind": "absolute", "context": "full",
           "both_orders": False, "reference": "both"},
          {"name": "lexical-sxs-fc", "model": "lsqa/lexical-judge", "kind": "pairwise", "context": "full",
           "both_orders": True, "reference": "both"}]
SYSTEM_FIELDS = ("model", "context", "max_context_tokens")
JUDGE_FIELDS = ("model", "kind", "context", "both_orders", "reference", "max_context_tokens")


def _as_recorded(row: dict, recorded: str | dict | None, fields: tuple[str, ...]) -> dict:
    if isinstance(recorded, str) and recorded:
        recorded = json.loads(recorded)
    out = {**dict.fromkeys(("max_context_tokens",)), **row}
    if not isinstance(recorded, dict):
        return out
    for f in fields:
        if f in recorded:
            value = recorded[f]
            out[f] = str(value) if f == "reference" and value is not None else value
    return out


@kept_while_unchanged()
def defaults(ws: str | Path) -> dict:
    """The form's first rows, as this workspace defined those names, and a small book to start on.

    ``{"systems": [...], "judges": [...], "book": id or None, "max_questions": 12}``.
    """
    with store.connect(ws) as con:
        systems = results_store.system_definitions(con)
        judges = results_store.judge_definitions(con)
        docs = [d for d in corpus_store.list_documents(con) if d["has_text"] and d["n_questions"]]
    book = min(docs, key=lambda d: d.get("n_tokens") or 0)["id"] if docs else None
    return {"systems": [_as_recorded(r, systems.get(r["name"]), SYSTEM_FIELDS) for r in SYSTEMS],
            "judges": [_as_recorded(r, judges.get(r["name"]), JUDGE_FIELDS) for r in JUDGES],
            "book": book, "max_questions": 12}


def check(ws: str | Path, config: dict) -> None:
    """Raise ``InputError`` when ``config`` could not run in ``ws``: it redefines a name that has results."""
    problems = _conflicts(ws, config)
    if problems:
        raise InputError("run form", "; ".join(problems),
                         hint="give the changed system or judge a new name (e.g. add '-v2')")


@kept_while_unchanged()  # checked on every render of the Run page, with the same form most of the time
def _conflicts(ws: str | Path, config: dict) -> list[str]:
    from lsqa.config import definitions
    from lsqa.config.study import run_config_from_dict

    parsed = run_config_from_dict(config, source="run form")
    with store.connect(ws) as con:
        problems = definitions.conflicts(con, parsed)
        try:
            definitions.check_run_names(con, parsed)
        except definitions.NameClash as exc:
            problems.append(str(exc))
    return problems


def clean_numbers(rows: list[dict]) -> list[dict]:
    """Whole numbers the table editor turned into floats (200000.0) back into ints."""
    return [{k: int(v) if isinstance(v, float) and v == v and v.is_integer() else v for k, v in r.items()}
            for r in rows]


@kept_while_unchanged()  # the Run page shows them on every render, before Start
def name_warnings(ws: str | Path, config: dict) -> list[str]:
    """The look-alike name warnings of ``config`` (a system or judge whose name looks like another
    of the config's or one the workspace holds: ``gpt4o`` beside ``gрt4o``), worded as ``lsqa run``
    prints them (``lsqa.config.study.name_warnings``, the one place they are worked out)."""
    from lsqa.config.study import name_warnings as warnings_of
    from lsqa.config.study import run_config_from_dict

    return warnings_of(run_config_from_dict(config, source="run form"), ws)


# The plan of a study with no task left (``lsqa.study.plan`` skips what is stored already, as the run does).
NOTHING_TO_CALL = "Plan: nothing to call. Every answer and verdict this study asks for is in the workspace already."


@kept_while_unchanged()  # shown on every render before Start: planned once per form and workspace state
def plan(ws: str | Path, config: dict) -> dict:
    """``lsqa plan`` for the config on the Run page: its JSON shape (calls new and cached, tokens, cost,
    per stage) plus the notes on what is estimated."""
    from lsqa.config.study import run_config_from_dict
    from lsqa.study.plan import plan as plan_of

    planned = plan_of(ws, run_config_from_dict(config, source="Run page"))
    return {**planned.to_dict(), "notes": [line for line in planned.lines() if line.startswith("~")]}


def progress_of(job: dict) -> tuple[float, str]:
    """A running job's progress bar (``lsqa.study.jobs`` snapshot): (fraction done, text). The
    pipeline names each stage and its number of calls before the first call goes out, then moves
    as calls finish; before that the job loads the LLM library (once per dashboard process)."""
    from lsqa.study.jobs import LOADING

    stage, done, total = job.get("stage") or "", int(job.get("done") or 0), int(job.get("total") or 0)
    if not stage:
        return 0.0, "starting"
    if stage == LOADING:
        return 0.0, f"{LOADING} (once per dashboard process)"
    if not total:
        return 0.0, f"{stage}: preparing the calls"
    return min(1.0, done / total), f"{stage}: {done:,} / {total:,} calls"
