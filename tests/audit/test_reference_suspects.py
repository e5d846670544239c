"""The reference-error detector (lsqa.audit.reference_errors, `lsqa suspects`) on real slices: NarrativeQA's
two Beatrix Potter books, answers of LiteraryQA's long-context models (../shared/data/literaryqa_dev, read in place),
and LiteraryQA's own verdicts on those references. Each part of the score: the systems' answers
alone, embedded judges, an LLM judge over HTTP, the other reference, human overturns, flags."""

from __future__ import annotations

import json
import shutil
from statistics import fmean

import pytest
from typer.testing import CliRunner

from lsqa import audit, store
from lsqa.audit import reference_errors
from lsqa.cli import app
from lsqa.config.study import run_config_from_dict
from lsqa.judging.similarity import auc
from lsqa.study import pipeline
from tests.study.test_imported_systems import IMPORTED, LQA, NQA, TOM_KITTEN, answers_file

MODELS = IMPORTED + ("Qwen2.5-7B-Instruct-1M",)
JEREMY = "2dd593d19e201c9cf4edb0703cad0f525c1038a2"
DUCKS = f"nqa:{TOM_KITTEN}:16"      # "Who put on the clothing that fell off the kittens?" the ducks | Jemima and Rebeccah.
SIBLINGS = f"nqa:{TOM_KITTEN}:0"    # "How many feline siblings are there?" Three | three
DROPPED = f"nqa:{TOM_KITTEN}:11"    # dropped by LiteraryQA: no model answered it
IMPORTED_SYSTEMS = [{"name": m, "model": "imported"} for m in MODELS]
LEXICAL_GT = {"name": "lexical-gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "reference": "both"}


def literaryqa_wrong() -> dict[tuple[str, str], bool]:
    """LiteraryQA's verdict per reference of the slice (the rule of bench/bench_reference_errors.py)."""
    from bench.bench_reference_errors import wrong_references

    return wrong_references(LQA / "labels.jsonl")  # all 8 books; only the workspace's references are looked up


@pytest.fixture(scope="module")
def answered_template(tmp_path_factory):
    """Both Potter books with the answers of 3 long-context models imported, nothing judged."""
    tmp = tmp_path_factory.mktemp("suspects")
    workspace = tmp / "answered.duckdb"
    from lsqa.corpus.ingest import ingest_narrativeqa
    from lsqa.study.imports import import_answers

    ingest_narrativeqa(workspace, NQA)
    import_answers(workspace, answers_file(tmp, MODELS, (TOM_KITTEN, JEREMY)))
    return workspace


@pytest.fixture
def answered(answered_template, tmp_path):
    copy = tmp_path / "answered.duckdb"
    shutil.copy(answered_template, copy)
    return copy


def by_key(rows):
    return {(r["question_id"], r["reference"]): r for r in rows}


@pytest.mark.slow
def test_answers_alone_rank_literaryqas_edits_and_say_what_they_used(answered):
    rows = by_key(reference_errors.suspects(answered))
    assert len(rows) == 2 * 2 * 30  # every reference of both books, answered or not
    ducks_right, ducks_wrong = rows[(DUCKS, "1")], rows[(DUCKS, "2")]
    assert ducks_wrong["score"] > 0.5 > ducks_right["score"]  # "Jemima and Rebeccah.": LiteraryQA dropped it
    assert ducks_wrong["evidence"] == "answers (3), other reference, summary" and ducks_wrong["judges_accept"] is None
    siblings = rows[(SIBLINGS, "1")]
    assert siblings["answers_match"] == 1.0 and siblings["references_agree"] > 0.95 and siblings["score"] < 0.01
    # A question no system answered is scored on the other reference with the workspace's mean confirmation:
    # neither suspect nor cleared for lack of answers.
    dropped = rows[(DROPPED, "1")]
    prior = fmean(1 - r["systems_confirm"] for r in rows.values() if r["systems_confirm"] is not None)
    contra = fmean(r["systems_contradict"] for r in rows.values() if r["systems_contradict"] is not None)
    assert dropped["systems_confirm"] is None and dropped["evidence"] == "other reference, summary"
    assert dropped["score"] == pytest.approx(prior * contra * (1 - dropped["references_agree"]), abs=2e-3)
    truth = literaryqa_wrong()
    wrong = [r["score"] for k, r in rows.items() if truth[k]]
    right = [r["score"] for k, r in rows.items() if not truth[k]]
    assert auc(wrong, right) > 0.65  # measured 0.71 on these two books with these 3 models (chance: 0.5)


@pytest.mark.slow
def test_embedded_ground_truth_judge_adds_its_verdicts(answered):
    pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                                 "systems": IMPORTED_SYSTEMS, "judges": [LEXICAL_GT]}))
    rows = by_key(reference_errors.suspects(answered))
    with store.connect(answered) as con:
        labels = [r[0] for r in con.execute(
            "SELECT label FROM judgments WHERE judge = 'lexical-gt' AND question_id = ? AND reference = '2'",
            [DUCKS]).fetchall()]
    ducks = rows[(DUCKS, "2")]
    assert len(labels) == 3 and ducks["judges_accept"] == pytest.approx(labels.count("yes") / 3, abs=1e-3)
    assert ducks["systems_confirm"] == pytest.approx(max(ducks["answers_match"], ducks["judges_accept"]), abs=1e-3)
    assert ducks["evidence"] == "answers (3), judges (3), other reference, summary"
    assert rows[(f"nqa:{TOM_KITTEN}:20", "1")]["judges_accept"] is None  # beyond max_questions: not judged


