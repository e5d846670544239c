"""The SQL of ``lsqa import-judgments`` for plain files (issue 35): a file's lines parsed, staged,
checked and written by DuckDB. ``lsqa.study.staged_judgments`` decides what the SQL takes and words
every error; this module only reads and writes (the store is the one package with SQL).

``stage_file`` loads the file (``lsqa.store.staging``), parses CSV or JSONL into the verdict columns
and computes the ids in SQL (``sha1`` of the \\x1f-joined key, as ``lsqa.store.verdict_ids``); it raises
``Declined``, before anything is written, for whatever it cannot read exactly as the row importer
(``lsqa.study.imports.import_judgments_rows``) does. The ``first_*`` reads give the first line of
each problem the row importer reports over a whole file; ``insert`` writes the staged verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa.store import queue_signals, staging, verdict_ids
from lsqa.store.staging import Declined
from lsqa.text.names import MAX_NAME_CHARS

LINES, STAGED = "lsqa_import_lines", "lsqa_import_verdicts"

# The columns the row importer knows (``lsqa.study.imports.JUDGMENT_ALIASES`` and the optional ones).
KNOWN = ("question_id", "item_id", "rater", "judge", "kind", "system_a", "system_b", "label", "shown_order",
         "reference", "evidence")

# A JSON text without escapes (the line is printable ASCII: no control character can be in it).
_STRING = r'"[^"\\]*"'
_KEY_VALUE = f" *{_STRING} *: *{_STRING} *"
_FLAT_OBJECT = f"^ *\\{{({_KEY_VALUE}(,{_KEY_VALUE})*)? *\\}} *$"



def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _json_text(expr: str) -> str:
    """SQL of json.dumps(``expr``) for printable ASCII text: only " and \\ are escaped."""
    return f"""('"' || replace(replace({expr}, '\\', '\\\\'), '"', '\\"') || '"')"""


def kinds_values(kinds: list[tuple[str, str, bool, str, str]]) -> str:
    """SQL of the kinds the SQL takes: (kind, family, pairwise, label as written, canonical label) rows
    as a VALUES list aliased ``k``."""
    rows = [f"({_sql_text(kind)}, {_sql_text(family)}, {str(pairwise).lower()}, {_sql_text(alias)}, {_sql_text(label)})"
            for kind, family, pairwise, alias, label in kinds]
    return "(VALUES " + ", ".join(rows) + ") AS k(kind, family, pairwise, alias, label)"


def stage_file(con, path: Path, kinds: list[tuple[str, str, bool, str, str]], max_cell_chars: int) -> None:
    """The verdicts of ``path`` in TEMP table ``STAGED``, or ``Declined``; ``kinds`` as ``kinds_values``."""
    if staging.load_lines(con, path, LINES) is None or not _plain_lines(con):
        raise Declined
    if path.suffix.lower() == ".csv":
        rows = _csv_rows(con, path, max_cell_chars)
    else:
        rows = _jsonl_rows(con, path)
    _stage(con, kinds_values(kinds), rows)
    staging.drop(con, LINES)


def _plain_lines(con) -> bool:
    """Every line printable ASCII or empty."""
    return not con.execute(f"SELECT count(*) FROM {LINES} WHERE NOT regexp_full_match(text, '[\\x20-\\x7e]*')"
                           ).fetchone()[0]


def _csv_rows(con, path: Path, max_cell_chars: int) -> str:
    """SQL of the CSV's rows as the columns of ``KNOWN`` (stripped text, NULL when absent) plus ``extra``
    and ``fits`` (false for a line the row importer refuses: another number of fields, a cell over the
    limit); Declined when the SQL cannot read the file as the row importer does. A query, not a table:
    ``_stage`` reads it once, so each line is split once and nothing is kept twice."""
    if con.execute(f"SELECT count(*) FROM {LINES} WHERE contains(text, '\"')").fetchone()[0]:
        raise Declined  # quotes: the csv module's rules
    header_text = con.execute(f"SELECT text FROM {LINES} WHERE line = 1").fetchone()
    if not header_text or not header_text[0] or not header_text[0].replace(",", "").strip():
        raise Declined
    header = [c.strip().lower() for c in header_text[0].split(",")]
    if len(set(header)) != len(header):
        raise Declined
    n = len(header)
    cell = {name: f"trim(cells[{i + 1}])" for i, name in enumerate(header)}
    columns = ", ".join(f"{cell.get(name, 'NULL')} AS {name}" for name in KNOWN)
    if "imported_from" in header:
        raise Declined  # the row importer lets the file's value win over the path: rare, kept there
    # json.dumps({"imported_from": path, **extras}, sort_keys=True): keys in code point order.
    items = sorted([("imported_from", _sql_text(json.dumps(str(path))))]
                   + [(k, _json_text(cell[k])) for k in header if k not in KNOWN])
    extra = " || ', ' || ".join(f"{_sql_text(json.dumps(k) + ': ')} || {value}" for k, value in items)
    extra = f"('{{' || {extra} || '}}')"
    # Python's csv: a line of blank cells is skipped; a line of another number of fields is an error.
    return f"""
        SELECT line, {columns}, {extra} AS extra,
               len(cells) = {n} AND list_max(list_transform(cells, lambda c: length(c))) <= {max_cell_chars} AS fits
        FROM (SELECT line, string_split(text, ',') AS cells FROM {LINES}
              WHERE line > 1 AND text IS NOT NULL AND NOT regexp_full_match(text, '[ ,]*'))"""


