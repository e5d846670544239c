"""The audit queue read from the kept priority signals (issue 35, ``lsqa.store.queue_signals``) is the
queue computed over every verdict (``audit_queue(..., full=True)``, how it was read before), row for row
and total for total, on the demo and on a generated workspace, after every kind of write that people
and imports make: reviews, second reviews, undos, flags and their undo, skips, assignments,
adjudications, imported reviews and verdicts, re-judged verdicts, a changed overlap setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.scale_workspace import build
from lsqa import audit, store
from lsqa.audit.review_import import import_reviews
from lsqa.store import audit_queue as queue_store
from lsqa.store import queue_signals
from lsqa.store import results as results_store
from lsqa.study.imports import import_judgments

W = audit.PRIORITY_WEIGHTS


def _cases(con) -> list[dict]:
    """The queue's filters as the Audit page and ``lsqa assign`` use them, each page size and mode."""
    judges = [r[0] for r in con.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1").fetchall()]
    systems = [r[0] for r in con.execute("SELECT DISTINCT system_a FROM judgments ORDER BY 1").fetchall()]
    docs = [r[0] for r in con.execute("SELECT DISTINCT q.document_id FROM judgments j JOIN questions q"
                                      " ON q.id = j.question_id ORDER BY 1").fetchall()]
    opened = [r[0] for r in con.execute("SELECT id FROM judgments ORDER BY hash(id) LIMIT 12").fetchall()]
    cases = [dict(annotator=a, reviewed=m, limit=150) for a in ("ana", "ben") for m in audit.REVIEWED_FILTERS]
    cases += [dict(annotator="ana", reviewed="assigned", limit=150), dict(annotator="ben", reviewed="assigned"),
              dict(annotator="ana", reviewed="not_mine", exclude=opened, limit=150),
              dict(annotator="ben", reviewed="not_mine", overlap=0.4, limit=150),
              dict(annotator="ana", reviewed="all", reviewed_by=["ben", "gold-set"]),
              dict(annotator="ana", judges=judges[:2], reviewed="not_mine", limit=40, offset=40),
              dict(annotator="ben", systems=systems[1:3], labels=["A", "yes", "tie"], reviewed="unreviewed"),
              dict(documents=docs[:1], statuses=["ok", "parse_error"], reviewed="all", limit=30, offset=10),
              dict(statuses=["parse_error", "error"], reviewed="all"),
              dict(judges=judges[-1:], reviewed="all", exclude=opened[:3], limit=7),
              dict(annotator="cy", reviewed="not_mine", limit=100_000),  # the whole queue
              dict(annotator="ana", reviewed="all", offset=10**7),  # past the end: the total still counts
              # the Audit page's search (question or judged answers) and a link's question
              dict(annotator="ana", reviewed="not_mine", search=audit.search_terms("the"), limit=60),
              dict(annotator="ben", reviewed="all", search=audit.search_terms("A s"), judges=judges[:1]),
              dict(reviewed="all", questions=[q for q, in con.execute(
                  "SELECT DISTINCT question_id FROM judgments ORDER BY 1 LIMIT 3").fetchall()])]
    return cases


def assert_kept_equals_computed(ws: Path, share: slice | None = None) -> int:
    """Every case of ``_cases`` (or the ``share`` of them): the kept read gives the computed read's rows
    (values, key order) and total."""
    n = 0
    with store.connect(ws) as con:
        assert queue_signals.relation(con) is not None  # the kept path is the one compared
        for case in _cases(con)[share or slice(None)]:
            kept = queue_store.audit_queue(con, weights=W, **case)
            full = queue_store.audit_queue(con, weights=W, full=True, **case)
            assert kept[1] == full[1], case
            assert kept[0] == full[0], case
            assert [list(r) for r in kept[0]] == [list(r) for r in full[0]], case
            n += len(kept[0])
    return n


def _kept_rows(ws: Path) -> list[tuple]:
    with store.connect(ws) as con:
        return con.execute("SELECT * FROM queue_signals ORDER BY id").fetchall()


def _fresh_rows(ws: Path) -> list[tuple]:
    with store.connect(ws) as con:
        return con.execute(f"SELECT * FROM ({queue_signals.rows_sql('true')}) ORDER BY id").fetchall()


def _queue_ids(ws: Path, annotator: str, n: int, **filters) -> list[str]:
    return [r["id"] for r in audit.queue(ws, audit.Filters(**filters), annotator, page_size=n)["rows"]]


def _labelled(ws: Path, jid: str) -> tuple:
    """(kind, label, question_id) of one verdict."""
    with store.connect(ws) as con:
        return con.execute("SELECT kind, label, question_id FROM judgments WHERE id = ?", [jid]).fetchall()[0]


def _other_label(kind: str, label) -> str:
    """A label that disagrees with ``label`` for a verdict of ``kind``."""
    return {"A": "B", "B": "tie", "tie": "A", "none": "A", "yes": "no", "no": "yes"}.get(label, "A" if "pair" in
                                                                                         kind else "yes")


def _reviews_by(ws: Path, annotator: str, n: int, second: bool = False) -> None:
    """``annotator`` reviews the first ``n`` of their queue: overturns unlabelled and every fifth, confirms others."""
    for jid in _queue_ids(ws, annotator, n, reviewed="second" if second else "not_mine"):
        kind, label, _ = _labelled(ws, jid)
        if label is None or jid.endswith(("0", "5")):
            audit.review(ws, annotator, jid, _other_label(kind, label))
        else:
            audit.confirm(ws, annotator, jid)


def _flags(ws: Path) -> None:
    """Two people flag references of two questions, and one retracts a flag."""
    ids = _queue_ids(ws, "ana", 40, reviewed="all")
    q1, q2 = _labelled(ws, ids[3])[2], _labelled(ws, ids[-1])[2]
    audit.flag(ws, "ana", q1, "1", "wrong")
    audit.flag(ws, "ben", q2, "2", "ambiguous")
    audit.flag(ws, "ben", q2, "2", "retract")


def _skips(ws: Path) -> None:
    """ana skips the first three items of her queue."""
    for jid in _queue_ids(ws, "ana", 3):
        audit.skip(ws, "ana", jid, "unsure")


def _assignments(ws: Path) -> None:
    """Assignments of two judges' verdicts (by priority and at random), then ana reviews her assigned items."""
    with store.connect(ws) as con:
        judges = [r[0] for r in con.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1").fetchall()]
    audit.assign(ws, judges[0], "ana,ben", by="", per_item=1, count=12)
    audit.assign(ws, judges[-1], "ana", by="", per_item=1, count=6, queue="random", seed=3)
    _reviews_by(ws, "ana", 2, second=False)


def _adjudication(ws: Path) -> None:
    """judy settles the first disagreement, against the judge's label."""
    rows = audit.disagreements(ws)
    if rows:
        jid = rows[0]["judgment_id"]
        kind, label, _ = _labelled(ws, jid)
        audit.adjudicate(ws, "judy", jid, _other_label(kind, label) if label else "A" if "pair" in kind else "yes")


def _imported_reviews(ws: Path, tmp_path: Path) -> None:
    """A gold set's reviews of eight verdicts imported from CSV, every other one disagreeing."""
    with store.connect(ws) as con:
        rows = con.execute("SELECT judge, question_id, system_a, system_b, reference, kind, label FROM judgments"
                           " WHERE status = 'ok' ORDER BY hash(id) LIMIT 8").fetchall()
    path = tmp_path / "gold.csv"
    lines = ["judge,question_id,system_a,system_b,reference,label,annotator"]
    lines += [f"{j},{q},{a},{b},{ref},{_other_label(k, lab) if i % 2 else lab},gold-set"
              for i, (j, q, a, b, ref, k, lab) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    import_reviews(ws, path, gold=True)


def _imported_verdicts(ws: Path, tmp_path: Path) -> None:
    """A new rater's verdicts imported on questions that have verdicts: their items gain a judge that may disagree."""
    with store.connect(ws) as con:
        # One row per pair of a question (a pair is judged in both orders and against both references).
        rows = con.execute("SELECT DISTINCT q, first, second FROM (SELECT question_id AS q,"
                           " least(system_a, system_b) AS first, greatest(system_a, system_b) AS second"
                           " FROM judgments WHERE family = 'pairwise') ORDER BY hash(q || first || second) LIMIT 30"
                           ).fetchall()
    path = tmp_path / "verdicts.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    + "".join(f"{q},outside-rater,pairwise,{b},{a},{'AB'[i % 2]}\n"
                              for i, (q, a, b) in enumerate(rows)))
    import_judgments(ws, path)


def _rejudged(ws: Path) -> None:
    """A re-run replaces two verdicts (as the pipeline's ``insert_judgments(replace=True)``): a parse error
    becomes a label and a label flips."""
    with store.connect(ws) as con:
        rows = [dict(zip([d[0] for d in cur.description], r, strict=False)) for cur in
                [con.execute("SELECT * FROM judgments WHERE family = 'pairwise' ORDER BY status DESC, hash(id)"
                             " LIMIT 2")] for r in cur.fetchall()]
    for r, label in zip(rows, ("A", "B"), strict=False):
        r.update(label=label, raw_label=label, status="ok")
        r.pop("created_at")
    with store.write(ws) as con:
        results_store.insert_judgments(con, rows, replace=True)


def _people_work(ws: Path, tmp_path: Path) -> list[tuple[str, object]]:
    """Steps a team and its imports make, in an order that interleaves them: (what, step)."""
    return [("reviews by ana", lambda: _reviews_by(ws, "ana", 6)),
            ("reviews by ben", lambda: _reviews_by(ws, "ben", 4)),
            ("second reviews", lambda: _reviews_by(ws, "ben", 3, second=True)),
            ("flags", lambda: _flags(ws)),
            ("undo of a flag", lambda: audit.undo_last(ws, "ana", "flag")),
            ("undo of a review", lambda: audit.undo_last(ws, "ben", "review")),
            ("skips", lambda: _skips(ws)),
            ("assignments", lambda: _assignments(ws)),
            ("adjudication", lambda: _adjudication(ws)),
            ("imported reviews", lambda: _imported_reviews(ws, tmp_path)),
            ("imported verdicts", lambda: _imported_verdicts(ws, tmp_path)),
            ("re-judged verdicts", lambda: _rejudged(ws)),
            ("overlap", lambda: audit.set_overlap(ws, 0.5, "ana")),
            ("more reviews", lambda: _reviews_by(ws, "cy", 5))]


def _check_steps(ws: Path, tmp_path: Path, every: int = 1) -> None:
    """Every step of a team's work, then the kept rows and every read case compared with the computed
    ones; ``every`` > 1: after each step one case in ``every``, in turn (each case still after every
    ``every``-th step, the kept rows after each step, every case at the start and at the end), for the
    fast lane."""
    assert_kept_equals_computed(ws)
    for i, (what, step) in enumerate(_people_work(ws, tmp_path)):
        step()
        with store.connect(ws) as con:  # every write caught up after its commit
            assert con.execute("SELECT count(*) FROM queue_dirty").fetchall()[0][0] == 0, what
        assert _kept_rows(ws) == _fresh_rows(ws), what
        assert assert_kept_equals_computed(ws, slice(i % every, None, every)) > 0, what
    assert_kept_equals_computed(ws)


def test_the_kept_queue_is_the_computed_queue_on_the_demo_through_a_teams_work(demo_workspace, tmp_path):
    _check_steps(demo_workspace, tmp_path)


@pytest.fixture(scope="module", params=[pytest.param((1_000, 6), id="1k"),
                                        pytest.param((4_000, 1), id="4k", marks=pytest.mark.slow),
                                        pytest.param((40_000, 4), id="40k", marks=pytest.mark.slow)])
def generated(tmp_path_factory, request) -> tuple[Path, int]:
    """(a generated workspace, one read case in how many after each step)."""
    size, every = request.param
    path = tmp_path_factory.mktemp("generated") / "generated.duckdb"
    build(path, size, rich=True, seed=7)
    return path, every


def test_the_kept_queue_is_the_computed_queue_on_a_generated_workspace(generated, tmp_path):
    """Verdicts of six judges of every family (both orders, both references, parse errors): 1,000 in
    the fast lane (a sixth of the read cases after each step), 4,000 in the full suite (every case after
    every step) and 40,000 (a quarter of the cases after each step, in turn: every case is read at that
    size too, and the scale changes the plans, not which step a case follows)."""
    path, every = generated
    _check_steps(path, tmp_path, every=every)


def test_a_read_before_the_catch_up_is_exact(demo_workspace, monkeypatch):
    """Marked questions are read fresh: a write whose catch-up did not run (or failed) leaves the queue right."""
    monkeypatch.setattr(queue_signals, "catch_up", lambda con, key: "")
    q = _queue_ids(demo_workspace, "ana", 5, reviewed="all")
    with store.connect(demo_workspace) as con:
        question = con.execute("SELECT question_id FROM judgments WHERE id = ?", [q[2]]).fetchall()[0][0]
    audit.flag(demo_workspace, "ana", question, "1", "wrong")
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM queue_dirty").fetchall()[0][0] == 1
        assert "UNION ALL" in queue_signals.relation(con)
    assert _kept_rows(demo_workspace) != _fresh_rows(demo_workspace)  # the kept rows are behind
    assert_kept_equals_computed(demo_workspace)
    monkeypatch.undo()
    audit.flag(demo_workspace, "ana", question, "1", "retract")  # the next write catches up both
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM queue_dirty").fetchall()[0][0] == 0
    assert _kept_rows(demo_workspace) == _fresh_rows(demo_workspace)


@pytest.mark.parametrize("change", ["status = 'parse_error', label = NULL", "label = 'tie'"])
def test_verdicts_relabelled_without_a_mark_are_read_computed_then_rebuilt(demo_workspace, change):
    """A verdict changed in place by SQL that did not mark it (a crafted test, say): the kept rows no
    longer agree with the verdicts, so the queue is computed until the next write rebuilds them."""
    with store.connect(demo_workspace) as con:
        jid = con.execute("SELECT id FROM judgments WHERE family = 'pairwise' AND label = 'A' ORDER BY id"
                          " LIMIT 1").fetchall()[0][0]
        con.execute(f"UPDATE judgments SET {change} WHERE id = ?", [jid])
        assert queue_signals.relation(con) is None
        assert queue_store.audit_queue(con, weights=W, reviewed="all", limit=40) == \
            queue_store.audit_queue(con, weights=W, full=True, reviewed="all", limit=40)
    audit.set_overlap(demo_workspace, 1.0, "ana")  # any write
    assert _kept_rows(demo_workspace) == _fresh_rows(demo_workspace)
    assert_kept_equals_computed(demo_workspace)


def test_verdicts_written_without_a_mark_are_read_computed_then_rebuilt(demo_workspace):
    """A writer that bypasses ``queue_signals.mark`` and adds or deletes verdicts: the kept rows no longer
    add up, so the queue is computed (exact, slow) until the next write rebuilds them."""
    with store.write(demo_workspace) as con:
        con.execute("DELETE FROM judgments WHERE id IN (SELECT id FROM judgments ORDER BY id LIMIT 3)")
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM queue_signals").fetchall()[0][0] == \
            con.execute("SELECT count(*) FROM judgments").fetchall()[0][0]  # that write's own catch-up rebuilt
    with store.connect(demo_workspace) as con:  # no write: the read sees it and computes
        con.execute("DELETE FROM judgments WHERE id IN (SELECT id FROM judgments ORDER BY id LIMIT 2)")
        assert queue_signals.relation(con) is None
        kept = queue_store.audit_queue(con, weights=W, reviewed="all", limit=50)
        assert kept == queue_store.audit_queue(con, weights=W, full=True, reviewed="all", limit=50)
    audit.set_overlap(demo_workspace, 1.0, "ana")  # any write
    assert _kept_rows(demo_workspace) == _fresh_rows(demo_workspace)
    assert_kept_equals_computed(demo_workspace)


def test_other_weights_are_computed_over_every_verdict(demo_workspace):
    with store.connect(demo_workspace) as con:
        weights = {**W, "flagged": 5.0}
        rows, total = queue_store.audit_queue(con, weights=weights, reviewed="all", limit=20)
        assert (rows, total) == queue_store.audit_queue(con, weights=weights, full=True, reviewed="all", limit=20)


@pytest.mark.parametrize("share, done", [(0.3, "questions"), (0.9, "rebuilt")])
def test_a_catch_up_recomputes_the_marked_questions_or_rebuilds(demo_workspace, tmp_path, monkeypatch, share,
                                                                 done):
    """Marks on a share of the questions (a bulk import of new questions into a large workspace): a
    catch-up recomputes only those when they are a minority (``REBUILD_SHARE``), else rebuilds; both
    leave exactly the rows computed afresh, and no mark."""
    monkeypatch.setattr(queue_signals, "FEW_QUESTIONS", 0)  # the demo has fewer questions than a large import
    ws = tmp_path / "ws.duckdb"
    ws.write_bytes(Path(demo_workspace).read_bytes())
    with store.connect(ws) as con:
        questions = [q for q, in con.execute("SELECT DISTINCT question_id FROM queue_signals ORDER BY 1").fetchall()]
        marked = questions[: int(share * len(questions))]
        # Stale kept rows for the marked questions, as a writer leaves them before its catch-up.
        con.execute("UPDATE queue_signals SET priority = -1 WHERE question_id IN (SELECT unnest(?))", [marked])
        queue_signals.mark(con, marked)
        assert queue_signals.catch_up(con, str(ws.resolve())) == done
        assert con.execute("SELECT count(*) FROM queue_dirty").fetchone()[0] == 0
    assert _kept_rows(ws) == _fresh_rows(ws)
