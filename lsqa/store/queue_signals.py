"""The audit queue's priority signals kept per verdict, so that the queue's next page reads
them instead of recomputing them over every verdict (docs/BENCHMARKS.md, "Rank and the Audit queue at a
million verdicts").

A verdict's signals (``lsqa.audit.priority_queue``: disagreement with the other judges of its item,
whether its judge flips on the item, whether a reference of its question is flagged) depend only
on the verdicts and the reference flags *of its question*: an item lies within one question. So
they are kept per question: table ``queue_signals`` (migration 0019), one row per verdict.

How they stay right, whoever writes:

- A write of verdicts or flags marks their questions (``mark``: a row of ``queue_dirty`` in the
  write's own transaction). ``lsqa.store.results.insert_judgments`` and
  ``lsqa.store.reviews.add_flag`` do it; any other writer of ``judgments`` or ``reference_flags``
  must call ``mark`` (or ``mark_from``) in its transaction.
- After every ``lsqa.store.write`` commits (but one declared to change none of ``SIGNAL_TABLES``),
  ``catch_up`` recomputes the marked questions' rows and deletes the marks it applied, in a transaction
  of its own, one at a time per workspace in this process (no other process can hold the file
  meanwhile). Writers only ever insert marks, and only catch-ups touch ``queue_signals``: two writers
  never conflict on it.
- A read (``relation``) takes the kept rows of unmarked questions and computes the marked
  questions' rows fresh, so it is exact even before the catch-up (or on a read-only workspace).
  When the kept rows no longer agree with the verdicts on their number and their labels and
  statuses (a writer that did not ``mark`` added, deleted or relabelled verdicts: a sum of hashes,
  cheap at a million), it says so (None) and the queue reads everything as before; the next
  ``catch_up`` rebuilds the table. (A writer that replaced verdicts by others with the same labels
  without marking them, or wrote flags without marking, would go unseen: none does.)

Reviews, undos, skips, assignments and adjudications change no signal: the queue reads them live
from their own tables, which grow with the reviews, not with the verdicts.
"""

from __future__ import annotations

import threading

# The tables a write of signals changes: verdicts, reference flags, and the marks a writer of them adds.
# A write declared to change none of them (lsqa.store.db.write's ``change``) leaves nothing to catch up.
SIGNAL_TABLES = frozenset({"judgments", "reference_flags", "queue_dirty", "queue_signals", "questions"})

# What most needs a human first (``lsqa.audit.priority_queue`` explains each signal): the weights the
# kept priority is computed with. The queue asked for other weights computes it over every verdict.
PRIORITY_WEIGHTS = {"failed": 3.0, "disagreement": 2.0, "self_inconsistent": 1.0, "flagged": 0.5}

# A catch-up rebuilds the whole table when the marked questions are more than this share of all
# questions (kept or marked); below it only the marked ones are recomputed, at about a rebuild's
# cost per verdict. An import of new questions into a large workspace then pays for its own
# verdicts, not the workspace's (a second file of 1M verdicts into 1M:
# docs/benchmarks-log/2026-12-06-figures-from-code-comments.md).
REBUILD_SHARE = 0.6
# Up to this many marked questions (a flag, a re-judged item) the share is not even counted: counting
# every question kept costs tens of ms at a million verdicts, a write's whole catch-up less.
FEW_QUESTIONS = 5000

_COLUMNS = ("id, judge, kind, family, question_id, system_a, system_b, shown_order, reference, label, raw_label,"
            " status")


def id_key_sql(column: str = "id") -> str:
    """SQL of a verdict's ``id_key`` (a 64-bit number of its id, to find a few verdicts by id without
    comparing a million strings; a reader filters by the id after). A verdict's id is a sha1 in hex
    (``lsqa.store.verdict_ids``): its first 16 digits are already such a number, four times cheaper
    than md5 at a million verdicts; an id of another shape (written by hand) takes md5's."""
    return (f"coalesce(CASE WHEN length({column}) = 40 THEN TRY_CAST('0x' || left({column}, 16) AS UBIGINT) END,"
            f" md5_number_lower({column}))")


_OUTCOME = ("CASE WHEN family = 'pairwise' THEN (CASE label WHEN 'A' THEN system_a WHEN 'B' THEN system_b ELSE label END)"
            " ELSE label END")


