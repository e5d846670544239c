"""The LLM reference check (judge kind ``reference-check``, issue 32): a versioned prompt asking, given the
story's summary (and passages if the judge reads any), whether the question is answerable and whether one
NarrativeQA reference answers it; run like every judge (planned, cached, budgeted, parse errors kept as data),
stored apart from the verdicts on systems (migration 0018), read into ``lsqa suspects`` as ``llm_accepts``.

Real data: NarrativeQA's Tom Kitten questions and Wikipedia summary (tests/data/narrativeqa_slice). The
model is the embedded lexical judge (offline) or tests/support/llm_server.py, an OpenAI-compatible server on
127.0.0.1; what a real LLM's checks are worth cannot be measured offline (docs/reference-errors.md).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.audit import reference_errors
from lsqa.cli import app
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.prompting import parsers
from lsqa.prompting import templates as prompts
from lsqa.study import pipeline
from lsqa.study.plan import plan
from tests.conftest import TEST_DATA
from tests.support.bad_input import snapshot

TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"
DUCKS = f"nqa:{TOM_KITTEN}:16"   # "Who put on the clothing that fell off the kittens?" the ducks | Jemima and Rebeccah.
runner = CliRunner()


@pytest.fixture
def nqa(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    return workspace


def _config(judge: dict, n: int = 17, **extra) -> object:
    return run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": n, "judges": [judge],
                                 **extra})


LEXICAL = {"name": "lexical-refcheck", "model": "lsqa/lexical-judge", "kind": "reference-check", "context": "none"}


def _same_twice(workspace, n=17) -> int:
    """Questions among the first ``n`` whose two references are the same text: one call serves both."""
    with store.connect(workspace) as con:
        return con.execute("SELECT count(*) FROM (SELECT * FROM questions WHERE document_id = ? ORDER BY source_index"
                           " LIMIT ?) WHERE reference_1 = reference_2", [TOM_KITTEN, n]).fetchone()[0]


def _checks(workspace, judge=None):
    with store.connect(workspace) as con:
        sql = "SELECT question_id, reference, label, answerable, status, evidence, raw, prompt_id, prompt_version" \
              " FROM reference_checks" + (" WHERE judge = ?" if judge else "") + " ORDER BY question_id, reference"
        cols = [c.strip().split()[-1] for c in sql.split("FROM")[0][7:].split(",")]
        return [dict(zip(cols, row, strict=False)) for row in con.execute(sql, [judge] if judge else []).fetchall()]


# ------------------------------------------------------------------------------- prompt and parser

def test_the_prompt_shows_the_summary_question_and_reference_by_the_label_contract():
    prompt = prompts.load_prompt("reference_check")
    assert (prompt.version, prompt.output, set(prompt.placeholders)) == (1, "reference-check-json",
                                                                          {"context", "question", "answer"})
    text = prompts.render(prompt, context="SUMMARY {x}", question="Who?", answer="The ducks")
    lines = text.split("\n")
    assert lines[:3] == ["# CONTEXT", "SUMMARY {x}", "# CONTEXT END"]
    assert 'Question: "Who?"' in lines and lines.index('Answer: "The ducks"') > lines.index('Question: "Who?"')
    assert "'question_is_answerable'" in text and "'reference_answers_question'" in text
    # The stable prefix a provider caches ends with the context (the summary is shared by a story's questions).
    assert prompts.stable_prefix_chars(prompt, context="S", question="Q", answer="A") == len("# CONTEXT\nS\n# CONTEXT END")


@pytest.mark.parametrize("raw, label, answerable, evidence", [
    ("{'question_is_answerable': 'yes', 'reference_answers_question': 'no', 'evidence': ['Jemima put them on.']}",
     "no", "yes", ["Jemima put them on."]),
    ('```json\n{"question_is_answerable": "No", "reference_answers_question": "No", "evidence": []}\n```',
     "no", "no", []),
    ("{'reference_answers_question': 'yes', 'evidence': ['Three kittens.']}", "yes", None, ["Three kittens."]),
    ("**reference_answers_question**: Yes, it does.", "yes", None, []),
])
def test_the_parser_reads_both_decisions_and_the_quotes(raw, label, answerable, evidence):
    parsed = parsers.parse("reference-check-json", raw)
    assert parsed.ok and parsed.label == label and parsed.details == {"answerable": answerable}
    assert parsed.evidence == evidence


@pytest.mark.parametrize("raw, reason", [
    ("", "empty output"),
    ("{'question_is_answerable': 'yes', 'evidence': []}", "no reference_answers_question label"),
    ("{'reference_answers_question': 'maybe'}", "neither yes nor no"),
    ("{'reference_answers_question': 'yes'} ... {'reference_answers_question': 'no'}", "conflicting labels"),
])
def test_output_the_parser_cannot_read_is_a_parse_error_with_a_reason(raw, reason):
    parsed = parsers.parse("reference-check-json", raw)
    assert not parsed.ok and parsed.label is None and reason in parsed.reason and parsed.raw == raw


# --------------------------------------------------------------------------------- a run, offline

def test_the_embedded_judge_checks_every_reference_against_the_summary_and_a_rerun_is_free(nqa):
    first = pipeline.run(nqa, _config(LEXICAL)).to_dict()
    checks = _checks(nqa)
    twice = _same_twice(nqa)
    assert twice > 0 and first["calls_failed"] == 0
    assert (first["calls_made"], first["calls_cached"], len(checks)) == (2 * 17 - twice, twice, 2 * 17)
    assert {c["status"] for c in checks} == {"ok"} and {c["prompt_id"] for c in checks} == {"reference_check"}
    ducks = {c["reference"]: c for c in checks if c["question_id"] == DUCKS}
    # The summary says "Jemima Puddle-duck and Rebeccah put on some of the dropped clothing": a word check of
    # the summary accepts the reference LiteraryQA dropped (the book says the ducks, paper App. E).
    assert ducks["2"]["label"] == "yes" and ducks["2"]["answerable"] == "yes"
    assert "Jemima Puddle-duck and Rebeccah put on some of the dropped clothing." in json.loads(ducks["2"]["evidence"])
    with store.connect(nqa) as con:  # verdicts about references never mix with verdicts about systems
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
    again = pipeline.run(nqa, _config(LEXICAL)).to_dict()
    assert again["calls_made"] == 0 and again["stages"][0]["skipped"] == 2 * 17


@pytest.mark.embedding_model  # the references' cosine (references_agree)
def test_suspects_gain_the_llm_column_and_an_accepted_reference_keeps_a_fifth_of_its_suspicion(nqa):
    pipeline.run(nqa, run_config_from_dict({"documents": ["The Tale of Tom Kitten"], "max_questions": 17,
                                            "systems": [{"name": "bm25", "model": "lsqa/extractive",
                                                         "context": "retrieval:400"}]}))
    before = {reference_errors.row_key(r): r for r in reference_errors.suspects(nqa)}
    assert all(r["llm_accepts"] is None and r["llm_evidence"] == "" for r in before.values())
    pipeline.run(nqa, _config(LEXICAL))
    after = {reference_errors.row_key(r): r for r in reference_errors.suspects(nqa)}
    checked = [k for k, r in after.items() if r["llm_accepts"] is not None]
    assert len(checked) == 2 * 17
    for key in checked:
        r, old = after[key], before[key]
        factor = reference_errors.llm_factor(r["llm_accepts"])
        assert r["score"] == pytest.approx(old["score"] * factor, abs=2e-4)
        assert "LLM check (1)" in r["evidence"] and r["llm_evidence"].startswith("lexical-refcheck: ")
    ducks = after[(DUCKS, "2")]
    assert ducks["llm_accepts"] == 1.0 and reference_errors.llm_factor(1.0) == reference_errors.LLM_FLOOR
    assert "answers" in ducks["llm_evidence"] and "“" in ducks["llm_evidence"]
    assert after[(f"nqa:{TOM_KITTEN}:20", "1")]["llm_accepts"] is None  # beyond max_questions: not checked


# ----------------------------------------------------------------------------- a served LLM, over HTTP

def _served(api_base: str, **extra) -> dict:
    return {"name": "served-refcheck", "model": "openai/gpt-4o-mini", "kind": "reference-check", "context": "none",
            "params": {"api_base": api_base, "max_tokens": 60, "temperature": 0}, **extra}


def test_a_served_llm_is_planned_called_once_per_reference_and_cached(nqa, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")

    def reply(request: dict) -> str:
        prompt = request["messages"][-1]["content"]
        wrong = 'Answer: "Jemima and Rebeccah."' in prompt
        return json.dumps({"question_is_answerable": "yes", "reference_answers_question": "no" if wrong else "yes",
                           "evidence": ["Three Puddle-ducks come marching along the road"]})

    llm_server.script(reply=reply)
    config = _config(_served(llm_server.api_base))
    planned = plan(nqa, config)
    stage = planned.stages[0]
    twice = _same_twice(nqa)  # a reference repeated word for word is one request
    assert (stage.stage, stage.calls, stage.cached) == ("judge:served-refcheck", 34, twice)
    assert stage.cost_usd is not None and stage.cost_usd > 0  # priced from litellm's table
    summary = pipeline.run(nqa, config).to_dict()
    assert summary["calls_made"] == 34 - twice == len(llm_server.requests)
    # The summary is in every prompt, first (the provider may cache it); no system's answer is.
    assert all(p.startswith("# CONTEXT\nSummary of the story:\nThe tale begins with three feline siblings")
               for p in llm_server.prompts())
    ducks = {c["reference"]: c for c in _checks(nqa, "served-refcheck") if c["question_id"] == DUCKS}
    assert (ducks["2"]["label"], ducks["1"]["label"]) == ("no", "yes")
    assert plan(nqa, config).calls == 0  # every check stored: nothing left to plan
    assert pipeline.run(nqa, config).to_dict()["calls_made"] == 0 and len(llm_server.requests) == 34 - twice
    rows = {reference_errors.row_key(r): r for r in reference_errors.suspects(nqa)}
    assert rows[(DUCKS, "2")]["llm_accepts"] == 0.0 and rows[(DUCKS, "1")]["llm_accepts"] == 1.0


def test_an_unreadable_reply_is_kept_as_a_parse_error_not_a_label(nqa, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")
    llm_server.script(reply="I would rather not say.")
    summary = pipeline.run(nqa, _config(_served(llm_server.api_base), n=2, max_unreadable_share=1.0)).to_dict()
    checks = _checks(nqa)
    assert summary["parse_errors"] == {"judge:served-refcheck": 4}
    assert [(c["status"], c["label"], c["raw"]) for c in checks] == [("parse_error", None, "I would rather not say.")] * 4
    assert all(r["llm_accepts"] is None for r in reference_errors.suspects(nqa))  # no label, no evidence


def test_the_budget_stops_a_reference_check_before_its_calls(nqa, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")
    llm_server.script(reply="{'reference_answers_question': 'yes'}")
    summary = pipeline.run(nqa, _config(_served(llm_server.api_base), max_cost_usd=0.0)).to_dict()
    assert summary["stopped"] == "budget" and len(llm_server.requests) == 0 and _checks(nqa) == []


def test_a_judge_name_with_checks_keeps_its_definition(nqa, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")
    llm_server.script(reply="{'reference_answers_question': 'yes'}")
    pipeline.run(nqa, _config(_served(llm_server.api_base), n=1))
    with pytest.raises(Exception, match="served-refcheck.*different definition"):
        pipeline.run(nqa, _config(_served(llm_server.api_base, context="retrieval:300"), n=1))


# ------------------------------------------------------------------------------------- refusals

def test_imported_verdicts_of_the_reference_check_kind_are_refused_and_nothing_changes(nqa, tmp_path):
    path = tmp_path / "verdicts.csv"
    path.write_text(f"question_id,rater,kind,system_a,label\n{DUCKS},me,reference-check,x,yes\n")
    before = snapshot(nqa)
    r = runner.invoke(app, ["import-judgments", str(path), "--workspace", str(nqa)])
    assert r.exit_code == 2 and "reference-check verdicts are about NarrativeQA references" in r.output
    assert len(r.output.strip().splitlines()) <= 2
    assert snapshot(nqa) == before
