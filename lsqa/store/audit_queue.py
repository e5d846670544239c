"""The audit queue: every verdict with its priority signals, one page at a time, most in need first.

The signals are kept per verdict (``lsqa.store.queue_signals``) and a page is read from
them without sorting every verdict (``_kept_page``): at a million verdicts a small share of computing
them over every verdict (``bench/bench_queue_scale.py``; docs/BENCHMARKS.md, "Rank and the Audit
queue at a million verdicts"). Human
labels come from the reviews as the shared views define them (``human_labels``), flags from
``current_flags``, so the queue and the statistics never disagree about what a human said. The
computed read (``_full_page``: one query with the signals of ``_SIGNALS`` over every verdict) is
still there: for other weights, for a workspace whose kept rows do not add up, and for the tests and
benches that compare the two.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict

from lsqa.store import queue_signals
from lsqa.store.bulk import fetch_dicts
from lsqa.store.queue_signals import PRIORITY_WEIGHTS  # noqa: F401  (the queue's weights, lsqa.audit re-exports them)

# Which verdicts are shared by every annotator under an overlap setting: a fixed hash of the id in
# OVERLAP_BUCKETS buckets, the lowest `overlap` share of them.
OVERLAP_BUCKETS = 10000
READ = object()  # ``audit_queue``'s default: it reads what the kept signals stand for itself
SHARED_SQL = f"(hash(j.id) % {OVERLAP_BUCKETS})"

# Per decided verdict: the share of other judges' verdicts on the same item with another outcome,
# and whether the judge itself gave the item different outcomes (both orders, or both references).
# Counted as four GROUP BY aggregates joined back (every key column is NOT NULL, so the joins lose
# no row): the same rows as five window partitions, in about two thirds of their time on the full
# demo, on every keypress of the Audit page (docs/benchmarks-log/2026-12-01-0125-browser-first-pass.md).
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
# (most of the queue's time on the full demo: docs/benchmarks-log/2026-12-06-figures-from-code-comments.md).
# Content-addressed, so shared by every workspace.
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
                reviewed_by=None, questions=None, search=(), limit: int = 100, offset: int = 0,
                full: bool = False, ids=None, signals: str | None | object = READ) -> tuple[list[dict], int]:
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
    ``exclude``: verdict ids left out (those already opened this session). ``ids``: only these
    verdicts (their rows as the queue has them, to bring a kept page up to date: a few ids).
    ``overlap``: the share of verdicts every annotator reviews (a fixed hash of the verdict id
    decides which); in ``not_mine`` the others drop out once anybody reviewed them. Order:
    verdicts nobody reviewed yet first, then by priority, then by a stable key (the id last: a total
    order, so a page is the same whatever else is left out).

    The signals come from ``lsqa.store.queue_signals`` (kept per verdict); ``full``: computed here over
    every verdict instead, as before they were kept (tests and benches compare the two). ``signals``:
    what ``queue_signals.relation`` says of them, when the caller kept it (a review does not change it);
    read here by default.
    """
    def conditions(kept: bool):
        named: dict = {}

        def param(value) -> str:
            name = f"p{len(named)}"
            named[name] = value
            return "$" + name

        static, ids_p = _static_conditions(param, kept, judges=judges, labels=labels, statuses=statuses,
                                           documents=documents, systems=systems, questions=questions, ids=ids,
                                           search=search)
        review, everyone, special = _review_conditions(param, kept, reviewed=reviewed, overlap=overlap,
                                                       reviewed_by=reviewed_by, exclude=exclude)
        named.update({"annotator": annotator, "w_failed": float(weights["failed"]),
                      "w_disagreement": float(weights["disagreement"]),
                      "w_self": float(weights["self_inconsistent"]), "w_flagged": float(weights["flagged"])})
        return static, ids_p, review, everyone, special, named

    same_weights = {k: float(v) for k, v in weights.items()} == PRIORITY_WEIGHTS
    if same_weights and not full:
        if signals is READ and ids is None:
            # The kept table alone, as it mostly is: the page's own query says whether it may (``_kept_page``).
            static, _, review, everyone, special, named = conditions(True)
            page = _kept_page(con, queue_signals.TABLE, static, review, everyone, special, named, limit, offset,
                              check=True)
            if page is not None:
                return page
        rel = queue_signals.relation(con) if signals is READ else signals
        if rel is not None:
            static, ids_p, review, everyone, special, named = conditions(True)
            if ids is not None:
                return _rows_by_id(con, rel, static, review, named, ids_p)
            return _kept_page(con, rel, static, review, everyone, special, named, limit, offset)
    static, _, review, _, _, named = conditions(False)
    return _full_page(con, " AND ".join(["1=1", *static, *review]), named, limit, offset)


