"""Verdicts as the statistics see them: judge labels, human reviews, reference flags.

Reviews and flags are append-only; the current state is derived by the views of
``db/migrations/0005_derived_views.sql``, which every reader shares (a verdict's family, which
decides what it is about, is stored with it: migration 0012): ``human_labels`` (a review
withdrawn by an ``undo`` row no longer counts; an annotator's latest remaining review of a
verdict is their label, ``confirm`` = the judge's label), ``final_human_labels`` (the one label per
verdict the statistics use: adjudicated, else the people's majority, else none; migration 0016),
``current_flags`` (a reference is flagged while some annotator's latest flag on it is
not a ``retract``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsqa.store.bulk import fetch_dicts
from lsqa.vocabulary import DRAWN_QUEUES, PAIRWISE


def human_labels(con, judge: str | None = None) -> list[dict]:
    """Each annotator's current label for each reviewed verdict (of ``judge``, if given)."""
    sql = "SELECT h.*, j.judge, j.kind, j.family, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference" \
          " FROM human_labels h" \
          " JOIN judgments j ON j.id = h.judgment_id"
    params: list = []
    if judge:
        sql += " WHERE j.judge = ?"
        params.append(judge)
    return fetch_dicts(con, sql + " ORDER BY h.judgment_id, h.annotator", params)


def current_flags(con) -> list[dict]:
    return fetch_dicts(con, "SELECT id, annotator, question_id, reference, reason, note, created_at"
                            " FROM current_flags ORDER BY question_id, reference, id")