@pytest.mark.slow
def test_an_llm_judge_over_http_counts_like_any_other(answered, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    llm_server.script(reply="no")
    judge = {"name": "served-gt", "model": "openai/gt-rater", "kind": "groundtruth", "reference": "both",
             "params": {"api_base": llm_server.api_base, "temperature": 0}}
    summary = pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"],
                                                           "max_questions": 1, "systems": IMPORTED_SYSTEMS,
                                                           "judges": [judge]}))
    assert summary.to_dict()["calls_made"] == 3 * 2, summary.lines()  # 3 systems × 2 references of question 0
    siblings = by_key(reference_errors.suspects(answered))[(SIBLINGS, "1")]
    assert siblings["judges_accept"] == 0.0 and siblings["systems_confirm"] == siblings["answers_match"] == 1.0
    assert "judges (3)" in siblings["evidence"]


@pytest.mark.slow
def test_a_human_overturning_a_rejection_and_flags_raise_the_score(answered):
    pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                                 "systems": IMPORTED_SYSTEMS, "judges": [LEXICAL_GT]}))
    with store.connect(answered) as con:
        rejected = con.execute("SELECT id FROM judgments WHERE judge = 'lexical-gt' AND question_id = ?"
                               " AND reference = '1' AND label = 'no' ORDER BY id LIMIT 1",
                               [f"nqa:{TOM_KITTEN}:14"]).fetchone()[0]
    before = by_key(reference_errors.suspects(answered))
    audit.review(answered, "alice", rejected, "yes")
    after = by_key(reference_errors.suspects(answered))
    row = after[(f"nqa:{TOM_KITTEN}:14", "1")]
    m = before[(f"nqa:{TOM_KITTEN}:14", "1")]["score"]
    # One override doubles the odds the machine gave (reference_errors.OVERRIDE_ODDS), never makes it 1 alone.
    assert 0 < m < 1 and row["score"] == pytest.approx(2 * m / (1 + m), abs=1e-3) and row["score"] < 1
    assert row["humans_overturned"] == "1/1" and "humans (1)" in row["evidence"]
    audit.flag(answered, "bob", SIBLINGS, "2", "ambiguous")
    flagged = by_key(reference_errors.suspects(answered))[(SIBLINGS, "2")]
    machine = before[(SIBLINGS, "2")]["score"]
    assert flagged["score"] == pytest.approx(1 - (1 - machine) * 0.5, abs=1e-3) and flagged["flags"] == "ambiguous (bob)"
    assert "score" in reference_errors.explain(flagged) and "flags: ambiguous (bob)" in reference_errors.explain(flagged)


