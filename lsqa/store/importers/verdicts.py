"""Verdicts made elsewhere (``lsqa import-judgments``) as an input record: staged, checked, inserted in SQL.

``stage`` makes the file's rows (``lsqa.store.importers.rows``) verdicts and computes their ids in SQL
(``lsqa.store.verdict_ids.ID_SQL``); it raises ``Declined``, before anything is written, for whatever it
cannot read exactly as the strict row reader the tests keep as the oracle. The checks name the first
line of each problem over the whole file, in order: a key repeated with another label, an unknown
question, a rater a run config declared with another kind (the caller's hook), a verdict the workspace
has with another label. ``insert`` writes each new verdict once, from its first line.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.store import queue_signals, verdict_ids
from lsqa.store.importers import rows
from lsqa.store.importers.skeleton import QUESTIONS_FIRST, Check, Declined, Hook, Input, first
from lsqa.text.names import MAX_NAME_CHARS

STAGED = "lsqa_import_verdicts"

# The columns the row importer knows (``lsqa.study.imports.JUDGMENT_ALIASES`` and the optional ones).
KNOWN = ("question_id", "item_id", "rater", "judge", "kind", "system_a", "system_b", "label", "shown_order",
         "reference", "evidence")


def kinds_values(kinds: list[tuple[str, str, bool, str, str]]) -> str:
    """SQL of the kinds the SQL takes: (kind, family, pairwise, label as written, canonical label) rows
    as a VALUES list aliased ``k``."""
    text = rows.sql_text
    values = [f"({text(kind)}, {text(family)}, {str(pairwise).lower()}, {text(alias)}, {text(label)})"
              for kind, family, pairwise, alias, label in kinds]
    return "(VALUES " + ", ".join(values) + ") AS k(kind, family, pairwise, alias, label)"


def _stage(con, path: Path, *, kinds: list[tuple[str, str, bool, str, str]]) -> tuple[int, int]:
    """The verdicts of the file's rows (``rows.ROWS``) as the row reader makes them, in TEMP
    table ``STAGED``; Declined if any row is one the row reader would refuse or read otherwise.
    ``kinds`` as ``kinds_values``. Returns (rows, distinct ids): no repeat to look for when the two are equal."""
    kinds = kinds_values(kinds)
    # A value as the row importer takes it: absent or '' is missing; otherwise stripped, and a
    # value that strips to nothing is an error (the SQL declines: ok is false).
    def chosen(*names: str) -> str:
        return "CASE " + " ".join(f"WHEN coalesce({n}, '') <> '' THEN {n}" for n in names) + " END"

    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        WITH r AS (
        SELECT line, {chosen('question_id', 'item_id')} AS q_raw, {chosen('rater', 'judge')} AS r_raw,
               {chosen('kind')} AS k_raw, {chosen('system_a')} AS a_raw, {chosen('label')} AS l_raw,
               coalesce(system_b, '') AS b_raw, coalesce(shown_order, '') AS o_raw,
               coalesce(reference, '') AS ref_raw, coalesce(evidence, '') AS evidence, extra
        FROM {rows.ROWS}),
        c AS (
            SELECT line, trim(q_raw) AS question_id, trim(r_raw) AS judge, lower(trim(k_raw)) AS kind,
                   trim(a_raw) AS system_a, trim(b_raw) AS system_b, trim(l_raw) AS raw_label,
                   CASE WHEN o_raw = '' THEN 'ab' ELSE lower(trim(o_raw)) END AS shown_order,
                   trim(ref_raw) AS reference, evidence, extra,
                   q_raw, r_raw, k_raw, a_raw, l_raw, b_raw, o_raw, ref_raw
            FROM r),
        j AS (
            SELECT c.*, k.family, k.pairwise, k.label
            FROM c LEFT JOIN {kinds}
              ON k.kind = c.kind AND k.alias = lower(trim(c.raw_label, '''"')))
        SELECT line, {verdict_ids.ID_SQL} AS id,
               judge, kind, family, question_id, system_a, system_b, shown_order, reference, label, raw_label,
               NULL::DOUBLE AS score,
               CASE WHEN evidence = '' THEN '[]' ELSE '[' || {rows.json_text('evidence')} || ']' END AS evidence,
               extra,
               (q_raw IS NOT NULL AND r_raw IS NOT NULL AND k_raw IS NOT NULL AND a_raw IS NOT NULL
                AND l_raw IS NOT NULL
                AND question_id <> '' AND judge <> '' AND system_a <> '' AND raw_label <> ''
                AND length(question_id) <= {MAX_NAME_CHARS} AND length(judge) <= {MAX_NAME_CHARS}
                AND length(system_a) <= {MAX_NAME_CHARS} AND length(system_b) <= {MAX_NAME_CHARS}
                AND (b_raw = '' OR system_b <> '') AND (o_raw = '' OR trim(o_raw) <> '')
                AND (ref_raw = '' OR reference <> '')
                AND label IS NOT NULL
                AND CASE WHEN pairwise THEN system_b <> '' AND system_b <> system_a ELSE system_b = '' END
                AND shown_order IN ('ab', 'ba') AND reference IN ('', '1', '2')
                -- Names, labels and evidence in printable ASCII: the one name rule's Unicode tests,
                -- Python's lower() and strip(), json.dumps' escapes are the row importer's. One test of
                -- the fields joined (concat reads a NULL as '', and a NULL field is refused above).
                AND {rows.ascii_text('concat(q_raw, r_raw, k_raw, a_raw, l_raw, b_raw, o_raw, ref_raw, evidence)')}
                ) AS ok
        FROM j""")
    bad, total, distinct = con.execute(f"SELECT count(*) FILTER (WHERE NOT coalesce(ok, false)), count(*),"
                                       f" count(DISTINCT id) FROM {STAGED}").fetchone()
    if bad or not total:
        raise Declined  # a row the row importer words, or no data rows (it says so)
    return int(total), int(distinct)


