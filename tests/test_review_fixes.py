"""Regression tests for data-path bugs found in review (each failed before its fix)."""

from __future__ import annotations

import os
import shutil

import pytest

from lsqa import analysis, audit, pipeline, store
from lsqa.errors import InputError
from lsqa.ingest import import_answers, import_judgments, ingest_book, ingest_narrativeqa
from lsqa.runconfig import load_run_config, run_config_from_dict

from .conftest import PROJECT_ROOT, TEST_DATA

TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"
TOM_KITTEN_STORY = TEST_DATA / "narrativeqa_slice" / "stories" / f"{TOM_KITTEN}.txt"


# -- pipeline: run counters ------------------------------------------------------------------------


def test_failed_calls_are_not_counted_as_made_and_leave_the_cost_known(workspace):
    """Two calls made (free, embedded model) and two failed: the summary and the runs row say so;
    before, the stage counted 4 made, called the cost unknown and overwrote the runs row with that."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    config = run_config_from_dict({
        "documents": ["The Tale of Tom Kitten"], "max_questions": 2,
        "systems": [{"name": "ok", "model": "lsqa/extractive", "context": "none"},
                    {"name": "bad", "model": "nosuchprovider/model-x", "context": "none"}]})
    summary = pipeline.run(workspace, config).to_dict()
    assert (summary["calls_made"], summary["calls_cached"], summary["calls_failed"]) == (2, 0, 2)
    assert summary["cost_usd"] == 0.0
    with store.connect(workspace) as con:
        row = con.execute("SELECT calls_made, calls_cached, calls_failed, cost_usd, calls_cost_unknown, status"
                          " FROM runs WHERE stage = 'answers'").fetchone()
    assert row == (2, 0, 2, 0.0, 0, "ok")


# -- secrets in run configs ------------------------------------------------------------------------


@pytest.mark.parametrize("params", [
    {"extra_headers": {"Authorization": "Bearer sk-live-0123456789abcdef"}},
    {"extra_headers": {"x-api-key": "sk-ant-0123456789abcdef"}},
    {"headers": {"api-key": "0123456789abcdef0123"}},
    {"apikey": "0123456789abcdef0123"},
    {"vertex_credentials": "{\"private_key\": \"...\"}"},
])
def test_secrets_in_request_headers_are_refused_at_load(params):
    """Before, only names equal to or ending in _key/_token/... were refused, so an Authorization
    header went into runs.config and systems.params (and from there into exports)."""
    with pytest.raises(InputError, match="API keys"):
        run_config_from_dict({"documents": ["x"], "systems": [
            {"name": "s", "model": "openai/gpt-4o-mini", "context": "none", "params": params}]})


def test_ordinary_parameters_are_still_accepted():
    config = run_config_from_dict({"documents": ["x"], "systems": [
        {"name": "s", "model": "openai/m", "context": "none",
         "params": {"api_base": "http://127.0.0.1:8080/v1", "max_tokens": 300, "stop_token_ids": [2],
                    "extra_headers": {"OpenAI-Organization": "org-1"}, "temperature": 0}}]})
    assert config.systems[0].params["api_base"] == "http://127.0.0.1:8080/v1"


# -- human raters read like judges ------------------------------------------------------------------


def test_a_person_who_confirms_every_verdict_of_a_judge_agrees_with_it_fully(demo_workspace):
    """A ground-truth rater with both references says yes if either does; the human rater must be read
    the same way. Before, the latest of the two reviews stood for the answer, so confirming a 'yes'
    (reference 1) and then a 'no' (reference 2) counted as disagreeing with the judge's 'yes'."""
    with store.connect(demo_workspace) as con:
        rows = con.execute("SELECT id, label FROM judgments WHERE judge = 'lexical-gt' AND status = 'ok'"
                           " ORDER BY question_id, system_a, reference").fetchall()
        mixed = con.execute("""SELECT count(*) FROM (SELECT question_id, system_a FROM judgments
                               WHERE judge = 'lexical-gt' GROUP BY ALL HAVING count(DISTINCT label) = 2)""").fetchone()[0]
    assert mixed > 0  # the demo has answers one reference accepts and the other rejects
    for jid, _ in sorted(rows, key=lambda r: r[1] == "no"):  # every 'no' confirmed after the 'yes'
        audit.confirm(demo_workspace, "alice", jid)
    for rater in ("human@lexical-gt", "human:alice@lexical-gt"):
        result = analysis.agreement(demo_workspace, "lexical-gt", rater, bootstrap=0)
        assert result["agreement"] == 1.0, rater
    assert analysis.rater_labels(demo_workspace, "human:alice@lexical-gt") == analysis.rater_labels(
        demo_workspace, "lexical-gt")


