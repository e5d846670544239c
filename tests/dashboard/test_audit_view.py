"""What the Audit page shows (lsqa.dashboard.audit_view), without Streamlit: the queue's settings in
the session, where the annotator is, the decision bar, one item, the tables, and what the screen
says after an action. On the small demo workspace; the page itself is driven in
tests/dashboard/test_dashboard_pages.py and tests/browser/test_annotation_browser.py."""

from __future__ import annotations

import re

import pytest

from lsqa import audit
from lsqa.audit.trail import Trail
from lsqa.dashboard import audit_view as view
from lsqa.errors import AuditRefused
from lsqa.figures import audits
from lsqa.text.highlight import md_escape as md

SXS, AIS = "lexical-sxs-fc", "lexical-autoais-fc"


def settings(**given) -> dict:
    """A session's queue settings as the page holds them after its first run."""
    state = view.opening_state({}, dict)
    view.restore_settings(state)
    return {**state, **given}


def first(ws, judge: str, *, order: str | None = None, annotator: str = "") -> dict:
    """The first verdict of ``judge`` in the queue (shown in ``order`` if given), as audit.item gives it."""
    rows = audit.queue(ws, audit.Filters(judges=(judge,), reviewed="all"), annotator, page_size=400)["rows"]
    return audit.item(ws, next(r["id"] for r in rows if order is None or r["shown_order"] == order))


# ------------------------------------------------------------------------- the queue's settings

def test_a_link_opens_the_queue_prefiltered_and_reads_the_choices_only_when_it_names_a_judge_or_system():
    calls = []

    def offered():
        calls.append(1)
        return {"judges": [SXS, AIS], "systems": ["fc", "rag"]}

    plain = view.opening_state({}, offered)
    assert re.fullmatch(r"[0-9a-f]{16}", plain.pop(view.TAB_KEY))  # a new tab's id
    assert plain == {"audit_trail": [], "audit_at": 0, "audit_judges": [], "audit_systems": [],
                     "audit_reviewed": "not_mine", "audit_blind": False, "audit_questions": [], "audit_search": ""}
    assert calls == []  # a new tab without a link reads nothing for the filters
    linked = view.opening_state({"judge": [SXS, "no-such-judge"], "system": ["rag"], "reviewed": ["all"],
                                 "blind": ["1"], "item": ["abc"]}, offered)
    assert (linked["audit_judges"], linked["audit_systems"]) == ([SXS], ["rag"])
    assert (linked["audit_reviewed"], linked["audit_blind"], linked["audit_trail"]) == ("all", True, ["abc"])
    assert calls
    assert view.opening_state({"reviewed": ["whatever"], "item": [""]}, offered)["audit_reviewed"] == "not_mine"
    assert view.opening_state({"item": [""]}, offered)["audit_trail"] == []
    searched = view.opening_state({"q": ["cat"], "question": ["nqa:1", "nqa:1"]}, offered)
    assert (searched["audit_search"], searched["audit_questions"]) == ("cat", ["nqa:1"])
    too_long = view.opening_state({"q": ["w" * 201]}, offered)
    assert too_long["audit_search"] == "" and "201 characters" in too_long["audit_msg"]
    # A link with a search or a question opens on them, not on my assignments.
    assert "audit_queue" not in view.opening_state({"q": ["cat"]}, offered, open_assignments=lambda: 3)
    assert view.opening_state({}, offered, open_assignments=lambda: 3)["audit_queue"] == audit.ASSIGNED


def test_settings_streamlit_forgot_come_back_from_their_plain_keys():
    state = settings(audit_judges=[SXS], audit_queue="random", audit_rate=0.3)
    view.remember_settings(state)
    for k in ("audit_judges", "audit_queue", "audit_rate"):
        del state[k]  # the page was left: Streamlit drops its widgets' keys
    view.restore_settings(state)
    assert (state["audit_judges"], state["audit_queue"], state["audit_rate"]) == ([SXS], "random", 0.3)
    state["audit_judges"] = []  # a folded panel: the widget's key fell back
    view.settings_as_last_used(state)
    assert state["audit_judges"] == [SXS]
    fresh = {}
    view.restore_settings(fresh)
    assert fresh["audit_queue"] == "priority" and fresh["audit_rate"] == 0.1 and "audit_reviewed" not in fresh


