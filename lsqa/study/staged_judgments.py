"""``lsqa import-judgments`` in SQL (issue 35): a million verdicts read, checked and written by DuckDB.

The file is loaded as lines (``lsqa.store.staging``), parsed and checked over the whole table in
SQL, its ids computed in SQL (``sha1`` of the \\x1f-joined key, as ``lsqa.judging.ids``) and written
with one INSERT ... SELECT in the write's transaction. Peak memory is DuckDB's limit for the import,
not a Python object per verdict.

The SQL takes only what it can read exactly as the row-by-row importer does (``lsqa.study.imports``):
*plain* files, in which every line is printable ASCII (no tab, no control character, nothing that
needs a Unicode rule), CSV without quotes whose first line is the header, JSONL whose every line is a
flat object of known columns with text values without escapes; and *good* rows: a known kind of
answers that is not scored, names within the limit, a label of the kind, the pairwise rules,
shown_order and reference as the row importer takes them. Anything else — a bad row, a quoted CSV,
a name in another script, a similarity, evidence as a list — and ``import_judgments_staged`` returns
None before writing anything: the row importer reads that file and words its error, so the errors
of a bad file stay exactly what they were (tests/test_staged_imports.py compares the two).

The checks over the file's good rows are the row importer's, in its order, with its words: a key
repeated with another label, an unknown question, a rater a run config declared with another kind,
a verdict the workspace has with another label. The first offending line is the one named.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from lsqa import store
from lsqa.config import definitions
from lsqa.corpus.tables import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.errors import InputError
from lsqa.judging import kinds as judge_kinds
from lsqa.store import queue_signals, staging
from lsqa.store import results as results_store
from lsqa.text.names import MAX_NAME_CHARS, lookalike_warnings

LINES, ROWS, STAGED = "lsqa_import_lines", "lsqa_import_rows", "lsqa_import_verdicts"

# The columns the row importer knows (``lsqa.study.imports.JUDGMENT_ALIASES`` and the optional ones).
KNOWN = ("question_id", "item_id", "rater", "judge", "kind", "system_a", "system_b", "label", "shown_order",
         "reference", "evidence")

# A JSON text without escapes (the line is printable ASCII: no control character can be in it).
_STRING = r'"[^"\\]*"'
_KEY_VALUE = f" *{_STRING} *: *{_STRING} *"
_FLAT_OBJECT = f"^ *\\{{({_KEY_VALUE}(,{_KEY_VALUE})*)? *\\}} *$"

REPEAT_WHAT = "the verdict of this rater on this item (question, systems, order, reference)"


class _Declined(Exception):
    """The file is not one the SQL reads exactly: roll back and let the row importer read it."""


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _json_text(expr: str) -> str:
    """SQL of json.dumps(``expr``) for printable ASCII text: only " and \\ are escaped."""
    return f"""('"' || replace(replace({expr}, '\\', '\\\\'), '"', '\\"') || '"')"""


def _kinds_sql() -> str:
    """The kinds the SQL takes, with each label as written → the canonical one (a VALUES list)."""
    rows = []
    for record in judge_kinds.all_kinds():
        if record.about_references or record.scored:
            continue  # refused, or a label that may be a score: the row importer's
        for alias, label in record.aliases.items():
            rows.append(f"({_sql_text(record.name)}, {_sql_text(record.family)}, {str(record.pairwise).lower()}, "
                        f"{_sql_text(alias)}, {_sql_text(label)})")
    return "(VALUES " + ", ".join(rows) + ") AS k(kind, family, pairwise, alias, label)"


def _plain_lines(con) -> bool:
    """Every line printable ASCII or empty."""
    return not con.execute(f"SELECT count(*) FROM {LINES} WHERE NOT regexp_full_match(text, '[\\x20-\\x7e]*')"
                           ).fetchone()[0]