def _static_conditions(param, kept: bool, *, judges, labels, statuses, documents, systems, questions, ids,
                       search) -> tuple[list[str], str | None]:
    """The queue's conditions on a verdict's own columns (a review never changes them), and the
    parameter of ``ids`` (None without): ``param`` binds a value; ``kept``: read from the kept signals."""
    static = []
    for column, values in (("j.judge", judges), ("j.label", labels), ("j.status", statuses)):
        if values:
            static.append(f"{column} IN (SELECT unnest({param(list(values))}))")
    if documents:
        p = param(list(documents))
        static.append(f"j.question_id IN (SELECT id FROM questions WHERE document_id IN (SELECT unnest({p})))"
                      if kept else f"q.document_id IN (SELECT unnest({p}))")
    if systems:
        p = param(list(systems))
        static.append(f"(j.system_a IN (SELECT unnest({p})) OR j.system_b IN (SELECT unnest({p})))")
    if questions:
        static.append(f"j.question_id IN (SELECT unnest({param(list(questions))}))")
    ids_p = None
    if ids is not None:
        ids_p = param(list(ids))
        static.append(f"j.id IN (SELECT unnest({ids_p}))")
    for term in search or ():  # on the verdict's question and answers: a review never changes them
        p = param(term)
        static.append(f"(j.question_id IN (SELECT id FROM questions WHERE contains(lower(text), {p}))"
                      f" OR EXISTS (SELECT 1 FROM answers a WHERE a.question_id = j.question_id"
                      f" AND a.system_name IN (j.system_a, j.system_b) AND contains(lower(a.text), {p})))")
    return static, ids_p


def _review_conditions(param, kept: bool, *, reviewed: str, overlap: float, reviewed_by,
                       exclude) -> tuple[list[str], bool, list[str]]:
    """``(review, everyone, special)``: the queue's conditions on a verdict's reviews, my assignments or
    my exclusion; whether a verdict nobody reviewed, not left out and not assigned to me is in the
    queue whenever its own columns are (so the kept read need look at the others only); and the
    queries of the verdicts it must look at besides the reviewed ones (``_kept_page``)."""
    review, everyone, special = [], True, ["SELECT judgment_id AS id FROM h"]
    if reviewed == "unreviewed":
        review.append("coalesce(h.n_reviewers, 0) = 0")
    elif reviewed == "not_mine":
        review.append("h.my_action IS NULL" if kept else "h.my_label IS NULL AND h.my_action IS NULL")
        if overlap < 1.0:
            review.append(f"(coalesce(h.n_reviewers, 0) = 0 OR {SHARED_SQL} < {param(_overlap_buckets(overlap))})")
    elif reviewed == "mine":
        review.append("h.my_action IS NOT NULL")
        everyone = False
    elif reviewed == "second":
        review.append("h.n_people = 1 AND h.my_action IS NULL")
        everyone = False
    elif reviewed == "assigned":
        review.append("j.id IN (SELECT judgment_id FROM assignments WHERE annotator = $annotator)"
                      " AND h.my_action IS NULL")
        special.append("SELECT judgment_id FROM assignments WHERE annotator = $annotator")
        everyone = False
    elif reviewed != "all":
        raise ValueError(f"reviewed must be all, unreviewed, not_mine, mine, second or assigned, not {reviewed!r}")
    if reviewed_by:
        review.append(f"j.id IN (SELECT judgment_id FROM {'l' if kept else 'human_labels'}"
                      f" WHERE annotator IN (SELECT unnest({param(list(reviewed_by))})))")
        everyone = False
    if exclude:
        p = param(list(exclude))
        review.append(f"j.id NOT IN (SELECT unnest({p}))")
        special.append(f"SELECT unnest({p})")
    return review, everyone, special


