"""Reads the dashboard needs: the audit queue, one verdict in full, review progress, triage signals.

The current human label of a verdict and the current reference flags are defined once, in
``lsqa.store.verdicts`` (``_HUMAN_LABELS``, ``_CURRENT_FLAGS``); the queries here reuse those
definitions so the dashboard and the statistics never disagree about what a human said.

The audit queue is one query with window functions over all verdicts: at 50,000 verdicts it
takes tens of milliseconds (``bench/bench_dashboard.py``), and only one page of rows leaves the
database.
"""

from __future__ import annotations

from lsqa.store import prompt_texts
from lsqa.store.bulk import fetch_dicts
from lsqa.store.runs import show_abandoned
from lsqa.store.verdicts import _CURRENT_FLAGS, _HUMAN_LABELS
from lsqa.vocabulary import PAIRWISE_KINDS


def _named(con, sql: str, params: dict) -> list[dict]:
    """``fetch_dicts`` for named ($name) parameters."""
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]

_PAIRWISE_SQL = "(" + ", ".join(f"'{k}'" for k in PAIRWISE_KINDS) + ")"

# Marker in the note of a flag row written by an undo (reference_flags has no `undoes` column).
UNDO_FLAG_NOTE = "undo of flag #"


# ------------------------------------------------------------------------------------ overview

def overview_counts(con) -> dict:
    """What the workspace holds, in the units a user thinks in (books, not documents rows)."""
    one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    return {
        "books": one("SELECT count(*) FROM documents WHERE full_text IS NOT NULL"),
        "documents": one("SELECT count(*) FROM documents"),
        "questions": one("SELECT count(*) FROM questions"),
        "questions answered": one("SELECT count(DISTINCT question_id) FROM answers"),
        "systems": one("SELECT count(*) FROM systems"),
        "answers": one("SELECT count(*) FROM answers"),
        "judges": one("SELECT count(DISTINCT judge) FROM judgments"),
        "verdicts": one("SELECT count(*) FROM judgments"),
        "verdicts not decided": one("SELECT count(*) FROM judgments WHERE status <> 'ok'"),
        "human reviews": one(f"SELECT count(*) FROM ({_HUMAN_LABELS})"),
        "annotators": one("SELECT count(DISTINCT annotator) FROM human_reviews"),
        "flagged references": one(f"SELECT count(*) FROM (SELECT DISTINCT question_id, reference FROM ({_CURRENT_FLAGS}))"),
    }


def audit_work(con) -> list[dict]:
    """Per judge: verdicts, how many failed to parse, how many a human has reviewed."""
    return fetch_dicts(con, f"""
        SELECT j.judge, j.kind, count(*) AS verdicts,
               count(*) FILTER (WHERE j.status = 'parse_error') AS parse_errors,
               count(*) FILTER (WHERE j.status = 'error') AS errors,
               count(h.judgment_id) AS reviewed,
               count(*) - count(h.judgment_id) AS waiting
        FROM judgments j
        LEFT JOIN (SELECT DISTINCT judgment_id FROM ({_HUMAN_LABELS})) h ON h.judgment_id = j.id
        GROUP BY j.judge, j.kind ORDER BY j.judge""")


def recent_runs(con, limit: int = 10) -> list[dict]:
    rows = show_abandoned(fetch_dicts(con, f"""
        SELECT id, stage, status, calls_made, calls_cached, calls_failed, cost_usd, started_at, finished_at,
               error, host, pid
        FROM runs ORDER BY id DESC LIMIT {int(limit)}"""))
    return [{k: v for k, v in row.items() if k not in ("host", "pid")} for row in rows]


def cost_since_run(con, after_run_id: int) -> dict:
    """LLM calls and cost recorded by runs newer than ``after_run_id`` (a running job's cost so far)."""
    row = con.execute("""
        SELECT count(*), count(*) FILTER (WHERE status <> 'ok'), sum(cost_usd),
               count(*) FILTER (WHERE cost_usd IS NULL AND status = 'ok')
        FROM llm_calls WHERE run_id > ?""", [int(after_run_id)]).fetchone()
    return {"calls": int(row[0]), "failed": int(row[1]), "cost_usd": float(row[2] or 0.0),
            "calls_unpriced": int(row[3])}


