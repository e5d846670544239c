"""Writing workspace tables to files (CSV, JSONL or Parquet) with DuckDB's COPY."""

from __future__ import annotations

from pathlib import Path

FORMATS = {"csv": "(FORMAT csv, HEADER true)", "jsonl": "(FORMAT json)", "parquet": "(FORMAT parquet)"}

# What a study's results are; the book texts and the call log stay in the workspace.
EXPORTS = {
    "questions": "SELECT id, document_id, origin, text, reference_1, reference_2, entity_id, prompt_id,"
                 " prompt_version, model, set_name, source_index FROM questions ORDER BY id",
    "systems": "SELECT * FROM systems ORDER BY name",
    "answers": "SELECT question_id, system_name, text, status, passages, llm_call_key FROM answers"
               " ORDER BY question_id, system_name",
    "verdicts": "SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label, raw_label,"
                " score, evidence, status, prompt_id, prompt_version, raw FROM judgments ORDER BY judge, question_id",
    "human_reviews": "SELECT * FROM human_reviews ORDER BY id",
    "reference_flags": "SELECT * FROM reference_flags ORDER BY id",
}


def copy_table(con, sql: str, path: Path, fmt: str) -> int:
    con.execute(f"COPY ({sql}) TO '{str(path).replace(chr(39), chr(39) * 2)}' {FORMATS[fmt]}")
    return int(con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0])


def export_tables(con, out_dir: Path, fmt: str) -> dict[str, int]:
    out_dir.mkdir(parents=True, exist_ok=True)
    ext = "jsonl" if fmt == "jsonl" else fmt
    return {name: copy_table(con, sql, out_dir / f"{name}.{ext}", fmt) for name, sql in EXPORTS.items()}