def rows_sql(scope: str) -> str:
    """The ``queue_signals`` rows of the verdicts whose ``question_id`` satisfies ``scope`` (SQL).

    The signals as ``lsqa.store.audit_queue`` computed them over the ``verdict_items`` view
    (migrations 0005, 0012), with the item as columns instead of a list: (question, pairwise?,
    first system, second system), the pair's names sorted, '' as the second system of an answer.
    Per item with more than one decided verdict, one list of its (judge, outcome, number of verdicts)
    (two GROUP BYs); each decided verdict joined to its item's list sums in it the item's verdicts
    (``n_item``), its judge's (``n_judge``), those with its outcome (``n_item_same``) and its judge's
    with its outcome (``n_judge_same``); its judge is self-inconsistent when it gave the item another
    outcome too (``n_judge > n_judge_same``: min(outcome) <> max(outcome)). A verdict alone on its item
    has no other judge to disagree with and cannot flip, and a verdict without a decided outcome has no
    signal: both find no list (a LEFT JOIN) and take 0, 0 and false, what the sums would give. The sums
    take time quadratic in an item's distinct (judge, outcome), a few dozen at most. One join instead
    of four aggregates joined back: cheaper to plan and to start on a few questions after a write, and
    cheaper over every verdict (docs/benchmarks-log/2026-12-07-catch-up.md)."""
    item = "question_id, pw, s1, s2"
    decided = "status = 'ok' AND outcome IS NOT NULL"
    keys = ("coalesce(family = 'pairwise', false) AS pw,"
            " CASE WHEN family = 'pairwise' THEN least(system_a, system_b) ELSE system_a END AS s1,"
            " CASE WHEN family = 'pairwise' THEN greatest(system_a, system_b) ELSE '' END AS s2")
    same = "j.question_id = g.question_id AND j.pw = g.pw AND j.s1 = g.s1 AND j.s2 = g.s2"
    return f"""
    WITH j AS (
        SELECT {_COLUMNS}, question_id IN (SELECT question_id FROM current_flags) AS flagged,
               {id_key_sql()} AS id_key, {keys}, {_OUTCOME} AS outcome
        FROM judgments WHERE {scope}),
    g AS (SELECT {item}, list({{'judge': judge, 'outcome': outcome, 'n': n}}) AS vs
          FROM (SELECT {item}, judge, outcome, count(*) AS n FROM j WHERE {decided} GROUP BY ALL)
          GROUP BY ALL HAVING sum(n) > 1),
    c AS (SELECT j.*, list_sum([x.n FOR x IN vs]) AS n_item,
                 list_sum([x.n FOR x IN vs IF x.judge = j.judge]) AS n_judge,
                 list_sum([x.n FOR x IN vs IF x.outcome = j.outcome]) AS n_item_same,
                 list_sum([x.n FOR x IN vs IF x.judge = j.judge AND x.outcome = j.outcome]) AS n_judge_same
          FROM j LEFT JOIN g ON j.status = 'ok' AND j.outcome IS NOT NULL AND {same}),
    s AS (SELECT *, coalesce(n_judge > n_judge_same, false) AS self_inconsistent,
                 coalesce(n_item - n_judge, 0)::BIGINT AS n_others,
                 CASE WHEN n_item > n_judge
                      THEN ((n_item - n_judge) - (n_item_same - n_judge_same))::DOUBLE / (n_item - n_judge)
                      ELSE 0.0 END AS disagreement
          FROM c)
    SELECT {_COLUMNS}, disagreement, n_others, self_inconsistent, flagged,
           {_priority("status", "disagreement", "self_inconsistent", "flagged")} AS priority, id_key
    FROM s"""


def _priority(status: str, disagreement: str, self_inconsistent: str, flagged: str) -> str:
    """The priority of ``PRIORITY_WEIGHTS`` in SQL, the terms in the order and types the queue adds
    them in (``lsqa.store.audit_queue``: DOUBLE weights), so that kept and computed agree to the bit."""
    w = {k: f"CAST({float(v)!r} AS DOUBLE)" for k, v in PRIORITY_WEIGHTS.items()}
    return (f"({w['failed']} * ({status} <> 'ok')::INTEGER + {w['disagreement']} * {disagreement}"
            f" + {w['self_inconsistent']} * ({self_inconsistent})::INTEGER + {w['flagged']} * ({flagged})::INTEGER)")


TABLE = "queue_signals"
# The state of the table a query read (migration 0019: a catch-up changes it, nothing else does).
EDITION = "(SELECT version FROM queue_signals_version)"
_MARKED = "question_id IN (SELECT question_id FROM queue_dirty)"


def mark(con, question_ids) -> None:
    """Say that the verdicts or reference flags of these questions changed (in the writer's transaction)."""
    ids = sorted({q for q in question_ids if isinstance(q, str)})
    if ids:
        con.execute("INSERT INTO queue_dirty (question_id) SELECT unnest(?)", [ids])


def mark_from(con, sql: str, params=()) -> None:
    """``mark`` for a bulk writer: the questions are the ``question_id`` column of the query ``sql``
    (e.g. ``SELECT question_id FROM my_staging_table``)."""
    con.execute(f"INSERT INTO queue_dirty (question_id) SELECT DISTINCT question_id FROM ({sql})", params)


# What the kept rows must agree with the verdicts on (migration 0019, queue_signals_version.verdicts):
# how many there are and their labels and statuses, cheap over a million verdicts
# (docs/benchmarks-log/2026-12-06-figures-from-code-comments.md).
_FINGERPRINT = "count(*)::VARCHAR || ':' || coalesce(sum(hash(label, status)), 0)::VARCHAR"