def test_the_queue_settings_in_one_line_and_as_filters():
    state = settings(audit_judges=[SXS], audit_systems=["a", "b"], audit_reviewed="second", audit_blind=True,
                     audit_queue="active")
    assert view.queue_summary(state) == md("Queue: 1 judge · 2 systems · needs a second review · active sample · blind")
    assert view.queue_summary(settings()) == md("Queue: not reviewed by me")
    assert view.filters_of(state) == audit.Filters(judges=(SXS,), systems=("a", "b"), reviewed="second")


def test_a_sample_is_of_the_first_judge_chosen_else_the_first_offered():
    offered = lambda: {"judges": [AIS, SXS]}  # noqa: E731
    assert view.sampled_judge(settings(audit_judges=[SXS]), offered) is None  # the priority queue
    assert view.sampled_judge(settings(audit_judges=[SXS], audit_queue="random"), offered) == SXS
    assert view.sampled_judge(settings(audit_queue="active"), offered) == AIS


def test_books_are_offered_by_title(demo_workspace):
    offered = audit.choices(demo_workspace)
    widgets = {w["key"]: w for w in view.filter_widgets(offered)}
    book = widgets["audit_books"]
    assert book["options"] == [d["id"] for d in offered["documents"]]
    assert [book["format_func"](d) for d in book["options"]] == [d["title"] for d in offered["documents"]]
    assert widgets["audit_judges"]["options"] == offered["judges"]


# ----------------------------------------------------------------------- where I am (the trail)

def test_the_queue_head_is_opened_joins_the_trail_and_leaves_the_queue(demo_workspace):
    state = settings()
    trail = Trail(state["audit_trail"], state["audit_at"])
    head = audit.queue(demo_workspace, audit.Filters(), "ann")
    here = view.where_i_am(demo_workspace, trail, audit.Filters(), "ann", state, None)
    assert here.current_id == head["rows"][0]["id"] == state["audit_trail"][0]
    assert here.remaining == head["total"] - 1
    assert here.current_id not in {r["id"] for r in here.upcoming}
    assert here.why[here.current_id] == view.why_shown(head["rows"][0])
    assert here.opened[here.current_id] == audit.opened_marker(demo_workspace)
    assert state["audit_why"] is here.why and state["audit_opened"] is here.opened  # the session's own records
    trail.forward()  # J: the next head
    nxt = view.where_i_am(demo_workspace, trail, audit.Filters(), "ann", state, None)
    assert nxt.current_id == here.upcoming[0]["id"] and state["audit_at"] == 1
    assert view.position_line(trail, nxt.remaining, nxt.why[nxt.current_id]).startswith(
        f"**Item 2 of {head['total']:,}** · priority ")


def test_a_sampled_queue_keeps_its_order_and_the_inclusion_probability(demo_workspace):
    state = settings(audit_queue="random", audit_rate=0.2)
    trail = Trail(state["audit_trail"], state["audit_at"])
    here = view.where_i_am(demo_workspace, trail, audit.Filters(), "ann", state, SXS)
    sample = audits.page_queue(demo_workspace, SXS, "random", rate=0.2, stratify="none", page=0)
    assert [here.current_id] + [r["id"] for r in here.upcoming] == [r["id"] for r in sample["rows"]]
    assert here.sampled[here.current_id] == {"queue": "random", "inclusion_prob": 0.2, "stratum": "all"}
    assert "random audit, drawn with probability 0.200" in here.why[here.current_id]
    trail.forward()
    nxt = view.where_i_am(demo_workspace, trail, audit.Filters(), "ann", state, SXS)
    assert nxt.current_id == sample["rows"][1]["id"] and nxt.remaining == sample["total"] - 2


# ------------------------------------------------------------------------------------ actions

