"""Verdicts made elsewhere (``lsqa import-judgments``) as an input record: staged, checked, inserted in SQL.

``stage`` makes the file's rows (``lsqa.store.importers.rows``) verdicts and computes their ids in SQL
(``lsqa.store.verdict_ids.ID_SQL``); it raises ``Declined``, before anything is written, for whatever it
cannot read exactly as the row checks the tests keep as the oracle; ``restage`` then reads the file with
the table reader and runs every row check in SQL (the first row with a problem named). The checks name the first
line of each problem over the whole file, in order: a key repeated with another label, an unknown
question, a rater a run config declared with another kind (the caller's hook), a verdict the workspace
has with another label. ``insert`` writes each new verdict once, from its first line.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.errors import InputError
from lsqa.store import queue_signals, verdict_ids
from lsqa.store.importers import rows, values
from lsqa.store.importers.lines import drop
from lsqa.store.importers.skeleton import QUESTIONS_FIRST, Check, Declined, Hook, Input, first
from lsqa.text.names import MAX_NAME_CHARS

STAGED = "lsqa_import_verdicts"

# Each meaning's columns, in the order a row's first filled one is taken: the five a row must fill, then
# the optional ones.
ALIASES = {"question_id": ("question_id", "item_id"), "rater": ("rater", "judge"), "kind": ("kind",),
           "system_a": ("system_a",), "label": ("label",), "system_b": ("system_b",),
           "shown_order": ("shown_order",), "reference": ("reference",), "evidence": ("evidence",)}
OPTIONAL = ("system_b", "shown_order", "reference", "evidence")
# The columns the file may have.
KNOWN = tuple(n for names in ALIASES.values() for n in names)


def kinds_values(kinds: list[tuple[str, str, bool, str, str]]) -> str:
    """SQL of the kinds the SQL takes: (kind, family, pairwise, label as written, canonical label) rows
    as a relation aliased ``k``. Each column is one text constant split at a unit separator: DuckDB plans
    five constants in a fraction of the time it plans a VALUES list of every label spelling (a small
    import's largest statement)."""
    if not kinds or any("\x1f" in str(v) for row in kinds for v in row):
        raise ValueError("kinds: at least one, and no unit separator (\\x1f) in a kind or label")
    columns = [rows.sql_text("\x1f".join(str(v).lower() if isinstance(v, bool) else v for v in column))
               for column in zip(*kinds, strict=True)]
    kind, family, pairwise, alias, label = (f"unnest(string_split({c}, chr(31)))" for c in columns)
    return (f"(SELECT {kind} AS kind, {family} AS family, {pairwise}::BOOLEAN AS pairwise, {alias} AS alias,"
            f" {label} AS label) AS k")


def _stage(con, path: Path, *, kinds: list[tuple[str, str, bool, str, str]], **_) -> tuple[int, int]:
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
    raters, systems = con.execute(f"""
        SELECT (SELECT coalesce(list(judge ORDER BY first), []) FROM
                    (SELECT judge, min(line) AS first FROM {STAGED} GROUP BY judge)),
               (SELECT coalesce(list(s ORDER BY first), []) FROM
                    (SELECT s, min(pos) AS first FROM (SELECT system_a AS s, 2 * line AS pos FROM {STAGED}
                                                       UNION ALL SELECT system_b, 2 * line + 1 FROM {STAGED}
                                                       WHERE system_b <> '')
                     GROUP BY s))""").fetchone()
    return raters, systems


def beyond_ascii(con) -> bool:
    """Whether a rater or system of the file, or a judge or system the workspace has, is not all ASCII: else
    no two of them look alike (``lsqa.text.names.lookalikes`` compares ASCII names with others only), and
    the summary's look-alike notes need none of them read."""
    return con.execute(f"""
        SELECT EXISTS (SELECT 1 FROM {STAGED} WHERE {rows.beyond_ascii('concat(judge, system_a, system_b)')})
            OR EXISTS (SELECT 1 FROM (SELECT DISTINCT judge FROM judgments) WHERE {rows.beyond_ascii('judge')})
            OR EXISTS (SELECT 1 FROM judges WHERE {rows.beyond_ascii('name')})
            OR EXISTS (SELECT 1 FROM systems WHERE {rows.beyond_ascii('name')})""").fetchone()[0]


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


# What a row of a declined file may get wrong, in the order the checks of one row run (a row's first
# problem is its error; the file's first row with one is named). A meaning's value that is no value
# (``values``) comes in its place: the five required ones first, system_b after the kind, the others
# after the label.
(KIND_UNKNOWN, ABOUT_REFERENCES, NO_SYSTEM_B, SAME_SYSTEMS, SYSTEM_B_OF_ONE, LABEL, SIMILARITY, SHOWN_ORDER,
 REFERENCE) = 5, 6, 8, 9, 10, 11, 12, 14, 16
_CELL_PLACE = [0, 1, 2, 3, 4, 7, 13, 15, 17]  # of each meaning of ALIASES, in order
KINDS, LABELS, ORDERS = "lsqa_import_verdict_kinds", "lsqa_import_verdict_labels", "lsqa_import_verdict_orders"
# A similarity Python's float and DuckDB's DOUBLE read alike (no underscores, inf, nan or long exponent).
_SCORE = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,2})?"