def max_run_id(con) -> int:
    return int(con.execute("SELECT coalesce(max(id), 0) FROM runs").fetchone()[0])


# --------------------------------------------------------------------------------- audit queue

# Items: a yes/no verdict rates one answer (question, system); a side-by-side verdict rates a pair,
# whatever the order (question, {system_a, system_b}). `outcome` is a label comparable across
# judges of one family: yes/no, or the winning system's name / tie / none.
_ITEMS = f"""
    SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label, raw_label, status,
           CASE WHEN kind IN {_PAIRWISE_SQL}
                THEN question_id || '|' || least(system_a, system_b) || '|' || greatest(system_a, system_b)
                ELSE question_id || '|' || system_a END AS item,
           CASE WHEN kind IN {_PAIRWISE_SQL}
                THEN (CASE label WHEN 'A' THEN system_a WHEN 'B' THEN system_b ELSE label END)
                ELSE label END AS outcome
    FROM judgments
"""

# Per decided verdict: the share of other judges' verdicts on the same item with another outcome,
# and whether the judge itself gave the item different outcomes (both orders, or both references).
_SIGNALS = f"""
    SELECT id,
           (n_item - n_judge) AS n_others,
           CASE WHEN n_item > n_judge
                THEN ((n_item - n_judge) - (n_item_same - n_judge_same))::DOUBLE / (n_item - n_judge)
                ELSE 0.0 END AS disagreement,
           self_inconsistent
    FROM (
        SELECT id,
               count(*) OVER (PARTITION BY item) AS n_item,
               count(*) OVER (PARTITION BY item, outcome) AS n_item_same,
               count(*) OVER (PARTITION BY item, judge) AS n_judge,
               count(*) OVER (PARTITION BY item, judge, outcome) AS n_judge_same,
               min(outcome) OVER (PARTITION BY item, judge) <> max(outcome) OVER (PARTITION BY item, judge)
                   AS self_inconsistent
        FROM ({_ITEMS}) WHERE status = 'ok' AND outcome IS NOT NULL)
"""