# The queue's order: verdicts nobody reviewed first, then by priority, then a stable key (the id last).
_ORDER = ("(coalesce(h.n_reviewers, 0) > 0), priority DESC, j.question_id, j.judge, j.system_a, j.system_b,"
          " j.shown_order, j.reference, j.id")
_PRIORITY = """( $w_failed * (j.status <> 'ok')::INTEGER
               + $w_disagreement * {disagreement}
               + $w_self * {self_inconsistent}::INTEGER
               + $w_flagged * ({flagged})::INTEGER)"""

# Each annotator's current label per verdict as the human_labels view has it (migration 0005), read
# from the reviews alone: the view joins every verdict to take a confirm's label, which the page
# takes from its own rows instead.
_LABELS = """
    l AS (SELECT judgment_id, annotator, action, label, gold FROM (
              SELECT r.*, row_number() OVER (PARTITION BY judgment_id, annotator ORDER BY id DESC) AS rn
              FROM human_reviews r
              WHERE r.action <> 'undo'
                AND r.id NOT IN (SELECT undoes FROM human_reviews WHERE action = 'undo' AND undoes IS NOT NULL){only})
          WHERE rn = 1),
    h AS (SELECT judgment_id, count(*) AS n_reviewers, count(*) FILTER (WHERE NOT gold) AS n_people,
                 any_value(label) FILTER (WHERE annotator = $annotator) AS my_review_label,
                 any_value(action) FILTER (WHERE annotator = $annotator) AS my_action
          FROM l GROUP BY judgment_id)"""


def _by_key(rel: str, keys: str) -> str:
    """The rows of ``rel`` whose ``id_key`` is among ``keys``: in the kept table, found on that one
    column and then read by row id (scanning every column for a few rows costs 5 times as much)."""
    if rel == queue_signals.TABLE:
        return f"SELECT * FROM {rel} WHERE rowid IN (SELECT rowid FROM {rel} WHERE id_key IN ({keys}))"
    return f"SELECT * FROM {rel} j WHERE j.id_key IN ({keys})"


# Per state of the kept signals and filters of the verdicts' own columns: how many verdicts have each
# priority. A review changes neither, so the Audit page's read after one needs no pass over the
# verdicts for it (``queue_signals.EDITION`` names the state; a catch-up makes a new one).
_PRIORITIES: OrderedDict = OrderedDict()
_PRIORITIES_MAX = 64


def _static_key(where_static: str, named: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in _used(where_static, named).items()))


def _priorities(con, rel: str, where_static: str, named: dict, edition: str | None) -> tuple[list, str | None]:
    """``[(priority, verdicts)]`` of the verdicts matching ``where_static``, highest first, and the state
    of the kept signals it was counted in (None: ``rel`` is not the kept table alone, nothing is kept)."""
    key = (edition, where_static, _static_key(where_static, named))
    if edition is not None:
        with _kept_lock:
            if key in _PRIORITIES:
                _PRIORITIES.move_to_end(key)
                return _PRIORITIES[key], edition
    sql = (f"SELECT j.priority, count(*), any_value({queue_signals.EDITION}) FROM {rel} j WHERE {where_static}"
           f" GROUP BY 1 ORDER BY 1 DESC")
    rows = con.execute(sql, _used(sql, named)).fetchall()
    hist = [(p, n) for p, n, _ in rows]
    if edition is None or not rows:
        return hist, None if edition is None else edition
    counted = rows[0][2]
    if counted == edition:
        with _kept_lock:
            _PRIORITIES[key] = hist
            while len(_PRIORITIES) > _PRIORITIES_MAX:
                _PRIORITIES.popitem(last=False)
    return hist, counted


def _used(sql: str, named: dict) -> dict:
    return {k: v for k, v in named.items() if f"${k}" in sql}  # DuckDB refuses parameters a query has not


def sort_key(row: dict) -> tuple:
    """A queue row's place in ``_ORDER`` (unreviewed first, priority, then the key; NULLs last, as DuckDB
    sorts them; strings by code point, which is DuckDB's byte order of UTF-8)."""
    return _place((row["n_reviewers"] or 0) > 0, row["priority"], [row[c] for c in _KEY_COLUMNS])


def _place(reviewed: bool, priority, key) -> tuple:
    """``sort_key`` of a row reviewed or not, with this priority and these values of ``_KEY_COLUMNS``."""
    return (reviewed, -float(priority), *((1, "") if value is None else (0, value) for value in key))