def test_what_the_screen_says_after_a_decision_a_flag_and_an_undo(demo_workspace):
    it = first(demo_workspace, SXS, order="ba")
    opened_at = audit.opened_marker(demo_workspace)
    other = next(lab for lab in ("A", "B") if lab != it["label"])
    shown = audit.to_shown_label(it["kind"], other, it["shown_order"])
    said = view.save_decision(demo_workspace, "ann", it["id"], it["kind"], shown, other, "", None, opened_at)
    assert said == f"Saved: {shown} is better (overrides the judge)"
    audit.confirm(demo_workspace, "bob", it["id"])  # bob, after I opened it
    said = view.save_decision(demo_workspace, "ann", it["id"], it["kind"], it["shown_label"], None, "", None, opened_at)
    assert said == f"Saved: {audit.shown_text(it['kind'], it['shown_label'])} (agrees with the judge)" \
                   " — note: bob reviewed this item after you opened it"
    assert view.late_reviewers(demo_workspace, it["id"], "ann", opened_at) == ["bob"]
    assert view.late_reviewers(demo_workspace, it["id"], "", opened_at) == []
    assert view.late_warning(["bob", "c_d"]) == md("bob, c_d") + " reviewed this item after you opened it."
    with pytest.raises(AuditRefused):
        view.save_decision(demo_workspace, "ann", it["id"], it["kind"], "A", "yes", "", None, opened_at)
    assert view.flag_reference(demo_workspace, "ann", it["question_id"], "2", "ambiguous", "") == \
        "Flagged reference 2 as ambiguous"
    assert view.undo_mine(demo_workspace, "ann").startswith("Undone: your flag 'ambiguous' on reference 2 of “")
    assert view.undo_mine(demo_workspace, "ann").startswith("Undone: your confirm (")
    assert view.undo_mine(demo_workspace, "nobody") == "Nothing of yours to undo"


def test_undo_of_a_review_opens_its_item_again_a_flag_stays(demo_workspace):
    """Issue 34: undo returned the message only, and the page stayed on the next item."""
    it = first(demo_workspace, AIS)
    audit.review(demo_workspace, "ann", it["id"], "no")
    audit.flag(demo_workspace, "ann", it["question_id"], "1", "wrong")
    said, again = view.undo_mine_at(demo_workspace, "ann")
    assert said.startswith("Undone: your flag 'wrong'") and again is None  # a flag is a question's, not an item's
    said, again = view.undo_mine_at(demo_workspace, "ann")
    assert said.startswith("Undone: your override (") and again == it["id"]
    assert view.undo_mine_at(demo_workspace, "ann") == ("Nothing of yours to undo", None)


def test_a_key_writes_only_on_the_item_on_screen_when_it_was_pressed():
    assert view.stale_refusal("item-1", "item-1", "item-1") is None
    # Another item on screen, or none (between two items); or the browser had drawn another item, or
    # none, when the key was pressed (its screen was behind the page's last run).
    for shown, drawn in (("item-2", "item-1"), (None, "item-1"), ("item-1", "item-2"), ("item-1", None)):
        assert view.stale_refusal("item-1", shown, drawn).startswith("Not saved: the item changed under your key")
    assert view.writes(view.write_key("audit_opt_shown:A")) and not view.writes("audit_next")


def test_a_skip_is_recorded_and_is_never_a_label(demo_workspace):
    from lsqa import store
    from lsqa.store import reviews as reviews_store

    ws = demo_workspace
    it = first(ws, SXS)
    audit.review(ws, "bob", it["id"], "tie")
    with store.connect(ws) as con:
        before = reviews_store.reviews(con)
    queue_before = audit.queue(ws, audit.Filters(judges=(SXS,)), "ann", page_size=400)["total"]
    labels_before = audit.item(ws, it["id"])["human_labels"]
    assert view.skip_item(ws, "ann", it["id"], "unsure", "can't tell from the passage") == \
        "Marked unsure and passed over (recorded, not a label)"
    assert view.skip_item(ws, "ann", it["id"], "skip", "") == "Skipped (recorded, not a label)"
    with store.connect(ws) as con:
        assert reviews_store.reviews(con) == before  # not a review: no reader of human_reviews sees it
        assert [(s["annotator"], s["judgment_id"], s["reason"], s["note"]) for s in reviews_store.skips(con)] == \
            [("ann", it["id"], "unsure", "can't tell from the passage"), ("ann", it["id"], "skip", "")]
    assert audit.item(ws, it["id"])["human_labels"] == labels_before
    assert audit.queue(ws, audit.Filters(judges=(SXS,)), "ann", page_size=400)["total"] == queue_before
    assert audit.last_action(ws, "ann") is None  # undo withdraws reviews and flags, never a skip
    for bad in (dict(reason="maybe"), dict(judgment_id="no-such-verdict"), dict(annotator=" ")):
        args = {"annotator": "ann", "judgment_id": it["id"], "reason": "skip", **bad}
        with pytest.raises(AuditRefused):
            audit.skip(ws, args["annotator"], args["judgment_id"], args["reason"])
    with store.connect(ws) as con:
        assert len(reviews_store.skips(con)) == 2  # refused: nothing written


