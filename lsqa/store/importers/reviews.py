"""Human reviews made elsewhere (``lsqa import-reviews``) as an input record: staged, matched, inserted in SQL.

``stage`` reads the file (``lsqa.store.importers.rows``) into TEMP table ``STAGED``: each row with the
verdict it reviews — the pair as named first, else reversed (the label then swaps A and B); among
several, order ``ab`` before ``ba``, then the lower reference; a reference given keeps only its
verdicts — its label normalised by the verdict's kind (the kinds' aliases), ``confirm`` or ``override``
and the probability. It raises ``Declined`` (nothing written) for any row it might read otherwise than
the row checks (no verdict, two verdicts alike, a label of no alias, a probability Python's ``float``
reads otherwise); ``restage`` then reads the file with the table reader and runs the same matching and
every row check in SQL, the first row with a problem worded as the row checks word it. ``insert`` writes the reviews the workspace does not have as
imported reviews, with one INSERT ... SELECT, and the draws of those with an inclusion probability
(``audit_draws``, migration 0023) as ``add_review`` records them; nothing else in ``human_reviews``
changes.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.errors import InputError
from lsqa.store.importers import lines, rows, values
from lsqa.store.importers.rows import ROWS, ascii_text, sql_text, strip
from lsqa.store.importers.skeleton import Declined, Input
from lsqa.store.importers.verdicts import kinds_values
from lsqa.text.names import name_problem, shown_name

STAGED = "lsqa_import_reviews"
# What makes a review the same as another (with the queue and gold, which the import fixes): written once.
KEY = "annotator, judgment_id, action, label, inclusion_prob, stratum"
DRAWS = "lsqa_import_review_draws"

# The row importer's columns (``lsqa.audit.review_import``), each meaning's names in order.
JUDGE, QUESTION, SYSTEM_A = ("judge", "rater"), ("question_id", "item_id"), ("system_a", "system")
PROBABILITY = ("inclusion_probability", "inclusion_prob", "pi")
KNOWN = JUDGE + QUESTION + SYSTEM_A + ("system_b", "reference", "label", "annotator", "stratum") + PROBABILITY
# A number Python's float and DuckDB's DOUBLE read alike (no underscores, inf or nan).
_NUMBER = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


def _chosen(names: tuple[str, ...]) -> str:
    """SQL of the value ``review_import._value`` takes (before stripping): the first of ``names`` present and not ''."""
    return "CASE " + " ".join(f"WHEN coalesce({n}, '') <> '' THEN {n}" for n in names) + " END"


def _present(names: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f"coalesce({n}, '') <> ''" for n in names) + ")"


def _stage(con, path: Path, *, kinds: list[tuple[str, str, bool, str, str]], min_probability: float,
           max_annotator_chars: int, **_) -> tuple[int, int]:
    """The reviews of the file's rows in TEMP table ``STAGED``, or Declined; ``kinds`` as ``kinds_values``.
    Returns (rows, distinct reviews, rows with a probability): no repeat to write once when the first two are
    equal, no draw to record when the third is 0."""
    # Each value as ``review_import._value`` reads it: the first of its names present and not '', stripped; else ''.
    values = {"judge": JUDGE, "question_id": QUESTION, "system_a": SYSTEM_A, "system_b": ("system_b",),
              "reference": ("reference",), "raw_label": ("label",), "annotator": ("annotator",),
              "probability_text": PROBABILITY, "stratum_text": ("stratum",)}
    required = " AND ".join(_present(n) for n in (JUDGE, QUESTION, SYSTEM_A, ("label",), ("annotator",)))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT line, {', '.join(f"coalesce({strip(name)}, '') AS {name}" for name in values)}, present
        FROM (SELECT line, {', '.join(f"{_chosen(names)} AS {name}" for name, names in values.items())},
                     {required} AS present FROM {ROWS})
        ORDER BY line""")
    # Each row's candidate verdicts: the pair as named (0) or reversed (1), the reference kept.
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        WITH c AS (
            SELECT s.line, 0 AS reversed, j.id, j.kind, j.status, j.label, j.shown_order, j.reference
            FROM {STAGED} s JOIN judgments j
              ON j.judge = s.judge AND j.question_id = s.question_id AND j.system_a = s.system_a
             AND j.system_b = s.system_b AND (s.reference = '' OR j.reference = s.reference)
            UNION ALL
            SELECT s.line, 1, j.id, j.kind, j.status, j.label, j.shown_order, j.reference
            FROM {STAGED} s JOIN judgments j
              ON j.judge = s.judge AND j.question_id = s.question_id AND j.system_a = s.system_b
             AND j.system_b = s.system_a AND (s.reference = '' OR j.reference = s.reference)),
        best AS (SELECT line, min((reversed, shown_order, reference)) AS rank FROM c GROUP BY line),
        picked AS (
            SELECT c.line, any_value(c.reversed) AS reversed, any_value(c.id) AS judgment_id,
                   any_value(c.kind) AS kind, any_value(c.status) AS status, any_value(c.label) AS verdict_label,
                   count(*) AS alike
            FROM c JOIN best ON best.line = c.line AND best.rank = (c.reversed, c.shown_order, c.reference)
            GROUP BY c.line),
        r AS (
            SELECT s.*, p.judgment_id, p.status, p.verdict_label, p.alike,
                   p.reversed = 1 AND s.system_b <> '' AS swapped, k.label AS kind_label,
                   CASE WHEN s.probability_text = '' THEN NULL
                        WHEN regexp_full_match(s.probability_text, '{_NUMBER}')
                        THEN TRY_CAST(s.probability_text AS DOUBLE) END AS inclusion_prob
            FROM {STAGED} s LEFT JOIN picked p USING (line)
            LEFT JOIN {kinds_values(kinds)}
              ON k.kind = p.kind AND {ascii_text('s.raw_label')} AND k.alias = lower(trim(s.raw_label, '''"')))
        SELECT line, judgment_id, annotator, label, inclusion_prob, stratum,
               CASE WHEN status = 'ok' AND label = verdict_label THEN 'confirm' ELSE 'override' END AS action, ok
        FROM (
        SELECT line, judgment_id, annotator,
               CASE WHEN swapped AND kind_label = 'A' THEN 'B' WHEN swapped AND kind_label = 'B' THEN 'A'
                    ELSE kind_label END AS label,
               inclusion_prob, CASE WHEN stratum_text <> '' THEN stratum_text
                                    WHEN inclusion_prob IS NOT NULL THEN 'all' ELSE '' END AS stratum,
               verdict_label, status,
               (present AND judgment_id IS NOT NULL AND alike = 1 AND kind_label IS NOT NULL
                AND (probability_text = '' OR inclusion_prob BETWEEN {min_probability!r} AND 1)
                AND annotator <> '' AND {ascii_text('annotator')} AND length(annotator) <= {max_annotator_chars})
                   AS ok
        FROM r) ORDER BY line""")
    bad, total, distinct, drawn = con.execute(f"SELECT count(*) FILTER (NOT coalesce(ok, false)), count(*), "
                                              f"count(DISTINCT ({KEY})), count(inclusion_prob) FROM {STAGED}").fetchone()
    if bad or not total:
        raise Declined  # a row the row importer words, or no data rows (it says so)
    return int(total), int(distinct), int(drawn)


def annotators_in_order(con) -> list[str]:
    """The file's annotators in order of first appearance."""
    return [r[0] for r in con.execute(f"SELECT annotator FROM {STAGED} GROUP BY 1 ORDER BY min(line)").fetchall()]


def beyond_ascii(con) -> bool:
    """Whether an annotator of the file or of the workspace's reviews is not all ASCII: else none looks like
    another (``lsqa.text.names.lookalikes`` compares ASCII names with others only)."""
    other = rows.beyond_ascii("annotator")
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM {STAGED} WHERE {other}) OR EXISTS (SELECT 1 FROM "
                       f"(SELECT DISTINCT annotator FROM human_reviews) WHERE {other})").fetchone()[0]


def stored_annotators(con) -> list[str]:
    """Everybody with a review row in the workspace, sorted."""
    return [r[0] for r in con.execute("SELECT DISTINCT annotator FROM human_reviews ORDER BY 1").fetchall()]


def _insert(con, counts: tuple[int, int], *, note: str, gold: bool, **_) -> tuple[int, int, int]:
    """(reviews added, of them with a probability, rows of the file): the file's reviews that are not in the
    workspace as imported reviews (same annotator, verdict, action, label, probability, stratum, gold),
    each once (its first line), in the file's order, numbered by ``human_reviews``' sequence as one
    ``add_review`` after another would number them."""
    total, distinct, drawn = counts
    # The reviews the workspace has as imported ones (none before the first import: nothing to look up).
    stored = con.execute(f"SELECT count(*) FROM human_reviews WHERE queue = 'import' AND gold = {str(bool(gold)).lower()}"
                         ).fetchone()[0]
    new_only = "true" if not stored else f"""NOT EXISTS (
            SELECT 1 FROM human_reviews h
            WHERE h.queue = 'import' AND h.gold = {str(bool(gold)).lower()} AND h.annotator = s.annotator
              AND h.judgment_id = s.judgment_id AND h.action = s.action AND h.label IS NOT DISTINCT FROM s.label
              AND h.inclusion_prob IS NOT DISTINCT FROM s.inclusion_prob AND h.stratum = s.stratum)"""
    new = con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT * EXCLUDE (ok) FROM {STAGED} s WHERE {new_only}
        {f"QUALIFY row_number() OVER (PARTITION BY {KEY} ORDER BY line) = 1" if distinct < total else ""}
        ORDER BY line""").fetchone()[0]  # (CREATE TABLE AS answers the rows it made)
    # A table made in line order keeps it (preserve_insertion_order): a row's rowid less the first one's is
    # its place in the file's order, with no window over every row.
    place = f"(rowid - (SELECT min(rowid) FROM {STAGED}))"
    # (No row of the file with a probability: none of the new ones has one.)
    usable = con.execute(f"SELECT count(inclusion_prob) FROM {STAGED}").fetchone()[0] if new and drawn else 0
    if new:
        # The ids add_review would give, one nextval per review in the file's order: take them all
        # first, then number the rows in order (nextval inside the INSERT need not run in line order).
        first = con.execute("SELECT nextval('human_reviews_id')").fetchone()[0]
        if new > 1:
            con.execute("SELECT count(nextval('human_reviews_id')) FROM range(?)", [new - 1]).fetchone()
        con.execute(f"""
            INSERT INTO human_reviews (id, annotator, judgment_id, action, label, note, undoes, queue, inclusion_prob,
                                       stratum, role, gold)
            SELECT {int(first)} + {place}, annotator, judgment_id, action, label,
                   {sql_text(note)}, NULL, 'import', inclusion_prob, stratum, '', {str(bool(gold)).lower()}
            FROM {STAGED}""")
        if usable:  # (a review without a probability draws nothing)
            _draw(con, int(first), place)
    return int(new), int(usable), int(total)


def _draw(con, first_review: int, place: str) -> None:
    """The draws of the reviews ``insert`` just wrote (review ids from ``first_review`` on, in line order),
    as ``reviews.add_review`` one after another records them: a review with an inclusion probability
    draws its verdict unless the verdict was drawn already (earlier, or by an earlier line of the
    file); numbered in line order as the row importer's inserts number them. ``place``: SQL of a staged
    row's place in the file's order (from 0)."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {DRAWS} AS
        SELECT judgment_id, inclusion_prob, stratum, review_id FROM (
            SELECT judgment_id, inclusion_prob, stratum, line, {first_review} + {place} AS review_id FROM {STAGED})
        WHERE inclusion_prob IS NOT NULL AND judgment_id NOT IN (SELECT judgment_id FROM audit_draws)
        QUALIFY row_number() OVER (PARTITION BY judgment_id ORDER BY line) = 1
        ORDER BY line""")
    n = con.execute(f"SELECT count(*) FROM {DRAWS}").fetchone()[0]
    if n:
        first = con.execute("SELECT nextval('audit_draws_id')").fetchone()[0]
        if n > 1:
            con.execute("SELECT count(nextval('audit_draws_id')) FROM range(?)", [n - 1]).fetchone()
        con.execute(f"""
            INSERT INTO audit_draws (id, judgment_id, queue, inclusion_prob, stratum, review_id)
            SELECT {int(first)} + rowid - (SELECT min(rowid) FROM {DRAWS}), judgment_id, 'import', inclusion_prob,
                   stratum, review_id
            FROM {DRAWS}""")
    lines.drop(con, DRAWS)


# Each meaning's columns for a file ``_stage`` declines (the five a row must fill first), and what a row of
# it may get wrong, in the order the checks of one row run (a row's first problem is its error; the file's
# first row with one is named): no verdict, a label of no alias of the verdict's kind, a probability that
# is none, a stratum that is a list or table (a value of ``values``: the one that can fail), the annotator.
ALIASES = {"judge": JUDGE, "question_id": QUESTION, "system_a": SYSTEM_A, "label": ("label",),
           "annotator": ("annotator",), "system_b": ("system_b",), "reference": ("reference",),
           "probability": PROBABILITY, "stratum": ("stratum",)}
NO_VERDICT, LABEL, PROBABILITY_PROBLEM, STRATUM, ANNOTATOR = range(5)
LABELS, PROBABILITIES, ANNOTATORS = "lsqa_import_review_labels", "lsqa_import_review_pis", "lsqa_import_review_names"


def _restage(con, path: Path, *, kind_of, min_probability: float, max_annotator_chars: int, **_) -> tuple[int, int]:
    """A file ``_stage`` declines in ``STAGED``, by the table reader (``values``: each value as the row
    reader's ``str`` of it), each row matched to its verdict as ``_stage`` does (among verdicts alike, the
    lowest id), its label normalised by the verdict's kind (``kind_of(name)``: the kind's record), its
    probability and annotator checked; InputError at the first row with a problem; ``_stage``'s counts."""
    values.stage(con, path, ALIASES, rules={**{m: "any" for m in ALIASES}, "stratum": "scalar"},
                 optional=("system_b", "reference", "probability", "stratum"), deferred=True, extra=False)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        WITH c AS (
            SELECT s.k, 0 AS reversed, j.id, j.kind, j.status, j.label, j.shown_order, j.reference
            FROM {values.VALUES} s JOIN judgments j
              ON j.judge = s.judge AND j.question_id = s.question_id AND j.system_a = s.system_a
             AND j.system_b = s.system_b AND (s.reference = '' OR j.reference = s.reference)
            UNION ALL
            SELECT s.k, 1, j.id, j.kind, j.status, j.label, j.shown_order, j.reference
            FROM {values.VALUES} s JOIN judgments j
              ON j.judge = s.judge AND j.question_id = s.question_id AND j.system_a = s.system_b
             AND j.system_b = s.system_a AND (s.reference = '' OR j.reference = s.reference)),
        picked AS (
            SELECT k, arg_min(reversed, r) AS reversed, arg_min(id, r) AS judgment_id, arg_min(kind, r) AS kind,
                   arg_min(status, r) AS status, arg_min(label, r) AS verdict_label
            FROM (SELECT *, (reversed, shown_order, reference, id) AS r FROM c) GROUP BY k)
        SELECT v.*, p.judgment_id, p.kind, p.status, p.verdict_label, p.reversed = 1 AND v.system_b <> '' AS swapped
        FROM {values.VALUES} v LEFT JOIN picked p USING (k)
        ORDER BY k""")
    t = "lower(trim(label, '''\"'))"
    number = f"{ascii_text('label')} AND regexp_full_match({t}, '{_NUMBER}')"
    labels = []
    for kind, raw, plain_number in con.execute(f"SELECT DISTINCT kind, label, {number} FROM {STAGED} "
                                               "WHERE judgment_id IS NOT NULL").fetchall():
        try:
            record = kind_of(kind)
        except ValueError:  # the kind's own error, raised again if its row is the first with a problem
            labels.append({"kind": kind, "raw": raw, "label": None, "error": None})
            continue
        if record.scored and plain_number:
            continue  # a similarity of plain digits: SQL keeps it as the row reader did
        try:
            labels.append({"kind": kind, "raw": raw, "label": record.normalise_label(raw), "error": None})
        except ValueError as exc:
            labels.append({"kind": kind, "raw": raw, "label": None, "error": str(exc)})
    values.judged_table(con, LABELS, {"kind": "VARCHAR", "raw": "VARCHAR", "label": "VARCHAR", "error": "VARCHAR"},
                        labels)
    found = con.execute(f"SELECT DISTINCT probability FROM {STAGED} WHERE probability <> '' "
                        f"AND NOT regexp_full_match(probability, '{_NUMBER}')").fetchall()
    values.judged_table(con, PROBABILITIES, {"raw": "VARCHAR", "value": "DOUBLE"},
                        [{"raw": raw, "value": _probability(raw, min_probability)} for (raw,) in found])
    found = con.execute(f"""SELECT DISTINCT annotator FROM {STAGED} WHERE annotator IS NOT NULL AND NOT (annotator <> ''
                            AND {ascii_text('annotator')} AND length(annotator) <= {max_annotator_chars})""").fetchall()
    values.judged_table(con, ANNOTATORS, {"raw": "VARCHAR", "problem": "VARCHAR"},
                        [{"raw": raw, "problem": name_problem(raw, max_chars=max_annotator_chars)} for (raw,) in found])
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT s.*, a.problem AS annotator_problem,
               least(CASE WHEN judgment_id IS NULL THEN {NO_VERDICT} END,
                        CASE WHEN judgment_id IS NOT NULL AND kind_label IS NULL THEN {LABEL} END,
                        CASE WHEN probability <> '' AND inclusion_prob IS NULL THEN {PROBABILITY_PROBLEM} END,
                        CASE WHEN bad IS NOT NULL THEN {STRATUM} END,
                        CASE WHEN coalesce(a.problem, '') <> '' THEN {ANNOTATOR} END) AS problem
        FROM (
            SELECT s.*, CASE WHEN s.kind IS NOT NULL AND l.raw IS NULL THEN {t.replace('label', 's.label')}
                             ELSE l.label END AS kind_label,
                   CASE WHEN regexp_full_match(s.probability, '{_NUMBER}')
                        THEN CASE WHEN TRY_CAST(s.probability AS DOUBLE) BETWEEN {min_probability!r} AND 1
                                  THEN TRY_CAST(s.probability AS DOUBLE) END
                        ELSE p.value END AS inclusion_prob
            FROM {STAGED} s LEFT JOIN {LABELS} l ON l.kind = s.kind AND l.raw = s.label
            LEFT JOIN {PROBABILITIES} p ON p.raw = s.probability) s
        LEFT JOIN {ANNOTATORS} a ON a.raw = s.annotator
        ORDER BY k""")
    bad = con.execute(f"SELECT k, problem FROM {STAGED} WHERE problem IS NOT NULL ORDER BY k, problem LIMIT 1").fetchone()
    if bad:
        k, problem = bad
        if problem == STRATUM:
            values.fail(con, path, k)
        row = con.execute(f"""SELECT s.line, s.judge, s.question_id, s.system_a, s.system_b, s.reference, s.kind,
                                     l.error, s.probability, s.annotator, a.problem
                              FROM {STAGED} s LEFT JOIN {LABELS} l ON l.kind = s.kind AND l.raw = s.label
                              LEFT JOIN {ANNOTATORS} a ON a.raw = s.annotator WHERE k = ?""", [k]).fetchone()
        raise _problem(path, problem, row, kind_of, min_probability, max_annotator_chars)
    values.done(con)
    lines.drop(con, LABELS, PROBABILITIES, ANNOTATORS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT line, judgment_id, annotator, label, inclusion_prob, stratum,
               CASE WHEN status = 'ok' AND label = verdict_label THEN 'confirm' ELSE 'override' END AS action, true AS ok
        FROM (SELECT k, line, judgment_id, annotator, status, verdict_label, inclusion_prob,
                     CASE WHEN swapped AND kind_label = 'A' THEN 'B' WHEN swapped AND kind_label = 'B' THEN 'A'
                          ELSE kind_label END AS label,
                     CASE WHEN stratum <> '' THEN stratum WHEN inclusion_prob IS NOT NULL THEN 'all' ELSE '' END AS stratum
              FROM {STAGED})
        ORDER BY k""")
    return tuple(con.execute(f"SELECT count(*), count(DISTINCT ({KEY})), count(inclusion_prob) FROM {STAGED}"
                             ).fetchone())


def _probability(text: str, min_probability: float) -> float | None:
    """An inclusion probability as Python's ``float`` reads it, None if it is none or outside [min, 1]."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if min_probability <= value <= 1 else None  # also not NaN


def _problem(path: Path, problem: int, row: tuple, kind_of, min_probability: float,
             max_annotator_chars: int) -> InputError:
    """The error of a row's first problem, in the row reader's words."""
    line, judge, question_id, system_a, system_b, reference, kind, label_error, text, annotator, named = row
    if problem == NO_VERDICT:
        what = f"{system_a} vs {system_b}" if system_b else system_a
        return InputError(path, f"no verdict of judge {judge!r} on question {question_id!r} for {what}"
                                + (f" with reference {reference}" if reference else ""), line=line,
                          hint="import or run the judge's verdicts first; names must match exactly")
    if problem == LABEL:
        kind_of(kind)  # a kind the workspace names and lsqa does not know: its own error
        return InputError(path, label_error, line=line)
    if problem == PROBABILITY_PROBLEM:
        try:
            float(text)
        except ValueError:
            return InputError(path, f"inclusion probability {text[:40]!r} is not a number", line=line,
                              hint=f"give the probability with which the item was drawn, from {min_probability:g} to 1")
        return InputError(path, f"inclusion probability {text[:40]!r} is outside [{min_probability:g}, 1]", line=line,
                          hint="give the probability with which the item was drawn for review")
    return InputError(path, f"annotator {shown_name(annotator)} {named}", line=line,
                      hint=f"use one line of visible text, at most {max_annotator_chars} characters")


RECORD = Input(name="reviews", staged=STAGED, known=KNOWN, stage=_stage, insert=_insert, indexed="human_reviews",
               extra=False, restage=_restage,
               columns={"line": "BIGINT", "judgment_id": "VARCHAR", "annotator": "VARCHAR", "label": "VARCHAR",
                        "inclusion_prob": "DOUBLE", "stratum": "VARCHAR", "action": "VARCHAR"})


__all__ = ["RECORD", "annotators_in_order", "beyond_ascii", "stored_annotators"]