def flagged_question_ids(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT DISTINCT question_id FROM current_flags").fetchall()}


def effective_verdicts(con, *, judge: str | None = None, family: str | None = None,
                       use_overrides: bool = False, exclude_flagged: bool = False,
                       reviewed_only: bool = False) -> list[dict]:
    """Decided verdicts (status ok) with the label the statistics should use; of one ``family``
    (``vocabulary.PAIRWISE`` / ``BINARY``, stored with each verdict) if given.

    With ``use_overrides`` the final human label (``final_human_labels``: adjudicated, else the
    people's majority; a tie leaves the judge's label) replaces the judge's, and a
    verdict the judge failed to give (parse error, call error) counts once a human labelled it; with
    ``exclude_flagged`` questions with a flagged reference are left out; with ``reviewed_only`` only the
    verdicts some person labelled (all a comparison with people can pair: a handful among a million).
    """
    sql, params = _effective(judge=judge, family=family, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                             columns="""j.id, j.judge, j.kind, j.family, j.question_id, j.system_a, j.system_b,
                                        j.shown_order, j.reference, j.label AS judge_label, j.raw_label, h.human_label,
                                        j.score, q.document_id""")
    if reviewed_only:
        sql += " AND j.id IN (SELECT judgment_id FROM human_labels)"
    return fetch_dicts(con, sql + " ORDER BY j.question_id, j.system_a, j.system_b, j.shown_order, j.reference, j.id",
                       params)


def _effective(*, judge, family, use_overrides, exclude_flagged, columns: str) -> tuple[str, list]:
    """The SQL of ``effective_verdicts``' rows (``columns`` and the effective ``label``), unordered."""
    sql = f"""
        SELECT {columns}, {"coalesce(h.human_label, j.label)" if use_overrides else "j.label"} AS label
        FROM judgments j
        LEFT JOIN (SELECT judgment_id, label AS human_label FROM final_human_labels) h ON h.judgment_id = j.id
        LEFT JOIN questions q ON q.id = j.question_id
        WHERE {"(j.status = 'ok' OR h.human_label IS NOT NULL)" if use_overrides else "j.status = 'ok'"}"""
    params: list = []
    if judge:
        sql += " AND j.judge = ?"
        params.append(judge)
    if family:
        sql += " AND j.family = ?"
        params.append(family)
    if exclude_flagged:
        sql += " AND j.question_id NOT IN (SELECT question_id FROM current_flags)"
    return sql, params


def comparison_groups(con, judge: str) -> list[dict]:
    """A side-by-side judge's verdicts (family pairwise) counted once for every switch of
    :func:`comparison_counts`, in SQL: one row per (``system_a``, ``system_b``, ``label`` (the judge's),
    ``human_label`` (``final_human_labels``; None when none), ``ok`` (status ok), ``unflagged`` (its
    question has no flagged reference)), with ``n`` (how many verdicts) and ``first_question`` (the
    least question id among them). A few hundred rows for a million verdicts: the report reads them
    once and counts the judge-only, overrides and flagged-left-out rankings from them."""
    return fetch_dicts(con, """
        SELECT j.system_a, j.system_b, j.label, h.human_label, j.status = 'ok' AS ok,
               coalesce(j.question_id NOT IN (SELECT question_id FROM current_flags), false) AS unflagged,
               count(*) AS n, min(j.question_id) AS first_question
        FROM judgments j
        LEFT JOIN (SELECT judgment_id, label AS human_label FROM final_human_labels) h ON h.judgment_id = j.id
        WHERE j.judge = ? AND j.family = ? AND (j.status = 'ok' OR h.human_label IS NOT NULL)
        GROUP BY ALL""", [judge, PAIRWISE])


def comparison_counts(con, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
                      by_question: bool = False, groups: list[dict] | None = None) -> dict | None:
    """A side-by-side judge's decided verdicts (``effective_verdicts``' rows of family pairwise) counted
    in SQL, for Bradley-Terry (a million verdicts without a Python object each). None when
    there are none. ``groups``: the judge's :func:`comparison_groups`, when already read (read here
    otherwise; ``con`` is then only used ``by_question``).

    ``{"systems", "labels", "questions", "rows", "same_system"}``: the systems in order of first
    appearance in the rows ordered as ``effective_verdicts`` orders them (question, system A, system B;
    A before B within a row); the labels as stored (distinct); with ``by_question`` the question ids
    in order; ``rows``: numpy arrays ``a``, ``b`` (system indices), ``label`` (label index), ``n`` (how
    many), and ``q`` (question index) with ``by_question``; ``same_system``: rows whose two systems are one."""
    import numpy as np

    if groups is None:
        groups = comparison_groups(con, judge)
    kept = [g for g in groups if (g["ok"] or (use_overrides and g["human_label"] is not None))
            and (g["unflagged"] or not exclude_flagged)]
    if not kept:
        return None
    label_of = [g["human_label"] if use_overrides and g["human_label"] is not None else g["label"] for g in kept]
    # First appearance: the least (question, system A, system B, side) among the rows naming the system.
    seen: dict[str, tuple] = {}
    for g in kept:
        for name, side in ((g["system_a"], "0"), (g["system_b"], "1")):
            key = (g["first_question"], g["system_a"], g["system_b"], side)
            if name not in seen or key < seen[name]:
                seen[name] = key
    systems = sorted(seen, key=seen.__getitem__)
    labels = sorted(set(label_of), key=lambda x: (x is None, x or ""))   # SQL's order: NULL last
    same = sum(g["n"] for g in kept if g["system_a"] == g["system_b"])
    questions = None
    if by_question:
        sql, params = _effective(judge=judge, family=PAIRWISE, use_overrides=use_overrides,
                                 exclude_flagged=exclude_flagged, columns="j.question_id, j.system_a, j.system_b")
        con.execute(f"CREATE OR REPLACE TEMP TABLE _lsqa_comparisons AS {sql}", params)
        try:
            questions = [r[0] for r in con.execute(
                "SELECT DISTINCT question_id FROM _lsqa_comparisons ORDER BY question_id").fetchall()]
            rows = con.execute("""
                SELECT (list_position($systems, c.system_a) - 1)::BIGINT AS a,
                       (list_position($systems, c.system_b) - 1)::BIGINT AS b,
                       list_position($labels, c.label) - 1 AS label, qi.k AS q, count(*) AS n
                FROM _lsqa_comparisons c
                JOIN (SELECT unnest($questions) AS question_id, generate_subscripts($questions, 1) - 1 AS k) qi
                     ON qi.question_id = c.question_id
                GROUP BY ALL ORDER BY a, b, label, q""",
                               {"systems": systems, "labels": labels, "questions": questions}).fetchnumpy()
        finally:
            con.execute("DROP TABLE IF EXISTS _lsqa_comparisons")
        return {"systems": systems, "labels": labels, "questions": questions, "rows": rows, "same_system": same}
    index = {s: k for k, s in enumerate(systems)}
    label_index = {x: k for k, x in enumerate(labels)}
    cells: dict[tuple[int, int, int], int] = {}
    for g, label in zip(kept, label_of, strict=True):
        key = (index[g["system_a"]], index[g["system_b"]], label_index[label])
        cells[key] = cells.get(key, 0) + int(g["n"])
    keys = sorted(cells)
    rows = {"a": np.array([k[0] for k in keys], dtype=np.int64), "b": np.array([k[1] for k in keys], dtype=np.int64),
            "label": np.array([k[2] for k in keys], dtype=np.int32),
            "n": np.array([cells[k] for k in keys], dtype=np.int64)}
    return {"systems": systems, "labels": labels, "questions": None, "rows": rows, "same_system": same}


def judge_item_table(con, judge: str, outcomes: dict[str, float], *, family: str,
                     lookup: Sequence[str] = ()) -> tuple[dict | None, list[dict]]:
    """A judge's decided verdicts of ``family`` (``vocabulary.PAIRWISE`` / ``BINARY``) grouped into items
    (``lsqa.stats.sampling``'s module docstring: an answer, or a pair of answers in system terms) in SQL:
    a million verdicts without a Python object each. A verdict counts when its label is a key of
    ``outcomes`` (label → number).

    Returns ``(table, verdicts)``. ``table`` (None when no verdict counts): ``family``, ``systems`` and
    ``questions`` (sorted names), numpy arrays per item in the order of ``effective_verdicts``
    (question, system A, system B): ``a``, ``b`` (system indices; -1 for a yes/no item), ``q`` (question
    index), ``mean`` (mean outcome), ``any_one`` (an outcome is 1), ``share`` and ``decided`` (mean
    outcome and count of the verdicts not 'none'; ½ and 0 when none), ``n`` (verdicts). ``verdicts``:
    every verdict (``item``, ``id``, ``judge_label``) of the items holding one of the ids in ``lookup``,
    in item order, then as ``effective_verdicts`` orders an item's verdicts (shown order, reference, id).

    The items are grouped on integer keys (the indices into the sorted names, whose order is the
    names' order): a million string triples hashed and sorted took most of the time and memory."""
    pairwise = family == PAIRWISE
    params = {"judge": judge, "family": family, "labels": list(outcomes)}
    mine = "{j}judge = $judge AND {j}status = 'ok' AND {j}family = $family AND list_contains($labels, {j}label)"
    systems = [r[0] for r in con.execute(
        f"SELECT system_a AS s FROM judgments WHERE {mine.format(j='')}"
        + (f" UNION SELECT system_b FROM judgments WHERE {mine.format(j='')}" if pairwise else " GROUP BY system_a")
        + " ORDER BY s", params).fetchall()]
    if not systems:
        return None, []
    questions = [r[0] for r in con.execute(
        f"SELECT DISTINCT question_id FROM judgments WHERE {mine.format(j='')} ORDER BY question_id", params).fetchall()]
    named = {**params, "systems": systems, "questions": questions}
    # Each verdict's item as an integer key (q, a, b), then the items.
    t = con.execute(f"""
        SELECT v.a, v.b, v.q, avg(o.outcome) AS mean, bool_or(o.outcome = 1.0) AS any_one,
               coalesce(avg(o.outcome) FILTER (WHERE v.label <> 'none'), 0.5) AS share,
               count(*) FILTER (WHERE v.label <> 'none') AS decided, count(*) AS n
        FROM (SELECT qi.k AS q, list_position($systems, j.system_a) - 1 AS a,
                     {"list_position($systems, j.system_b) - 1" if pairwise else "-1"} AS b, j.label
              FROM judgments j
              JOIN (SELECT unnest($questions) AS question_id, generate_subscripts($questions, 1) - 1 AS k) qi
                   ON qi.question_id = j.question_id
              WHERE {mine.format(j="j.")}) v
        JOIN (SELECT unnest($labels) AS label, unnest($values) AS outcome) o ON o.label = v.label
        GROUP BY v.q, v.a, v.b ORDER BY v.q, v.a, v.b""",
                    {**named, "values": [float(v) for v in outcomes.values()]}).fetchnumpy()
    table = {"family": family, "systems": systems, "questions": questions,
             **{key: t[key] for key in ("a", "b", "q", "mean", "any_one", "share", "decided", "n")}}
    verdicts: list[dict] = []
    if lookup:
        import numpy as np

        # The items holding a looked-up verdict (a few thousand), then every verdict of theirs.
        b = "j.system_b" if pairwise else "''"
        rows = con.execute(f"""
            WITH h AS MATERIALIZED (
                SELECT DISTINCT j.question_id, j.system_a, {b} AS b FROM judgments j
                WHERE {mine.format(j="j.")} AND j.id IN (SELECT unnest($ids))
            ), v AS MATERIALIZED (
                SELECT j.question_id, j.system_a, {b} AS system_b, j.id, j.label, j.shown_order, j.reference
                FROM judgments j JOIN h ON h.question_id = j.question_id AND h.system_a = j.system_a AND h.b = {b}
                WHERE {mine.format(j="j.")})
            SELECT qi.k AS q, list_position($systems, v.system_a) - 1 AS a,
                   {"list_position($systems, v.system_b) - 1" if pairwise else "-1"} AS b, v.id, v.label
            FROM v JOIN (SELECT unnest($questions) AS question_id, generate_subscripts($questions, 1) - 1 AS k) qi
                 ON qi.question_id = v.question_id
            ORDER BY q, a, b, v.shown_order, v.reference, v.id""",
                           {**named, "ids": list(lookup)}).fetchall()
        if rows:
            # An item's index: its place among the items' keys, which are sorted (q, a, b).
            width = len(systems) + 1
            keys = (t["q"].astype(np.int64) * width + t["a"]) * width + t["b"] + 1
            wanted = np.array([(r[0] * width + r[1]) * width + r[2] + 1 for r in rows], dtype=np.int64)
            index = np.searchsorted(keys, wanted).tolist()
            verdicts = [{"item": k, "id": r[3], "judge_label": r[4]} for k, r in zip(index, rows, strict=True)]
    return table, verdicts


def judge_item_count(con, judge: str, outcomes: dict[str, float]) -> int:
    """How many items ``judge_item_table`` makes of the judge's decided verdicts (those whose label is
    a key of ``outcomes``), counted in SQL."""
    return int(con.execute("""
        SELECT count(*) FROM (
            SELECT DISTINCT question_id, system_a, CASE WHEN family = ? THEN system_b ELSE '' END
            FROM judgments WHERE judge = ? AND status = 'ok' AND label IN (SELECT unnest(?)))""",
                           [PAIRWISE, judge, list(outcomes)]).fetchone()[0])


def first_verdicts(con, judge: str, items: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """The first decided verdict (as ``effective_verdicts`` orders them) of each item (question, system A,
    system B; B '' for a yes/no item) of ``judge``: item → judgment id."""
    if not items:
        return {}
    rows = con.execute(f"""
        SELECT k.q, k.a, k.b, arg_min(j.id, [j.shown_order, j.reference, j.id])
        FROM (SELECT unnest($q) AS q, unnest($a) AS a, unnest($b) AS b) k
        JOIN judgments j ON j.question_id = k.q AND j.system_a = k.a
             AND (CASE WHEN j.family = '{PAIRWISE}' THEN j.system_b ELSE '' END) = k.b
        WHERE j.judge = $judge AND j.status = 'ok' GROUP BY ALL""",
                       {"q": [i[0] for i in items], "a": [i[1] for i in items], "b": [i[2] for i in items],
                        "judge": judge}).fetchall()
    return {(r[0], r[1], r[2]): r[3] for r in rows}


def decided_verdicts(con, judge: str, ids: Sequence[str] = ()) -> dict:
    """What certification reads of a judge's decided verdicts without a row each: ``n`` (how many),
    ``kind`` (of one of them, None when there are none) and ``labels``: judgment id → the judge's label,
    for the decided verdicts among ``ids``."""
    n, kind = con.execute("SELECT count(*), any_value(kind) FROM judgments WHERE judge = ? AND status = 'ok'",
                          [judge]).fetchone()
    labels = {r[0]: r[1] for r in con.execute(
        "SELECT id, label FROM judgments WHERE judge = $judge AND status = 'ok' AND id IN (SELECT unnest($ids))",
        {"judge": judge, "ids": list(ids)}).fetchall()} if ids else {}
    return {"n": int(n), "kind": kind, "labels": labels}


def order_counts(con, judge: str) -> dict:
    """How a side-by-side judge's decided verdicts fall by the order it saw the answers, counted in SQL:
    ``n``, ``n_decisive`` (the answer shown first or second picked: raw label A or B), ``n_first``
    (raw A), and ``both``: over the items it judged in both orders, ``(label in order ab, label in order ba,
    how many items)`` (of several references, the last as ``effective_verdicts`` orders them): half a
    million items are a handful of label pairs."""
    n, decisive, first = con.execute("""
        SELECT count(*), count(*) FILTER (WHERE raw_label IN ('A', 'B')), count(*) FILTER (WHERE raw_label = 'A')
        FROM judgments WHERE judge = ? AND status = 'ok' AND family = ?""", [judge, PAIRWISE]).fetchone()
    # The items judged in both orders first (grouped without a list key or a DISTINCT), then the
    # label pairs of those items only.
    both = con.execute("""
        WITH twice AS MATERIALIZED (
            SELECT question_id, system_a, system_b FROM judgments
            WHERE judge = $judge AND status = 'ok' AND family = $family AND shown_order IN ('ab', 'ba')
            GROUP BY question_id, system_a, system_b HAVING min(shown_order) <> max(shown_order))
        SELECT ab, ba, count(*) FROM (
            SELECT arg_max(label, [reference, id]) FILTER (WHERE shown_order = 'ab') AS ab,
                   arg_max(label, [reference, id]) FILTER (WHERE shown_order = 'ba') AS ba
            FROM judgments SEMI JOIN twice USING (question_id, system_a, system_b)
            WHERE judge = $judge AND status = 'ok' AND family = $family AND shown_order IN ('ab', 'ba')
            GROUP BY question_id, system_a, system_b)
        GROUP BY ab, ba ORDER BY ab, ba""", {"judge": judge, "family": PAIRWISE}).fetchall()
    return {"n": int(n), "n_decisive": int(decisive), "n_first": int(first),
            "both": [(r[0], r[1], int(r[2])) for r in both]}


# A system that answers with a NarrativeQA reference is one of the references, not a witness for it.
_INDEPENDENT = "SELECT name FROM systems WHERE context NOT LIKE 'reference:%'"


def reference_evidence(con, reference_raters: list[str]) -> dict:
    """Raw material for ``lsqa.audit.reference_errors``.

    - ``questions``: those with two references about a document where at least one question has an
      answer, verdict, reference check or flag (a book is triaged whole, unanswered questions included), with the
      document's title and summary ("" when it has none);
    - ``answers`` of independent systems (not those that answer with a reference);
    - ``gt``: yes/no verdicts against one reference (judges of the kinds in ``reference_raters``, which
      the caller chooses from the kind records), on independent systems' answers;
    - ``human_gt``: current human labels on those verdicts; ``flags``: current flags.
    """
    questions = fetch_dicts(con, f"""
        SELECT q.id AS question_id, q.document_id, d.title, coalesce(d.summary, '') AS summary, q.text AS question,
               q.reference_1, q.reference_2
        FROM questions q JOIN documents d ON d.id = q.document_id
        WHERE q.reference_1 <> '' AND q.reference_2 <> '' AND q.document_id IN (
            SELECT document_id FROM questions WHERE id IN (
                SELECT question_id FROM answers WHERE status = 'ok' AND system_name IN ({_INDEPENDENT})
                UNION SELECT question_id FROM judgments
                UNION SELECT question_id FROM reference_checks
                UNION SELECT question_id FROM current_flags))
        ORDER BY d.title, q.source_index, q.id""")
    answers = fetch_dicts(con, f"""
        SELECT question_id, system_name AS system, text FROM answers
        WHERE status = 'ok' AND system_name IN ({_INDEPENDENT})""")
    gt = fetch_dicts(con, f"""
        SELECT judge, question_id, system_a AS system, reference, label FROM judgments
        WHERE list_contains(?, kind) AND status = 'ok' AND reference IN ('1', '2') AND label IN ('yes', 'no')
          AND system_a IN ({_INDEPENDENT})""", [reference_raters])
    human_gt = fetch_dicts(con, """
        SELECT h.annotator, h.label AS human_label, j.label AS judge_label, j.question_id, j.reference
        FROM human_labels h JOIN judgments j ON j.id = h.judgment_id
        WHERE list_contains(?, j.kind) AND j.reference IN ('1', '2')""", [reference_raters])
    return {"questions": questions, "answers": answers, "gt": gt, "human_gt": human_gt, "flags": current_flags(con)}


# Each drawn verdict's draw (migration 0023): its earliest ``audit_draws`` row.
DRAWS_SQL = """
    SELECT judgment_id, arg_min(queue, id) AS queue, arg_min(inclusion_prob, id) AS inclusion_prob,
           arg_min(stratum, id) AS stratum
    FROM audit_draws GROUP BY judgment_id"""


def sampled_human_labels(con, judge: str) -> list[dict]:
    """Each verdict of ``judge`` with a live review or a final label, with how it was drawn and its final
    label, for corrected estimates and certification.

    ``queue, inclusion_prob, stratum``: the verdict's draw (migration 0023: recorded by the first review
    through a random or active queue or imported with a probability, or by a random assignment batch;
    never changed by later reviews); for a verdict never drawn, its latest live review's queue and no
    probability (it counts for agreement and overrides only). ``label``: the final human label
    (``final_human_labels``: adjudicated, else the people's majority; None for a tie nobody
    adjudicated); ``basis``: adjudicated | unanimous | majority, None for a tie. ``review_id`` and
    ``annotator``: the verdict's latest live review (None when only an adjudication labels it). A drawn
    verdict whose reviews were all undone has neither a review nor a label and is not listed until
    somebody labels it again. Ordered by the latest live review."""
    # human_reviews itself (not the live_reviews view of 0005, which predates the sampling columns).
    sql = f"""
        WITH latest AS (
            SELECT l.judgment_id, l.id AS review_id, l.annotator, l.queue
            FROM human_reviews l JOIN judgments j ON j.id = l.judgment_id
            WHERE j.judge = $judge AND l.id IN (SELECT id FROM live_reviews)
            QUALIFY row_number() OVER (PARTITION BY l.judgment_id ORDER BY l.id DESC) = 1
        ), labelled AS (
            SELECT f.judgment_id, f.label, f.basis FROM final_human_labels f
            JOIN judgments j ON j.id = f.judgment_id WHERE j.judge = $judge
        )
        SELECT coalesce(r.judgment_id, f.judgment_id) AS judgment_id, r.review_id, f.label, f.basis,
               CASE WHEN d.judgment_id IS NULL THEN coalesce(r.queue, 'priority') ELSE d.queue END AS queue,
               d.inclusion_prob, coalesce(d.stratum, '') AS stratum, r.annotator
        FROM latest r FULL OUTER JOIN labelled f ON f.judgment_id = r.judgment_id
        LEFT JOIN ({DRAWS_SQL}) d ON d.judgment_id = coalesce(r.judgment_id, f.judgment_id)
        ORDER BY r.review_id NULLS LAST, judgment_id"""
    return fetch_dicts(con, sql, {"judge": judge})


def final_labels(con, judge: str | None = None) -> list[dict]:
    """The final human label of each verdict that has one (``final_human_labels``; of ``judge``, if
    given), with what the verdict is about (judge, shown order)."""
    sql = ("SELECT f.judgment_id, f.label, f.basis, j.judge, j.kind, j.family, j.shown_order"
           " FROM final_human_labels f JOIN judgments j ON j.id = f.judgment_id")
    params: list = []
    if judge:
        sql += " WHERE j.judge = ?"
        params.append(judge)
    return fetch_dicts(con, sql + " ORDER BY f.judgment_id", params)


# The columns of ``final_label_table``'s rows, in order (the export's ``final_labels`` file, ``lsqa labels``).
FINAL_LABEL_COLUMNS = ("judgment_id", "judge", "kind", "question_id", "system_a", "system_b", "shown_order",
                       "reference", "judge_label", "label", "basis", "people", "people_labels", "adjudicator",
                       "audit", "audit_queue", "inclusion_prob", "stratum")
# How a final label was decided (``basis``): the view's adjudicated / unanimous / majority, with one
# person's label told apart as ``single`` and a tie nobody adjudicated as ``tie`` (no label).
FINAL_BASES = ("adjudicated", "single", "unanimous", "majority", "tie")


def final_label_table(con, judge: str | None = None) -> list[dict]:
    """One row per verdict people labelled or an adjudicator settled (of ``judge``, if given): what it is
    about, the judge's label, its final human label (``final_human_labels``, the one definition: None for
    a tie), ``basis`` (``FINAL_BASES``), ``people`` (names, sorted) with ``people_labels`` (their current
    labels, same order), ``adjudicator`` (of the latest adjudication, None when none), and whether it
    counts as an audit: ``audit`` (it was drawn by a ``DRAWN_QUEUES`` design with an
    inclusion probability, and it has a final label), ``audit_queue``, ``inclusion_prob``, ``stratum``
    (``sampled_human_labels``: the draw that made it an audit, migration 0023). Ordered by judge,
    question, systems."""
    sql = """
        WITH people AS (
            SELECT judgment_id, count(*) AS n_people, list(annotator ORDER BY annotator) AS people,
                   list(label ORDER BY annotator) AS people_labels
            FROM human_labels WHERE label IS NOT NULL GROUP BY judgment_id
        ), adjudicated AS (
            SELECT judgment_id, arg_max(adjudicator, id) AS adjudicator FROM adjudications GROUP BY judgment_id
        ), settled AS (SELECT judgment_id FROM people UNION SELECT judgment_id FROM adjudicated)
        SELECT j.id AS judgment_id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order,
               j.reference, j.label AS judge_label, f.label,
               CASE WHEN f.basis IS NULL THEN 'tie' WHEN f.basis = 'unanimous' AND p.n_people = 1 THEN 'single'
                    ELSE f.basis END AS basis,
               coalesce(p.people, []::VARCHAR[]) AS people, coalesce(p.people_labels, []::VARCHAR[]) AS people_labels,
               CASE WHEN f.basis = 'adjudicated' THEN a.adjudicator END AS adjudicator
        FROM settled s JOIN judgments j ON j.id = s.judgment_id
        LEFT JOIN final_human_labels f ON f.judgment_id = s.judgment_id
        LEFT JOIN people p ON p.judgment_id = s.judgment_id
        LEFT JOIN adjudicated a ON a.judgment_id = s.judgment_id"""
    params: list = []
    if judge is not None:
        sql += " WHERE j.judge = ?"
        params.append(judge)
    rows = fetch_dicts(con, sql + " ORDER BY j.judge, j.question_id, j.system_a, j.system_b, j.shown_order, j.id",
                       params)
    sampled: dict[str, dict] = {}
    for name in sorted({r["judge"] for r in rows}):
        sampled.update((s["judgment_id"], s) for s in sampled_human_labels(con, name))
    for r in rows:
        s = sampled.get(r["judgment_id"], {})
        r["audit_queue"], r["inclusion_prob"], r["stratum"] = s.get("queue"), s.get("inclusion_prob"), s.get("stratum")
        r["audit"] = (r["audit_queue"] in DRAWN_QUEUES and r["inclusion_prob"] is not None
                      and r["label"] is not None)
    return [{k: r[k] for k in FINAL_LABEL_COLUMNS} for r in rows]


def answer_lengths(con, judge: str) -> dict[str, tuple[int, int]]:
    """Side-by-side verdicts of ``judge``: judgment id → (words of system A's answer, words of B's),
    a word being a run of non-whitespace (the length style control uses; ``lsqa.stats.style_control``)."""
    rows = con.execute(r"""
        SELECT j.id, len(regexp_extract_all(a.text, '\S+')), len(regexp_extract_all(b.text, '\S+'))
        FROM judgments j
        JOIN answers a ON a.question_id = j.question_id AND a.system_name = j.system_a
        JOIN answers b ON b.question_id = j.question_id AND b.system_name = j.system_b
        WHERE j.judge = ? AND j.family = ?""", [judge, PAIRWISE]).fetchall()
    return {r[0]: (int(r[1]), int(r[2])) for r in rows}


def judge_coverage(con, judge: str) -> dict[str, int]:
    """What a judge's decided verdicts rest on: how many verdicts, over how many questions and books."""
    row = con.execute("""
        SELECT count(*), count(DISTINCT j.question_id), count(DISTINCT q.document_id)
        FROM judgments j LEFT JOIN questions q ON q.id = j.question_id
        WHERE j.judge = ? AND j.status = 'ok'""", [judge]).fetchone()
    return {"verdicts": int(row[0]), "questions": int(row[1]), "books": int(row[2])}
