"""Audits keep the design that drew them (migration 0023): a verdict drawn by a random or active queue,
a random assignment batch or an import with an inclusion probability counts as an audit of that draw,
with the probability and stratum recorded with the draw, and its label is the final human label
(adjudicated, else the people's majority). Second reviews, double annotation, adjudication and undo
change the label, never whether the verdict counts nor its π. On the small demo workspace."""

from __future__ import annotations

import json
import shutil

import pytest

from lsqa import audit, store
from lsqa.audit.review_import import import_reviews
from lsqa.figures import audits, corrected
from lsqa.store import db
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store
from tests.support.import_oracle import import_reviews_rows
from tests.support.migrations import workspace_before

SXS = "lexical-sxs-fc"        # side by side, both orders
YESNO = "lexical-autoais-fc"  # yes/no
FLIP = {"A": "B", "B": "A", "tie": "A", "none": "A", "yes": "no", "no": "yes"}


def _drawn(ws, judge) -> tuple[dict, dict, dict]:
    """(verdict -> (queue, π, stratum), verdict -> label) of the drawn verdicts sampled_human_labels
    lists, and verdict -> final human label of every verdict people labelled."""
    with store.connect(ws) as con:
        rows = verdicts_store.sampled_human_labels(con, judge)
        finals = {r["judgment_id"]: r["label"] for r in verdicts_store.final_labels(con, judge)}
    design = {r["judgment_id"]: (r["queue"], r["inclusion_prob"], r["stratum"]) for r in rows
              if r["inclusion_prob"] is not None}
    labels = {r["judgment_id"]: r["label"] for r in rows if r["inclusion_prob"] is not None}
    return design, labels, finals


def _strengths(ws, queue=None) -> tuple[dict, dict]:
    out = corrected.corrected_ranking(ws, SXS, queue=queue)
    return out, {s["system"]: round(s["strength"], 9) for s in out["systems"]}


def test_second_reviews_and_adjudication_change_labels_never_which_audits_count(demo_workspace, tmp_path):
    """Random-queue audits by ann; bea reviews six of them again (three alike, three not: ties), two ties
    are adjudicated, cy's review breaks the third, and one verdict both agreed on is adjudicated to
    another label. Every audit still counts with the π it was drawn with, its label is the final one, and
    the correction equals that of a twin workspace where ann alone gave those final labels."""
    ws = demo_workspace
    twin = tmp_path / "twin.duckdb"
    shutil.copy(ws, twin)
    rows = audits.queue(ws, SXS, "random", rate=0.3, stratify="pair")["rows"]
    assert len(rows) >= 9
    ann = {}
    for k, row in enumerate(rows):
        ann[row["id"]] = FLIP[row["label"]] if k % 3 == 0 else row["label"]
        audit.review(ws, "ann", row["id"], ann[row["id"]], sampling=row["sampling"])
    design, labels, _ = _drawn(ws, SXS)
    assert design == {r["id"]: ("random", pytest.approx(r["sampling"]["inclusion_prob"]), r["sampling"]["stratum"])
                      for r in rows}
    assert corrected.corrected_ranking(ws, SXS)["n_usable_audits"] == len(rows)

    ids = [r["id"] for r in rows]
    for jid in ids[:3]:
        audit.review(ws, "bea", jid, ann[jid])           # double annotation, alike: a plain review
    for jid in ids[3:6]:
        audit.review(ws, "bea", jid, FLIP[ann[jid]])     # alike no more: a tie
    assert _drawn(ws, SXS)[0] == design
    mid = corrected.corrected_ranking(ws, SXS)
    assert (mid["design"], mid["n_usable_audits"], mid["n_tied_not_used"]) == ("random", len(rows) - 3, 3)
    assert mid["n_reviews_not_used"] == 3                # the ties, and nothing else

    audit.adjudicate(ws, "judy", ids[3], ann[ids[3]])
    audit.adjudicate(ws, "judy", ids[4], FLIP[ann[ids[4]]])
    audit.review(ws, "cy", ids[5], FLIP[ann[ids[5]]])    # two against one
    other = next(lab for lab in ("A", "B", "tie") if lab != ann[ids[0]])
    audit.adjudicate(ws, "judy", ids[0], other)          # both agreed; the adjudicator did not
    after, labels = _drawn(ws, SXS)[:2]
    finals = _drawn(ws, SXS)[2]
    assert after == design
    assert labels == {jid: finals[jid] for jid in ids}
    assert labels[ids[0]] == other and labels[ids[4]] == FLIP[ann[ids[4]]] and labels[ids[5]] == FLIP[ann[ids[5]]]
    out, strengths = _strengths(ws)
    assert (out["design"], out["n_usable_audits"], out["n_tied_not_used"], out["n_reviews_not_used"]) == \
        ("random", len(rows), 0, 0)

    for row in rows:  # the same draw, one person giving the final labels
        audit.review(twin, "ann", row["id"], labels[row["id"]], sampling=row["sampling"])
    assert strengths == _strengths(twin)[1]


