"""The SQL of ``lsqa import-answers``: a file of answers staged, checked and written by DuckDB.
``lsqa.study.staged_answers`` decides what the SQL takes and words every error; this module only
reads and writes (the store is the one package with SQL).

``stage_file`` reads the file (``lsqa.store.staged_rows``: CSV, quoted or not, or JSONL) into TEMP
table ``STAGED`` (line, question_id, system, answer, extra) as ``lsqa.study.imports.import_answers_rows``
makes its records, or raises ``Declined`` (nothing written) for a row that importer would refuse or
read otherwise. The ``first_*`` reads give the first line of each problem it reports over the whole
file; ``insert`` writes the systems and the answers.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.store import staged_rows, staging
from lsqa.store.staged_rows import ROWS, ascii_text, strip
from lsqa.store.staging import Declined
from lsqa.text.names import MAX_NAME_CHARS

STAGED = "lsqa_import_answers"

# The row importer's columns (``lsqa.study.imports.ANSWER_ALIASES``), each meaning's names in order.
QUESTION, SYSTEM, ANSWER = ("question_id", "item_id"), ("system", "system_name"), ("answer", "answer_text", "text")


def _chosen(names: tuple[str, ...]) -> str:
    """SQL of the value the row importer takes: the first of ``names`` present and not ''."""
    return "CASE " + " ".join(f"WHEN coalesce({n}, '') <> '' THEN {n}" for n in names) + " END"


def stage_file(con, path: Path, max_cell_chars: int) -> None:
    """The answers of ``path`` in TEMP table ``STAGED``, or Declined."""
    staged_rows.stage_rows(con, path, QUESTION + SYSTEM + ANSWER, max_cell_chars, extra=True)
    q, s, a = (_chosen(names) for names in (QUESTION, SYSTEM, ANSWER))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT line, {strip('q')} AS question_id, {strip('s')} AS system, {strip('a')} AS answer, extra
        FROM (SELECT line, {q} AS q, {s} AS s, {a} AS a, extra FROM {ROWS}) ORDER BY line""")
    staging.drop(con, ROWS)
    # A value present but blank, a name beyond plain ASCII (the one name rule's Unicode tests are the
    # row importer's) or over the limit: the row importer refuses or reads it.
    bad = con.execute(f"""
        SELECT count(*) FROM {STAGED}
        WHERE coalesce(question_id, '') = '' OR coalesce(system, '') = '' OR coalesce(answer, '') = ''
           OR NOT {ascii_text('question_id')} OR NOT {ascii_text('system')}
           OR length(question_id) > {MAX_NAME_CHARS} OR length(system) > {MAX_NAME_CHARS}""").fetchone()[0]
    if bad or not con.execute(f"SELECT count(*) FROM {STAGED}").fetchone()[0]:
        raise Declined


def _first(con, sql: str):
    return con.execute(sql + " ORDER BY 1 LIMIT 1").fetchone()


def first_repeat(con):
    """(line, first line, first answer, answer) of the first row repeating a (question, system) with another answer."""
    return _first(con, f"""
        SELECT s.line, f.first_line, f.first_answer, s.answer FROM {STAGED} s
        JOIN (SELECT question_id, system, min(line) AS first_line, arg_min(answer, line) AS first_answer
              FROM {STAGED} GROUP BY ALL) f USING (question_id, system)
        WHERE s.answer <> f.first_answer""")


def first_unknown_question(con):
    """(line, question id) of the first row naming a question the workspace does not have."""
    return _first(con, f"SELECT line, question_id FROM {STAGED} WHERE question_id NOT IN (SELECT id FROM questions)")


def systems(con) -> list[str]:
    """The file's systems, sorted."""
    return [r[0] for r in con.execute(f"SELECT DISTINCT system FROM {STAGED} ORDER BY 1").fetchall()]


def first_stored_conflict(con):
    """(line, system, question id, stored text) of the first row whose answer the workspace has with another text."""
    return _first(con, f"""
        SELECT s.line, s.system, s.question_id, a.text FROM {STAGED} s
        JOIN answers a ON a.question_id = s.question_id AND a.system_name = s.system
        WHERE a.text <> s.answer""")


def insert(con) -> tuple[int, int, int]:
    """(systems added, answers added, rows of the file): systems as ``model = 'imported'``; each
    (question, system) once, from its first line, none the workspace has."""
    added_systems = con.execute(f"""
        INSERT INTO systems (name, model, context)
        SELECT DISTINCT system, 'imported', 'imported' FROM {STAGED}
        WHERE system NOT IN (SELECT name FROM systems) ORDER BY 1""").fetchone()
    total = con.execute(f"SELECT count(*) FROM {STAGED}").fetchone()[0]
    added = con.execute(f"""
        INSERT INTO answers (question_id, system_name, text, extra)
        SELECT question_id, system, answer, extra FROM {STAGED} s
        WHERE NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = s.question_id AND a.system_name = s.system)
        QUALIFY row_number() OVER (PARTITION BY question_id, system ORDER BY line) = 1
        ORDER BY line""").fetchone()
    return (int(added_systems[0]) if added_systems else 0, int(added[0]) if added else 0, int(total))


def answer_count(con) -> int:
    return int(con.execute("SELECT count(*) FROM answers").fetchone()[0])


__all__ = ["Declined", "answer_count", "first_repeat", "first_stored_conflict", "first_unknown_question", "insert",
           "stage_file", "systems"]