def names_in_order(con) -> tuple[list[str], list[str]]:
    """The file's raters and systems, each in order of first appearance (system_a before system_b)."""
    raters = [r[0] for r in con.execute(f"SELECT judge FROM {STAGED} GROUP BY judge ORDER BY min(line)").fetchall()]
    systems = [r[0] for r in con.execute(f"""
        SELECT s FROM (SELECT system_a AS s, 2 * line AS pos FROM {STAGED}
                       UNION ALL SELECT system_b, 2 * line + 1 FROM {STAGED} WHERE system_b <> '')
        GROUP BY s ORDER BY min(pos)""").fetchall()]
    return raters, systems


def _insert(con, counts: tuple[int, int], **_) -> tuple[int, int]:
    """(verdicts added, rows of the file) (``counts``: ``_stage``'s): each id once (its first line), none
    the workspace has."""
    total, distinct = counts
    queue_signals.mark_from(con, f"SELECT question_id FROM {STAGED}")  # the audit queue's kept signals
    # An exact repeat in the file (same key, same label) is written once, from its first line; the
    # window that picks it costs a second at a million rows, so only a file with repeats pays it.
    # STAGED is in line order (CREATE TABLE AS keeps it): the rows go in as the file has them. The
    # verdicts the workspace has are found by id, not by number: a number computed for the join makes
    # DuckDB materialise every staged row first (docs/benchmarks-log/2026-12-03-import-id-number.md).
    once = "QUALIFY row_number() OVER (PARTITION BY id ORDER BY line) = 1 ORDER BY line" if distinct < total else ""
    added = con.execute(f"""
        INSERT INTO judgments (id, judge, kind, family, question_id, system_a, system_b, shown_order, reference,
                               label, raw_label, score, evidence, status, extra, id_number)
        SELECT id, judge, kind, family, question_id, system_a, system_b, shown_order, reference,
               label, raw_label, score, evidence, 'ok', extra, {verdict_ids.number_sql("s.id")}
        FROM {STAGED} s
        WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.id = s.id)
        {once}""").fetchone()
    return (int(added[0]) if added else 0), total


def first_declared_conflict(con):
    """(line, rater, kind) of the first row whose rater a run config declared with another kind."""
    return first(con, f"""
        SELECT s.line, s.judge, s.kind FROM {STAGED} s
        JOIN (SELECT name, json_extract_string(definition, '$.kind') AS declared FROM judges) d ON d.name = s.judge
        WHERE coalesce(d.declared, '') <> '' AND d.declared <> s.kind""")


REPEAT_WHAT = "the verdict of this rater on this item (question, systems, order, reference)"

RECORD = Input(
    name="judgments", staged=STAGED, known=KNOWN, stage=_stage, insert=_insert, indexed="judgments",
    fixed=lambda path: {"imported_from": str(path)},
    columns={"line": "BIGINT", "id": "VARCHAR", "judge": "VARCHAR", "kind": "VARCHAR", "family": "VARCHAR",
             "question_id": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "shown_order": "VARCHAR",
             "reference": "VARCHAR", "label": "VARCHAR", "raw_label": "VARCHAR", "score": "DOUBLE",
             "evidence": "VARCHAR", "extra": "VARCHAR"},
    recount=lambda con: tuple(con.execute(f"SELECT count(*), count(DISTINCT id) FROM {STAGED}").fetchone()),
    checks=(
        Check("""SELECT s.line, f.first_line, f.first_label, s.label FROM {staged} s
                 JOIN (SELECT id, min(line) AS first_line, arg_min(label, line) AS first_label FROM {staged} GROUP BY id) f
                   USING (id)
                 WHERE s.label IS DISTINCT FROM f.first_label""",
              REPEAT_WHAT + " repeats line {1} with another label ({2!r}, here {3!r})",
              "keep one row per item, or give the raters or systems different names",
              applies=lambda counts: counts[1] < counts[0]),
        Check("SELECT line, question_id FROM {staged} WHERE question_id NOT IN (SELECT id FROM questions)",
              "unknown question id {1!r}", QUESTIONS_FIRST),
        Hook("declared"),
        Check("""SELECT s.line, s.judge, j.label FROM {staged} s JOIN judgments j USING (id)
                 WHERE j.label IS DISTINCT FROM s.label""",
              "rater {1!r} already has the verdict {2!r} on this item in the workspace",
              "give the new verdicts another rater name"),
    ))


__all__ = ["RECORD", "REPEAT_WHAT", "first_declared_conflict", "kinds_values", "names_in_order"]