def test_saving_the_overlap_and_the_guidelines(demo_workspace):
    assert view.save_overlap(demo_workspace, "ann", 35) == "Overlap set to 35% for this workspace"
    assert audit.overlap(demo_workspace) == 0.35 and view.percent(0.35) == 35
    assert view.save_guidelines(demo_workspace, "ann", "pairwise", "Prefer the answer the book supports.") == \
        "Guidelines for pairwise verdicts saved in this workspace"
    from lsqa.judging import guidelines

    edited = guidelines.for_kind(demo_workspace, "pairwise")
    assert view.guidelines_label("pairwise", edited) == "Guidelines for pairwise verdicts (edited by ann)"


# ------------------------------------------------------------------------------- the decision bar

def test_the_decision_bar_gives_labels_in_positions_shown_and_stores_them_in_system_terms(demo_workspace):
    it = first(demo_workspace, SXS, order="ba")
    trail = Trail([it["id"]], 0)
    bar = view.decision_bar(it, True, "ann", trail, 5, {}, "ambiguous")
    # A button that writes is keyed as one (the same key on every item: drawn once, not anew per J); one
    # that does not write (moves, undo, a flag's reason) is not.
    by_key = {b["key"].removesuffix(view.WRITES): b for b in bar.nav + bar.labels + bar.flags}
    writes = {b["key"] for b in bar.labels + bar.flags if b["on"] in ("decide", "flag", "skip")}
    assert writes and all(view.writes(k) and it["id"] not in k for k in writes)
    assert not any(view.writes(b["key"]) for b in bar.nav + bar.flags[:3])
    assert by_key["audit_opt_shown:A"]["args"] == (it["id"], it["kind"], "A", "B")  # shown first = system_b
    assert by_key["audit_opt_shown:tie"]["args"][2:] == ("tie", "tie")
    assert by_key["audit_confirm"]["args"] == (it["id"], it["kind"], it["shown_label"])
    assert not by_key["audit_confirm"]["disabled"] and by_key["audit_confirm"]["help"] is None
    assert by_key["audit_prev"]["disabled"] and not by_key["audit_next"]["disabled"]
    assert [b["type"] for b in bar.flags[:3]] == ["secondary", "primary", "secondary"]  # the reason now
    assert by_key["audit_flag2"]["args"] == (it["question_id"], "2", it["id"])
    assert by_key["audit_skip"]["args"] == (it["id"], "skip") and by_key["audit_unsure"]["args"] == (it["id"], "unsure")
    assert {b["shortcut"] for b in bar.labels} == {"V", "A", "B", "T", "X", "S", "D"}
    # Stamped with the item its buttons write on (keys.js reads it: a key acts only while the cards agree).
    assert bar.position == f'<span data-lsqa-item="{it["id"]}"></span>**Item 1 of 6** · opened before'
    assert bar.blind_note is None


