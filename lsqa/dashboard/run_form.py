"""The Run page's form: defaults that are valid in the workspace at hand, checked before Start.

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
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store.workspace_cache import kept_while_unchanged

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
    from lsqa.config.study import name_warnings as warnings_of, run_config_from_dict

    return warnings_of(run_config_from_dict(config, source="run form"), ws)


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