# The columns of a queue row, in order (``_rows_by_id`` and ``_full_page`` select them in SQL).
_ROW = ("id", "judge", "kind", "question_id", "system_a", "system_b", "shown_order", "reference", "label", "raw_label",
        "status", "document_id", "title", "disagreement", "n_others", "self_inconsistent", "flagged", "n_reviewers",
        "my_label", "my_action", "priority")
_KEPT = ("id", "judge", "kind", "question_id", "system_a", "system_b", "shown_order", "reference", "label",
         "raw_label", "status", "disagreement", "n_others", "self_inconsistent", "flagged", "priority")
_KEY = "j.priority DESC, j.question_id, j.judge, j.system_a, j.system_b, j.shown_order, j.reference, j.id"
_KEY_COLUMNS = ("question_id", "judge", "system_a", "system_b", "shown_order", "reference", "id")
_AT = {c: _KEPT.index(c) for c in _KEPT}  # a column's place in a row of ``_KEPT``


def _top_place(t: tuple) -> tuple:
    """``sort_key`` of a row of ``_KEPT``'s columns that nobody reviewed (a row of ``_top``)."""
    return _place(False, t[_AT["priority"]], [t[_AT[c]] for c in _KEY_COLUMNS])


def _top_row(t: tuple, book: tuple) -> dict:
    """A queue row (``_ROW``) from a row of ``_top`` and its question's (document, title)."""
    at = _AT["status"] + 1
    return dict(zip(_ROW, (*t[:at], *book, *t[at:_AT["priority"]], 0, None, None, t[_AT["priority"]]), strict=True))


# Per state of the kept signals and filters of the verdicts' own columns: the first verdicts matching
# them in the order of priority and key (``_top``), and whether they are all of them. A review changes
# neither, so the Audit page's read after one reads only the reviewed verdicts' rows.
_TOPS: OrderedDict = OrderedDict()
_TOPS_MAX = 32
_TOP_KEPT_ROWS = 2000  # longer heads (a read of the whole queue) are read each time, not kept
_TOP_SLACK = 64  # read beyond the rows wanted, so that the next reviews' reads find them kept


def _top(con, rel: str, where_static: str, named: dict, hist: list, wanted: int, edition: str | None) -> list[tuple]:
    """The first ``wanted`` verdicts of ``rel`` matching ``where_static`` in the order of priority and key
    (``_KEPT``'s columns): all those above some priority and the first of it by key, found by ``hist``
    (``_priorities``) without sorting every verdict; kept per ``edition`` (None: nothing is kept)."""
    key = (edition, where_static, _static_key(where_static, named))
    if edition is not None:
        with _kept_lock:
            found = _TOPS.get(key)
            if found is not None and (found[1] or len(found[0]) >= wanted):
                _TOPS.move_to_end(key)
                return found[0][:wanted]
    total = sum(int(n) for _, n in hist)
    n = min(total, wanted + _TOP_SLACK)
    above, band = 0, None
    for priority, count in hist:
        if above + count >= n:
            band = priority
            break
        above += count
    columns = ", ".join(f"j.{c}" for c in _KEPT)
    if band is None:  # fewer verdicts match than the page reaches: all of them
        top = f"SELECT * FROM {rel} j WHERE {where_static}"
    else:
        named = {**named, "band": band}
        top = f"""(SELECT * FROM {rel} j WHERE {where_static} AND j.priority > $band)
            UNION ALL
            (SELECT * FROM {rel} j WHERE {where_static} AND j.priority = $band ORDER BY {_KEY} LIMIT {int(n - above)})"""
    # The state of the signals read comes first, in a row of its own (in its ``id``): a column of it in
    # every row would cost a string per verdict on a long head.
    sql = (f"SELECT {columns} FROM (SELECT 0 AS _head, {queue_signals.EDITION} AS id UNION ALL BY NAME"
           f" SELECT 1 AS _head, * FROM ({top})) j ORDER BY j._head, {_KEY}")
    rows = con.execute(sql, _used(sql, named)).fetchall()
    read, rows = rows[0][0], rows[1:]
    if edition is not None and read != edition:
        return None  # the kept signals changed since ``edition`` was read: the caller reads again
    if edition is not None and len(rows) <= _TOP_KEPT_ROWS:
        with _kept_lock:
            _TOPS[key] = (rows, len(rows) == total)
            while len(_TOPS) > _TOPS_MAX:
                _TOPS.popitem(last=False)
    return rows[:wanted]