def _import_file(ws, path, n, probability=0.1):
    with store.connect(ws) as con:
        verdicts = [r for r in verdicts_store.effective_verdicts(con, judge=SXS) if r["shown_order"] == "ab"][:n]
    with path.open("w") as fh:
        for r in verdicts:
            fh.write(json.dumps({"judge": SXS, "question_id": r["question_id"], "system_a": r["system_a"],
                                 "system_b": r["system_b"], "label": r["judge_label"], "annotator": "ext",
                                 "inclusion_probability": probability}) + "\n")
    return verdicts


@pytest.mark.parametrize("importer", [import_reviews, import_reviews_rows], ids=["sql", "rows"])
def test_imported_audits_stay_audits_after_another_persons_review(demo_workspace, tmp_path, importer):
    """The case that was biased: 20 reviews imported with π = 0.1, then a second person's ordinary
    review of 5 of them with the same labels. It left 15 usable audits and 5 "not used"; now 20, and
    the same estimate."""
    ws = demo_workspace
    verdicts = _import_file(ws, tmp_path / "ext.jsonl", 20)
    summary = importer(ws, tmp_path / "ext.jsonl")
    assert summary.added == {"reviews": 20}
    with store.connect(ws) as con:
        draws = reviews_store.draws(con)
        reviews = {r["id"]: r for r in reviews_store.reviews(con)}
    assert [(d["judgment_id"], d["queue"], d["inclusion_prob"], d["stratum"], d["batch"]) for d in draws] == \
        [(v["id"], "import", 0.1, "all", "") for v in verdicts]
    assert all(reviews[d["review_id"]]["judgment_id"] == d["judgment_id"] for d in draws)
    before, strengths = _strengths(ws)
    assert (before["design"], before["n_usable_audits"], before["n_reviews_not_used"]) == ("import", 20, 0)

    for v in verdicts[:5]:
        audit.review(ws, "bea", v["id"], v["judge_label"])
    design, labels, finals = _drawn(ws, SXS)
    assert design == {v["id"]: ("import", 0.1, "all") for v in verdicts}
    assert labels == {v["id"]: finals[v["id"]] for v in verdicts}
    after, strengths_after = _strengths(ws)
    assert (after["design"], after["n_usable_audits"], after["n_reviews_not_used"]) == ("import", 20, 0)
    assert strengths_after == strengths
    # The same file again adds no review and no draw.
    importer(ws, tmp_path / "ext.jsonl")
    with store.connect(ws) as con:
        assert len(reviews_store.draws(con)) == 20


