"""One verdict's item read in two parts (``lsqa.audit.judged_item``): the verdict's own part, kept per
verdict across every review and read ahead for the verdicts a page will show next, and its reviews,
read for it. The parts add up to the item read at once, and a change reaches the item at once."""

from __future__ import annotations

import pytest

from lsqa import audit, store
from lsqa.audit import judged_item
from lsqa.judging import kinds
from lsqa.store import db
from lsqa.store import results as results_store

# The statement each read of the item runs, by the words it starts with.
STATIC_READS = {
    "verdicts in context": "WITH j AS MATERIALIZED (SELECT * EXCLUDE (id_number) FROM judgments",
    "answers": "SELECT * FROM answers",
    "other verdicts": "SELECT w.n, j.id, j.judge",
    "passages": "SELECT DISTINCT x.n, p.ordinal",
}
REVIEW_READS = {
    "flags": "SELECT question_id AS _of, annotator, reference, reason, note, created_at FROM current_flags",
    "labels": "SELECT judgment_id AS _of, annotator, action, label, note, created_at FROM human_labels",
    "history": "SELECT r.judgment_id AS _of, r.id, r.annotator, r.action",
}


class _Counted:
    """A connection that records the statements run through it."""

    def __init__(self, con, seen: list[str]):
        self._con, self._seen = con, seen

    def __getattr__(self, name):
        return getattr(self._con, name)

    def execute(self, sql, *args, **kwargs):
        self._seen.append(" ".join(sql.split()))
        return self._con.execute(sql, *args, **kwargs)


@pytest.fixture
def statements(monkeypatch) -> list[str]:
    """Every statement run on a workspace connection from now on."""
    seen: list[str] = []
    real = db._host_cursor
    monkeypatch.setattr(db, "_host_cursor", lambda: _Counted(real(), seen))
    return seen


def reads(seen: list[str]) -> dict[str, int]:
    """How many statements of each of the item's reads ran (the others left out)."""
    counts = {name: sum(s.startswith(start) for s in seen) for name, start in {**STATIC_READS, **REVIEW_READS}.items()}
    return {name: n for name, n in counts.items() if n}


def verdicts(workspace) -> list[dict]:
    with store.connect(workspace) as con:
        return con.execute("SELECT id, kind, shown_order, question_id FROM judgments ORDER BY id").fetchdf() \
            .to_dict("records")


def sample(workspace, per_kind: int = 12) -> list[str]:
    """Up to ``per_kind`` verdicts of each kind and order of the workspace."""
    out: dict[tuple, list[str]] = {}
    for v in verdicts(workspace):
        group = out.setdefault((v["kind"], v["shown_order"]), [])
        if len(group) < per_kind:
            group.append(v["id"])
    return [i for group in out.values() for i in group]


def test_the_item_in_two_parts_is_the_item_read_at_once_for_every_kind_of_verdict(demo_workspace):
    """Read alone, read ahead of another, read again kept: the item is what one read at once gives,
    for every kind of verdict of the demo (AutoAIS, side by side in both orders, against the
    references, similarity), evidence found in the book and not."""
    ids = sample(demo_workspace)
    fresh = {i: audit.item.uncached(demo_workspace, i) for i in ids}
    kinds_seen = {(it["kind"], it["shown_order"] if it["pairwise"] else "") for it in fresh.values()}
    assert {("absolute", ""), ("pairwise", "ab"), ("pairwise", "ba"), ("groundtruth", ""),
            ("similarity", "")} <= kinds_seen
    evidence = [ev["found"] for it in fresh.values() for ev in it["evidence"]]
    assert True in evidence and False in evidence
    for n in range(0, len(ids), 5):  # each group read in one go when its first is asked for
        group = ids[n:n + 5]
        for k, i in enumerate(group):
            assert audit.item(demo_workspace, i, ahead=group[k + 1:]) == fresh[i]
    assert {i: audit.item(demo_workspace, i) for i in ids} == fresh  # kept
    assert audit.item(demo_workspace, "no-such-verdict", ahead=ids[:3]) is None


