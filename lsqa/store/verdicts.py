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

from lsqa.store.bulk import fetch_dicts
from lsqa.vocabulary import PAIRWISE

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
                       use_overrides: bool = False, exclude_flagged: bool = False) -> list[dict]:
    """Decided verdicts (status ok) with the label the statistics should use; of one ``family``
    (``vocabulary.PAIRWISE`` / ``BINARY``, stored with each verdict) if given.

    With ``use_overrides`` the final human label (``final_human_labels``: adjudicated, else the
    people's majority; a tie leaves the judge's label) replaces the judge's, and a
    verdict the judge failed to give (parse error, call error) counts once a human labelled it; with
    ``exclude_flagged`` questions with a flagged reference are left out.
    """
    sql = f"""
        SELECT j.id, j.judge, j.kind, j.family, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference,
               j.label AS judge_label, j.raw_label, h.human_label, j.score, q.document_id,
               {"coalesce(h.human_label, j.label)" if use_overrides else "j.label"} AS label
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
    return fetch_dicts(con, sql + " ORDER BY j.question_id, j.system_a, j.system_b, j.shown_order", params)


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


def sampled_human_labels(con, judge: str) -> list[dict]:
    """Each reviewed verdict of ``judge`` with how its latest live review (anyone's) was sampled
    (queue, inclusion probability, stratum; migration 0007) and its final label
    (``final_human_labels``: None for a tie between people nobody adjudicated), for corrected estimates.
    ``basis``: adjudicated | unanimous | majority, None for a tie."""
    # human_reviews itself (not the live_reviews view of 0005, which predates these columns).
    sql = """
        SELECT s.judgment_id, s.review_id, f.label, f.basis, s.queue, s.inclusion_prob, s.stratum, s.annotator FROM (
            SELECT l.judgment_id, l.id AS review_id, l.annotator, l.queue, l.inclusion_prob, l.stratum,
                   row_number() OVER (PARTITION BY l.judgment_id ORDER BY l.id DESC) AS rn
            FROM human_reviews l JOIN judgments j ON j.id = l.judgment_id
            WHERE j.judge = ? AND l.id IN (SELECT id FROM live_reviews)) s
        LEFT JOIN final_human_labels f ON f.judgment_id = s.judgment_id
        WHERE s.rn = 1 ORDER BY s.review_id"""
    return fetch_dicts(con, sql, [judge])


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