def test_blind_or_unnamed_the_decision_bar_turns_keys_off(demo_workspace):
    it = first(demo_workspace, AIS)
    trail = Trail([it["id"]], 0)
    blind = view.decision_bar(it, False, "ann", trail, 0, {}, "wrong")
    confirm = blind.labels[0]
    assert confirm["disabled"] and confirm["help"] == "Hidden while blind: give your own label"
    assert not any(b["disabled"] for b in blind.labels[1:]) and blind.blind_note.startswith("Blind:")
    unnamed = view.decision_bar(it, True, "", trail, 0, {}, "wrong")
    assert all(b["disabled"] for b in unnamed.labels + unnamed.flags if b["on"] != "reason")
    assert [b["key"] for b in unnamed.labels] == [f"{k}__writes" for k in
                                                  ("audit_confirm", "audit_opt_yes", "audit_opt_no", "audit_skip", "audit_unsure")]
    assert view.decision_bar(None, True, "ann", Trail(), 0, {}, "wrong").labels == []


# ------------------------------------------------------------------------------------- the item

def test_an_item_blind_hides_system_names_the_verdict_and_others_labels(demo_workspace):
    it = first(demo_workspace, SXS, order="ba")
    audit.confirm(demo_workspace, "bob", it["id"], "looks right")
    it = audit.item(demo_workspace, it["id"])
    shown = view.item_view(it, True)
    hidden = view.item_view(it, False)
    first_shown = it["answers"][0]["system"]
    assert f"Answer A: {first_shown}" in shown.answers_html and first_shown not in hidden.answers_html
    assert "answer A" in hidden.answers_html
    assert shown.verdict.startswith(f"**Verdict of {md(it['judge'])}:** “") and "(positions as shown) →" in shown.verdict
    assert shown.human_labels == [f"bob: confirm → {md(audit.shown_text(it['kind'], it['shown_label']))} — looks right"]
    assert (hidden.verdict, hidden.human_labels) == (None, [])
    assert shown.caption.startswith(md(it["title"])) and f"judge **{md(it['judge'])}**" in shown.caption
    assert shown.unusable is None
    failed = view.item_view({**it, "status": "parse_error"}, True)
    assert failed.verdict is None
    assert failed.unusable == "The judge's output could not be used (parse_error); give the label yourself."


def _page_text(v: view.ItemView, bar: view.DecisionBar) -> str:
    """All the text one item puts on the page: the item's elements and the decision bar's."""
    return "\n".join([v.caption, v.question_html, v.answers_html, v.verdict or "", *v.human_labels, v.unusable or "",
                      *(f"{e['caption']} {e['html']} {e['html_full']}" for e in v.evidence),
                      bar.position, bar.blind_note or "",
                      *(f"{b['label']} {b.get('help') or ''}" for b in bar.nav + bar.labels + bar.flags)])


def test_blind_the_page_holds_none_of_the_judges_words_scores_or_other_peoples_labels_and_flags(demo_workspace):
    """Issue 34: until I decide, nothing on the page tells what the judge or anybody else said. On
    real demo items of every judge kind, with another person's label, note and flag on each."""
    ws = demo_workspace
    judges = audit.choices(ws)["judges"]
    kinds_seen = set()
    for judge in judges:
        rows = audit.queue(ws, audit.Filters(judges=(judge,), reviewed="all"), "bea", page_size=400)["rows"]
        items = [audit.item(ws, r["id"]) for r in rows[:40]]
        # The items that say the most: notes (scores in words), quotes found in the book, a score.
        items.sort(key=lambda it: (-sum(not e["found"] for e in it["evidence"]), -len(it["evidence"]),
                                   it["score"] is None))
        for it in items[:3]:
            label = it["label"] if it["label"] is not None else audit.label_options(it["kind"])[0]["shown"]
            audit.review(ws, "zorbwick", it["id"], label if it["status"] == "ok" else
                         audit.to_system_label(it["kind"], audit.label_options(it["kind"])[0]["shown"], it["shown_order"]),
                         "zorbwick-note-on-the-label")
            audit.flag(ws, "zorbwick", it["question_id"], "1", "ambiguous", "zorbwick-note-on-the-flag")
            audit.flag(ws, "bea", it["question_id"], "2", "wrong", "my own flag")
            it = audit.item(ws, it["id"])
            kinds_seen.add(it["kind"])
            assert not audit.reveal(it, "bea", blind=True)
            hidden = audit.as_shown(it, "bea", blind=True)
            assert hidden["revealed"] is False and audit.as_shown(it, "bea", blind=False)["revealed"] is True
            text = _page_text(view.item_view(hidden, False, "bea"),
                              view.decision_bar(hidden, False, "bea", Trail([it["id"]], 0), 3, {}, "wrong"))
            judge_words = [e["text"] for e in it["evidence"] if not e["found"]]  # the judge's notes, scores in words
            judge_words += [it["raw"]] if len(it["raw"]) > 12 else []  # a raw "no" is also a button's word
            if it["score"] is not None:
                judge_words += [f"{it['score']:.3f}", f"{it['score']:.2f}"]
            judge_words += [f"for {audit.evidence_label(e, True)}" for e in it["evidence"] if e["found"] and it["pairwise"]]
            others = ["zorbwick", "zorbwick-note-on-the-label", "zorbwick-note-on-the-flag", "Verdict of", "→"]
            names = [s for s in (it["system_a"], it["system_b"]) if s]
            for words in judge_words + others + names:
                assert md(words) not in text and words not in text, (judge, it["id"], words)
            assert "my own flag" in text  # one's own flag is one's own doing
            assert it["question"] and md(it["question"]).split()[0] in text  # the question and answers are there
            for e in it["evidence"]:
                if e["found"]:
                    assert e["html"] in text  # quotes found in the book stay, as passages of the book
    assert kinds_seen == {"absolute", "groundtruth", "groundtruth-pairwise", "pairwise", "similarity"}, kinds_seen