def test_an_undone_review_keeps_its_draw_and_counts_again_once_labelled(demo_workspace):
    """Undoing the review that drew a verdict leaves the draw: the verdict does not count while nobody
    labels it (it is back in the queue), and counts again, with the π it was drawn with, once anybody
    does; a later review from a queue of another rate does not draw it again."""
    ws = demo_workspace
    q = audits.queue(ws, YESNO, "random", rate=0.3)
    first, second = q["rows"][:2]
    audit.review(ws, "ann", first["id"], first["label"], sampling=first["sampling"])
    audit.review(ws, "ann", second["id"], FLIP[second["label"]], sampling=second["sampling"])
    drawn = _drawn(ws, YESNO)[0]
    assert set(drawn) == {first["id"], second["id"]}
    assert audit.undo_last(ws, "ann")["target"] == second["id"]

    with store.connect(ws) as con:
        assert [d["judgment_id"] for d in reviews_store.draws(con)] == [first["id"], second["id"]]
    assert set(_drawn(ws, YESNO)[0]) == {first["id"]}
    assert corrected.corrected_accuracy(ws, YESNO)["n_usable_audits"] == 1
    again = audits.queue(ws, YESNO, "random", rate=0.3)
    assert again["rows"][0]["id"] == second["id"] and again["done"] == 1

    audit.review(ws, "bea", second["id"], second["label"])  # a plain review: anybody's label will do
    assert _drawn(ws, YESNO)[0] == drawn
    other_rate = dict(second["sampling"], inclusion_prob=0.9)
    audit.review(ws, "ann", second["id"], second["label"], sampling=other_rate)
    assert _drawn(ws, YESNO)[0] == drawn
    report = corrected.corrected_accuracy(ws, YESNO)
    assert (report["design"], report["n_usable_audits"], report["n_reviews_not_used"]) == ("random", 2, 0)
    with store.connect(ws) as con:
        assert len(reviews_store.draws(con)) == 2


def test_a_random_assignment_batch_is_the_draw(demo_workspace):
    """A random `lsqa assign` batch draws its verdicts when it is made: a verdict of it counts once anybody
    labels it (not only its assignee, not only from "My assignments"), with the batch's π."""
    ws = demo_workspace
    done = audit.assign(ws, YESNO, ["ana"], by="boss", per_item=1, count=6, queue="random", seed=7)
    with store.connect(ws) as con:
        draws = reviews_store.draws(con)
        n_items = len(audits.judge_items(con, YESNO))
    assert len(draws) == 6 and {(d["queue"], d["batch"], d["review_id"]) for d in draws} == \
        {("random", done["batch"], None)}
    assert corrected.corrected_accuracy(ws, YESNO)["n_usable_audits"] == 0  # nobody labelled them yet
    jid = draws[0]["judgment_id"]
    audit.review(ws, "bea", jid, "no")                   # not the assignee, not through the assignments queue
    assert _drawn(ws, YESNO)[0] == {jid: ("random", pytest.approx(6 / n_items), "all")}
    mine = audit.queue(ws, audit.Filters(reviewed=audit.ASSIGNED), "ana")["rows"]
    row = next(r for r in mine if r["id"] == jid)
    audit.review(ws, "ana", jid, "yes", sampling=row["sampling"])   # a tie now; the draw stays the batch's
    with store.connect(ws) as con:
        assert len(reviews_store.draws(con)) == 6
    report = corrected.corrected_accuracy(ws, YESNO)
    assert (report["n_usable_audits"], report["n_tied_not_used"]) == (0, 1)


def test_a_sampled_review_declares_the_draw_it_writes(demo_workspace):
    """What a review through a random queue declares it changes (lineage.Change, for the kept reads) is
    what it changes: the reviews and the draws; a second such review of the verdict only the reviews."""
    from lsqa.audit import kept_reads
    from tests.support.bad_input import changed_tables, snapshot

    row = audits.queue(demo_workspace, SXS, "random", rate=0.3)["rows"][0]
    before = snapshot(demo_workspace)
    audit.review(demo_workspace, "ann", row["id"], row["label"], sampling=row["sampling"])
    assert changed_tables(before, snapshot(demo_workspace)) == ["audit_draws", "human_reviews"]
    assert kept_reads.review_change(row["id"], row["sampling"]).tables == {"audit_draws", "human_reviews"}
    before = snapshot(demo_workspace)
    audit.review(demo_workspace, "bea", row["id"], row["label"], sampling=row["sampling"])
    assert changed_tables(before, snapshot(demo_workspace)) == ["human_reviews"]