def test_the_item_holds_what_the_store_holds_for_its_verdict(demo_workspace):
    """Read in a batch, each verdict gets its own question, answers and other verdicts: checked
    against the tables, one verdict at a time."""
    ids = sample(demo_workspace, per_kind=4)
    audit.item(demo_workspace, ids[0], ahead=ids[1:])
    named = 0  # rows of side-by-side items about one of their answers
    with store.connect(demo_workspace) as con:
        for i in ids:
            it = audit.item(demo_workspace, i)
            q, a, b, order = con.execute("SELECT q.text, j.system_a, j.system_b, j.shown_order FROM judgments j "
                                         "JOIN questions q ON q.id = j.question_id WHERE j.id = ?", [i]).fetchone()
            assert (it["id"], it["question"]) == (i, q)
            shown = [s for s in ((a, b) if order == "ab" else (b, a)) if s]
            texts = dict(con.execute("SELECT system_name, text FROM answers WHERE question_id = ?",
                                     [it["question_id"]]).fetchall())
            assert [(x["system"], x["text"]) for x in it["answers"]] == [(s, texts.get(s, "")) for s in shown]
            (others,) = con.execute("""SELECT count(*) FROM judgments WHERE question_id = ? AND system_a IN ? AND
                                       (system_b = '' OR system_b IN ?)""",
                                    [it["question_id"], [a, b], [a, b]]).fetchone()
            assert len(it["other_verdicts"]) == others
            assert [o["this"] for o in it["other_verdicts"]].count(True) == 1
            # Each row says which answer on screen it judges: on a side-by-side item, a verdict on one answer
            # names its position and system (as many as the table has on that system), else both answers.
            on_one = dict(con.execute("""SELECT system_a, count(*) FROM judgments WHERE question_id = ? AND
                                         system_a IN ? AND system_b = '' GROUP BY 1""",
                                      [it["question_id"], [a, b]]).fetchall())
            about = [o["about"] for o in it["other_verdicts"]]
            if it["pairwise"]:
                position = {x["system"]: x["position"] for x in it["answers"]}
                assert {s: about.count(f"answer {position[s]} ({s})") for s in on_one} == on_one
                assert about.count("both answers") == others - sum(on_one.values())
                named += sum(on_one.values())
            else:
                assert set(about) == {"this answer"}
    assert named, "no side-by-side item of the sample had a verdict on one of its answers"


def test_a_review_and_a_flag_show_in_the_next_item_at_once(demo_workspace, statements):
    i = sample(demo_workspace)[0]
    it = audit.item(demo_workspace, i)
    assert it["human_labels"] == it["history"] == []
    statements.clear()
    audit.confirm(demo_workspace, "ann", i, note="seen")
    statements.clear()
    after = audit.item(demo_workspace, i)
    assert reads(statements) == {"flags": 1, "labels": 1, "history": 1}  # its own part kept
    assert [(lab["annotator"], lab["label"]) for lab in after["human_labels"]] == [("ann", it["label"])]
    assert [h["annotator"] for h in after["history"]] == ["ann"]
    assert after == audit.item.uncached(demo_workspace, i)
    audit.flag(demo_workspace, "bob", it["question_id"], "1", "wrong", note="not in the book")
    flagged = audit.item(demo_workspace, i)
    assert [(f["annotator"], f["reference"]) for f in flagged["flags"]] == [("bob", "1")]
    assert flagged == audit.item.uncached(demo_workspace, i)
    assert audit.undo_last(demo_workspace, "ann")["target"] == i
    assert audit.item(demo_workspace, i)["human_labels"] == []


def test_reading_ahead_keeps_the_next_verdicts_with_one_statement_per_read(demo_workspace, statements):
    """The Audit page's next items: asked for with the queue's next ones, both their parts are read in
    one statement per kind of read and kept; each then runs no statement at all, across other
    people's reviews and skips."""
    ids = [r["id"] for r in audit.queue(demo_workspace, annotator="ann")["rows"]][:judged_item.READ_AHEAD]
    assert len(ids) == judged_item.READ_AHEAD
    audit.item(demo_workspace, ids[0], ahead=ids[1:] + ids[:1])
    counts = reads(statements)
    assert counts == {"verdicts in context": 1, "answers": 1, "other verdicts": 1, "flags": 1, "labels": 1,
                      "history": 1, **({"passages": 1} if "passages" in counts else {})}
    for n, i in enumerate(ids[1:]):
        audit.confirm(demo_workspace, "bob", ids[0])  # a review of another verdict
        if n % 3 == 0:
            audit.skip(demo_workspace, "bob", i, "unsure")  # a skip, of this verdict even: not a review
        statements.clear()
        it = audit.item(demo_workspace, i)
        assert statements == [], i
        assert it == audit.item.uncached(demo_workspace, i)
    statements.clear()
    audit.item(demo_workspace, ids[1], ahead=ids[2:])  # kept: nothing read ahead
    assert statements == []


def _reviewed(workspace, ids: list[str]) -> None:
    """Reviews of every kind on some of ``ids`` (confirmed, overridden, by two people, one undone) and
    flags on the references of some of their questions: what the items' review parts show."""
    for n, i in enumerate(ids):
        it = audit.item.uncached(workspace, i)
        if n % 3 == 0 and it["status"] == "ok" and it["label"] is not None:
            audit.confirm(workspace, "ann", i, note=f"seen {n}")
        elif n % 3 == 1:
            labels = kinds.get(it["kind"]).labels
            audit.review(workspace, "bob", i, labels[-1], note="other")
            audit.review(workspace, "cy", i, labels[0])
        if n % 4 == 0:
            audit.flag(workspace, "cy", it["question_id"], "2", "wrong", note=f"flag {n}")
    audit.undo_last(workspace, "cy", "review")