def _judged(con, records: dict, threshold: float) -> None:
    """The distinct kinds, (kind, label) pairs and shown orders of ``VALUES``, each judged once by its kind's
    record (``records``: name -> judge kind, ``lsqa.judging.kinds``), as TEMP tables: what the row reader
    did with every row. A similarity of plain digits is left to SQL."""
    found = con.execute(f"SELECT DISTINCT kind FROM {values.VALUES} WHERE kind IS NOT NULL").fetchall()
    kinds = [{"raw": raw, "kind": raw.lower(), "known": raw.lower() in records} for (raw,) in found]
    for k in kinds:
        record = records.get(k["kind"])
        k.update(about=bool(record and record.about_references), pairwise=bool(record and record.pairwise),
                 scored=bool(record and record.scored), family=record.family if record else None)
    values.judged_table(con, KINDS, {"raw": "VARCHAR", "kind": "VARCHAR", "known": "BOOLEAN", "about": "BOOLEAN",
                                     "pairwise": "BOOLEAN", "scored": "BOOLEAN", "family": "VARCHAR"}, kinds)
    pairs = con.execute(f"""
        SELECT DISTINCT k.kind, v.label FROM {values.VALUES} v JOIN {KINDS} k ON k.raw = v.kind
        WHERE k.known AND NOT k.about AND v.label IS NOT NULL
          AND NOT (k.scored AND {rows.ascii_text('v.label')}
                   AND regexp_full_match(lower(trim(v.label, '''"')), '{_SCORE}'))""").fetchall()
    labels = []
    for kind, raw in pairs:
        record, out = records[kind], {"kind": kind, "raw": raw, "label": None, "score": None, "error": None}
        try:
            label = record.normalise_label(raw)
        except ValueError as exc:
            out["error"] = str(exc)
        else:
            if record.scored and label not in record.labels:
                # A similarity score as the label: stored as the score, the label by the rater's default
                # threshold (as the pipeline's similarity rows), never a label the statistics cannot read.
                score = float(label)
                if -1.0 <= score <= 1.0:  # not NaN or Infinity, which JSON exports cannot write
                    out.update(score=score, label="yes" if score >= threshold else "no")
            else:
                out["label"] = label
        labels.append(out)
    values.judged_table(con, LABELS, {"kind": "VARCHAR", "raw": "VARCHAR", "label": "VARCHAR", "score": "DOUBLE",
                                      "error": "VARCHAR"}, labels)
    found = con.execute(f"SELECT DISTINCT shown_order FROM {values.VALUES} WHERE shown_order IS NOT NULL").fetchall()
    orders = [{"raw": raw, "shown": (raw or "ab").lower()} for (raw,) in found]
    values.judged_table(con, ORDERS, {"raw": "VARCHAR", "shown": "VARCHAR"}, orders)