@pytest.mark.slow
def test_overrides_alone_never_outrank_what_every_automatic_signal_says(answered, llm_server, monkeypatch):
    """Two people overturn a ground-truth judge's "no" on "Three", a reference every automatic signal
    supports (every answer holds it, the other reference agrees): it stays below a reference the signals
    suspect and nobody overrode (the ducks' "Jemima and Rebeccah."); before, 2/2 overrides made it 1.0, first
    of the list. Where the signals suspect a reference, overrides add: each doubles the odds, up to three."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    llm_server.script(reply="no")
    judge = {"name": "served-gt", "model": "openai/gt-rater", "kind": "groundtruth", "reference": "both",
             "params": {"api_base": llm_server.api_base, "temperature": 0}}
    pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                                 "systems": IMPORTED_SYSTEMS, "judges": [judge]}))
    with store.connect(answered) as con:
        rejected = dict(con.execute(
            "SELECT question_id || '/' || reference, list(id ORDER BY id) FROM judgments WHERE judge = 'served-gt'"
            " AND label = 'no' GROUP BY ALL").fetchall())
    before = by_key(reference_errors.suspects(answered))
    supported, suspect = before[(SIBLINGS, "1")], before[(DUCKS, "2")]
    assert supported["systems_confirm"] == 1.0 and supported["references_agree"] > 0.95 and supported["score"] < 0.01
    assert suspect["score"] > 0.5 and suspect["humans_overturned"] == "0/0"
    for person, jid in zip(("ana", "ben"), rejected[f"{SIBLINGS}/1"], strict=False):
        audit.review(answered, person, jid, "yes")
    rows = reference_errors.suspects(answered)
    after = by_key(rows)
    assert after[(SIBLINGS, "1")]["humans_overturned"] == "2/2"
    assert after[(SIBLINGS, "1")]["score"] < after[(DUCKS, "2")]["score"]
    assert reference_errors.row_key(rows[0]) != (SIBLINGS, "1")
    assert rows.index(after[(DUCKS, "2")]) < rows.index(after[(SIBLINGS, "1")])

    # Overrides add where the machine suspects: a middling reference rises by the stated weight and passes
    # references the machine put above it.
    middling = min((k for k, r in before.items() if 0.05 < r["score"] < 0.4 and len(rejected.get("/".join(k), [])) >= 3
                    and r["flags"] == ""), key=lambda k: before[k]["score"])
    m = before[middling]["score"]
    jids = rejected["/".join(middling)]
    for n, person in enumerate(("cy", "dee", "eve", "fay"), start=1):  # one verdict each; the fourth counts no more
        audit.review(answered, person, jids[(n - 1) % len(jids)], "yes")
        score = by_key(reference_errors.suspects(answered))[middling]["score"]
        boost = reference_errors.OVERRIDE_ODDS ** min(n, reference_errors.MAX_OVERRIDES)
        assert score == pytest.approx(m * boost / (1 - m + m * boost), abs=2e-3), n
    passed = [k for k, r in before.items() if m < r["score"] < score]
    assert passed and all(by_key(reference_errors.suspects(answered))[k]["score"] < score for k in passed)


@pytest.mark.slow  # a pipeline run of its own
def test_a_system_that_is_a_reference_is_no_witness(answered):
    reference_system = {"name": "nqa-reference-2", "model": "human:narrativeqa", "context": "reference:2"}
    pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                                 "systems": [reference_system]}))
    assert by_key(reference_errors.suspects(answered))[(DUCKS, "2")]["evidence"] == "answers (3), other reference, summary"


@pytest.mark.slow
def test_a_declined_answer_is_no_evidence_either_way(answered):
    # lsqa/extractive without context answers "I don't know." to every question: a real decline.
    before = by_key(reference_errors.suspects(answered))
    closed_book = {"name": "extractive-nocontext", "model": "lsqa/extractive", "context": "none"}
    pipeline.run(answered, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                                 "systems": [closed_book], "judges": [LEXICAL_GT]}))
    with store.connect(answered) as con:
        texts = {r[0] for r in con.execute("SELECT text FROM answers WHERE system_name = 'extractive-nocontext'").fetchall()}
    assert texts == {"I don't know."} and reference_errors.declined("I don't know.")
    after = by_key(reference_errors.suspects(answered))
    ducks = after[(DUCKS, "2")]
    # The ground-truth judge judged the decline (and only it: the imported systems are not in this run);
    # that verdict goes with the answer.
    with store.connect(answered) as con:
        assert con.execute("SELECT label FROM judgments WHERE judge = 'lexical-gt' AND question_id = ? AND reference = '2'",
                           [DUCKS]).fetchall() == [("no",)]
    assert ducks["evidence"] == "answers (3, 1 declined), other reference, summary" and ducks["judges_accept"] is None
    assert ducks["answers_match"] == before[(DUCKS, "2")]["answers_match"]
    assert not reference_errors.declined("The story does not say who Philip married.")  # a reading of the book


@pytest.mark.slow  # a study run of its own (the module's answered workspace)
def test_cli_suspects_json_and_table(answered):
    runner = CliRunner()
    r = runner.invoke(app, ["suspects", "--workspace", str(answered), "--json", "--limit", "5"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["n_references"] == 120 and len(out["references"]) == 5
    first = out["references"][0]
    assert {"question_id", "reference", "score", *reference_errors.COLUMNS, *reference_errors.EVIDENCE_COLUMNS} <= set(first)
    assert out["systems"] == reference_errors.system_abilities(answered) and len(out["systems"]) == len(MODELS)
    assert first["systems"] and {"system", "ability", "expected", "agrees"} == set(first["systems"][0])
    assert first["reference"] in ("1", "2") and first == reference_errors.suspects(answered)[0]
    table = runner.invoke(app, ["suspects", "--workspace", str(answered), "-n", "2"])
    assert table.exit_code == 0 and "2 of 120 references shown" in table.output and "evidence=" in table.output


def test_suspects_put_a_flagged_reference_first_and_the_errata_keep_it(demo_workspace):
    ws = demo_workspace
    rows = reference_errors.suspects(ws)
    assert rows and rows == sorted(rows, key=lambda r: -r["score"])
    low = rows[-1]
    audit.flag(ws, "alice", low["question_id"], low["reference"], "wrong", "the book says otherwise")
    again = reference_errors.suspects(ws)
    top = again[0]
    assert (top["question_id"], top["reference"]) == (low["question_id"], low["reference"])
    assert top["score"] == 1.0 and "wrong (alice)" in top["flags"] and "flags" in top["evidence"]
    errata = reference_errors.errata(ws)
    assert [(e["question_id"], e["reasons"], e["notes"], e["score"]) for e in errata] == [
        (low["question_id"], ["wrong"], ["alice: the book says otherwise"], 1.0)]


@pytest.mark.slow
def test_strong_systems_contradicting_a_reference_and_its_summary_sentence(answered):
    rows = by_key(reference_errors.suspects(answered))
    ducks_wrong, ducks_right = rows[(DUCKS, "2")], rows[(DUCKS, "1")]
    # "Jemima and Rebeccah.": every model answers "the ducks"/"Mr. Drake"; the summary says Jemima and
    # Rebeccah put on the clothes (the reference was written from it, paper App. E): the systems contradict
    # a reference the summary supports, and the row shows both.
    assert ducks_wrong["systems_contradict"] > 0.5 > ducks_right["systems_contradict"]
    assert ducks_wrong["summary_support"] == 1.0
    assert ducks_wrong["summary_sentence"] == "Jemima Puddle-duck and Rebeccah put on some of the dropped clothing."
    abilities = reference_errors.system_abilities(answered)
    assert [a["system"] for a in abilities] == [d["system"] for d in ducks_wrong["systems"]]  # strongest first
    assert {a["system"] for a in abilities} == set(MODELS) and all(a["answers"] > 0 for a in abilities)
    shown = {d["system"]: d for d in ducks_wrong["systems"]}
    assert all(shown[a["system"]]["ability"] == round(a["ability"], 2) for a in abilities)
    assert ducks_wrong["systems_disagree"].startswith("contradict: ") and "agree:" not in ducks_wrong["systems_disagree"]
    # The question LiteraryQA dropped has no answers: nothing to contradict, the summary still speaks.
    dropped = rows[(DROPPED, "1")]
    assert dropped["systems_contradict"] is None and dropped["systems"] == [] and dropped["summary_support"] is not None
    # The summary is shown, not scored (docs/reference-errors.md): its columns do not move the score.
    assert reference_errors.WEIGHTS["summary_support"] == reference_errors.WEIGHTS["question_in_summary"] == 0
    assert reference_errors.WEIGHTS["systems_contradict"] == 1
    moved = [dict(r, summary_support=0.0, question_in_summary=0.0) for r in rows.values()]
    assert reference_errors.combine(moved) == reference_errors.combine(list(rows.values()))


def test_a_miss_by_the_strongest_system_counts_more_than_one_by_the_weakest(answered):
    # The fit of this workspace (3 long-context models on two Potter books); one question, two made-up
    # patterns of agreement with its reference: the strong system missing it is the more suspect.
    from lsqa.audit import reference_signals
    from lsqa.store import verdicts as verdicts_store

    with store.connect(answered) as con:
        data = verdicts_store.reference_evidence(con, reference_errors.reference_raters())
    fit = reference_signals.fit_abilities(reference_errors._responses(data)[2])
    strong, middle, weak = sorted(fit.ability, key=fit.ability.get, reverse=True)
    assert fit.ability[strong] > fit.ability[weak]
    strong_misses = reference_signals.contradiction(fit, SIBLINGS, {strong: 0.0, middle: 1.0, weak: 1.0})
    weak_misses = reference_signals.contradiction(fit, SIBLINGS, {strong: 1.0, middle: 1.0, weak: 0.0})
    assert strong_misses.value > weak_misses.value
    assert reference_signals.systems_line(strong_misses.systems).startswith(f"contradict: {strong} (")
