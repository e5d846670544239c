"""One verdict's item read in two parts (``lsqa.audit.judged_item``): the verdict's own part, kept per
verdict across every review and read ahead for the verdicts a page will show next, and its reviews,
read for it. The parts add up to the item read at once, and a change reaches the item at once."""

from __future__ import annotations

import pytest

from lsqa import audit, store
from lsqa.audit import judged_item
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
    "flags": "SELECT annotator, reference, reason, note, created_at FROM current_flags",
    "labels": "SELECT annotator, action, label, note, created_at FROM human_labels",
    "history": "SELECT r.id, r.annotator, r.action",
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
    """The Audit page's next items: asked for with the queue's next ones, their own parts are read
    in one statement per kind of read and kept; each then costs its reviews only, across other
    people's reviews."""
    ids = [r["id"] for r in audit.queue(demo_workspace, annotator="ann")["rows"]][:judged_item.READ_AHEAD]
    assert len(ids) == judged_item.READ_AHEAD
    audit.item(demo_workspace, ids[0], ahead=ids[1:] + ids[:1])
    counts = reads(statements)
    assert {k: n for k, n in counts.items() if k in STATIC_READS} == \
        {"verdicts in context": 1, "answers": 1, "other verdicts": 1, **({"passages": 1} if "passages" in counts else {})}
    for i in ids[1:]:
        audit.confirm(demo_workspace, "bob", ids[0])  # a review of another verdict
        statements.clear()
        it = audit.item(demo_workspace, i)
        assert reads(statements) == {"flags": 1, "labels": 1, "history": 1}, i
        assert it == audit.item.uncached(demo_workspace, i)
    statements.clear()
    audit.item(demo_workspace, ids[1], ahead=ids[2:])  # kept: nothing read ahead
    assert {k: n for k, n in reads(statements).items() if k in STATIC_READS} == {}


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