def _csv_rows(con, path: Path) -> str:
    """The CSV's rows as the columns of ``KNOWN`` (stripped text, NULL when absent) plus ``extra``,
    in a TEMP table ``ROWS``; _Declined when the SQL cannot read the file as the row importer does."""
    if con.execute(f"SELECT count(*) FROM {LINES} WHERE contains(text, '\"')").fetchone()[0]:
        raise _Declined  # quotes: the csv module's rules
    header_text = con.execute(f"SELECT text FROM {LINES} WHERE line = 1").fetchone()
    if not header_text or not header_text[0] or not header_text[0].replace(",", "").strip():
        raise _Declined
    header = [c.strip().lower() for c in header_text[0].split(",")]
    if len(set(header)) != len(header):
        raise _Declined
    n = len(header)
    # Python's csv: a line of blank cells is skipped; a line of another number of fields is an error.
    bad = con.execute(f"""
        SELECT count(*) FROM {LINES}
        WHERE line > 1 AND text IS NOT NULL AND NOT regexp_full_match(text, '[ ,]*')
          AND (len(string_split(text, ',')) <> {n}
               OR list_max(list_transform(string_split(text, ','), lambda c: length(c))) > {MAX_CELL_CHARS})""").fetchone()[0]
    if bad:
        raise _Declined
    cell = {name: f"trim(cells[{i + 1}])" for i, name in enumerate(header)}
    columns = ", ".join(f"{cell.get(name, 'NULL')} AS {name}" for name in KNOWN)
    if "imported_from" in header:
        raise _Declined  # the row importer lets the file's value win over the path: rare, kept there
    # json.dumps({"imported_from": path, **extras}, sort_keys=True): keys in code point order.
    items = sorted([("imported_from", _sql_text(json.dumps(str(path))))]
                   + [(k, _json_text(cell[k])) for k in header if k not in KNOWN])
    extra = " || ', ' || ".join(f"{_sql_text(json.dumps(k) + ': ')} || {value}" for k, value in items)
    extra = f"('{{' || {extra} || '}}')"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {ROWS} AS
        SELECT line, {columns}, {extra} AS extra
        FROM (SELECT line, string_split(text, ',') AS cells FROM {LINES}
              WHERE line > 1 AND text IS NOT NULL AND NOT regexp_full_match(text, '[ ,]*'))""")
    return "csv"


def _jsonl_rows(con, path: Path) -> None:
    """The JSONL's rows as in ``_csv_rows``; _Declined unless every non-blank line is a flat object
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
        raise _Declined
    paths = "[" + ", ".join(_sql_text(f'$."{k}"') for k in KNOWN) + "]"
    columns = ", ".join(f"v[{i + 1}] AS {name}" for i, name in enumerate(KNOWN))
    extra = _sql_text("{" + f'"imported_from": {json.dumps(str(path))}' + "}")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {ROWS} AS
        SELECT line, {columns}, {extra} AS extra
        FROM (SELECT line, json_extract_string(text, {paths}) AS v FROM {LINES}
              WHERE text IS NOT NULL AND trim(text) <> '')""")


def _stage(con) -> None:
    """The verdicts of ``ROWS`` as the row importer makes them, in TEMP table ``STAGED``;
    _Declined if any row is one the row importer would refuse or read otherwise."""
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
        FROM {ROWS}),
        c AS (
            SELECT line, trim(q_raw) AS question_id, trim(r_raw) AS judge, lower(trim(k_raw)) AS kind,
                   trim(a_raw) AS system_a, trim(b_raw) AS system_b, trim(l_raw) AS raw_label,
                   CASE WHEN o_raw = '' THEN 'ab' ELSE lower(trim(o_raw)) END AS shown_order,
                   trim(ref_raw) AS reference, evidence, extra,
                   q_raw, r_raw, k_raw, a_raw, l_raw, b_raw, o_raw, ref_raw
            FROM r),
        j AS (
            SELECT c.*, k.family, k.pairwise, k.label
            FROM c LEFT JOIN {_kinds_sql()}
              ON k.kind = c.kind AND k.alias = lower(trim(c.raw_label, '''"')))
        SELECT line, sha1(concat_ws(chr(31), judge, kind, question_id, system_a, system_b, shown_order, reference))
                   AS id,
               judge, kind, family, question_id, system_a, system_b, shown_order, reference, label, raw_label,
               CASE WHEN evidence = '' THEN '[]' ELSE '[' || {_json_text('evidence')} || ']' END AS evidence,
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
                AND shown_order IN ('ab', 'ba') AND reference IN ('', '1', '2')) AS ok
        FROM j""")
    if con.execute(f"SELECT count(*) FROM {STAGED} WHERE NOT coalesce(ok, false)").fetchone()[0]:
        raise _Declined
    if not con.execute(f"SELECT count(*) FROM {STAGED}").fetchone()[0]:
        raise _Declined  # no data rows: the row importer says so


def _first(con, sql: str, params=()):
    row = con.execute(sql + " ORDER BY 1 LIMIT 1", params).fetchone()
    return row