def _merged(special: list[tuple], top: list[tuple], offset: int, limit: int) -> list:
    """Rows ``offset`` to ``offset + limit`` of ``special`` (``(sort_key, row)`` in ``sort_key`` order) and
    ``top`` (rows of ``_KEPT``'s columns nobody reviewed, in the order of priority and key, which is
    ``sort_key``'s for them) together in ``sort_key`` order, reading the keys of few of ``top``: the rows
    of ``special`` as they are, those of ``top`` as tuples."""
    out, i, place, end = [], 0, 0, offset + limit  # place: how many rows come before top[i]
    for k, r in special:
        at = bisect.bisect_left(top, k, lo=i, key=_top_place)
        out += top[max(i, i + offset - place):min(at, i + end - place)]  # top[i:at] go at place, place + 1, ...
        place += at - i
        if offset <= place < end:
            out.append(r)
        place, i = place + 1, at
        if place >= end:
            return out
    return out + top[max(i, i + offset - place):min(len(top), i + end - place)]


def _last_top(where_static: str, named: dict) -> list[tuple]:
    """The head ``_top`` kept last for these filters, whatever the state of the signals it was read in."""
    key = (where_static, _static_key(where_static, named))
    with _kept_lock:
        return next((rows for k, (rows, _) in reversed(_TOPS.items()) if k[1:] == key), [])


def _kept_page(con, rel: str, static: list[str], review: list[str], everyone: bool, special: list[str],
               named: dict, limit: int, offset: int, check: bool = False) -> tuple[list[dict], int] | None:
    """The page from the kept signals (``lsqa.store.queue_signals``), reading few of them.

    The queue is the verdicts matching ``static`` (their own columns) and ``review``, in ``_ORDER``.
    Only the *special* verdicts — reviewed by someone, left out, or assigned to me: a few, found by
    their ``id_key`` — can be out of it or behind the unreviewed ones for a reason other than their own
    columns; every other verdict matching ``static`` is in it when ``everyone``, among the unreviewed
    first. So the first ``offset + limit`` verdicts of the queue are among the special ones and the
    first ``offset + limit + (number of special ones)`` matching ``static`` in the order of priority
    and key (``_top``: kept while the kept signals are unchanged, as a review leaves them). One query
    reads the special verdicts' rows with their reviews, whether they match, and the books of the page's
    questions; the page is these and the head of ``_top`` in ``_ORDER`` (``sort_key``); the total is
    counted the same way. ``check``: None when the kept table alone does not stand for the verdicts now
    (``queue_signals.KEPT_ALONE``, asked in the same query)."""
    where_static = " AND ".join(["1=1", *static])
    where_all = " AND ".join(["1=1", *static, *review])
    # The books of the page's questions are read in the same query: of the special verdicts' and of the
    # head kept last for these filters (others, should the page show any, are read after).
    head = _last_top(where_static, named) if everyone else []
    named = {**named, "books": sorted({r[3] for r in head[:offset + limit]})}
    sql = f"""
        WITH {_LABELS.format(only="")},
        special AS (SELECT id FROM ({" UNION ALL ".join(special)}) WHERE id IS NOT NULL),
        near AS MATERIALIZED ({_by_key(rel, f"SELECT {queue_signals.id_key_sql()} FROM special")}),
        srows AS (SELECT * FROM near WHERE id IN (SELECT id FROM special))
        SELECT {", ".join(f"j.{c}" for c in _KEPT)}, coalesce(h.n_reviewers, 0) AS n_reviewers, h.my_action,
               CASE WHEN h.my_action = 'confirm' THEN j.label ELSE h.my_review_label END AS my_label,
               coalesce({where_static}, false) AS _static, coalesce({where_all}, false) AS _all, e._edition,
               CASE WHEN row_number() OVER () = 1 THEN e._books END AS _books, e._alone
        FROM (SELECT {queue_signals.EDITION} AS _edition, {queue_signals.KEPT_ALONE if check else "true"} AS _alone,
                     (SELECT list({{'q': q.id, 'd': q.document_id, 't': d.title}}) FROM questions q
                      LEFT JOIN documents d ON d.id = q.document_id
                      WHERE q.id IN (SELECT question_id FROM srows UNION ALL SELECT unnest($books::VARCHAR[])))
                     AS _books) e
        LEFT JOIN (srows j LEFT JOIN h ON h.judgment_id = j.id) ON true"""
    found = fetch_dicts(con, sql, _used(sql, named))
    if not found[0]["_alone"]:
        return None
    edition = found[0]["_edition"] if rel == queue_signals.TABLE else None
    # The books come on one row: on each, they would be converted to Python once per special verdict.
    books = {b["q"]: (b["d"], b["t"]) for r in found if r["_books"] for b in r["_books"]}
    srows = [r for r in found if r["id"] is not None]
    candidates = sorted(((sort_key(r), r) for r in srows if r["_all"]), key=lambda kr: kr[0])
    page = [r for _, r in candidates[offset:offset + limit]]
    total = len(candidates) - (sum(1 for r in srows if r["_static"]) if everyone else 0)
    if everyone:
        hist, counted = _priorities(con, rel, where_static, named, edition)
        total += sum(int(n) for _, n in hist)
        # A page past the end needs no head: the total is counted already.
        top = _top(con, rel, where_static, named, hist, offset + limit + len(srows), edition) if offset < total else []
        if counted != edition or top is None:
            # The kept signals changed between the reads (a catch-up in another thread): read again.
            _PRIORITIES.pop((edition, where_static, _static_key(where_static, named)), None)
            return _kept_page(con, rel, static, review, everyone, special, named, limit, offset, check)
        ids = {r["id"] for r in srows}
        page = _merged(candidates, [r for r in top if r[0] not in ids] if ids else top, offset, limit)
    unread = sorted({r["question_id"] if isinstance(r, dict) else r[_AT["question_id"]] for r in page} - set(books))
    if unread:
        qsql = """SELECT q.id, q.document_id, d.title FROM questions q LEFT JOIN documents d ON d.id = q.document_id
                  WHERE q.id IN (SELECT unnest($questions))"""
        books.update({q: (doc, title) for q, doc, title in con.execute(qsql, {"questions": unread}).fetchall()})
    rows = []
    for r in page:
        if isinstance(r, dict):
            r["document_id"], r["title"] = books.get(r["question_id"], (None, None))
            rows.append({c: r[c] for c in _ROW})
        else:
            rows.append(_top_row(r, books.get(r[_AT["question_id"]], (None, None))))
    return rows, total