# -- similarity rater: a re-run keeps what is stored -----------------------------------------------


def test_rerun_keeps_similarity_verdicts_and_skips_them(demo_workspace):
    with store.connect(demo_workspace) as con:
        before = con.execute("SELECT id, label, created_at FROM judgments WHERE kind = 'similarity'"
                             " ORDER BY id").fetchall()
    summary = pipeline.run(demo_workspace, load_run_config(PROJECT_ROOT / "configs" / "demo_small.toml")).to_dict()
    stage = next(s for s in summary["stages"] if s["stage"] == "judge:minilm-similarity")
    assert stage["written"] == 0 and stage["skipped"] == stage["tasks"] == len(before) > 0
    with store.connect(demo_workspace) as con:
        after = con.execute("SELECT id, label, created_at FROM judgments WHERE kind = 'similarity'"
                            " ORDER BY id").fetchall()
    assert after == before  # not deleted and written again


# -- imports: a file that says two things about one item ---------------------------------------------


def test_conflicting_rows_in_one_import_file_are_an_error(demo_workspace, tmp_path):
    qid = f"nqa:{TOM_KITTEN}:9"
    answers = tmp_path / "answers.csv"
    answers.write_text(f"question_id,system,answer\n{qid},imp,first\n{qid},imp,second\n")
    with pytest.raises(InputError, match="repeats line 2") as err:
        import_answers(demo_workspace, answers)
    assert err.value.line == 3
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("question_id,rater,kind,system_a,system_b,label\n"
                        f"{qid},p,pairwise,x,y,A\n{qid},p,pairwise,x,y,A is better\n{qid},p,pairwise,x,y,B\n")
    with pytest.raises(InputError, match="repeats line 2") as err:
        import_judgments(demo_workspace, verdicts)
    assert err.value.line == 4
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM answers WHERE system_name = 'imp'").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM judgments WHERE judge = 'p'").fetchone()[0] == 0
    # The same row twice is harmless.
    answers.write_text(f"question_id,system,answer\n{qid},imp,first\n{qid},imp,first\n")
    assert import_answers(demo_workspace, answers).added["answers"] == 1


# -- NarrativeQA after its story was added as a plain book -------------------------------------------


def _orphans(ws) -> tuple[int, int]:
    with store.connect(ws) as con:
        return con.execute("""SELECT (SELECT count(*) FROM passages WHERE document_id NOT IN (SELECT id FROM documents)),
                                     (SELECT count(*) FROM questions WHERE document_id NOT IN (SELECT id FROM documents))
                           """).fetchone()


def test_narrativeqa_story_already_stored_as_a_book_leaves_no_orphans(workspace):
    ingest_book(workspace, TOM_KITTEN_STORY)
    summary = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert _orphans(workspace) == (0, 0)  # before: 6 passages and 30 questions of a document never stored
    assert any("already in the workspace as book-" in n for n in summary.notes)
    with store.connect(workspace) as con:
        doc = con.execute("SELECT full_text IS NULL FROM documents WHERE id = ?", [TOM_KITTEN]).fetchone()
    assert doc == (True,)
    again = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert again.added["questions"] == 0 and _orphans(workspace) == (0, 0)


def test_story_filled_in_later_when_its_text_is_already_a_book(workspace, tmp_path):
    """NarrativeQA without stories, then the story as a plain book, then NarrativeQA with stories:
    before, the fill-in hit the unique content_sha1 and the import died with a ConstraintException."""
    bare = tmp_path / "nqa"
    bare.mkdir()
    for f in (TEST_DATA / "narrativeqa_slice").iterdir():
        if f.is_file():
            shutil.copy(f, bare / f.name)
    ingest_narrativeqa(workspace, bare)
    ingest_book(workspace, TOM_KITTEN_STORY)
    summary = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert summary.added.get("story texts filled in") == 1  # Jeremy Fisher's; Tom Kitten's is the book's
    assert _orphans(workspace) == (0, 0)


