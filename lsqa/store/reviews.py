"""Human reviews of verdicts and flags on reference answers: append-only.

Nothing here updates or deletes a row. An undo is a new row that names the row it withdraws
(``undoes``): an ``undo`` review, or a flag row restoring the annotator's previous flag on that
reference (``retract`` when there was none). The current state is derived by the views of
``db/migrations/0005_derived_views.sql`` (``live_reviews``, ``human_labels``, ``current_flags``,
``live_flags``).
"""

from __future__ import annotations

from lsqa.store import queue_signals
from lsqa.store.bulk import fetch_dicts
from lsqa.vocabulary import DRAWN_QUEUES, FLAG_REASONS, REFERENCES, REVIEW_ACTIONS, REVIEW_QUEUES, SKIP_REASONS

# A corrected estimate weighs an audit by 1/π: below this floor one audit would outweigh a million
# verdicts, and at 1e-320 the weight overflows and the estimate is NaN.
MIN_INCLUSION_PROB = 1e-6


def add_review(con, *, annotator: str, judgment_id: str, action: str, label: str | None = None,
               note: str = "", undoes: int | None = None, queue: str = "priority",
               inclusion_prob: float | None = None, stratum: str = "", role: str = "", gold: bool = False) -> int:
    """One review row; ``gold``: a label from a gold set (migration 0015), never a reason for a second review.
    A review through a drawn queue (``DRAWN_QUEUES``) with an inclusion probability draws its verdict
    (``record_draws``), in the same transaction, unless the verdict was drawn already."""
    if action not in REVIEW_ACTIONS:
        raise ValueError(f"review action must be one of {REVIEW_ACTIONS}, not {action!r}")
    if not annotator.strip():
        raise ValueError("an annotator name is required")
    if queue not in REVIEW_QUEUES:
        raise ValueError(f"review queue must be one of {REVIEW_QUEUES}, not {queue!r}")
    if inclusion_prob is not None and not MIN_INCLUSION_PROB <= inclusion_prob <= 1:
        raise ValueError(f"inclusion probability must be in [{MIN_INCLUSION_PROB:g}, 1], not {inclusion_prob!r}")
    row = con.execute(
        "INSERT INTO human_reviews (annotator, judgment_id, action, label, note, undoes, queue, inclusion_prob,"
        " stratum, role, gold) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [annotator.strip(), judgment_id, action, label, note, undoes, queue, inclusion_prob, stratum, role,
         bool(gold)],
    ).fetchone()
    if queue in DRAWN_QUEUES and inclusion_prob is not None:
        record_draws(con, [{"judgment_id": judgment_id, "queue": queue, "inclusion_prob": inclusion_prob,
                            "stratum": stratum, "review_id": int(row[0])}])
    return int(row[0])