def test_migration_0023_keeps_todays_audits_earliest_sampled_review_wins(demo_workspace, tmp_path):
    """A workspace at migration 0022 with the demo's verdicts and reviews of every sort. After 0023 each
    verdict's draw is its earliest live sampled review: an import's π before a later random review's,
    a random review a second person then reviewed plainly (which today's latest-review rule dropped),
    the live review after an undone one; a priority review, a review imported without π and an undone
    sampled review draw nothing."""
    _, con = workspace_before(tmp_path, "0023", "before-0023.duckdb")
    con.execute(f"ATTACH '{demo_workspace}' AS demo (READ_ONLY)")
    for table in ("documents", "questions", "systems", "judgments"):
        columns = ", ".join(c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ?"
            " ORDER BY column_index", [table]).fetchall())
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM demo.{table} ORDER BY rowid")
    con.execute("DETACH demo")
    v = [r[0] for r in con.execute("SELECT id FROM judgments WHERE judge = ? AND status = 'ok' ORDER BY id LIMIT 6",
                                   [YESNO]).fetchall()]

    def review(annotator, jid, label, queue="priority", pi=None, stratum="", undoes=None):
        action = "undo" if undoes else "override"
        return con.execute("INSERT INTO human_reviews (annotator, judgment_id, action, label, queue, inclusion_prob,"
                           " stratum, undoes) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                           [annotator, jid, action, label, queue, pi, stratum, undoes]).fetchone()[0]

    first = review("ext", v[0], "yes", "import", 0.1, "all")          # earliest: the import's π
    review("ann", v[0], "no", "random", 0.3, "all")
    kept = review("ann", v[1], "yes", "random", 0.2, "system:x")     # then bea's plain review
    review("bea", v[1], "yes")
    undone = review("ann", v[2], "no", "active", 0.5, "all")
    review("ann", v[2], None, undoes=undone)
    live = review("cy", v[2], "yes", "random", 0.4, "all")          # the earliest live sampled review
    review("ann", v[3], "yes")                                       # priority only
    review("ext", v[4], "no", "import")                              # imported without π
    gone = review("ann", v[5], "no", "random", 0.3, "all")
    review("ann", v[5], None, undoes=gone)                           # undone, and nothing after

    latest_rule = con.execute("""
        SELECT judgment_id, inclusion_prob FROM human_reviews WHERE id IN (SELECT id FROM live_reviews)
        QUALIFY row_number() OVER (PARTITION BY judgment_id ORDER BY id DESC) = 1""").fetchall()
    assert dict(latest_rule)[v[1]] is None  # the old rule: bea's review took v[1] out of the sample

    assert store.migrate(con, db.MIGRATIONS_DIR)[0] == "0023_audit_draws.sql"
    draws = con.execute("SELECT judgment_id, queue, inclusion_prob, stratum, review_id, batch FROM audit_draws"
                        " ORDER BY review_id").fetchall()
    assert draws == [(v[0], "import", 0.1, "all", first, ""), (v[1], "random", 0.2, "system:x", kept, ""),
                     (v[2], "random", 0.4, "all", live, "")]
    rows = {r["judgment_id"]: r for r in verdicts_store.sampled_human_labels(con, YESNO)}
    assert set(rows) == set(v[:5])       # v[5]: no live review, no final label
    assert {j: (rows[j]["queue"], rows[j]["inclusion_prob"]) for j in v[:5]} == {
        v[0]: ("import", 0.1), v[1]: ("random", 0.2), v[2]: ("random", 0.4), v[3]: ("priority", None),
        v[4]: ("import", None)}
    assert rows[v[0]]["label"] is None and rows[v[0]]["basis"] is None   # ext and ann tie
    assert (rows[v[1]]["label"], rows[v[1]]["basis"]) == ("yes", "unanimous")
    con.close()