def _check(con, path: Path) -> None:
    """The row importer's checks over the whole file, in its order; InputError at the first line."""
    repeat = _first(con, f"""
        SELECT s.line, f.first_line, f.first_label, s.label FROM {STAGED} s
        JOIN (SELECT id, min(line) AS first_line, arg_min(label, line) AS first_label FROM {STAGED} GROUP BY id) f
          USING (id)
        WHERE s.label IS DISTINCT FROM f.first_label""")
    if repeat:
        line, first_line, first_label, label = repeat
        raise InputError(path, f"{REPEAT_WHAT} repeats line {first_line} with another label "
                               f"({first_label!r}, here {label!r})", line=line,
                         hint="keep one row per item, or give the raters or systems different names")
    unknown = _first(con, f"SELECT line, question_id FROM {STAGED} WHERE question_id NOT IN (SELECT id FROM questions)")
    if unknown:
        raise InputError(path, f"unknown question id {unknown[1]!r}", line=unknown[0],
                         hint="import the questions first (lsqa ingest-narrativeqa / lsqa run)")
    declared = _first(con, f"""
        SELECT s.line, s.judge, s.kind FROM {STAGED} s
        JOIN (SELECT name, json_extract_string(definition, '$.kind') AS declared FROM judges) d ON d.name = s.judge
        WHERE coalesce(d.declared, '') <> '' AND d.declared <> s.kind""")
    if declared:
        definitions.check_imported_verdicts(con, path, [declared])
    stored = _first(con, f"""
        SELECT s.line, s.judge, j.label FROM {STAGED} s JOIN judgments j USING (id)
        WHERE j.label IS DISTINCT FROM s.label""")
    if stored:
        raise InputError(path, f"rater {stored[1]!r} already has the verdict {stored[2]!r} on this item "
                               "in the workspace", line=stored[0], hint="give the new verdicts another rater name")


def _notes(con) -> list[str]:
    """The look-alike warnings of the row importer: the file's names in order of first appearance."""
    raters = [r[0] for r in con.execute(f"SELECT judge FROM {STAGED} GROUP BY judge ORDER BY min(line)").fetchall()]
    systems = [r[0] for r in con.execute(f"""
        SELECT s FROM (SELECT system_a AS s, 2 * line AS pos FROM {STAGED}
                       UNION ALL SELECT system_b, 2 * line + 1 FROM {STAGED} WHERE system_b <> '')
        GROUP BY s ORDER BY min(pos)""").fetchall()]
    return (lookalike_warnings(raters, results_store.judge_definitions(con), what="rater")
            + lookalike_warnings(systems, results_store.system_definitions(con), what="system"))


def _insert(con) -> tuple[int, int]:
    """(verdicts added, rows of the file): each id once (its first line), none the workspace has."""
    queue_signals.mark_from(con, f"SELECT question_id FROM {STAGED}")  # the audit queue's kept signals
    total, distinct = con.execute(f"SELECT count(*), count(DISTINCT id) FROM {STAGED}").fetchone()
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
    return int(added[0]) if added else 0, int(total)


def _verdicts(con) -> int:
    return int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])


def import_judgments_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """Import the verdicts of ``path`` in SQL, or None (nothing written) when the file is not one the
    SQL reads exactly as the row importer: the caller then imports it row by row."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        return None
    try:
        if not path.is_file() or not 0 < path.stat().st_size <= MAX_TABLE_BYTES:
            return None  # the row importer words what is wrong
        folder = Path(workspace).resolve().parent
        if not Path(workspace).is_file() or store.is_read_only(workspace) or not os.access(folder, os.W_OK):
            # A new workspace, or one that cannot be written (nor its spill folder made): the row
            # importer reads the file first and says what is wrong with it before the workspace's refusal.
            return None
    except OSError:
        return None
    summary = IngestSummary(str(path))
    try:
        # The limit and its spill folder outlive the write: DuckDB may keep the transaction's rows in
        # the spill folder until they are committed (and the queue's catch-up after reads them all).
        with store.connect(workspace) as settings, \
                staging.bounded_memory(settings, folder, _verdicts(settings)), store.write(workspace) as con:
            if staging.load_lines(con, path, LINES) is None or not _plain_lines(con):
                raise _Declined
            if suffix == ".csv":
                _csv_rows(con, path)
            else:
                _jsonl_rows(con, path)
            staging.drop(con, LINES)
            _stage(con)
            staging.drop(con, ROWS)
            _check(con, path)
            summary.notes.extend(_notes(con))
            added, total = _insert(con)
    except _Declined:
        return None
    summary.add("judgments", added)
    summary.skip("judgments", total - added)
    return summary


__all__ = ["import_judgments_staged"]