def test_evidence_says_where_it_was_found_and_which_answer_it_is_about(demo_workspace):
    it = first(demo_workspace, SXS, order="ba")
    blocks = view.item_view(it, True).evidence
    assert len(blocks) == len(it["evidence"])
    found = [b for b in blocks if b["found"]]
    notes = [b for b in blocks if not b["found"]]
    assert found and notes
    assert found[0]["caption"].startswith("Found in the book (passage ") and " — for answer" in found[0]["caption"]
    assert notes[0]["caption"].startswith("The judge's note on answer ")
    assert notes[0]["caption"].endswith("(not found in the book: an explanation or a paraphrase):")
    yes_no = view.evidence_blocks(first(demo_workspace, AIS))
    assert all(" — for " not in b["caption"] for b in yes_no)


def test_the_prompt_panel_shows_the_prompts_start(demo_workspace, monkeypatch):
    it = first(demo_workspace, AIS)
    whole = audit.prompt_of(demo_workspace, it["id"])
    assert whole and view.prompt_shown(demo_workspace, it["id"]) == whole
    monkeypatch.setattr(view, "PROMPT_SHOWN_CHARS", 100)
    assert view.prompt_shown(demo_workspace, it["id"]) == whole[:100]


# ------------------------------------------------------------------------------------- tables

def test_up_next_shows_a_look_ahead_and_blind_leaves_systems_and_labels_out(demo_workspace):
    rows = audit.queue(demo_workspace, audit.Filters(), "ann")["rows"]
    table = view.up_next_table(rows, blind=False)
    assert len(table) == view.UP_NEXT_ROWS < len(rows)
    assert table[0]["system_a"] == rows[0]["system_a"] and table[0]["book"] == rows[0]["title"]
    assert all({"system_a", "system_b", "label"}.isdisjoint(r) for r in view.up_next_table(rows, blind=True))
    assert view.up_next_caption(1234, rows) == \
        "1,234 not opened yet; the next 20 in queue order. The filters in the sidebar narrow the queue."
    assert view.up_next_caption(3, rows[:3]) == "3 not opened yet. The filters in the sidebar narrow the queue."


def test_my_recent_reviews_table(demo_workspace):
    rows = audit.queue(demo_workspace, audit.Filters(), "ann")["rows"]
    audit.confirm(demo_workspace, "ann", rows[0]["id"], "ok")
    table = view.recent_table(audit.recent(demo_workspace, "ann"))
    assert list(table[0]) == ["question", "judge", "my label", "action", "when"]
    assert table[0]["action"] == "confirm" and table[0]["judge"] == rows[0]["judge"]
    assert view.no_recent_note("") == "Enter your name to see your reviews."