def _jsonl_rows(con, path: Path) -> str:
    """SQL of the JSONL's rows as in ``_csv_rows``; Declined unless every non-blank line is a flat object
    of known columns with text values, each key once."""
    pattern = _FLAT_OBJECT.replace("'", "''")
    known = "[" + ", ".join(_sql_text(k) for k in KNOWN) + "]"
    bad = con.execute(f"""
        SELECT count(*) FROM {LINES}
        WHERE text IS NOT NULL AND trim(text) <> ''
          AND (NOT regexp_full_match(text, '{pattern}')
               OR len(list_distinct(json_keys(text))) <> len(json_keys(text))
               OR NOT list_has_all({known}, json_keys(text)))""").fetchone()[0]
    if bad:
        raise Declined
    paths = "[" + ", ".join(_sql_text(f'$."{k}"') for k in KNOWN) + "]"
    columns = ", ".join(f"v[{i + 1}] AS {name}" for i, name in enumerate(KNOWN))
    extra = _sql_text("{" + f'"imported_from": {json.dumps(str(path))}' + "}")
    return f"""
        SELECT line, {columns}, {extra} AS extra, true AS fits
        FROM (SELECT line, json_extract_string(text, {paths}) AS v FROM {LINES}
              WHERE text IS NOT NULL AND trim(text) <> '')"""