def _restage(con, path: Path, *, records: dict, threshold, references: tuple[str, ...], **_) -> tuple[int, int]:
    """A file ``_stage`` declines in ``STAGED``, by the table reader (``values``: each value checked), every
    row checked as the row reader checked it — the kind known and about answers, system_b as the kind
    wants it, the label the kind's (a similarity as its score and the label by ``threshold()``), the
    shown order ab or ba, the reference one of ``references`` — and InputError at the first row with a
    problem; the counts ``_stage`` returns."""
    values.stage(con, path, ALIASES, rules={"label": "text", "shown_order": "plain", "reference": "plain",
                                            "evidence": "texts"},
                 optional=OPTIONAL, deferred=True, fixed={"imported_from": str(path)})
    cut = threshold()
    _judged(con, records, cut)
    t = "lower(trim(v.label, '''\"'))"
    scored = f"k.scored AND {rows.ascii_text('v.label')} AND regexp_full_match({t}, '{_SCORE}')"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT *, least(CASE WHEN bad IS NOT NULL THEN {_CELL_PLACE}[bad + 1] END,
                        CASE WHEN NOT known THEN {KIND_UNKNOWN} END, CASE WHEN about THEN {ABOUT_REFERENCES} END,
                        CASE WHEN pairwise AND system_b = '' THEN {NO_SYSTEM_B} END,
                        CASE WHEN pairwise AND system_b = system_a THEN {SAME_SYSTEMS} END,
                        CASE WHEN NOT pairwise AND system_b <> '' THEN {SYSTEM_B_OF_ONE} END,
                        CASE WHEN label_error IS NOT NULL THEN {LABEL} END,
                        CASE WHEN known AND NOT about AND raw_label IS NOT NULL AND label_error IS NULL
                             AND label IS NULL THEN {SIMILARITY} END,
                        CASE WHEN shown_order NOT IN ('ab', 'ba') THEN {SHOWN_ORDER} END,
                        CASE WHEN NOT list_contains(?::VARCHAR[], reference) THEN {REFERENCE} END) AS problem
        FROM (
            SELECT v.k, v.line, v.rater AS judge, k.kind, k.family, v.question_id, v.system_a, v.system_b,
                   o.shown AS shown_order, v.reference, v.label AS raw_label, v.evidence, v.extra, v.bad,
                   k.known, k.about, k.pairwise, l.error AS label_error,
                   CASE WHEN {scored} THEN CASE WHEN TRY_CAST({t} AS DOUBLE) BETWEEN -1 AND 1
                                                THEN CASE WHEN TRY_CAST({t} AS DOUBLE) >= {cut!r} THEN 'yes' ELSE 'no' END END
                        ELSE l.label END AS label,
                   CASE WHEN {scored} THEN TRY_CAST({t} AS DOUBLE) ELSE l.score END AS score
            FROM {values.VALUES} v LEFT JOIN {KINDS} k ON k.raw = v.kind
            LEFT JOIN {LABELS} l ON l.kind = k.kind AND l.raw = v.label
            LEFT JOIN {ORDERS} o ON o.raw = v.shown_order)
        ORDER BY k""", [list(references) + [""]])
    bad = con.execute(f"SELECT k, line, problem FROM {STAGED} WHERE problem IS NOT NULL ORDER BY k, problem LIMIT 1"
                      ).fetchone()
    if bad:
        k, line, problem = bad
        if problem in _CELL_PLACE:
            values.fail(con, path, k)
        row = con.execute(f"""SELECT v.kind, v.label, s.kind, s.system_b, s.shown_order, s.reference, s.label_error
                              FROM {STAGED} s JOIN {values.VALUES} v USING (k) WHERE k = ?""", [k]).fetchone()
        raise _problem(path, line, problem, row, records, references)
    values.done(con)
    drop(con, KINDS, LABELS, ORDERS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT line, {verdict_ids.ID_SQL} AS id, judge, kind, family, question_id, system_a, system_b, shown_order,
               reference, label, raw_label, score, evidence,
               CASE WHEN score IS NULL THEN extra ELSE json_merge_patch(extra, json_object('threshold', {cut!r}))::VARCHAR
               END AS extra
        FROM {STAGED} ORDER BY k""")
    return _counts(con)


def _problem(path: Path, line, problem: int, row: tuple, records: dict, references: tuple[str, ...]) -> InputError:
    """The error of a row's first problem, in the row reader's words."""
    raw_kind, raw_label, kind, system_b, shown, reference, label_error = row
    if problem == KIND_UNKNOWN:
        return InputError(path, f"unknown kind {raw_kind!r}", line=line, hint=f"use one of {', '.join(records)}")
    if problem == ABOUT_REFERENCES:
        return InputError(path, f"{kind} verdicts are about NarrativeQA references, not answers: they are not "
                                "imported as verdicts", line=line,
                          hint=f"run a judge of kind {kind} in a study (docs/reference-errors.md), or import "
                               "the verdicts under a kind that rates answers")
    if problem == NO_SYSTEM_B:
        return InputError(path, "a pairwise verdict needs system_b", line=line, hint="add the other system")
    if problem == SAME_SYSTEMS:
        return InputError(path, f"system_a and system_b are both {system_b!r}", line=line,
                          hint="a system cannot be compared with itself; fix the names")
    if problem == SYSTEM_B_OF_ONE:
        return InputError(path, f"a {kind} verdict rates one answer, but system_b is {system_b!r}", line=line,
                          hint="leave system_b empty, or use a pairwise kind")
    if problem == LABEL:
        return InputError(path, label_error, line=line, hint=records[kind].label_hint)
    if problem == SIMILARITY:
        return InputError(path, f"similarity {raw_label!r} is not a cosine similarity", line=line,
                          hint="give a number from -1 to 1, or yes / no")
    if problem == SHOWN_ORDER:
        return InputError(path, f"shown_order must be ab or ba, not {shown!r}", line=line,
                          hint="write ab (system_a shown first) or ba")
    return InputError(path, f"reference must be {' or '.join(references)}, not {reference!r}", line=line,
                      hint="write the NarrativeQA reference the verdict used, or leave it empty")


def _counts(con) -> tuple[int, int]:
    return tuple(con.execute(f"SELECT count(*), count(DISTINCT id) FROM {STAGED}").fetchone())


REPEAT_WHAT = "the verdict of this rater on this item (question, systems, order, reference)"

RECORD = Input(
    name="judgments", staged=STAGED, known=KNOWN, stage=_stage, insert=_insert, indexed="judgments",
    fixed=lambda path: {"imported_from": str(path)},
    columns={"line": "BIGINT", "id": "VARCHAR", "judge": "VARCHAR", "kind": "VARCHAR", "family": "VARCHAR",
             "question_id": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "shown_order": "VARCHAR",
             "reference": "VARCHAR", "label": "VARCHAR", "raw_label": "VARCHAR", "score": "DOUBLE",
             "evidence": "VARCHAR", "extra": "VARCHAR"},
    restage=_restage,
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


__all__ = ["RECORD", "REPEAT_WHAT", "beyond_ascii", "first_declared_conflict", "kinds_values", "names_in_order"]