def _rows_by_id(con, rel: str, static: list[str], review: list[str], named: dict, ids_p: str) -> tuple[list[dict], int]:
    """The rows of a few verdicts (``ids_p``: the parameter naming them) as ``_kept_page`` has them, those
    the filters keep, and how many: their kept signals found by ``id_key`` and their reviews alone
    (each condition on reviews is about the verdict's own), so no pass over the queue or the reviews."""
    where_all = " AND ".join(["1=1", *static, *review])
    only = f"\n                AND r.judgment_id IN (SELECT unnest({ids_p}))"
    sql = f"""
        WITH {_LABELS.format(only=only)},
        cand AS MATERIALIZED ({_by_key(rel, f"SELECT {queue_signals.id_key_sql()} FROM (SELECT unnest({ids_p}) AS id)")})
        SELECT j.id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference,
               j.label, j.raw_label, j.status, q.document_id, d.title, j.disagreement, j.n_others,
               j.self_inconsistent, j.flagged, coalesce(h.n_reviewers, 0) AS n_reviewers,
               CASE WHEN h.my_action = 'confirm' THEN j.label ELSE h.my_review_label END AS my_label,
               h.my_action, j.priority
        FROM cand j
        LEFT JOIN h ON h.judgment_id = j.id
        LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE {where_all}
        ORDER BY {_ORDER}"""
    rows = fetch_dicts(con, sql, _used(sql, named))
    return rows, len(rows)


