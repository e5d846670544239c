"""Who owns a system or judge name: the pipeline (a model it runs) or an import."""

from __future__ import annotations


def system_models(con, names: list[str]) -> dict[str, tuple[str, str]]:
    """System name → (model, context) for the names the workspace knows."""
    rows = con.execute("SELECT name, model, context FROM systems WHERE name IN (SELECT unnest(?))",
                       [list(names)]).fetchall()
    return {name: (model, context) for name, model, context in rows}


def systems_with_answers(con, names: list[str]) -> set[str]:
    rows = con.execute("SELECT DISTINCT system_name FROM answers WHERE system_name IN (SELECT unnest(?))",
                       [list(names)]).fetchall()
    return {r[0] for r in rows}


def verdict_kinds(con, judges: list[str]) -> dict[str, set[str]]:
    """Judge name → the kinds of the verdicts it has."""
    rows = con.execute("SELECT judge, list(DISTINCT kind) FROM judgments WHERE judge IN (SELECT unnest(?))"
                       " GROUP BY judge", [list(judges)]).fetchall()
    return {judge: set(kinds) for judge, kinds in rows}


def judge_kinds(con, judges: list[str]) -> dict[str, str]:
    """Judge name → the kind in its recorded definition (judges a run config declared)."""
    rows = con.execute("SELECT name, json_extract_string(definition, '$.kind') FROM judges"
                       " WHERE name IN (SELECT unnest(?))", [list(judges)]).fetchall()
    return {name: kind for name, kind in rows if kind}