def record_draws(con, draws: list[dict]) -> int:
    """Record that each verdict of ``draws`` was drawn for an audit (``judgment_id, queue, inclusion_prob,
    stratum`` and ``review_id`` or ``batch``: what drew it), unless it was drawn before: a verdict keeps
    the design of its first draw (migration 0023). The first row of a verdict in ``draws`` wins. Returns
    how many draws were recorded. Call in the transaction that writes the review or the batch."""
    rows = []
    seen = set(r[0] for r in con.execute(
        "SELECT DISTINCT judgment_id FROM audit_draws WHERE list_contains(?, judgment_id)",
        [sorted({d["judgment_id"] for d in draws})]).fetchall()) if draws else set()
    for d in draws:
        if d["queue"] not in DRAWN_QUEUES:
            raise ValueError(f"a draw's queue must be one of {DRAWN_QUEUES}, not {d['queue']!r}")
        if not MIN_INCLUSION_PROB <= d["inclusion_prob"] <= 1:
            raise ValueError(f"inclusion probability must be in [{MIN_INCLUSION_PROB:g}, 1], not {d['inclusion_prob']!r}")
        if d["judgment_id"] in seen:
            continue
        seen.add(d["judgment_id"])
        rows.append([d["judgment_id"], d["queue"], float(d["inclusion_prob"]), d.get("stratum") or "",
                     d.get("review_id"), d.get("batch", "")])
    if rows:
        con.executemany("INSERT INTO audit_draws (judgment_id, queue, inclusion_prob, stratum, review_id, batch)"
                        " VALUES (?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def draws(con) -> list[dict]:
    """Every ``audit_draws`` row, in the order written."""
    return fetch_dicts(con, "SELECT * FROM audit_draws ORDER BY id")


def add_skip(con, *, annotator: str, judgment_id: str, reason: str, note: str = "", role: str = "") -> int:
    """A person passed the verdict over (``skip`` or ``unsure``): a row of ``review_skips``, not a review."""
    if reason not in SKIP_REASONS:
        raise ValueError(f"skip reason must be one of {SKIP_REASONS}, not {reason!r}")
    if not annotator.strip():
        raise ValueError("an annotator name is required")
    row = con.execute("INSERT INTO review_skips (annotator, judgment_id, reason, note, role) VALUES (?, ?, ?, ?, ?) "
                      "RETURNING id", [annotator.strip(), judgment_id, reason, note, role]).fetchone()
    return int(row[0])


def skips(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM review_skips ORDER BY id")


def reviews(con, judgment_id: str | None = None) -> list[dict]:
    if judgment_id is None:
        return fetch_dicts(con, "SELECT * FROM human_reviews ORDER BY id")
    return fetch_dicts(con, "SELECT * FROM human_reviews WHERE judgment_id = ? ORDER BY id", [judgment_id])


def add_flag(con, *, annotator: str, question_id: str, reference: str, reason: str, note: str = "",
             undoes: int | None = None, role: str = "", correction: str = "") -> int:
    if reason not in FLAG_REASONS:
        raise ValueError(f"flag reason must be one of {FLAG_REASONS}, not {reason!r}")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be '1' or '2', not {reference!r}")
    if not annotator.strip():
        raise ValueError("an annotator name is required")
    row = con.execute(
        "INSERT INTO reference_flags (annotator, question_id, reference, reason, note, undoes, role, correction)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [annotator.strip(), question_id, reference, reason, note, undoes, role, correction],
    ).fetchone()
    queue_signals.mark(con, [question_id])  # the audit queue's kept signals: "flagged"
    return int(row[0])


def flags(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM reference_flags ORDER BY id")


def review_history(con, judgment_ids: list[str]) -> dict[str, list[dict]]:
    """``{id: every review row of that verdict}`` (append-only history, with whether each row is still
    live) for each of ``judgment_ids``, in one statement however many: the Audit page reads the verdicts
    it will show next with the one on screen (``lsqa.audit.judged_item``)."""
    return _by(fetch_dicts(con, """
        SELECT r.judgment_id AS _of, r.id, r.annotator, r.action, r.label, r.note, r.undoes, r.created_at,
               r.action <> 'undo' AND r.id NOT IN (SELECT undoes FROM human_reviews
                                                    WHERE action = 'undo' AND undoes IS NOT NULL) AS live
        FROM human_reviews r WHERE list_contains(?, r.judgment_id) ORDER BY r.id""", [_distinct(judgment_ids)]),
        judgment_ids)


def human_labels_of(con, judgment_ids: list[str]) -> dict[str, list[dict]]:
    """``{id: each person's current label of that verdict}``, by person, for each of ``judgment_ids``,
    in one statement however many (as ``review_history``)."""
    return _by(fetch_dicts(con, "SELECT judgment_id AS _of, annotator, action, label, note, created_at"
                                " FROM human_labels WHERE list_contains(?, judgment_id) ORDER BY annotator",
                           [_distinct(judgment_ids)]), judgment_ids)


def flags_of(con, question_ids: list[str]) -> dict[str, list[dict]]:
    """``{question id: the current flags on its references}`` (one per annotator and reference) for
    each of ``question_ids``, in one statement however many (as ``review_history``)."""
    return _by(fetch_dicts(con, "SELECT question_id AS _of, annotator, reference, reason, note, created_at"
                                " FROM current_flags WHERE list_contains(?, question_id) ORDER BY reference, annotator",
                           [_distinct(question_ids)]), question_ids)


def _distinct(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _by(rows: list[dict], ids: list[str]) -> dict[str, list[dict]]:
    """``rows`` (each with ``_of``, the id it belongs to) as ``{id: its rows, in order}``, each id asked
    for with a list, empty when it has none."""
    out: dict[str, list[dict]] = {i: [] for i in ids}
    for r in rows:
        out[r.pop("_of")].append(r)
    return out


def last_action(con, annotator: str, what: str | None = None) -> dict | None:
    """The annotator's latest action that still stands: a review or a flag not undone (``live_*`` views);
    only a ``review`` or only a ``flag`` when ``what`` says so."""
    rows = fetch_dicts(con, """
        SELECT * FROM (
            SELECT 'review' AS what, id, judgment_id AS target, action, label, '' AS reference, note, created_at
            FROM live_reviews WHERE annotator = $a
            UNION ALL
            SELECT 'flag', id, question_id, reason, NULL, reference, note, created_at
            FROM live_flags WHERE annotator = $a)
        WHERE $what IS NULL OR what = $what
        ORDER BY created_at DESC, what DESC, id DESC LIMIT 1""", {"a": annotator, "what": what})
    return rows[0] if rows else None


def flag_before(con, annotator: str, question_id: str, reference: str, before_id: int) -> dict | None:
    """The annotator's flag row on this reference just before ``before_id`` (what an undo restores)."""
    rows = fetch_dicts(con, """
        SELECT id, reason, note, correction FROM reference_flags
        WHERE annotator = ? AND question_id = ? AND reference = ? AND id < ?
        ORDER BY id DESC LIMIT 1""", [annotator, question_id, reference, int(before_id)])
    return rows[0] if rows else None


def annotator_progress(con) -> list[dict]:
    """Per annotator: verdicts with a current label (confirmed / overridden), current flags, last activity."""
    return fetch_dicts(con, """
        WITH r AS (SELECT annotator, count(*) AS reviewed,
                          count(*) FILTER (WHERE action = 'confirm') AS confirmed,
                          count(*) FILTER (WHERE action = 'override') AS overridden,
                          max(created_at) AS last_review
                   FROM human_labels GROUP BY annotator),
             f AS (SELECT annotator, count(*) AS flags FROM current_flags GROUP BY annotator),
             a AS (SELECT annotator, max(created_at) AS last_action FROM
                     (SELECT annotator, created_at FROM human_reviews
                      UNION ALL SELECT annotator, created_at FROM reference_flags) GROUP BY annotator)
        SELECT a.annotator, coalesce(r.reviewed, 0) AS reviewed, coalesce(r.confirmed, 0) AS confirmed,
               coalesce(r.overridden, 0) AS overridden, coalesce(f.flags, 0) AS flags, a.last_action
        FROM a LEFT JOIN r USING (annotator) LEFT JOIN f USING (annotator)
        ORDER BY reviewed DESC, a.annotator""")


def flagged_questions(con) -> list[dict]:
    """Every current flag with its question and reference text and the correction it proposes ('' when
    none; migration 0024): the errata."""
    return fetch_dicts(con, """
        SELECT f.question_id, d.title, q.text AS question, f.reference,
               CASE f.reference WHEN '1' THEN q.reference_1 ELSE q.reference_2 END AS reference_text,
               CASE f.reference WHEN '1' THEN q.reference_2 ELSE q.reference_1 END AS other_reference,
               f.reason, f.annotator, f.note, f.created_at, f.correction
        FROM current_flags f
        LEFT JOIN questions q ON q.id = f.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        ORDER BY d.title, f.question_id, f.reference, f.annotator""")


def reviewers(con) -> list[str]:
    """Everybody with a current label on some verdict (gold sets included): the queue's "Reviewed by" filter."""
    return [r[0] for r in con.execute("SELECT DISTINCT annotator FROM human_labels ORDER BY 1").fetchall()]


def review_pace(con, break_seconds: float) -> list[dict]:
    """Per annotator with a timed decision: ``{"annotator", "median_seconds", "timed"}``, the median of
    the seconds from each Audit-page decision (a ``confirm`` or ``override`` row, undone or not: the
    time was spent) back to that person's action before it (a decision or a skip), over the gaps of
    at most ``break_seconds`` (a longer gap is a break: the decision after it starts a sitting and is
    not timed). Imported reviews (queue ``import``) carry the time of the import, not of a decision:
    left out."""
    return fetch_dicts(con, """
        WITH acts AS (
            SELECT annotator, created_at, 1 AS decision, id FROM human_reviews
            WHERE action IN ('confirm', 'override') AND queue <> 'import'
            UNION ALL
            SELECT annotator, created_at, 0 AS decision, id FROM review_skips),
        gaps AS (
            SELECT annotator, decision,
                   (epoch_us(created_at) - epoch_us(lag(created_at) OVER (
                        PARTITION BY annotator ORDER BY created_at, decision, id))) / 1e6 AS seconds
            FROM acts)
        SELECT annotator, median(seconds) AS median_seconds, count(*) AS timed FROM gaps
        WHERE decision = 1 AND seconds IS NOT NULL AND seconds <= $break
        GROUP BY annotator ORDER BY annotator""", {"break": float(break_seconds)})


def agreement_with_final(con) -> list[dict]:
    """Per annotator: ``{"annotator", "compared", "agreed"}`` over their current labels (``human_labels``)
    of verdicts whose final label (``final_human_labels``) somebody else had a say in: another person
    labelled the verdict too, or the standing adjudication is by somebody else. A verdict only they
    labelled has their own label as its final label: it would agree with itself, and is not compared."""
    return fetch_dicts(con, """
        WITH judge AS (SELECT judgment_id, arg_max(adjudicator, id) AS adjudicator FROM adjudications
                       GROUP BY judgment_id)
        SELECT h.annotator, count(*) AS compared, count(*) FILTER (WHERE h.label = f.label) AS agreed
        FROM human_labels h
        JOIN final_human_labels f USING (judgment_id)
        LEFT JOIN judge a USING (judgment_id)
        WHERE h.label IS NOT NULL
          AND (a.adjudicator <> h.annotator
               OR EXISTS (SELECT 1 FROM human_labels o WHERE o.judgment_id = h.judgment_id
                          AND o.annotator <> h.annotator AND o.label IS NOT NULL))
        GROUP BY h.annotator ORDER BY h.annotator""")
