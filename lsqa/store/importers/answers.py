"""Answers made elsewhere (``lsqa import-answers``) as an input record: staged, checked, inserted in SQL.

``stage`` reads the file (``lsqa.store.importers.rows``: CSV, quoted or not, or JSONL) into TEMP table
``STAGED`` (line, question_id, system, answer, extra) as the strict row reader makes its records, or
raises ``Declined`` (nothing written) for a row that reader would refuse or read otherwise. The checks
name the first line of each problem over the whole file, in order: a (question, system) repeated with
another answer, an unknown question, a system a run config gave a model (the caller's hook), an answer
the workspace has with another text. ``insert`` writes the systems and the answers.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.store.importers import values
from lsqa.store.importers.lines import drop
from lsqa.store.importers.rows import ROWS, ascii_text, strip
from lsqa.store.importers.skeleton import QUESTIONS_FIRST, Check, Declined, Hook, Input
from lsqa.text.names import MAX_NAME_CHARS

STAGED = "lsqa_import_answers"

# The file's columns, each meaning's names in order.
QUESTION, SYSTEM, ANSWER = ("question_id", "item_id"), ("system", "system_name"), ("answer", "answer_text", "text")
# Each meaning's columns, in the order a row's first filled one is taken.
ALIASES = {"question_id": QUESTION, "system": SYSTEM, "answer": ANSWER}


def _chosen(names: tuple[str, ...]) -> str:
    """SQL of the value the row importer takes: the first of ``names`` present and not ''."""
    return "CASE " + " ".join(f"WHEN coalesce({n}, '') <> '' THEN {n}" for n in names) + " END"


def _stage(con, path: Path) -> tuple[int, int]:
    """The answers of the file's rows in TEMP table ``STAGED``, or Declined. Returns (rows, distinct
    (question, system)): no repeat to look for, nor to write once, when the two are equal."""
    q, s, a = (_chosen(names) for names in (QUESTION, SYSTEM, ANSWER))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT line, {strip('q')} AS question_id, {strip('s')} AS system, {strip('a')} AS answer, extra
        FROM (SELECT line, {q} AS q, {s} AS s, {a} AS a, extra FROM {ROWS}) ORDER BY line""")
    # A value present but blank, a name beyond plain ASCII (the one name rule's Unicode tests are the
    # row importer's) or over the limit: the row importer refuses or reads it.
    bad, total, distinct = con.execute(f"""
        SELECT count(*) FILTER (coalesce(question_id, '') = '' OR coalesce(system, '') = '' OR coalesce(answer, '') = ''
                                OR NOT {ascii_text('question_id')} OR NOT {ascii_text('system')}
                                OR length(question_id) > {MAX_NAME_CHARS} OR length(system) > {MAX_NAME_CHARS}),
               count(*), count(DISTINCT (question_id, system))
        FROM {STAGED}""").fetchone()
    if bad or not total:
        raise Declined
    return int(total), int(distinct)


def systems(con) -> list[str]:
    """The file's systems, sorted."""
    return [r[0] for r in con.execute(f"SELECT DISTINCT system FROM {STAGED} ORDER BY 1").fetchall()]


def _insert(con, counts: tuple[int, int]) -> tuple[int, int, int]:
    """(systems added, answers added, rows of the file): systems as ``model = 'imported'``; each
    (question, system) once, from its first line, none the workspace has (``counts``: ``_stage``'s)."""
    total, distinct = counts
    # The window that keeps a repeat's first line only when the file repeats a (question, system).
    once = "QUALIFY row_number() OVER (PARTITION BY question_id, system ORDER BY line) = 1 ORDER BY line" \
        if distinct < total else ""
    added_systems = con.execute(f"""
        INSERT INTO systems (name, model, context)
        SELECT DISTINCT system, 'imported', 'imported' FROM {STAGED}
        WHERE system NOT IN (SELECT name FROM systems) ORDER BY 1""").fetchone()
    added = con.execute(f"""
        INSERT INTO answers (question_id, system_name, text, extra)
        SELECT question_id, system, answer, extra FROM {STAGED} s
        WHERE NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = s.question_id AND a.system_name = s.system)
        {once}""").fetchone()
    return (int(added_systems[0]) if added_systems else 0, int(added[0]) if added else 0, int(total))


def _restage(con, path: Path) -> tuple[int, int]:
    """A file ``_stage`` declines in ``STAGED``, by the table reader, its values checked
    (``lsqa.store.importers.values``); the counts ``_stage`` returns."""
    table = values.stage(con, path, ALIASES, rules={"answer": "text"})
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {STAGED} AS
                    SELECT line, question_id, system, answer, extra FROM {table} ORDER BY k""")
    drop(con, table)
    return _counts(con)


def _counts(con) -> tuple[int, int]:
    return tuple(con.execute(f"SELECT count(*), count(DISTINCT (question_id, system)) FROM {STAGED}").fetchone())


RECORD = Input(
    name="answers", staged=STAGED, known=QUESTION + SYSTEM + ANSWER, stage=_stage, insert=_insert, indexed="answers",
    columns={"line": "BIGINT", "question_id": "VARCHAR", "system": "VARCHAR", "answer": "VARCHAR", "extra": "VARCHAR"},
    restage=_restage,
    checks=(
        Check("""SELECT s.line, f.first_line, f.first_answer, s.answer FROM {staged} s
                 JOIN (SELECT question_id, system, min(line) AS first_line, arg_min(answer, line) AS first_answer
                       FROM {staged} GROUP BY ALL) f USING (question_id, system)
                 WHERE s.answer <> f.first_answer""",
              "the answer of this system to this question repeats line {1} with another answer ({2!r}, here {3!r})",
              "keep one row per item, or give the raters or systems different names",
              applies=lambda counts: counts[1] < counts[0]),
        Check("SELECT line, question_id FROM {staged} WHERE question_id NOT IN (SELECT id FROM questions)",
              "unknown question id {1!r}", QUESTIONS_FIRST),
        Hook("systems"),
        Check("""SELECT s.line, s.system, s.question_id, left(a.text, 60) FROM {staged} s
                 JOIN answers a ON a.question_id = s.question_id AND a.system_name = s.system
                 WHERE a.text <> s.answer""",
              "system {1!r} already has another answer to {2} in the workspace ({3!r})",
              "give the new answers another system name"),
    ))


__all__ = ["ALIASES", "RECORD", "systems"]