def _stage(con, kinds: str, rows: str) -> None:
    """The verdicts of the ``rows`` query as the row importer makes them, in TEMP table ``STAGED``;
    Declined if any row is one the row importer would refuse or read otherwise."""
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
               coalesce(reference, '') AS ref_raw, coalesce(evidence, '') AS evidence, extra, fits
        FROM ({rows})),
        c AS (
            SELECT line, trim(q_raw) AS question_id, trim(r_raw) AS judge, lower(trim(k_raw)) AS kind,
                   trim(a_raw) AS system_a, trim(b_raw) AS system_b, trim(l_raw) AS raw_label,
                   CASE WHEN o_raw = '' THEN 'ab' ELSE lower(trim(o_raw)) END AS shown_order,
                   trim(ref_raw) AS reference, evidence, extra, fits,
                   q_raw, r_raw, k_raw, a_raw, l_raw, b_raw, o_raw, ref_raw
            FROM r),
        j AS (
            SELECT c.*, k.family, k.pairwise, k.label
            FROM c LEFT JOIN {kinds}
              ON k.kind = c.kind AND k.alias = lower(trim(c.raw_label, '''"')))
        SELECT line, {verdict_ids.ID_SQL} AS id,
               judge, kind, family, question_id, system_a, system_b, shown_order, reference, label, raw_label,
               CASE WHEN evidence = '' THEN '[]' ELSE '[' || {_json_text('evidence')} || ']' END AS evidence,
               extra,
               (fits AND q_raw IS NOT NULL AND r_raw IS NOT NULL AND k_raw IS NOT NULL AND a_raw IS NOT NULL
                AND l_raw IS NOT NULL
                AND question_id <> '' AND judge <> '' AND system_a <> '' AND raw_label <> ''
                AND length(question_id) <= {MAX_NAME_CHARS} AND length(judge) <= {MAX_NAME_CHARS}
                AND length(system_a) <= {MAX_NAME_CHARS} AND length(system_b) <= {MAX_NAME_CHARS}
                AND (b_raw = '' OR system_b <> '') AND (o_raw = '' OR trim(o_raw) <> '')
                AND (ref_raw = '' OR reference <> '')
                AND label IS NOT NULL
                AND CASE WHEN pairwise THEN system_b <> '' AND system_b <> system_a ELSE system_b = '' END
                AND shown_order IN ('ab', 'ba') AND reference IN ('', '1', '2')) AS ok
        FROM j""")
    if con.execute(f"SELECT count(*) FROM {STAGED} WHERE NOT coalesce(ok, false)").fetchone()[0]:
        raise Declined
    if not con.execute(f"SELECT count(*) FROM {STAGED}").fetchone()[0]:
        raise Declined  # no data rows: the row importer says so


def _first(con, sql: str, params=()):
    return con.execute(sql + " ORDER BY 1 LIMIT 1", params).fetchone()


def first_repeat(con):
    """(line, first line, first label, label) of the first row repeating an id with another label."""
    return _first(con, f"""
        SELECT s.line, f.first_line, f.first_label, s.label FROM {STAGED} s
        JOIN (SELECT id, min(line) AS first_line, arg_min(label, line) AS first_label FROM {STAGED} GROUP BY id) f
          USING (id)
        WHERE s.label IS DISTINCT FROM f.first_label""")


def first_unknown_question(con):
    """(line, question id) of the first row naming a question the workspace does not have."""
    return _first(con, f"SELECT line, question_id FROM {STAGED} WHERE question_id NOT IN (SELECT id FROM questions)")


def first_declared_conflict(con):
    """(line, rater, kind) of the first row whose rater a run config declared with another kind."""
    return _first(con, f"""
        SELECT s.line, s.judge, s.kind FROM {STAGED} s
        JOIN (SELECT name, json_extract_string(definition, '$.kind') AS declared FROM judges) d ON d.name = s.judge
        WHERE coalesce(d.declared, '') <> '' AND d.declared <> s.kind""")


def first_stored_conflict(con):
    """(line, rater, stored label) of the first row whose verdict the workspace has with another label."""
    return _first(con, f"""
        SELECT s.line, s.judge, j.label FROM {STAGED} s JOIN judgments j USING (id)
        WHERE j.label IS DISTINCT FROM s.label""")


def names_in_order(con) -> tuple[list[str], list[str]]:
    """The file's raters and systems, each in order of first appearance (system_a before system_b)."""
    raters = [r[0] for r in con.execute(f"SELECT judge FROM {STAGED} GROUP BY judge ORDER BY min(line)").fetchall()]
    systems = [r[0] for r in con.execute(f"""
        SELECT s FROM (SELECT system_a AS s, 2 * line AS pos FROM {STAGED}
                       UNION ALL SELECT system_b, 2 * line + 1 FROM {STAGED} WHERE system_b <> '')
        GROUP BY s ORDER BY min(pos)""").fetchall()]
    return raters, systems


def counts(con) -> tuple[int, int]:
    """(rows, distinct ids) of the staged verdicts: no repeat to look for when the two are equal."""
    total, distinct = con.execute(f"SELECT count(*), count(DISTINCT id) FROM {STAGED}").fetchone()
    return int(total), int(distinct)


def insert(con, total: int, distinct: int) -> int:
    """Verdicts added (``counts``): each id once (its first line), none the workspace has."""
    queue_signals.mark_from(con, f"SELECT question_id FROM {STAGED}")  # the audit queue's kept signals
    # An exact repeat in the file (same key, same label) is written once, from its first line; the
    # window that picks it costs a second at a million rows, so only a file with repeats pays it.
    # STAGED is in line order (CREATE TABLE AS keeps it): the rows go in as the file has them.
    once = "QUALIFY row_number() OVER (PARTITION BY id ORDER BY line) = 1 ORDER BY line" if distinct < total else ""
    added = con.execute(f"""
        INSERT INTO judgments (id, judge, kind, family, question_id, system_a, system_b, shown_order, reference,
                               label, raw_label, score, evidence, status, extra)
        SELECT id, judge, kind, family, question_id, system_a, system_b, shown_order, reference,
               label, raw_label, NULL, evidence, 'ok', extra
        FROM {STAGED} s
        WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.id = s.id)
        {once}""").fetchone()
    return int(added[0]) if added else 0


def verdict_count(con) -> int:
    return int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])


__all__ = ["Declined", "counts", "first_declared_conflict", "first_repeat", "first_stored_conflict", "first_unknown_question",
           "insert", "kinds_values", "names_in_order", "stage_file", "verdict_count"]
