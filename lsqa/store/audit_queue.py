"""The audit queue: every verdict with its priority signals, one page at a time, most in need first.

The queue is one query with window functions over the ``verdict_items`` view (structured item
keys, ``db/migrations/0005_derived_views.sql``): at 50,000 verdicts it takes tens of milliseconds
(``bench/bench_dashboard.py``), and only one page of rows leaves the database. Human labels and
flags come from the shared views (``human_labels``, ``current_flags``), so the queue and the
statistics never disagree about what a human said. The priority signals read the verdicts alone and
are kept between calls until the verdicts change (``_signals``): a review re-reads only the rest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from lsqa.store.bulk import fetch_dicts

# Which verdicts are shared by every annotator under an overlap setting: a fixed hash of the id in
# OVERLAP_BUCKETS buckets, the lowest `overlap` share of them.
OVERLAP_BUCKETS = 10000
SHARED_SQL = f"(hash(j.id) % {OVERLAP_BUCKETS})"

# Per decided verdict: the share of other judges' verdicts on the same item with another outcome,
# and whether the judge itself gave the item different outcomes (both orders, or both references).
# Counted as four GROUP BY aggregates joined back (every key column is NOT NULL, so the joins lose
# no row): the same rows as five window partitions, in 19 ms instead of 30 on the full demo, on
# every keypress of the Audit page.
_SIGNALS = """
    WITH v AS (SELECT id, item, judge, outcome FROM verdict_items WHERE status = 'ok' AND outcome IS NOT NULL),
         i AS (SELECT item, count(*) AS n_item FROM v GROUP BY item),
         io AS (SELECT item, outcome, count(*) AS n_item_same FROM v GROUP BY item, outcome),
         ij AS (SELECT item, judge, count(*) AS n_judge, min(outcome) <> max(outcome) AS self_inconsistent
                FROM v GROUP BY item, judge),
         ijo AS (SELECT item, judge, outcome, count(*) AS n_judge_same FROM v GROUP BY item, judge, outcome)
    SELECT v.id, (n_item - n_judge) AS n_others,
           CASE WHEN n_item > n_judge
                THEN ((n_item - n_judge) - (n_item_same - n_judge_same))::DOUBLE / (n_item - n_judge)
                ELSE 0.0 END AS disagreement,
           self_inconsistent
    FROM v JOIN i USING (item) JOIN io USING (item, outcome) JOIN ij USING (item, judge)
           JOIN ijo USING (item, judge, outcome)