def audit_queue(con, *, weights: dict, annotator: str = "", judges=None, systems=None, documents=None,
                labels=None, statuses=None, reviewed: str = "all", limit: int = 100, offset: int = 0) -> tuple[list[dict], int]:
    """One page of verdicts, most in need of a human first, and the number matching the filters.

    ``weights``: ``failed``, ``disagreement``, ``self_inconsistent``, ``flagged`` (see
    ``lsqa.audit.PRIORITY_WEIGHTS``). ``reviewed``: ``all`` | ``unreviewed`` (by nobody) |
    ``not_mine`` (not by ``annotator``) | ``mine``. Order: verdicts nobody reviewed yet first,
    then by priority, then by a stable key.
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
    elif reviewed == "mine":
        where.append("h.my_action IS NOT NULL")
    elif reviewed != "all":
        raise ValueError(f"reviewed must be all, unreviewed, not_mine or mine, not {reviewed!r}")
    sql = f"""
        WITH j AS ({_ITEMS}),
             s AS ({_SIGNALS}),
             h AS (SELECT judgment_id, count(*) AS n_reviewers,
                          any_value(label) FILTER (WHERE annotator = $annotator) AS my_label,
                          any_value(action) FILTER (WHERE annotator = $annotator) AS my_action
                   FROM ({_HUMAN_LABELS}) GROUP BY judgment_id),
             f AS (SELECT DISTINCT question_id FROM ({_CURRENT_FLAGS}))
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
        FROM j
        LEFT JOIN s ON s.id = j.id
        LEFT JOIN h ON h.judgment_id = j.id
        LEFT JOIN f ON f.question_id = j.question_id
        LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE {" AND ".join(where)}
        ORDER BY (coalesce(h.n_reviewers, 0) > 0), priority DESC, j.question_id, j.judge, j.system_a, j.system_b,
                 j.shown_order, j.reference
        LIMIT {int(limit)} OFFSET {int(offset)}"""
    named.update({"annotator": annotator, "w_failed": float(weights["failed"]),
                  "w_disagreement": float(weights["disagreement"]),
                  "w_self": float(weights["self_inconsistent"]), "w_flagged": float(weights["flagged"])})
    rows = _named(con, sql, named)
    total = int(rows[0]["n_total"]) if rows else _count_only(con, sql, named, offset)
    for r in rows:
        r.pop("n_total", None)
    return rows, total


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


# ------------------------------------------------------------------------------- one verdict

def judgment(con, judgment_id: str) -> dict | None:
    rows = fetch_dicts(con, """
        SELECT j.*, q.text AS question, q.reference_1, q.reference_2, q.origin, q.document_id,
               d.title, d.clean_start, d.clean_end, (d.full_text IS NOT NULL) AS has_text
        FROM judgments j LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE j.id = ?""", [judgment_id])
    return rows[0] if rows else None


def answers_of(con, question_id: str, systems: list[str]) -> dict[str, dict]:
    rows = fetch_dicts(con, "SELECT system_name, text, status, passages FROM answers"
                            " WHERE question_id = ? AND system_name IN (SELECT unnest(?))",
                       [question_id, list(systems)])
    return {r["system_name"]: r for r in rows}


def other_verdicts(con, question_id: str, systems: list[str]) -> list[dict]:
    """Every judge's verdicts on the same answers (for the audit view's comparison table)."""
    return fetch_dicts(con, f"""
        SELECT id, judge, kind, system_a, system_b, shown_order, reference, label, status, score
        FROM judgments WHERE question_id = ?
          AND system_a IN (SELECT unnest(?))
          AND (system_b = '' OR system_b IN (SELECT unnest(?)))
        ORDER BY kind IN {_PAIRWISE_SQL}, judge, shown_order, reference""",
                       [question_id, list(systems), list(systems)])


def story(con, document_id: str) -> dict | None:
    rows = fetch_dicts(con, "SELECT id, title, full_text, clean_start, clean_end FROM documents WHERE id = ?",
                       [document_id])
    return rows[0] if rows else None


def passages_covering(con, document_id: str, spans: list[tuple[int, int]]) -> list[dict]:
    """The passages (in book order) that hold any of ``spans`` (char offsets into the full text)."""
    if not spans:
        return []
    starts = [int(s) for s, _ in spans]
    ends = [int(e) for _, e in spans]
    return fetch_dicts(con, """
        SELECT DISTINCT p.ordinal, p.char_start, p.char_end FROM passages p,
             (SELECT unnest(?) AS s, unnest(?) AS e) x
        WHERE p.document_id = ? AND p.char_start < x.e AND p.char_end > x.s
        ORDER BY p.ordinal""", [starts, ends, document_id])


def llm_call(con, cache_key: str) -> dict | None:
    if not cache_key:
        return None
    rows = fetch_dicts(con, "SELECT model, prompt_id, prompt_version, messages, prompt_parts, response, status,"
                            " error_message, cost_usd, latency_s FROM llm_calls WHERE cache_key = ?", [cache_key])
    if not rows:
        return None
    call = rows[0]
    call["messages"] = prompt_texts.messages_json(con, call["messages"], call.pop("prompt_parts"))
    return call


def review_history(con, judgment_id: str) -> list[dict]:
    """Every review row of a verdict (append-only history), with whether it is still live."""
    return fetch_dicts(con, """
        SELECT r.id, r.annotator, r.action, r.label, r.note, r.undoes, r.created_at,
               r.action <> 'undo' AND r.id NOT IN (SELECT undoes FROM human_reviews
                                                    WHERE action = 'undo' AND undoes IS NOT NULL) AS live
        FROM human_reviews r WHERE r.judgment_id = ? ORDER BY r.id""", [judgment_id])


def current_labels(con, judgment_id: str) -> list[dict]:
    return fetch_dicts(con, f"SELECT annotator, action, label, note, created_at FROM ({_HUMAN_LABELS})"
                            " WHERE judgment_id = ? ORDER BY annotator", [judgment_id])


def flags_of(con, question_id: str) -> list[dict]:
    """Current flags on a question's references (one per annotator and reference)."""
    return fetch_dicts(con, f"SELECT annotator, reference, reason, note, created_at FROM ({_CURRENT_FLAGS})"
                            " WHERE question_id = ? ORDER BY reference, annotator", [question_id])


# ------------------------------------------------------------------------- undo and progress