# SQL of a boolean: the kept table alone stands for every verdict as of now (no question is marked, and
# the kept rows add up to the verdicts), so ``relation`` is ``TABLE``. A reader can ask it in its own query
# and call ``relation`` only when it is false (``lsqa.store.audit_queue``: one query fewer per page).
KEPT_ALONE = (f"((SELECT count(*) FROM queue_dirty) = 0 AND"
              f" (SELECT {_FINGERPRINT} FROM judgments) = (SELECT verdicts FROM queue_signals_version))")


def relation(con) -> str | None:
    """SQL of the signal rows of every verdict as of now (a table expression), or None when the kept
    rows cannot stand for the verdicts (a writer that did not ``mark`` added, deleted or relabelled
    verdicts): the caller then reads the verdicts."""
    alone, n_marks = con.execute(f"SELECT {KEPT_ALONE}, (SELECT count(*) FROM queue_dirty)").fetchall()[0]
    if alone:
        return TABLE
    if not n_marks:
        return None
    verdicts, kept = con.execute(
        f"SELECT (SELECT {_FINGERPRINT} FROM judgments WHERE NOT {_MARKED}),"
        f" (SELECT {_FINGERPRINT} FROM queue_signals WHERE NOT {_MARKED})").fetchall()[0]
    if verdicts != kept:
        return None
    return f"(SELECT * FROM queue_signals WHERE NOT {_MARKED} UNION ALL ({rows_sql(_MARKED)}))"


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def rebuild(con) -> None:
    """Every verdict's row again (in the caller's transaction): the migration's data step, and a
    catch-up that finds the kept rows do not add up to the verdicts."""
    con.execute("DELETE FROM queue_signals")
    con.execute(f"INSERT INTO queue_signals {rows_sql('true')}")
    con.execute("DELETE FROM queue_dirty")
    _new_version(con)


def renew_version(con, replacing: str) -> None:
    """A version of its own for a workspace whose file is a copy of another (a new workspace written
    from the template of ``lsqa.store.db``), unless it has one already: two workspaces never share one."""
    con.execute("UPDATE queue_signals_version SET version = uuid()::VARCHAR WHERE version = ?", [replacing])


def _new_version(con) -> None:
    con.execute(f"UPDATE queue_signals_version SET version = uuid()::VARCHAR,"
                f" verdicts = (SELECT {_FINGERPRINT} FROM queue_signals)")


def catch_up(con, key: str) -> str:
    """Keep the marked questions' signals and delete the marks applied, in a transaction of its own
    (``con`` must not be in one); ``key``: the workspace's resolved path. Returns what it did:
    ``""`` (nothing to do), ``"questions"`` or ``"rebuilt"``.

    When a few questions are marked: a look outside the transaction (all a write that marked none pays),
    then in it a delete, an insert, the marks deleted and the version renewed where the kept rows add
    up to the verdicts (one statement: it checks and renews). Each costs a few ms of planning
    and start-up whatever its rows, so their number is much of a small write's catch-up
    (docs/benchmarks-log/2026-12-07-catch-up.md)."""
    with _lock(key):
        n_questions, verdicts, kept = con.execute(
            f"SELECT (SELECT count(DISTINCT question_id) FROM queue_dirty), (SELECT {_FINGERPRINT} FROM judgments),"
            f" (SELECT verdicts FROM queue_signals_version)").fetchall()[0]
        if not n_questions and verdicts == kept:
            return ""
        con.execute("BEGIN TRANSACTION")
        try:
            # The transaction sees the marks and verdicts of the writes committed before it, and no later
            # one (whose marks wait for the next catch-up): the marks applied are every mark it sees.
            done = "questions"
            if n_questions > FEW_QUESTIONS and n_questions > REBUILD_SHARE * con.execute(
                    "SELECT count(*) FROM (SELECT question_id FROM queue_signals UNION"
                    " SELECT question_id FROM queue_dirty)").fetchone()[0]:
                rebuild(con)
                done = "rebuilt"
            else:
                if n_questions:
                    con.execute(f"DELETE FROM queue_signals WHERE {_MARKED}")
                    con.execute(f"INSERT INTO queue_signals {rows_sql(_MARKED)}")
                    con.execute("DELETE FROM queue_dirty")
                # A new version where the kept rows add up to the verdicts, else a rebuild.
                renewed, = con.execute(
                    f"UPDATE queue_signals_version SET version = uuid()::VARCHAR, verdicts = f.kept"
                    f" FROM (SELECT (SELECT {_FINGERPRINT} FROM judgments) AS verdicts,"
                    f" (SELECT {_FINGERPRINT} FROM queue_signals) AS kept) f WHERE f.verdicts = f.kept").fetchone()
                if not renewed:
                    rebuild(con)
                    done = "rebuilt"
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        return done