"""


# The signals depend on the verdicts alone, not on reviews or flags: kept by a fingerprint of the
# columns they read, they are computed once per change of the verdicts instead of on every review
# (20 of the queue's 31 ms on the full demo). Content-addressed, so shared by every workspace.
_SIGNAL_INPUTS = "count(*), sum(hash(id, judge, kind, question_id, system_a, system_b, label, status))"
_KEPT_SIGNALS: OrderedDict = OrderedDict()
_KEPT_SIGNALS_MAX = 4
_kept_lock = threading.Lock()


def _signals(con):
    """The priority signals of every decided verdict, as an Arrow table (see ``_SIGNALS``)."""
    fingerprint = tuple(con.execute(f"SELECT {_SIGNAL_INPUTS} FROM judgments").fetchall()[0])
    with _kept_lock:
        if fingerprint in _KEPT_SIGNALS:
            _KEPT_SIGNALS.move_to_end(fingerprint)
            return _KEPT_SIGNALS[fingerprint]
    table = con.sql(_SIGNALS).to_arrow_table()
    with _kept_lock:
        _KEPT_SIGNALS[fingerprint] = table
        while len(_KEPT_SIGNALS) > _KEPT_SIGNALS_MAX:
            _KEPT_SIGNALS.popitem(last=False)
    return table


def audit_queue(con, *, weights: dict, annotator: str = "", judges=None, systems=None, documents=None,
                labels=None, statuses=None, reviewed: str = "all", exclude=None, overlap: float = 1.0,
                reviewed_by=None, questions=None, search=(), limit: int = 100,
                offset: int = 0) -> tuple[list[dict], int]:
    """One page of verdicts, most in need of a human first, and the number matching the filters.

    ``weights``: ``failed``, ``disagreement``, ``self_inconsistent``, ``flagged`` (see
    ``lsqa.audit.PRIORITY_WEIGHTS``). ``reviewed``: ``all`` | ``unreviewed`` (by nobody) |
    ``not_mine`` (not by ``annotator``) | ``mine`` | ``second`` (by exactly one other annotator,
    not by ``annotator``; labels from a gold set do not count: migration 0015) | ``assigned``
    (assigned to ``annotator``, not reviewed by them yet: ``lsqa.store.assignments``).
    ``reviewed_by``: only verdicts with a current label by one of these annotators.
    ``questions``: only verdicts on these questions. ``search``: lower-case terms that must each
    occur in the question's text or in an answer the verdict judged (case-insensitive substrings,
    no wildcards: ``lsqa.audit.search_terms`` makes them).
    ``exclude``: verdict ids left out (those already opened this session).
    ``overlap``: the share of verdicts every annotator reviews (a fixed hash of the verdict id
    decides which); in ``not_mine`` the others drop out once anybody reviewed them. Order:
    verdicts nobody reviewed yet first, then by priority, then by a stable key (the id last: a total
    order, so a page is the same whatever else is left out).
    """
    where, named = ["1=1"], {}

    def param(value) -> str:
        name = f"p{len(named)}"
        named[name] = value
        return "$" + name

    for column, values in (("j.judge", judges), ("q.document_id", documents), ("j.label", labels),
                           ("j.status", statuses)):
        if values:
            where.append(f"{column} IN (SELECT unnest({param(list(values))}))")
    if systems:
        p = param(list(systems))
        where.append(f"(j.system_a IN (SELECT unnest({p})) OR j.system_b IN (SELECT unnest({p})))")
    if reviewed == "unreviewed":
        where.append("coalesce(h.n_reviewers, 0) = 0")
    elif reviewed == "not_mine":
        where.append("h.my_label IS NULL AND h.my_action IS NULL")
        if overlap < 1.0:
            where.append(f"(coalesce(h.n_reviewers, 0) = 0 OR {SHARED_SQL} < {param(_overlap_buckets(overlap))})")
    elif reviewed == "mine":
        where.append("h.my_action IS NOT NULL")
    elif reviewed == "second":
        where.append("h.n_people = 1 AND h.my_action IS NULL")
    elif reviewed == "assigned":
        where.append("j.id IN (SELECT judgment_id FROM assignments WHERE annotator = $annotator)"
                     " AND h.my_action IS NULL")
    elif reviewed != "all":
        raise ValueError(f"reviewed must be all, unreviewed, not_mine, mine, second or assigned, not {reviewed!r}")
    if reviewed_by:
        where.append(f"j.id IN (SELECT judgment_id FROM human_labels WHERE annotator IN (SELECT unnest({param(list(reviewed_by))})))")
    if questions:
        where.append(f"j.question_id IN (SELECT unnest({param(list(questions))}))")
    for term in search or ():
        p = param(term)
        where.append(f"(contains(lower(q.text), {p}) OR EXISTS (SELECT 1 FROM answers a WHERE a.question_id = j.question_id"
                     f" AND a.system_name IN (j.system_a, j.system_b) AND contains(lower(a.text), {p})))")
    if exclude:
        where.append(f"j.id NOT IN (SELECT unnest({param(list(exclude))}))")
    con.register("queue_signals", _signals(con))
    sql = f"""
        WITH s AS (SELECT * FROM queue_signals),
             h AS (SELECT l.judgment_id, count(*) AS n_reviewers, count(*) FILTER (WHERE g.id IS NULL) AS n_people,
                          any_value(l.label) FILTER (WHERE l.annotator = $annotator) AS my_label,
                          any_value(l.action) FILTER (WHERE l.annotator = $annotator) AS my_action
                   FROM human_labels l LEFT JOIN (SELECT id FROM human_reviews WHERE gold) g ON g.id = l.review_id
                   GROUP BY l.judgment_id),
             f AS (SELECT DISTINCT question_id FROM current_flags)
        SELECT j.id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference,
               j.label, j.raw_label, j.status, q.document_id, d.title,
               coalesce(s.disagreement, 0.0) AS disagreement, coalesce(s.n_others, 0) AS n_others,
               coalesce(s.self_inconsistent, false) AS self_inconsistent,
               f.question_id IS NOT NULL AS flagged,
               coalesce(h.n_reviewers, 0) AS n_reviewers, h.my_label, h.my_action,
               ( $w_failed * (j.status <> 'ok')::INTEGER
               + $w_disagreement * coalesce(s.disagreement, 0.0)
               + $w_self * coalesce(s.self_inconsistent, false)::INTEGER
               + $w_flagged * (f.question_id IS NOT NULL)::INTEGER) AS priority,
               count(*) OVER () AS n_total
        FROM verdict_items j
        LEFT JOIN s ON s.id = j.id
        LEFT JOIN h ON h.judgment_id = j.id
        LEFT JOIN f ON f.question_id = j.question_id
        LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE {" AND ".join(where)}
        ORDER BY (coalesce(h.n_reviewers, 0) > 0), priority DESC, j.question_id, j.judge, j.system_a, j.system_b,
                 j.shown_order, j.reference, j.id
        LIMIT {int(limit)} OFFSET {int(offset)}"""
    named.update({"annotator": annotator, "w_failed": float(weights["failed"]),
                  "w_disagreement": float(weights["disagreement"]),
                  "w_self": float(weights["self_inconsistent"]), "w_flagged": float(weights["flagged"])})
    try:
        rows = fetch_dicts(con, sql, named)
        total = int(rows[0]["n_total"]) if rows else _count_only(con, sql, named, offset)
    finally:
        con.unregister("queue_signals")
    for r in rows:
        r.pop("n_total", None)
    return rows, total


def _overlap_buckets(overlap: float) -> int:
    return round(max(0.0, min(1.0, float(overlap))) * OVERLAP_BUCKETS)


def _count_only(con, sql: str, named: dict, offset: int) -> int:
    # An empty page past the end still reports how many rows match.
    if offset == 0:
        return 0
    inner = sql.rsplit("LIMIT", 1)[0]
    return int(con.execute(f"SELECT count(*) FROM ({inner})", named).fetchone()[0])


def queue_choices(con) -> dict:
    """Values for the queue's filters: judges, systems, books with verdicts, labels, statuses."""
    return {
        "judges": [r[0] for r in con.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1").fetchall()],
        "systems": [r[0] for r in con.execute(
            "SELECT DISTINCT s FROM (SELECT system_a AS s FROM judgments UNION SELECT system_b FROM judgments)"
            " WHERE s <> '' ORDER BY 1").fetchall()],
        "documents": fetch_dicts(con, """
            SELECT d.id, d.title FROM documents d
            WHERE d.id IN (SELECT DISTINCT q.document_id FROM judgments j JOIN questions q ON q.id = j.question_id)
            ORDER BY d.title"""),
        "labels": [r[0] for r in con.execute(
            "SELECT DISTINCT label FROM judgments WHERE label IS NOT NULL ORDER BY 1").fetchall()],
        "statuses": [r[0] for r in con.execute("SELECT DISTINCT status FROM judgments ORDER BY 1").fetchall()],
    }


def audit_work(con) -> list[dict]:
    """Per judge: verdicts, how many failed to parse, how many a human has reviewed."""
    return fetch_dicts(con, """
        SELECT j.judge, j.kind, count(*) AS verdicts,
               count(*) FILTER (WHERE j.status = 'parse_error') AS parse_errors,
               count(*) FILTER (WHERE j.status = 'error') AS errors,
               count(h.judgment_id) AS reviewed,
               count(*) - count(h.judgment_id) AS waiting
        FROM judgments j
        LEFT JOIN (SELECT DISTINCT judgment_id FROM human_labels) h ON h.judgment_id = j.id
        GROUP BY j.judge, j.kind ORDER BY j.judge""")