def last_action(con, annotator: str) -> dict | None:
    """The annotator's latest action that still stands: a review not undone, or a flag not undone.

    Flag rows written by an undo carry ``UNDO_FLAG_NOTE`` + the id they undo in their note.
    """
    rows = _named(con, f"""
        WITH undone_flags AS (
            SELECT TRY_CAST(regexp_extract(note, '{UNDO_FLAG_NOTE}(\\d+)', 1) AS BIGINT) AS id
            FROM reference_flags WHERE note LIKE '{UNDO_FLAG_NOTE}%')
        SELECT * FROM (
            SELECT 'review' AS what, r.id, r.judgment_id AS target, r.action, r.label, '' AS reference,
                   r.note, r.created_at
            FROM human_reviews r
            WHERE r.annotator = $a AND r.action <> 'undo'
              AND r.id NOT IN (SELECT undoes FROM human_reviews WHERE action = 'undo' AND undoes IS NOT NULL)
            UNION ALL
            SELECT 'flag', f.id, f.question_id, f.reason, NULL, f.reference, f.note, f.created_at
            FROM reference_flags f
            WHERE f.annotator = $a AND f.note NOT LIKE '{UNDO_FLAG_NOTE}%'
              AND f.id NOT IN (SELECT id FROM undone_flags WHERE id IS NOT NULL))
        ORDER BY created_at DESC, what DESC, id DESC LIMIT 1""", {"a": annotator})
    return rows[0] if rows else None


def flag_before(con, annotator: str, question_id: str, reference: str, before_id: int) -> dict | None:
    """The annotator's flag row on this reference just before ``before_id`` (what an undo restores)."""
    rows = fetch_dicts(con, """
        SELECT id, reason, note FROM reference_flags
        WHERE annotator = ? AND question_id = ? AND reference = ? AND id < ?
        ORDER BY id DESC LIMIT 1""", [annotator, question_id, reference, int(before_id)])
    return rows[0] if rows else None


def annotator_progress(con) -> list[dict]:
    """Per annotator: verdicts with a current label (confirmed / overridden), current flags, last activity."""
    return fetch_dicts(con, f"""
        WITH r AS (SELECT annotator, count(*) AS reviewed,
                          count(*) FILTER (WHERE action = 'confirm') AS confirmed,
                          count(*) FILTER (WHERE action = 'override') AS overridden,
                          max(created_at) AS last_review
                   FROM ({_HUMAN_LABELS}) GROUP BY annotator),
             f AS (SELECT annotator, count(*) AS flags FROM ({_CURRENT_FLAGS}) GROUP BY annotator),
             a AS (SELECT annotator, max(created_at) AS last_action FROM
                     (SELECT annotator, created_at FROM human_reviews
                      UNION ALL SELECT annotator, created_at FROM reference_flags) GROUP BY annotator)
        SELECT a.annotator, coalesce(r.reviewed, 0) AS reviewed, coalesce(r.confirmed, 0) AS confirmed,
               coalesce(r.overridden, 0) AS overridden, coalesce(f.flags, 0) AS flags, a.last_action
        FROM a LEFT JOIN r USING (annotator) LEFT JOIN f USING (annotator)
        ORDER BY reviewed DESC, a.annotator""")


# ------------------------------------------------------------------------- reference triage

def reference_triage_rows(con) -> dict:
    """Raw material for ``lsqa.reference_errors``: per question and reference, what raters and humans said.

    - ``questions``: questions with two references that have at least one verdict;
    - ``gt``: ground-truth verdicts per (question, system, reference) — label, status;
    - ``grounded``: book-grounded yes/no verdicts (absolute kind) per (question, system);
    - ``human_gt``: current human labels on ground-truth verdicts;
    - ``flags``: current flags.
    """
    questions = fetch_dicts(con, """
        SELECT q.id AS question_id, q.document_id, d.title, q.text AS question, q.reference_1, q.reference_2
        FROM questions q JOIN documents d ON d.id = q.document_id
        WHERE q.reference_1 <> '' AND q.id IN (SELECT DISTINCT question_id FROM judgments)
        ORDER BY d.title, q.source_index, q.id""")
    gt = fetch_dicts(con, """
        SELECT id, judge, question_id, system_a AS system, reference, label FROM judgments
        WHERE kind = 'groundtruth' AND status = 'ok' AND reference IN ('1', '2')""")
    grounded = fetch_dicts(con, """
        SELECT judge, question_id, system_a AS system, label FROM judgments
        WHERE kind = 'absolute' AND status = 'ok'""")
    human_gt = fetch_dicts(con, f"""
        SELECT h.annotator, h.label AS human_label, j.label AS judge_label, j.question_id, j.reference
        FROM ({_HUMAN_LABELS}) h JOIN judgments j ON j.id = h.judgment_id
        WHERE j.kind = 'groundtruth' AND j.reference IN ('1', '2')""")
    flags = fetch_dicts(con, f"SELECT id, annotator, question_id, reference, reason, note, created_at"
                             f" FROM ({_CURRENT_FLAGS}) ORDER BY question_id, reference, id")
    return {"questions": questions, "gt": gt, "grounded": grounded, "human_gt": human_gt, "flags": flags}