# -- a workspace deleted and created again in one process ---------------------------------------------


def test_a_workspace_created_again_under_the_same_path_is_migrated(workspace):
    with store.connect(workspace) as con:
        con.execute("SELECT count(*) FROM runs").fetchone()
    os.remove(workspace)
    with store.connect(workspace) as con:  # before: Catalog Error, table runs does not exist
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_a_bad_q_index_names_the_file_and_line(workspace, tmp_path):
    """Before: a raw ValueError traceback from int()."""
    import json

    folder = tmp_path / "nqa"
    folder.mkdir()
    shutil.copy(TEST_DATA / "narrativeqa_slice" / "documents.csv", folder / "documents.csv")
    lines = (TEST_DATA / "narrativeqa_slice" / "nqa_test_slice_qaps.jsonl").read_text().splitlines()[:3]
    recs = [json.loads(line) for line in lines]
    recs[2]["q_index"] = "third"
    (folder / "test_qaps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(InputError, match="q_index must be a whole number") as err:
        ingest_narrativeqa(workspace, folder)
    assert err.value.line == 3 and err.value.path.endswith("test_qaps.jsonl")


def test_an_imported_similarity_score_becomes_a_score_and_a_yes_no_label(demo_workspace, tmp_path):
    """Before: the label was the number itself ('0.83'), which accuracy counted as not correct and
    agreement as a third category; the score column stayed empty."""
    q = f"nqa:{TOM_KITTEN}"
    path = tmp_path / "similarity.csv"
    path.write_text("question_id,rater,kind,system_a,label\n"
                    f"{q}:9,sim-import,similarity,extractive-fullbook,0.83\n"
                    f"{q}:8,sim-import,similarity,extractive-fullbook,0.12\n"
                    f"{q}:7,sim-import,similarity,extractive-fullbook,yes\n")
    import_judgments(demo_workspace, path)
    with store.connect(demo_workspace) as con:
        rows = con.execute("SELECT label, raw_label, score FROM judgments WHERE judge = 'sim-import'"
                           " ORDER BY question_id DESC").fetchall()
    assert rows == [("yes", "0.83", 0.83), ("no", "0.12", 0.12), ("yes", "yes", None)]
    acc = analysis.accuracy(demo_workspace, "sim-import")
    assert acc[0]["n"] == 3 and acc[0]["correct"] == 2


def test_a_system_name_with_a_bar_keeps_its_verdicts_apart(demo_workspace, tmp_path):
    """Before: verdict items were 'question|system' strings split on '|', so a system named
    'rag|4k' was counted as a system 'rag' and self-preference missed its comparisons."""
    q = f"nqa:{TOM_KITTEN}"
    path = tmp_path / "bars.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"{q}:1,bar-judge,absolute,rag|4k,,yes\n"
                    f"{q}:2,bar-judge,absolute,rag|4k,,no\n"
                    f"{q}:3,bar-judge,absolute,rag|4k,,yes\n"
                    f"{q}:1,bar-judge,absolute,rag,,no\n"
                    f"{q}:1,bar-sxs,pairwise,rag|4k,rag,A\n"
                    f"{q}:2,bar-sxs,pairwise,rag|4k,rag,B\n"
                    f"{q}:3,bar-sxs,pairwise,rag|4k,rag,A\n"
                    f"{q}:1,bar-sxs-2,pairwise,rag|4k,rag,B\n"
                    f"{q}:2,bar-sxs-2,pairwise,rag|4k,rag,B\n"
                    f"{q}:3,bar-sxs-2,pairwise,rag|4k,rag,A\n")
    import_judgments(demo_workspace, path)
    acc = {r["system"]: (r["n"], r["correct"]) for r in analysis.accuracy(demo_workspace, "bar-judge")}
    assert acc == {"rag|4k": (3, 2), "rag": (1, 0)}
    pref = analysis.self_preference(demo_workspace, ("bar-sxs", "bar-sxs-2"), ("rag|4k", "rag"))
    assert pref["judges"] == ["bar-sxs", "bar-sxs-2"] and pref["systems"] == ["rag|4k", "rag"]
    assert pref["counts"] == [[2, 1], [1, 2]]  # each judge's preferences for rag|4k and rag
