"""The dashboard through Streamlit's AppTest on the small demo workspace (configs/demo_small.toml).

Every page renders; the main flows work end to end: an override in Audit changes Agreement and the
Leaderboard; a flag shows in Reference errors and, with the switch on, leaves its question out of
the ranking; undo; two annotators on one item while a command-line run writes the workspace;
a run started from the Run page; model text shown as text, never as HTML.

Verdicts are the real demo verdicts. Two tests craft a situation through lsqa.store functions and
say so: an answer with HTML in it (escaping), and a verdict that failed to parse (priority).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from lsqa import audit, store
from lsqa.dashboard import leaderboard_view as lv
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.study import jobs
from lsqa.text import highlight
from tests.conftest import PROJECT_ROOT
from tests.support import audit_desk as desk

APP = str(PROJECT_ROOT / "app.py")
PAGES = ["overview", "run", "audit", "adjudicate", "reference_errors", "agreement", "leaderboard", "corpus"]
TITLES = {"overview": "lsqa — long-span question answering", "run": "Run a study", "audit": "Audit judge verdicts",
          "adjudicate": "Adjudicate", "reference_errors": "Reference errors", "agreement": "Agreement",
          "leaderboard": "Leaderboard", "corpus": "Corpus"}
SXS = "lexical-sxs-fc"  # the demo's side-by-side judge with the book as context, both orders


@pytest.fixture(autouse=True)
def _fresh_streamlit_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def ws(demo_workspace, monkeypatch) -> Path:
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    return demo_workspace


def open_app(annotator: str = "alice", page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = annotator
    at.run()
    assert not at.exception, at.exception
    if page:
        goto(at, page)
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest, column: str, value: str):
    """The first dataframe on the page with ``value`` in ``column``."""
    for df in at.dataframe:
        frame = df.value
        if column in frame.columns and (frame[column] == value).any():
            return frame
    raise AssertionError(f"no table with {column} = {value}")


def ranking_table(at: AppTest, judge: str = SXS) -> list[tuple]:
    frame = table(at, "judge", judge)
    # strength: the page's text (3 significant digits); the CI's ends stay numeric in the row
    return sorted((r.system, r.strength, round(r.ci_low, 6), int(r.n_comparisons)) for r in frame.itertuples())


def pick_judge(at: AppTest, judge: str) -> AppTest:
    """The Leaderboard's judge picker, as a person picks a judge (or "all")."""
    at.selectbox(key="lb_judge").set_value(judge).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_toggle(at: AppTest, key: str, value: bool) -> None:
    at.toggle(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def audit_first_of(at: AppTest, judge: str) -> dict:
    """Filter the queue to one judge; the item now shown (as lsqa.audit sees it)."""
    at.session_state["audit_x_queue"] = True  # unfold "Queue settings"
    at.run()
    at.multiselect(key="audit_judges").set_value([judge]).run()
    assert not at.exception
    return audit.item(Path(os.environ["LSQA_WORKSPACE"]), desk.shown_id(at))


# ---------------------------------------------------------------------------------------------


def shown_headings(at: AppTest) -> list[str]:
    """Every table's column headings as the page shows them: its column_config's labels, else the names."""
    shown = []
    for df in at.dataframe:
        config = json.loads(df.proto.columns or "{}")
        for name in list(df.proto.column_order) or [str(c) for c in df.value.columns]:
            column = config.get(name, {})
            if not column.get("hidden"):
                shown.append(column.get("label") or name)
    return shown


def test_every_page_renders_on_the_demo_workspace(ws):
    at = open_app()
    for page in PAGES:
        goto(at, page)
        assert [t.value for t in at.title] == [TITLES[page]], page
        assert not at.error, (page, [e.value for e in at.error])
        assert not any("No verdicts yet" in i.value for i in at.info), page  # the demo has verdicts
        # Headings in words, not the store's column names; Reference errors' score formula in the same words.
        assert not [h for h in shown_headings(at) if "_" in h], page
        formula = [c.value for c in at.caption if "score =" in c.value]
        assert len(formula) == (page == "reference_errors") and "_" not in "".join(formula), (page, formula)
        # The words on the page name no column as the store spells it (``snake_case``), outside code spans.
        texts = [t.value for t in [*at.caption, *at.info, *at.markdown] if not t.value.startswith("<style")]
        names = {t: re.findall(r"\b[a-z]+_[a-z_]+\b", re.sub(r"`[^`]*`", "", t)) for t in texts}
        assert not {t: found for t, found in names.items() if found}, page
    # The annotator field is on every page (app.py), and kept in the URL.
    assert at.text_input(key="annotator").value == "alice"
    assert at.query_params.get("annotator") == "alice"


def test_every_page_renders_on_an_empty_workspace(workspace, monkeypatch):
    monkeypatch.setenv("LSQA_WORKSPACE", str(workspace))
    at = open_app()
    for page in PAGES:
        goto(at, page)  # a newcomer's first look: the page, an explanation, no traceback or error
        assert [t.value for t in at.title] == [TITLES[page]], page
        assert not at.error, (page, [e.value for e in at.error])
        said = at.info or (page == "audit" and "Nothing left in this queue" in desk.desk_text(at))  # the desk's
        assert said, f"{page}: an empty workspace gets an explanation"
    goto(at, "leaderboard")
    assert any("No verdicts yet" in i.value for i in at.info)


def test_audit_shows_the_item_as_the_judge_saw_it_with_shortcuts(ws):
    at = open_app(page="audit")
    item = audit_first_of(at, SXS)
    drawn = desk.desk_html(at)
    assert item["question"] in drawn
    for ref in item["references"]:
        assert ref["text"] in drawn
    # Answers in the order shown: "Answer A" is system_b when the judge saw the pair as 'ba'.
    first = item["system_a"] if item["shown_order"] == "ab" else item["system_b"]
    assert f"Answer A: {first}</b>" in drawn
    drawn_buttons = desk.buttons(at)
    shortcuts = {name: b["shortcut"].lower() for name, b in drawn_buttons.items()}
    for name, b in drawn_buttons.items():  # each drawn with its key, which keys.js finds it by
        assert f'data-lsqa-key="{b["key"]}"' in html.unescape(drawn)
        assert f'aria-label="shortcut {shortcuts[name]}"' in drawn
    assert shortcuts["audit_next"] == "j" and shortcuts["audit_prev"] == "k"
    assert shortcuts["audit_confirm"] == "v" and shortcuts["audit_undo"] == "u"
    assert {shortcuts[f"audit_opt_shown:{x}"] for x in ("A", "B", "tie", "none")} == {"a", "b", "t", "x"}
    assert shortcuts["audit_flag1"] == "f" and shortcuts["audit_flag2"] == "g"


def test_evidence_is_found_in_the_book_and_highlighted(ws):
    rows = audit.queue(ws, audit.Filters(judges=(SXS,), reviewed="all"), "", page_size=400)["rows"]
    found = None
    for r in rows:
        it = audit.item(ws, r["id"])
        hits = [e for e in it["evidence"] if e["found"]]
        if hits:
            found = hits[0]
            break
    assert found, "the demo's side-by-side judge quotes the book in its evidence"
    assert "<mark>" in found["html"] and found["where"].startswith("passage")


def test_override_changes_agreement_and_leaderboard(ws):
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    set_toggle(at, "lb_overrides", True)
    before = ranking_table(at)
    goto(at, "agreement")
    assert not any(SXS == r for r in _vs_human_raters(at))

    goto(at, "audit")
    item = audit_first_of(at, SXS)
    # Give a decisive label the judge did not give (in shown positions, as the annotator sees them).
    shown = "A" if item["shown_label"] != "A" else "B"
    desk.press(at, f"audit_opt_shown:{shown}")
    with store.connect(ws) as con:
        saved = reviews_store.reviews(con, item["id"])
    assert [(r["annotator"], r["action"]) for r in saved] == [("alice", "override")]
    assert saved[0]["label"] == audit.to_system_label(item["kind"], shown, item["shown_order"])

    goto(at, "agreement")
    assert SXS in _vs_human_raters(at)
    row = table(at, "rater A", SXS)
    assert row.loc[row["rater A"] == SXS, "agreement %"].iloc[0] == 0.0  # one item, the human disagreed
    # Its confusion matrix, a table (names escaped for st.table's Markdown cells): the one item off the diagonal.
    corner = highlight.md_escape(f"{SXS} ↓ · human →")
    matrix = next(t.value for t in at.table if corner in t.value.columns).set_index(corner)
    assert int(matrix.to_numpy().sum()) == 1 and all(matrix.loc[x, x] == 0 for x in matrix.index if x in matrix.columns)

    goto(at, "leaderboard")
    assert at.toggle(key="lb_overrides").value is True
    after = ranking_table(at)
    assert after != before
    set_toggle(at, "lb_overrides", False)
    assert ranking_table(at) != after  # the judge's own labels again


def test_agreement_opens_on_judges_against_humans_and_builds_only_the_open_section(ws):
    """The Agreement page shows one section at a time (issue 12): at first the judges against the
    humans; the other sections' headings, tables and widgets appear only when their tab is opened."""
    at = open_app(page="agreement")
    headings = lambda: {h.value for h in at.subheader}  # noqa: E731
    assert "Position consistency" not in headings() and not at.metric
    assert not [s for s in at.selectbox if s.key in ("ag_pick", "sp_j1")]
    at.session_state["section"] = "Position and self-preference"  # the person opens that tab
    at.run()
    assert not at.exception
    assert {"Position consistency", "Self-preference (paper §5.1)"} <= headings()
    position = table(at, "judge", SXS).set_index("judge")
    assert 0 <= position.loc[SXS, "shown first won %"] <= 100 and position.loc[SXS, "verdicts"] > 0
    # Readable headings, not the analysis's keys.
    assert list(position.columns) == ["verdicts", "decisive", "shown first won %", "pairs in both orders",
                                      "orders agree %", "κ between orders"]
    assert at.selectbox(key="sp_j1").value and not _vs_human_raters(at)
    at.session_state["section"] = "Among annotators"
    at.run()
    assert not at.exception and [m.label for m in at.metric][:2] == ["annotators", "verdicts reviewed by ≥ 2"]
    assert "Position consistency" not in headings()


def test_overview_builds_the_documents_table_only_when_unfolded(ws):
    """The folded "Documents" table is not built on every visit; unfolded, it lists every document."""
    at = open_app(page="overview")
    assert not [d for d in at.dataframe if "title" in d.value.columns]
    at.session_state["ov_documents"] = True  # the person unfolds "Documents"
    at.run()
    assert not at.exception
    with store.connect(ws) as con:
        stored = corpus_store.list_documents(con)
    shown = next(d.value for d in at.dataframe if "title" in d.value.columns)
    assert sorted(shown["title"]) == sorted(d["title"] for d in stored) and len(shown) > 0


def _vs_human_raters(at: AppTest) -> list[str]:
    for df in at.dataframe:
        frame = df.value
        if "rater B" in frame.columns and (frame["rater B"] == "human").any():
            return list(frame["rater A"])
    return []


def test_flag_appears_in_reference_errors_and_leaves_the_ranking(ws):
    at = open_app(page="audit")
    item = audit_first_of(at, SXS)
    desk.press(at, "audit_flag1", note="the book says otherwise")

    goto(at, "reference_errors")
    flagged = table(at, "question", item["question"])
    assert list(flagged["reference"]) == ["1"] and "wrong" in flagged["reasons"].iloc[0]
    errata = [d for d in at.get("download_button") if d.proto.label == "Errata (JSONL)"]
    assert errata, "the errata can be downloaded"

    pick_judge(goto(at, "leaderboard"), SXS)
    with_q = {s: n for s, _, _, n in ranking_table(at)}
    set_toggle(at, "lb_exclude", True)
    without_q = {s: n for s, _, _, n in ranking_table(at)}
    assert at.query_params.get("exclude_flagged") == "1"
    assert all(without_q[s] < with_q[s] for s in with_q), (with_q, without_q)


def test_reference_errors_page_flags_the_selected_reference(ws):
    from lsqa.audit import reference_errors
    from lsqa.store import verdicts

    top = reference_errors.suspects(ws)[0]
    at = open_app(page="reference_errors")
    at.radio(key="re_reason").set_value("unanswerable")
    at.text_input(key="re_note").set_value("not in the book")
    at.button[[b.proto.label for b in at.button].index(f"Flag reference {top['reference']}")].click().run()
    assert not at.exception, [e.value for e in at.exception]
    with store.connect(ws) as con:
        flags = verdicts.current_flags(con)
    assert [(f["question_id"], f["reference"], f["reason"], f["note"]) for f in flags] == [
        (top["question_id"], top["reference"], "unanswerable", "not in the book")]
    assert table(at, "question", top["question"])["reasons"].iloc[0] == "unanswerable"
    errata = reference_errors.errata(ws)
    assert b"unanswerable" in reference_errors.errata_csv(errata)
    assert json.loads(reference_errors.errata_jsonl(errata))["reference_text"] == top["reference_text"]


def test_reference_errors_page_says_why_a_flag_is_refused(ws):
    from lsqa.audit import reference_errors
    from lsqa.store import verdicts

    top = reference_errors.suspects(ws)[0]
    at = open_app(page="reference_errors")
    at.text_input(key="re_note").set_value("pasted\x00text")
    at.button[[b.proto.label for b in at.button].index(f"Flag reference {top['reference']}")].click().run()
    assert not at.exception, [e.value for e in at.exception]  # it was a traceback
    assert [e.value for e in at.error] == [
        "Not flagged: a note holding a NUL character (\\x00) cannot be kept: remove it and try again"]
    with store.connect(ws) as con:
        assert verdicts.current_flags(con) == []


def test_reference_errors_page_shows_the_suspects_list_with_its_columns_explained(ws):
    from lsqa.audit import reference_errors

    rows = reference_errors.suspects(ws)
    at = open_app(page="reference_errors")
    frame = table(at, "question", rows[0]["question"])
    shown = list(zip(frame["question_id"], frame["reference"], frame["score"], strict=False))
    assert shown == [(r["question_id"], r["reference"], r["score"]) for r in rows[:len(shown)]]
    assert len(shown) == min(25, len(rows))
    main = next(df for df in at.dataframe if "score" in df.value.columns and "evidence" in df.value.columns)
    config = json.loads(main.proto.columns)
    # Each signal headed in words, with what it means in the same words; the formula above in them too.
    words = {c: c.replace("_", " ") for c in reference_errors.COLUMN_HELP}
    assert {c: (config[c]["label"], config[c]["help"]) for c in reference_errors.COLUMNS} == {
        c: (words[c], reference_errors.COLUMN_HELP[c].replace("_", " ")) for c in reference_errors.COLUMNS}
    formula = reference_errors.FORMULA
    for name in words:
        formula = formula.replace(name, words[name])
    assert "systems confirm" in formula and any(formula in c.value for c in at.caption)


def test_a_refused_decision_or_flag_says_why_and_keeps_the_item_and_the_note(ws):
    """A decision or a flag the workspace refuses (a note holding a NUL character, as pasted text can)
    is no traceback: the page says why, the item and the note stay, nothing is written; the note
    mended, the same key saves and moves on."""
    at = open_app(page="audit")
    item = audit_first_of(at, SXS)
    assert desk.shown_id(at) == item["id"]
    note = "pasted\x00text"
    for key, said in (("audit_confirm", "Not saved: a note"), ("audit_opt_shown:B", "Not saved: a note"),
                      ("audit_flag1", "Not flagged: a note")):
        pressed = desk.press(at, key, note=note)
        refused = re.findall(r'role="alert">([^<]*)<', pressed.html)
        assert [html.unescape(r) for r in refused] == [
            f"{said} holding a NUL character (\\x00) cannot be kept: remove it and try again"]
        assert pressed.item == item["id"] and pressed.note == "keep"  # the same item, the note as typed
    with store.connect(ws) as con:
        assert [r["action"] for r in reviews_store.reviews(con)] == [] and reviews_store.flags(con) == []
    pressed = desk.press(at, "audit_confirm", note="mended")
    assert 'role="alert"' not in pressed.html and 'role="status">Saved' in pressed.html
    assert pressed.item != item["id"] and pressed.note == "clear"
    with store.connect(ws) as con:
        assert [(r["judgment_id"], r["action"], r["note"]) for r in reviews_store.reviews(con)] == [
            (item["id"], "confirm", "mended")]


HOLD_WORKSPACE = ("import sys, time\nfrom lsqa import store\nwith store.connect(sys.argv[1]):\n"
                  "    print('held', flush=True)\n    time.sleep(120)\n")


def test_a_workspace_another_process_holds_gets_the_reason_on_every_page_not_a_traceback(ws, monkeypatch):
    """Two users at once: a pipeline run or another dashboard holds the workspace longer than this one
    waits. Every page says so and what to do (it was a traceback); once free, the pages are back."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WORKSPACE, str(ws)], cwd=PROJECT_ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("LSQA_LOCK_TIMEOUT", "0.5")
        at = open_app(page="audit")  # asserts no exception
        for page in PAGES:
            goto(at, page)
            assert [e.value for e in at.error] == [
                f"workspace {ws} stayed locked by another process for 0.5 s; wait for that process (a pipeline "
                "run or the dashboard) or raise LSQA_LOCK_TIMEOUT"], page
    finally:
        holder.kill()
        holder.wait()
    for page in PAGES:
        goto(at, page)
        assert not at.error, (page, [e.value for e in at.error])
        assert [t.value for t in at.title] == [TITLES[page]], page


def test_undo_withdraws_my_last_action_flag_or_review(ws):
    from lsqa.store import verdicts

    at = open_app(page="audit")
    item = audit_first_of(at, SXS)
    desk.press(at, "audit_flag2")  # a flag keeps the item on screen
    desk.press(at, "audit_confirm")  # a review moves on to the next item
    with store.connect(ws) as con:
        assert verdicts.flagged_question_ids(con) == {item["question_id"]}
        assert [(h["annotator"], h["judgment_id"]) for h in verdicts.human_labels(con)] == [("alice", item["id"])]
    desk.press(at, "audit_undo")  # the confirm
    with store.connect(ws) as con:
        assert verdicts.human_labels(con) == []
        assert verdicts.flagged_question_ids(con) == {item["question_id"]}
    desk.press(at, "audit_undo")  # the flag
    with store.connect(ws) as con:
        assert verdicts.flagged_question_ids(con) == set()
        actions = [r["action"] for r in reviews_store.reviews(con)]
        flag_rows = [f["reason"] for f in reviews_store.flags(con)]
    assert actions == ["confirm", "undo"] and flag_rows == ["wrong", "retract"]  # append-only history
    assert "Nothing of yours to undo" in desk.press(at, "audit_undo").html
    # Undoing a second flag brings back the first one; someone else's actions are not mine to undo.
    audit.flag(ws, "alice", item["question_id"], "1", "ambiguous")
    audit.flag(ws, "alice", item["question_id"], "1", "wrong")
    audit.undo_last(ws, "alice")
    with store.connect(ws) as con:
        assert [f["reason"] for f in verdicts.current_flags(con)] == ["ambiguous"]
    audit.undo_last(ws, "alice")
    audit.confirm(ws, "bob", item["id"])
    assert audit.undo_last(ws, "alice") is None


def test_two_annotators_on_one_item_while_the_command_line_runs(ws, tmp_path):
    import tomllib

    import tomli_w

    alice, bob = open_app("alice", "audit"), open_app("bob", "audit")
    item_a, item_b = audit_first_of(alice, SXS), audit_first_of(bob, SXS)
    head = audit.queue(Path(os.environ["LSQA_WORKSPACE"]), audit.Filters(judges=(SXS,)), "bob")["rows"]
    # The queue's head is held for alice while she has it open: bob is served the next item.
    assert (item_a["id"], item_b["id"]) == (head[0]["id"], head[1]["id"])
    # The demo's study with one more system: the run has answers and verdicts to write (the demo's
    # own study is all cached and would end before the annotators' first click).
    study = tomllib.loads((PROJECT_ROOT / "configs" / "demo_small.toml").read_text(encoding="utf-8"))
    study["systems"].append({"name": "extractive-rag2k", "model": "lsqa/extractive", "context": "retrieval:2000"})
    config = tmp_path / "study.toml"
    config.write_text(tomli_w.dumps(study), encoding="utf-8")
    env = {**os.environ, "LSQA_WORKSPACE": str(ws)}
    cli = Path(sys.executable).parent / "lsqa"
    proc = subprocess.Popen([str(cli), "run", str(config), "--workspace", str(ws)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        desk.press(alice, "audit_confirm")
        desk.press(bob, "audit_opt_shown:none")
        actions = 2
        while proc.poll() is None and actions < 14:  # keep both busy while the run writes
            for at in (alice, bob):
                desk.press(at, "audit_next")
                desk.press(at, "audit_confirm")
                actions += 1
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert actions > 2, "the annotators worked while the command-line run was going"
    with store.connect(ws) as con:
        on_items = reviews_store.reviews(con, item_a["id"]) + reviews_store.reviews(con, item_b["id"])
        all_reviews = reviews_store.reviews(con)
    assert {(r["annotator"], r["judgment_id"], r["action"]) for r in on_items} >= {
        ("alice", item_a["id"], "confirm"), ("bob", item_b["id"], "override")}
    assert len(all_reviews) == actions
    for at in (alice, bob):
        goto(at, "agreement")
        goto(at, "overview")


def test_run_page_starts_a_background_job_and_shows_failures_as_data(ws):
    at = open_app(page="run")
    at.multiselect(key="run_books").set_value(_book_id(ws, "The Tale of Two Bad Mice")).run()
    at.number_input(key="run_max_q").set_value(2).run()
    at.button(key="run_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    job_id = at.session_state["run_job"]
    done = jobs.wait(job_id, 180)
    assert done["status"] == "done", done["error"]
    assert at.query_params.get("job") == job_id
    # A fresh session (another tab) finds the job, its summary and the cost.
    other = open_app("bob", "run")
    captions = " ".join(c.value for c in other.caption)
    assert job_id in " ".join(m.value for m in other.markdown)
    assert "cost so far $0.0000" in captions

    # A model no provider knows: its calls fail, the job finishes and lists them.
    job2 = jobs.start(ws, {"documents": ["The Tale of Two Bad Mice"], "max_questions": 2,
                           "systems": [{"name": "no-such", "model": "nosuchprovider/model-x", "context": "none"}]})
    result = jobs.wait(job2, 120)
    assert result["status"] == "done"
    assert result["summary"]["calls_failed"] == 2 and result["summary"]["stages"][0]["errors"]
    goto(other, "run")
    assert not other.exception
    assert any("2 failed" in c.value for c in other.caption)


def _book_id(ws, title):
    with store.connect(ws) as con:
        from lsqa.store import corpus
        return corpus.resolve_documents(con, [title])


def test_model_and_book_text_is_shown_as_text(ws):
    # Crafted (through lsqa.store): an answer and a verdict's evidence that hold HTML and Markdown.
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)"> **bold** [link](http://example.com)'
    item = audit.item(ws, audit.queue(ws, audit.Filters(judges=(SXS,)), "alice")["rows"][0]["id"])
    with store.write(ws) as con:
        results_store.insert_answers(con, [{"question_id": item["question_id"], "system_name": item["system_a"],
                                            "text": payload, "status": "ok"}], replace=True)
        con.execute("UPDATE judgments SET evidence = ? WHERE id = ?", [json.dumps([payload]), item["id"]])
    at = open_app(page="audit")
    audit_first_of(at, SXS)
    drawn = desk.desk_html(at)
    assert drawn.count(highlight.escape("alert(1)")) >= 2  # the answer and the evidence
    assert "<script" not in drawn and "<img" not in drawn
    assert "&lt;script&gt;" in drawn and "&lt;img src=x onerror=&quot;alert&#40;2&#41;&quot;&gt;" in drawn
    for m in at.markdown:  # no other markdown element carries the raw payload
        assert "<script>" not in m.value or m.value.startswith("<style>")


def test_a_verdict_that_failed_to_parse_comes_first(ws):
    # Crafted (through lsqa.store): one verdict whose completion could not be parsed.
    item = audit.item(ws, audit.queue(ws, audit.Filters(judges=(SXS,)), "")["rows"][5]["id"])
    with store.write(ws) as con:
        con.execute("UPDATE judgments SET status = 'parse_error', label = NULL WHERE id = ?", [item["id"]])
    top = audit.queue(ws, audit.Filters(), "alice")["rows"][0]
    assert top["id"] == item["id"] and top["priority"] >= audit.PRIORITY_WEIGHTS["failed"]
    at = open_app(page="audit")
    assert desk.buttons(at)["audit_confirm"]["disabled"]  # nothing to confirm: the annotator gives the label
    assert "could not be used" in desk.desk_text(at)
    desk.press(at, "audit_opt_shown:B")
    with store.connect(ws) as con:
        assert reviews_store.reviews(con, item["id"])[0]["action"] == "override"


def test_corpus_shows_entity_mention_chains(ws):
    from lsqa.corpus.entities import extract_entities
    from lsqa.store import corpus

    with store.connect(ws) as con:
        doc_id = corpus.resolve_documents(con, ["The Tale of Tom Kitten"])[0]
        doc = corpus.get_document(con, doc_id)
    entities = extract_entities(doc["full_text"], doc["clean_start"], doc["clean_end"], method="fallback", top_k=5)
    with store.write(ws) as con:
        corpus.insert_entities(con, doc_id, "fallback", entities)
    at = open_app(page="corpus")
    at.selectbox(key="co_book").set_value(doc_id).run()
    assert not at.exception
    # Only the open tab is built: at first the questions, no passage and no entity table.
    assert not [c for c in at.caption if c.value.startswith("passage ")]
    assert not [m for m in at.markdown if "<mark>" in m.value]
    assert "question" in at.dataframe[1].value.columns and len(at.dataframe) == 2  # books, questions
    at.session_state["co_tab"] = "Entities"  # the person opens the Entities tab
    at.run()
    assert not at.exception
    marked = [m.value for m in at.markdown if "<mark>" in m.value]
    assert marked, "the first entity's mentions are marked in the text"
    names = table(at, "name", entities.entities[0].name)["name"]
    assert list(names[:5]) == [e.name for e in entities.entities[:5]]  # the stored chains, in rank order


def _judges_shown(at: AppTest) -> set[str]:
    return {j for df in at.dataframe if "judge" in df.value.columns for j in df.value["judge"]}


def test_leaderboard_shows_one_judge_at_a_time_and_all_on_request(ws):
    shown, _ = lv.leaderboard_judges(ws)
    first_sxs = shown["pairwise"][0]
    at = open_app(page="leaderboard")
    # The default: the first side-by-side judge alone, as its ranking table (no chart to load), and
    # the link says so.
    assert at.selectbox(key="lb_judge").value == first_sxs
    assert _judges_shown(at) == {first_sxs}
    assert at.radio(key="lb_show").value == "table" and not at.get("plotly_chart")
    assert at.query_params.get("judge") == first_sxs and at.query_params.get("show") == "table"
    # The chart (the paper's figure) on request, and the link says so too.
    at.radio(key="lb_show").set_value("chart").run()
    assert len(at.get("plotly_chart")) == 1 and at.query_params.get("show") == "chart"

    # A yes/no judge: its accuracy chart and table only.
    yes_no = shown["binary"][0]
    pick_judge(at, yes_no)
    assert _judges_shown(at) == {yes_no} and len(at.get("plotly_chart")) == 1
    assert at.query_params.get("judge") == yes_no

    # Kept when the person leaves the page and comes back.
    goto(at, "overview")
    goto(at, "leaderboard")
    assert at.selectbox(key="lb_judge").value == yes_no and _judges_shown(at) == {yes_no}
    assert at.radio(key="lb_show").value == "chart"

    # Every judge on request: a chart per judge, and in the table view every judge's table.
    pick_judge(at, "all")
    assert len(at.get("plotly_chart")) == len(shown["pairwise"]) + len(shown["binary"])
    at.radio(key="lb_show").set_value("table").run()
    assert _judges_shown(at) == set(shown["pairwise"]) | set(shown["binary"]) and not at.get("plotly_chart")


def test_leaderboard_table_draws_strengths_on_the_chosen_scale(ws):
    """The ranking table's inline bar: β on the log and β scales (a dominated system keeps a bar),
    e^β from 0 on the linear scale; win probabilities sum to 1 across each pair."""
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    frame = table(at, "judge", SXS)
    # The page shows every number through the one formatter (3 significant digits): the bar keeps it numeric.
    from lsqa.text import numbers

    assert [numbers.signed(x) for x in frame["β = log strength"]] == list(frame["beta"])
    at.radio(key="lb_scale").set_value("linear").run()
    frame = table(at, "judge", SXS)
    assert [numbers.figure(x) for x in frame["strength e^β"]] == list(frame["strength"])
    assert "β = log strength" not in frame.columns
    at.radio(key="lb_show").set_value("win").run()
    wins = next(df.value for df in at.dataframe if "system" in df.value.columns and "judge" not in df.value.columns)
    systems = list(wins["system"])
    assert set(systems) == set(frame["system"])
    for a in systems:
        for b in systems:
            if a != b:
                shown = wins.set_index("system")
                pair = float(shown.loc[a, b].rstrip("%").replace("< 0.001", "0")) + float(
                    shown.loc[b, a].rstrip("%").replace("< 0.001", "0"))
                assert abs(pair - 100) < 0.2, (a, b, pair)  # percentages of 3 significant digits


@pytest.mark.parametrize("asked, expected", [("chart", "chart"), ("win", "win"), ("<b>x</b>", "table")])
def test_a_leaderboard_link_opens_the_view_it_names(ws, asked, expected):
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["show"] = asked
    at.run()
    goto(at, "leaderboard")
    assert at.radio(key="lb_show").value == expected and at.query_params.get("show") == expected
    assert len(at.get("plotly_chart")) == (1 if expected == "chart" else 0) and not at.error


@pytest.mark.parametrize("asked", ["lexical-sxs-rag4k", "no-such-judge", "llmbar-gpt-4-mt-bench"])
def test_a_leaderboard_link_opens_the_judge_it_names(ws, asked):
    shown, _ = lv.leaderboard_judges(ws)
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["judge"] = asked
    at.run()
    goto(at, "leaderboard")
    # A judge of the board opens as asked; anything else (unknown, or LLMBar's, which the Leaderboard
    # does not rank) falls back to the default instead of an error or an empty page.
    expected = asked if asked in shown["pairwise"] + shown["binary"] else shown["pairwise"][0]
    assert at.selectbox(key="lb_judge").value == expected
    assert _judges_shown(at) == {expected}
    assert not at.error


def test_audit_builds_folded_panels_only_when_opened_and_keeps_them_open(ws):
    """The prompt, the raw completion, the other verdicts, the history and what comes next are built
    only when their panel is open (they were sent and drawn on every J); an opened panel stays open
    on the next item, with that item's content."""
    at = open_app(page="audit")
    first = audit_first_of(at, SXS)
    assert not at.code, "a folded panel's content is not built"
    assert not at.dataframe  # up next and my recent reviews are folded too, the progress as well
    assert any(e.label == "Up next (pick one to open it)" for e in at.expander)
    at.session_state["audit_x_next"] = True  # the person unfolds "Up next"
    at.run()
    assert len(at.dataframe) == 1  # up next: no other-verdicts or history table
    up_next = at.dataframe[0].value
    assert len(up_next) == 20  # the next 20, not the 100-row page
    assert list(up_next["question"]) == [r["question_id"] for r in audit.queue(
        ws, audit.Filters(judges=(SXS,)), "alice", exclude=(first["id"],))["rows"][:20]]

    at.session_state["audit_x_raw"] = True  # the person unfolds "Raw completion and prompt"
    at.run()
    assert [c.value for c in at.code][0] == (first["raw"] or "(empty)")
    prompt = audit.prompt_of(ws, first["id"])  # read only now, not with the item
    assert first["question"] in prompt and at.code[1].value == prompt[:20000]
    assert "prompt" not in first
    at.session_state["audit_x_others"] = True  # and "Other verdicts on these answers"
    at.run()
    (others,) = [d.value for d in at.dataframe if "about" in d.value.columns]
    # each row says which answer on screen it judges: both, or one by its position and system
    shown = {f"answer {a['position']} ({a['system']})" for a in first["answers"]}
    assert list(others["about"]) == [o["about"] for o in audit.item(ws, first["id"])["other_verdicts"]]
    assert "both answers" in set(others["about"]) and set(others["about"]) - {"both answers"} == shown
    desk.press(at, "audit_next")
    assert "Item 2 of" in desk.desk_text(at)
    second_id = audit.queue(ws, audit.Filters(judges=(SXS,)), "alice", exclude=(first["id"],))["rows"][0]["id"]
    second = audit.item(ws, second_id)
    assert second["raw"] != first["raw"]
    assert at.code and at.code[0].value == (second["raw"] or "(empty)")  # still open, now the next item's


def test_pages_show_nothing_through_magic():
    """.streamlit/config.toml turns Streamlit's magic off (it re-parses every page in every new tab):
    no page may rely on a bare expression being written to the page."""
    import ast

    def docstrings(tree) -> set[int]:  # magic leaves these alone, as Python does
        firsts = [node.body[0] for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body]
        return {id(first) for first in firsts if isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)}

    for script in [PROJECT_ROOT / "app.py", *sorted((PROJECT_ROOT / "pages").glob("*.py"))]:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        skipped = docstrings(tree)
        bare = [ast.unparse(node)[:60] for node in ast.walk(tree) if isinstance(node, ast.Expr)
                and not isinstance(node.value, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom))
                and id(node) not in skipped]
        assert not bare, f"{script.name}: {bare}"
    config = (PROJECT_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert "magicEnabled = false" in config


def test_reference_errors_page_shows_each_signals_evidence_for_the_selected_row(ws):
    """Issue 32: beside the two references, the systems that disagreed with their abilities, the summary
    sentence with the reference's words marked, and the LLM reference check once one has run."""
    from lsqa.audit import reference_errors
    from lsqa.config.study import run_config_from_dict
    from lsqa.dashboard import reference_view
    from lsqa.study import pipeline

    top = reference_errors.suspects(ws)[0]
    assert top["systems"] and top["summary_sentence"]  # the demo's top row has answers and a summary
    at = open_app(page="reference_errors")
    systems = next(df.value for df in at.dataframe if "expected" in df.value.columns)
    assert systems.to_dict("records") == reference_view.systems_table(top)
    assert list(systems["system"]) == [d["system"] for d in top["systems"]]  # strongest first
    html = [m.value for m in at.markdown if "<mark>" in m.value]
    assert html == [reference_view.summary_html(top)] and top["summary_sentence"].split()[0] in html[0]
    captions = [c.value for c in at.caption]
    assert reference_view.systems_caption(top) in captions and reference_view.summary_caption(top) in captions
    assert reference_view.llm_lines(top)[0].startswith("No LLM reference check has run") and \
        reference_view.llm_lines(top)[0] in captions

    pipeline.run(ws, run_config_from_dict({"documents": ["all"], "judges": [
        {"name": "lexical-refcheck", "model": "lsqa/lexical-judge", "kind": "reference-check", "context": "none"}]}))
    again = reference_errors.suspects(ws)
    st.cache_data.clear()
    at = open_app(page="reference_errors")
    shown = again[0]
    lines = reference_view.llm_lines(shown)
    assert shown["llm_accepts"] is not None and lines[0].startswith("lexical-refcheck: ")
    assert lines[0] in [c.value for c in at.caption]
    assert any("LLM checks accept" in c.value for c in at.caption)


def test_leaderboard_opens_on_the_headline(ws):
    """The first block of the Leaderboard is the answer in words: the leader's name, a win
    probability in percent, the certification verdict and the audits it rests on; the same words as
    ``lsqa.dashboard.headline`` gives for the judge's ranking, and its win probability in the
    neighbours table below."""
    import re

    from lsqa.dashboard import headline
    from lsqa.figures import analysis
    from tests.dashboard.test_report import audited

    audited(ws, SXS, 5)
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    first = at.markdown[0].value
    ranking = analysis.ranking(ws, SXS, bootstrap=1000, seed=0)
    assert first == highlight.md_escape(headline.for_judge(ws, SXS, ranking=ranking)["text"])
    leader = ranking["systems"][0]["system"]
    assert first.startswith(highlight.md_escape(f"{leader} is ahead"))
    assert re.search(r"beats .* \d+(\.\d+)?% of the time", first)
    assert "undecided after 5 random audits" in first and "and 5 audits." in first
    neighbours = next(df.value for df in at.dataframe if "P(upper beats lower), 95% interval" in df.value.columns)
    assert neighbours["P(upper beats lower), 95% interval"].iloc[0].split(" (")[0] in first


@pytest.mark.parametrize("asked, expected", [("1", True), ("0", False)])
def test_show_strengths_is_kept_in_the_link(ws, asked, expected):
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["strengths"] = asked
    at.run()
    goto(at, "leaderboard")
    assert at.toggle(key="lb_strengths").value is expected and at.query_params.get("strengths") == asked
    at.toggle(key="lb_strengths").set_value(not expected).run()
    assert at.query_params.get("strengths") == ("0" if expected else "1") and not at.exception


def test_under_the_headline_one_agreement_figure_examples_and_books(ws):
    """Under the headline: the agreement on random audits with its basis, and (folded) the examples
    linked to Audit and the order book by book — the same as the report's (leaderboard_view)."""
    from lsqa.dashboard import headline
    from lsqa.dashboard import leaderboard_view as lv
    from lsqa.figures import analysis
    from tests.dashboard.test_report import audited

    audited(ws, SXS, 5, override=1)
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    said = headline.for_judge(ws, SXS, ranking=analysis.ranking(ws, SXS, bootstrap=1000, seed=0))
    basis = lv.agreement_basis(ws, SXS)
    assert basis["text"].startswith("Agreement with people: 80.0% (95% interval")
    assert at.caption[0].value == highlight.md_escape(basis["text"])
    shown = " ".join(m.value for m in at.markdown)
    found = lv.examples(ws, SXS, said["figures"])
    whys = [e["why"] for e in found]
    assert 3 <= len(found) <= 5 and ("people overrode the judge" not in whys or whys[0] == "people overrode the judge")
    assert lv.example_markdown(found) in shown and f"({lv.audit_link(found[0]['judgment_id'])})" in shown
    books = lv.book_consistency(ws, SXS, said["figures"])
    assert highlight.md_escape(books["statement"]) in shown and "Too few books" in books["statement"]
    frame = next(df.value for df in at.dataframe if "order in this book" in df.value.columns)
    assert list(frame["book"]) == [r["book"] for r in books["rows"]]


def test_a_desk_dropped_while_its_tab_is_open_starts_anew_with_the_tab_settings(ws, monkeypatch):
    """A desk unused for IDLE_S is dropped when another tab opens one (the server keeps desks in memory).
    Its tab's next action (here a filter, whose callback runs before the page) raises nothing: the page
    opens a new desk with the settings the tab had chosen."""
    from lsqa.dashboard import audit_desk

    at = open_app(page="audit")
    audit_first_of(at, SXS)
    old = at.session_state["audit_desk"]
    monkeypatch.setattr(audit_desk, "IDLE_S", -1.0)  # every desk counts as idle: the next one opened drops them
    open_app("bob", "audit")
    assert audit_desk.desk_of(old) is None
    at.multiselect(key="audit_judges").set_value([SXS, "lexical-gt"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["audit_desk"] != old and desk.shown_id(at) is not None
    assert desk.desk(at).state["audit_judges"] == [SXS, "lexical-gt"]