def passages_of_documents(con, document_ids: list[str]) -> list[dict]:
    return fetch_dicts(con, "SELECT document_id, ordinal, text FROM passages"
                            " WHERE document_id IN (SELECT unnest(?)) ORDER BY document_id, ordinal",
                       [list(document_ids)])


def flagged_questions(con) -> list[dict]:
    """Every current flag with its question and reference text (the errata)."""
    return fetch_dicts(con, f"""
        SELECT f.question_id, d.title, q.text AS question, f.reference,
               CASE f.reference WHEN '1' THEN q.reference_1 ELSE q.reference_2 END AS reference_text,
               CASE f.reference WHEN '1' THEN q.reference_2 ELSE q.reference_1 END AS other_reference,
               f.reason, f.annotator, f.note, f.created_at
        FROM ({_CURRENT_FLAGS}) f
        LEFT JOIN questions q ON q.id = f.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        ORDER BY d.title, f.question_id, f.reference, f.annotator""")


# -------------------------------------------------------------------------------------- corpus

def books(con) -> list[dict]:
    return fetch_dicts(con, """
        SELECT d.id, d.title, d.author, d.kind, d.word_count, d.n_tokens,
               (SELECT count(*) FROM passages p WHERE p.document_id = d.id) AS passages,
               (SELECT count(*) FROM entities e WHERE e.document_id = d.id) AS entities,
               (SELECT count(*) FROM questions q WHERE q.document_id = d.id) AS questions,
               (SELECT count(DISTINCT a.question_id) FROM answers a JOIN questions q ON q.id = a.question_id
                WHERE q.document_id = d.id) AS answered
        FROM documents d WHERE d.full_text IS NOT NULL ORDER BY d.title""")


def passage_page(con, document_id: str, offset: int = 0, limit: int = 20, contains: str = "") -> tuple[list[dict], int]:
    sql = "SELECT ordinal, char_start, char_end, n_tokens, text, count(*) OVER () AS n_total FROM passages" \
          " WHERE document_id = ?"
    params: list = [document_id]
    if contains:
        sql += " AND text ILIKE ?"
        params.append("%" + contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        sql = sql.replace("text ILIKE ?", "text ILIKE ? ESCAPE '\\'")
    sql += f" ORDER BY ordinal LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = fetch_dicts(con, sql, params)
    total = int(rows[0]["n_total"]) if rows else 0
    for r in rows:
        r.pop("n_total")
    return rows, total


def text_slice(con, document_id: str, start: int, end: int) -> str:
    row = con.execute("SELECT substr(full_text, ? + 1, ?) FROM documents WHERE id = ?",
                      [int(start), int(max(0, end - start)), document_id]).fetchone()
    return row[0] if row and row[0] is not None else ""


def questions_with_answers(con, document_id: str) -> list[dict]:
    """Questions of a book (those with answers first) with every system's answer."""
    return fetch_dicts(con, """
        SELECT q.id AS question_id, q.origin, q.text AS question, q.reference_1, q.reference_2,
               a.system_name, a.text AS answer, a.status
        FROM questions q LEFT JOIN answers a ON a.question_id = q.id
        WHERE q.document_id = ?
        ORDER BY (SELECT count(*) FROM answers x WHERE x.question_id = q.id) = 0, q.source_index, q.id,
                 a.system_name""", [document_id])