def review_columns(con, rows: list[dict], *, annotator: str = "", reviewed: str = "all", overlap: float = 1.0,
                   reviewed_by=None, exclude=None) -> list[dict]:
    """``rows`` (queue rows as ``audit_queue`` gave them) with the columns reviews change read again —
    ``n_reviewers``, ``my_label``, ``my_action`` — and only those still in the queue by its conditions
    on reviews (the same ``_review_conditions``). A review never changes a verdict's own columns, so
    the rest of each row stands, and the verdicts are not read: this brings a kept page up to date
    after other people's reviews of verdicts it shows for a third of ``audit_queue(ids=...)``."""
    if not rows:
        return []
    named: dict = {}

    def param(value) -> str:
        name = f"p{len(named)}"
        named[name] = value
        return "$" + name

    review, _, _ = _review_conditions(param, True, reviewed=reviewed, overlap=overlap, reviewed_by=reviewed_by,
                                      exclude=exclude)
    ids_p, labels_p = param([r["id"] for r in rows]), param([r["label"] for r in rows])
    named["annotator"] = annotator
    sql = f"""
        WITH {_LABELS.format(only=f" AND r.judgment_id IN (SELECT unnest({ids_p}))")}
        SELECT j.id, coalesce(h.n_reviewers, 0) AS n_reviewers, h.my_action,
               CASE WHEN h.my_action = 'confirm' THEN j.label ELSE h.my_review_label END AS my_label
        FROM (SELECT unnest({ids_p}) AS id, unnest({labels_p}) AS label) j
        LEFT JOIN h ON h.judgment_id = j.id
        WHERE {" AND ".join(["1=1", *review])}"""
    fresh = {r["id"]: r for r in fetch_dicts(con, sql, _used(sql, named))}
    return [{**r, **fresh[r["id"]]} for r in rows if r["id"] in fresh]


def _full_page(con, where: str, named: dict, limit: int, offset: int) -> tuple[list[dict], int]:
    """The page with every verdict's signals computed here (``_signals``): how the queue was read before
    the signals were kept, and still when the kept rows cannot stand for the verdicts."""
    con.register("queue_signals_now", _signals(con))
    priority = _PRIORITY.format(disagreement="coalesce(s.disagreement, 0.0)",
                                self_inconsistent="coalesce(s.self_inconsistent, false)",
                                flagged="f.question_id IS NOT NULL")
    ctes = """
        WITH s AS (SELECT * FROM queue_signals_now),
             h AS (SELECT l.judgment_id, count(*) AS n_reviewers, count(*) FILTER (WHERE g.id IS NULL) AS n_people,
                          any_value(l.label) FILTER (WHERE l.annotator = $annotator) AS my_label,
                          any_value(l.action) FILTER (WHERE l.annotator = $annotator) AS my_action
                   FROM human_labels l LEFT JOIN (SELECT id FROM human_reviews WHERE gold) g ON g.id = l.review_id
                   GROUP BY l.judgment_id),
             f AS (SELECT DISTINCT question_id FROM current_flags)"""
    # Each verdict once: every table joined has one row per key at most.
    matching = f"""
        FROM verdict_items j
        LEFT JOIN s ON s.id = j.id
        LEFT JOIN h ON h.judgment_id = j.id
        LEFT JOIN f ON f.question_id = j.question_id
        LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE {where}"""
    sql = f"""{ctes}
        SELECT j.id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference,
               j.label, j.raw_label, j.status, q.document_id, d.title,
               coalesce(s.disagreement, 0.0) AS disagreement, coalesce(s.n_others, 0) AS n_others,
               coalesce(s.self_inconsistent, false) AS self_inconsistent,
               f.question_id IS NOT NULL AS flagged,
               coalesce(h.n_reviewers, 0) AS n_reviewers, h.my_label, h.my_action,
               {priority} AS priority,
               count(*) OVER () AS n_total
        {matching}
        ORDER BY {_ORDER}
        LIMIT {int(limit)} OFFSET {int(offset)}"""
    try:
        rows = fetch_dicts(con, sql, named)
        if rows or not offset:
            total = int(rows[0]["n_total"]) if rows else 0
        else:  # an empty page past the end still reports how many rows match: counted alone, without the sort
            count = f"{ctes} SELECT count(*) {matching}"
            total = int(con.execute(count, _used(count, named)).fetchall()[0][0])
    finally:
        con.unregister("queue_signals_now")
    for r in rows:
        r.pop("n_total", None)
    return rows, total


def _overlap_buckets(overlap: float) -> int:
    return round(max(0.0, min(1.0, float(overlap))) * OVERLAP_BUCKETS)


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