def test_items_read_ahead_are_the_items_read_at_once_with_their_reviews(demo_workspace, statements):
    """Reviews and flags on the verdicts, read ahead in groups: each item is what one read at once
    gives, for every kind of verdict of the demo, read first or read ahead, and kept."""
    ids = sample(demo_workspace, per_kind=6)
    _reviewed(demo_workspace, ids)
    fresh = {i: audit.item.uncached(demo_workspace, i) for i in ids}
    assert {(it["kind"], it["shown_order"] if it["pairwise"] else "") for it in fresh.values()} >= \
        {("absolute", ""), ("pairwise", "ab"), ("pairwise", "ba"), ("groundtruth", ""), ("similarity", "")}
    shown = [it for it in fresh.values() if it["human_labels"] and it["flags"]]
    assert shown and any(len(it["human_labels"]) == 2 for it in fresh.values())
    assert any(not h["live"] for it in fresh.values() for h in it["history"])  # the undone one
    for n in range(0, len(ids), 7):  # each group read in one go when its first is asked for
        group = ids[n:n + 7]
        statements.clear()
        assert audit.item(demo_workspace, group[0], ahead=group[1:]) == fresh[group[0]]
        assert {k: v for k, v in reads(statements).items() if k in REVIEW_READS} == {"flags": 1, "labels": 1, "history": 1}
        statements.clear()
        for i in group[1:]:
            assert audit.item(demo_workspace, i) == fresh[i]
        assert statements == []
    assert {i: audit.item(demo_workspace, i) for i in ids} == fresh  # kept


def test_a_review_undo_or_flag_of_a_verdict_read_ahead_shows_in_its_next_item_at_once(demo_workspace, statements):
    """Read ahead, a verdict's reviews are kept until it is reviewed itself (or anything else
    changes): its review, its undo and a flag on its question show in its next item; the others
    read ahead with it are still kept. Reviews read again for one verdict are read ahead for the
    next ones whose reviews are not kept."""
    ids = [r["id"] for r in audit.queue(demo_workspace, annotator="ann")["rows"]][:8]
    audit.item(demo_workspace, ids[0], ahead=ids[1:])
    audit.confirm(demo_workspace, "ann", ids[2])
    statements.clear()
    after = audit.item(demo_workspace, ids[2])
    assert reads(statements) == {"flags": 1, "labels": 1, "history": 1}  # its reviews only
    assert [h["annotator"] for h in after["history"]] == ["ann"] and len(after["human_labels"]) == 1
    assert after == audit.item.uncached(demo_workspace, ids[2])
    for i in ids[3:5]:
        statements.clear()
        it = audit.item(demo_workspace, i)
        assert statements == [], i  # another verdict's review left it kept
        assert it == audit.item.uncached(demo_workspace, i)

    assert audit.undo_last(demo_workspace, "ann")["target"] == ids[2]
    undone = audit.item(demo_workspace, ids[2])
    assert undone["human_labels"] == [] and [h["live"] for h in undone["history"]] == [False, False]
    assert undone == audit.item.uncached(demo_workspace, ids[2])

    for i in ids[5:8]:  # three reviewed by somebody else: their own parts kept, their reviews not
        audit.confirm(demo_workspace, "bob", i)
    statements.clear()
    assert audit.item(demo_workspace, ids[5], ahead=ids[6:]) == audit.item.uncached(demo_workspace, ids[5])
    statements.clear()
    for i in ids[6:8]:
        it = audit.item(demo_workspace, i)
        assert statements == [], i  # read ahead with ids[5]
        assert [lab["annotator"] for lab in it["human_labels"]] == ["bob"]

    question = audit.item(demo_workspace, ids[1])["question_id"]
    audit.flag(demo_workspace, "bob", question, "1", "wrong", note="not in the book")
    flagged = audit.item(demo_workspace, ids[1])
    assert [(f["annotator"], f["reference"]) for f in flagged["flags"]] == [("bob", "1")]
    assert flagged == audit.item.uncached(demo_workspace, ids[1])


def test_a_verdict_a_run_replaces_or_removes_is_read_again(demo_workspace):
    """A run's write is not a review: the verdicts' own parts kept before it are read again."""
    a, b, c = sample(demo_workspace)[:3]
    assert audit.item(demo_workspace, a, ahead=[b, c])["id"] == a
    with store.write(demo_workspace) as con:  # as a run re-judging b writes it
        row = store.fetch_dicts(con, "SELECT * EXCLUDE (id_number) FROM judgments WHERE id = ?", [b])[0]
        row.update(raw="re-judged", evidence="[]")
        results_store.insert_judgments(con, [row], replace=True)
        con.execute("DELETE FROM judgments WHERE id = ?", [c])
    again = audit.item(demo_workspace, b)
    assert (again["raw"], again["evidence"]) == ("re-judged", [])
    assert again == audit.item.uncached(demo_workspace, b)
    assert audit.item(demo_workspace, c) is None
